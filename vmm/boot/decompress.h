/* Host-side decompression of Linux bzImage payloads (the compressed
 * vmlinux), so that a kernel can be loaded as an ELF. */
#ifndef THPVM_DECOMPRESS_H
#define THPVM_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum compression {
	COMPRESSION_NONE,
	COMPRESSION_GZIP,
	COMPRESSION_XZ,
	COMPRESSION_LZMA,
	COMPRESSION_ZSTD,
	COMPRESSION_LZ4, /* the legacy frame format Linux uses */
	COMPRESSION_BZIP2,
	COMPRESSION_LZO,
};

/* Recognises the format by its magic bytes; COMPRESSION_NONE if none
 * matches. */
enum compression compression_detect(const uint8_t *data, size_t len);

/* "gzip", "xz", ...; "none" for COMPRESSION_NONE. */
const char *compression_name(enum compression c);

/* Whether decompress can unpack c: every format but bzip2 and lzo. */
bool compression_can_unpack(enum compression c);

/* Decompresses one stream into a malloc'd buffer (*out, *out_len; the
 * caller frees it). Bytes after the end of the stream (such as the size
 * word Linux appends) are ignored. COMPRESSION_NONE copies the input.
 * Returns 0; -EINVAL for corrupt or truncated input and -ENOMEM, each
 * after one pr_err line that says why; or, left for the caller to say
 * in its own terms, -EFBIG if the output would exceed max_out bytes and
 * -ENOTSUP for a format it cannot unpack (compression_can_unpack). */
int decompress(enum compression c, const uint8_t *in, size_t in_len,
	       size_t max_out, uint8_t **out, size_t *out_len);

/* decompress, straight into dst (such as guest RAM, which saves a copy
 * of the output and bounds it by where it goes): at most dst_size bytes,
 * else -EFBIG. On an error dst holds whatever was decoded. */
int decompress_into(enum compression c, const uint8_t *in, size_t in_len,
		    uint8_t *dst, size_t dst_size, size_t *out_len);

#endif
