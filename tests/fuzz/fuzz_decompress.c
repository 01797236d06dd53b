/* Host decompression of every format thpvm unpacks (boot/decompress.c):
 * the first byte picks the format (or, with its top bit set, lets
 * compression_detect pick it from the magic bytes), the second the
 * output bound, the rest is the stream. Both ways to unpack are run: into
 * a buffer of its own, and straight into a fixed one. */
#include <stdlib.h>
#include <string.h>

#include "boot/decompress.h"
#include "fuzz.h"

#define OUT_MAX (1u << 20)

static uint8_t dst[OUT_MAX];

/* ASan's costs, not the decoders', set this target's pace: each large
 * allocation (a dictionary or window a header declares, up to the 256 MiB
 * decompress.c allows) had its shadow filled, faulted in and given back,
 * which held it near 500 inputs a second here. Shadow pages are kept,
 * allocations over 32 MiB fail (the decoders' out-of-memory paths get
 * fuzzed too) and the quarantine stays small, which is still well over
 * the 1 MiB output buffers whose reuse after a realloc it is there to
 * catch. The same 8,000 inputs (one seed, one corpus) took 11.3 s
 * before and 3.2 s after. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "clear_shadow_mmap_threshold=1099511627776:"
	       "max_allocation_size_mb=32:allocator_may_return_null=1:"
	       "quarantine_size_mb=16";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t pick = fuzz_u8(&in);
	/* From 256 bytes to 1 MiB: small bounds reach the -EFBIG paths. */
	size_t max = (size_t)256 << (fuzz_u8(&in) % 13);
	enum compression c;
	size_t out_len;
	uint8_t *out;

	c = pick & 0x80 ? compression_detect(in.data, in.len) :
			  (enum compression)(pick % (COMPRESSION_LZO + 1));
	compression_name(c);
	if (!decompress(c, in.data, in.len, max, &out, &out_len)) {
		if (out_len > max)
			abort();
		free(out);
	}
	if (compression_can_unpack(c) &&
	    !decompress_into(c, in.data, in.len, dst, max, &out_len) &&
	    out_len > max)
		abort();
	return 0;
}
