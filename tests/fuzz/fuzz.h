/* What the fuzz targets share: the libFuzzer entry point each defines
 * (also run by replay.c, without libFuzzer, on the saved corpora), a
 * reader that takes a target's parameters from the front of its input,
 * and guest RAM that starts each input zeroed. */
#ifndef THPVM_FUZZ_H
#define THPVM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_ram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional, for a target that needs what a host may lack (KVM): why it
 * cannot run here, or NULL. The replay then skips it. */
const char *fuzz_unavailable(void) __attribute__((weak));

/* The unread part of an input. Reads past its end give zeros, so a short
 * input still means something. */
struct fuzz_input {
	const uint8_t *data;
	size_t len;
};

uint8_t fuzz_u8(struct fuzz_input *in);
uint16_t fuzz_u16(struct fuzz_input *in);
uint32_t fuzz_u32(struct fuzz_input *in);
uint64_t fuzz_u64(struct fuzz_input *in);

/* Guest RAM for the targets that drive the device side of a virtqueue:
 * FUZZ_RAM_SIZE bytes at guest-physical 0, mapped once per process. */
#define FUZZ_RAM_SIZE (2ULL << 20)
extern struct guest_ram fuzz_ram;

/* Zeroes ram (one region from guest-physical 0) and copies image to its
 * start (as much as fits), so that nothing a device wrote for one input
 * is seen by the next. */
void fuzz_ram_fill(const struct guest_ram *ram, const uint8_t *image,
		   size_t len);
/* fuzz_ram_fill on fuzz_ram, mapped on first use (aborting if it cannot). */
void fuzz_ram_load(const uint8_t *image, size_t len);
uint8_t *fuzz_gpa(uint64_t gpa);

#endif
