/* Host page sizes (see host_mem.h). */
#include "lib/host_mem.h"

#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>

uint64_t host_page_size(void)
{
	long n = sysconf(_SC_PAGESIZE);

	return n > 0 ? (uint64_t)n : 4096;
}

uint64_t host_thp_size_from(const char *path, uint64_t page_size)
{
	unsigned long long size = 0;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%llu", &size) != 1)
			size = 0;
		fclose(f);
	}
	if (size > page_size && !(size & (size - 1)))
		return size;
	return page_size * (page_size / 8);
}

uint64_t host_thp_size(void)
{
	return host_thp_size_from(HOST_THP_SIZE_PATH, host_page_size());
}

uint64_t host_memory_size(void)
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return 0;
	return ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}
