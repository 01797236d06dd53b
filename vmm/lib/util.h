/* Small helpers shared by the whole VMM. */
#ifndef THPVM_UTIL_H
#define THPVM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((uint64_t)(a) - 1)) == 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
/* A macro's value as a string literal, for messages that quote a limit. */
#define STRINGIFY(x) STRINGIFY_(x)
#define STRINGIFY_(x) #x

/* Parses "512M", "2G", "4096K", "600" or "65536B": suffixes K, M, G, T
 * are binary, case-insensitive, with an optional trailing "iB"/"B"; "B"
 * alone is bytes and a bare number is MiB, as for lkvm's and QEMU's -m
 * and balloon commands. Returns 0, -EINVAL (malformed), -EDOM (a size
 * of zero, "0" or "0M": an error unless the caller takes zero) or
 * -ERANGE (overflows 64 bits). */
int size_parse(const char *s, uint64_t *out);

/* Formats a byte count as "512 MiB" / "1.5 GiB" into buf. */
const char *size_format(uint64_t bytes, char *buf, size_t len);

/* Parses a decimal unsigned integer that must fill the whole string. */
int uint_parse(const char *s, unsigned long max, unsigned long *out);

/* The size of a regular file, or of a block device (whose st_size is 0),
 * st being fd's. Returns 0, -EINVAL for anything else, or -errno. */
struct stat;
int fd_size(int fd, const struct stat *st, uint64_t *size);

/* Reads a whole regular file or block device into a malloc'd buffer.
 * Returns 0 or -errno; one larger than max_size gives -EFBIG, anything
 * else (a directory, a pipe) -EINVAL. */
int file_read_all(const char *path, size_t max_size, uint8_t **data,
		  size_t *size);

struct iovec;
/* The bytes iov[0..nr) holds. */
uint64_t iov_bytes(const struct iovec *iov, unsigned nr);
/* The bytes of iov[0..nr) from skip on, as entries written to dst, which
 * may be iov itself (each entry is read before it can be overwritten).
 * Empty entries are left out. Returns the number of entries in dst. */
unsigned iov_slice(const struct iovec *iov, unsigned nr, uint64_t skip,
		   struct iovec *dst);
/* Shortens iov[0..nr) in place to its first len bytes. Returns the
 * number of entries left. */
unsigned iov_truncate(struct iovec *iov, unsigned nr, uint64_t len);
/* Copies between iov[0..nr), from skip bytes in, and a flat buffer.
 * Return the bytes copied: fewer than len where the entries end. */
uint64_t iov_to_buf(const struct iovec *iov, unsigned nr, uint64_t skip,
		    void *buf, uint64_t len);
uint64_t buf_to_iov(const struct iovec *iov, unsigned nr, uint64_t skip,
		    const void *buf, uint64_t len);

/* Adds 1 to an eventfd's counter, to wake whoever polls it. Returns 0 or
 * -errno. A full counter (EAGAIN) counts as done: it wakes them too. */
int eventfd_signal(int fd);

/* Milliseconds of CLOCK_MONOTONIC since start (taken with clock_gettime). */
struct timespec;
double time_ms_since(const struct timespec *start);

/* The byte that makes the len bytes at p sum to zero with it (the
 * checksums of ACPI and MP tables). */
uint8_t byte_checksum(const uint8_t *p, size_t len);

/* CLOCK_MONOTONIC, for deadlines and poll windows. */
uint64_t monotonic_ns(void);
int64_t monotonic_ms(void);

/* Little-endian loads from byte buffers that come from files or guests. */
static inline uint16_t get_le16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t get_le32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t get_le64(const void *p)
{
	return get_le32(p) | (uint64_t)get_le32((const uint8_t *)p + 4) << 32;
}

static inline void put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = v;
	b[1] = v >> 8;
}

static inline void put_le32(void *p, uint32_t v)
{
	put_le16(p, v);
	put_le16((uint8_t *)p + 2, v >> 16);
}

static inline void put_le64(void *p, uint64_t v)
{
	put_le32(p, v);
	put_le32((uint8_t *)p + 4, v >> 32);
}

/* Big-endian loads and stores (qcow2's headers and tables). */
static inline uint16_t get_be16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t get_be32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static inline uint64_t get_be64(const void *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32((const uint8_t *)p + 4);
}

static inline void put_be16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = v >> 8;
	b[1] = v;
}

static inline void put_be32(void *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16((uint8_t *)p + 2, v);
}

static inline void put_be64(void *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32((uint8_t *)p + 4, v);
}

#endif
