/* The arm64 Linux Image header (Documentation/arch/arm64/booting.rst):
 * where in a 2 MiB-aligned block the kernel goes and how much memory it
 * takes from there. thpvm places it at the start of RAM, which every
 * kernel accepts, so the placement flags are not needed. */
#ifndef THPVM_ARM64_IMAGE_H
#define THPVM_ARM64_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define ARM64_IMAGE_HEADER_SIZE 64

struct arm64_image {
	uint64_t text_offset;	/* from a 2 MiB-aligned base */
	uint64_t image_size;	/* memory from there, bss included */
};

/* Reads the header of an uncompressed Image of len bytes. Returns 0, or
 * -EINVAL with *why saying what is wrong (no magic, big-endian, sizes
 * that do not add up). */
int arm64_image_parse(const uint8_t *data, size_t len,
		      struct arm64_image *img, const char **why);

#endif
