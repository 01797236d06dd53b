/* The fuzz targets' input reader and guest RAM (see fuzz.h). */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/util.h"

struct guest_ram fuzz_ram;

uint8_t fuzz_u8(struct fuzz_input *in)
{
	uint8_t v = 0;

	if (in->len) {
		v = *in->data++;
		in->len--;
	}
	return v;
}

uint16_t fuzz_u16(struct fuzz_input *in)
{
	uint16_t lo = fuzz_u8(in);

	return lo | (uint16_t)fuzz_u8(in) << 8;
}

uint32_t fuzz_u32(struct fuzz_input *in)
{
	uint32_t lo = fuzz_u16(in);

	return lo | (uint32_t)fuzz_u16(in) << 16;
}

uint64_t fuzz_u64(struct fuzz_input *in)
{
	uint64_t lo = fuzz_u32(in);

	return lo | (uint64_t)fuzz_u32(in) << 32;
}

void fuzz_ram_fill(const struct guest_ram *ram, const uint8_t *image,
		   size_t len)
{
	uint8_t *host = guest_ram_ptr(ram, 0, ram->total);

	/* Dropping the pages zeroes them at the cost of the pages the last
	 * input touched, not of all of RAM. */
	if (!host || madvise(host, ram->total, MADV_DONTNEED)) {
		perror("fuzz: cannot zero guest RAM");
		abort();
	}
	if (len)
		memcpy(host, image, MIN(len, ram->total));
}

void fuzz_ram_load(const uint8_t *image, size_t len)
{
	static const struct ram_range r[] = { { 0, FUZZ_RAM_SIZE } };

	if (!fuzz_ram.total &&
	    guest_ram_map(&fuzz_ram, r, 1, RAM_BACKING_NO_THP, NULL)) {
		fprintf(stderr, "fuzz: cannot map guest RAM\n");
		abort();
	}
	fuzz_ram_fill(&fuzz_ram, image, len);
}

uint8_t *fuzz_gpa(uint64_t gpa)
{
	return guest_ram_ptr(&fuzz_ram, gpa, 1);
}
