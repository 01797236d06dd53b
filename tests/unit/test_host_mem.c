/* Host page sizes: this host's, and the THP size from files written
 * here, including the fallbacks for a missing or bad one. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/host_mem.h"
#include "lib/util.h"
#include "unit.h"

static void test_this_host(void)
{
	uint64_t page = host_page_size(), thp = host_thp_size();
	unsigned long long sys = 0;
	FILE *f;

	CHECK_EQ(page, (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK(thp > page && IS_ALIGNED(thp, page));
	f = fopen(HOST_THP_SIZE_PATH, "r");
	if (f) {
		CHECK_EQ(fscanf(f, "%llu", &sys), 1);
		fclose(f);
		CHECK_EQ(thp, sys);
	}
}

/* RAM plus swap, as /proc/meminfo counts them. */
static void test_memory_size(void)
{
	unsigned long long kib, total = 0;
	char key[64];
	FILE *f = fopen("/proc/meminfo", "r");

	CHECK(f);
	if (!f)
		return;
	while (fscanf(f, "%63s %llu kB", key, &kib) == 2)
		if (!strcmp(key, "MemTotal:") || !strcmp(key, "SwapTotal:"))
			total += kib << 10;
	fclose(f);
	CHECK(total > 0);
	CHECK_EQ(host_memory_size(), total);
}

/* What a file says, or the PMD size the page size implies. */
static uint64_t from_text(const char *text, uint64_t page)
{
	char path[] = "/tmp/thpvm-thp-XXXXXX";
	int fd = mkstemp(path);
	uint64_t size;

	CHECK(fd >= 0);
	if (fd < 0)
		return 0;
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	size = host_thp_size_from(path, page);
	unlink(path);
	return size;
}

static void test_sizes(void)
{
	CHECK_EQ(from_text("2097152\n", 4 * KiB), 2 * MiB);
	/* arm64 with 64 KiB pages. */
	CHECK_EQ(from_text("536870912\n", 64 * KiB), 512 * MiB);
	CHECK_EQ(from_text("", 64 * KiB), 512 * MiB);
	CHECK_EQ(from_text("garbage", 16 * KiB), 32 * MiB);
	CHECK_EQ(from_text("3000000", 4 * KiB), 2 * MiB);
	CHECK_EQ(from_text("4096", 4 * KiB), 2 * MiB);
	CHECK_EQ(host_thp_size_from("/nonexistent", 4 * KiB), 2 * MiB);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_this_host),
		UNIT_TEST(test_memory_size),
		UNIT_TEST(test_sizes),
	};

	return UNIT_RUN(tests);
}
