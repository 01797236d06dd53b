/* A virtual disk: an image file (disk_image.h) in a format, raw or
 * qcow2 (read-write; its backing files read-only), and for qcow2 the
 * chain of backing files under it. Formats are
 * given (format=) or detected from the image's first bytes; a detected
 * qcow2 image may not name a backing file, since a guest that can write
 * a raw image could otherwise make it name any host file. */
#ifndef THPVM_DISK_H
#define THPVM_DISK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backend/disk_image.h"

/* Backing files below an image, at most. */
#define DISK_MAX_BACKING 16

enum disk_format {
	DISK_FORMAT_AUTO,	/* qcow2 if its magic says so, else raw */
	DISK_FORMAT_RAW,
	DISK_FORMAT_QCOW2,
};

struct disk_options {
	bool read_only;
	bool direct;		/* O_DIRECT, for backing files too */
	enum disk_format format;
	uint64_t l2_cache;	/* qcow2: bytes of L2 tables, 0: default */
};

struct qcow2;

struct disk {
	struct disk_image file;		/* the image file itself */
	enum disk_format format;	/* RAW or QCOW2 once open */
	struct qcow2 *qcow2;		/* QCOW2: its metadata */
	struct disk *backing;		/* QCOW2: what it lies on, or NULL */
	char *backing_path;		/* a backing disk's own path */
	uint64_t size;			/* the guest's bytes: whole sectors */
	bool read_only;
};

/* Opens the image and its backing chain, read-only below the top. One
 * message and -errno on failure. */
int disk_open(struct disk *d, const char *path, const struct disk_options *o);
void disk_close(struct disk *d);
const char *disk_format_name(enum disk_format format);

/* Whole transfers at the disk's offsets; -errno on error (-EROFS for a
 * change to a read-only disk). */
int disk_readv(struct disk *d, const struct iovec *iov, unsigned nr,
	       uint64_t offset);
int disk_writev(struct disk *d, const struct iovec *iov, unsigned nr,
		uint64_t offset);
int disk_flush(struct disk *d);
int disk_discard(struct disk *d, uint64_t offset, uint64_t len);
int disk_write_zeroes(struct disk *d, uint64_t offset, uint64_t len,
		      bool unmap);
/* Whether [offset, offset + len) of the disk is one contiguous range of
 * the image file, at *file_offset, that a read (or with write, a write
 * in place) may move directly (io_uring). Otherwise the range needs
 * disk_readv or disk_writev. */
bool disk_map(struct disk *d, uint64_t offset, uint64_t len, bool write,
	      uint64_t *file_offset);
/* A raw disk: its flush is the file's alone (a qcow2 one writes its
 * tables too, with disk_flush). */
bool disk_is_raw(const struct disk *d);

#endif
