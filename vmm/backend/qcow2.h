/* qcow2 images (QEMU's docs/interop/qcow2.txt): the header and its
 * extensions checked at open (qcow2.c), the lookup of a disk offset
 * through the L1 table and cached L2 tables to where its bytes are, and
 * on a writable image the writes, discards and flushes that allocate
 * clusters with exact refcounts (qcow2_write.c, qcow2_refcount.c).
 * Reads of data move in disk.c. Every offset and size read from the
 * image is checked before it is used: a crafted image gets one error at
 * open or an I/O error on the request that meets the bad entry. */
#ifndef THPVM_QCOW2_H
#define THPVM_QCOW2_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backend/disk_image.h"

#define QCOW2_MAGIC 0x514649fbu		/* "QFI\xfb" */
#define QCOW2_BACKING_NAME_MAX 1023	/* as QEMU bounds it */
/* Default L2 cache: enough tables to cover the whole disk, at most this
 * many bytes of them (QEMU's default ceiling on Linux). */
#define QCOW2_L2_CACHE_MAX (32u << 20)

struct qcow2;

/* Where the bytes of a run of the disk are. */
enum qcow2_kind {
	QCOW2_DATA,		/* in the image file at host */
	QCOW2_ZERO,		/* read as zeros */
	QCOW2_BACKING,		/* unallocated: the backing file's, or zeros */
	QCOW2_COMPRESSED,	/* one compressed cluster at host */
};

struct qcow2_extent {
	enum qcow2_kind kind;
	uint64_t host;		/* DATA: the run's first byte in the file;
				 * COMPRESSED: where the cluster's data
				 * starts */
	uint64_t len;		/* bytes of the disk from the asked offset */
	uint32_t csize;		/* COMPRESSED: bytes to read at host */
	uint32_t skip;		/* COMPRESSED: the offset's place in the
				 * cluster */
	bool copied;		/* DATA: its refcount is 1 (written in
				 * place) */
};

/* What the header names besides the disk. */
struct qcow2_info {
	uint64_t size;		/* the disk's bytes */
	unsigned cluster_size;
	unsigned version;
	char backing[QCOW2_BACKING_NAME_MAX + 1];	/* "" when none */
	char backing_format[17];	/* its format extension, or "" */
};

/* Checks the header of the image open in file (path names it in the
 * messages) and loads its L1 table, and with writable its refcount table
 * (its autoclear bits cleared). One message and -errno on failure: not
 * qcow2, a version or feature thpvm does not support (each named), or a
 * header that does not hold together. l2_cache: bytes of L2 tables to
 * keep, 0 for the default. */
int qcow2_open(struct qcow2 **out, struct disk_image *file, bool writable,
	       uint64_t l2_cache, struct qcow2_info *info);
void qcow2_close(struct qcow2 *q);

/* The run at offset, at most len bytes (both within the disk), whose
 * bytes are all of one kind and, for DATA, contiguous in the file.
 * Thread-safe. -EIO (with a rate-limited message) when an entry on the
 * way is corrupt, or the error reading a table. On success no cluster
 * is freed until qcow2_io_done: call it once the transfer of the run
 * has ended (at once where every transfer is drained before a flush,
 * as io_uring's are). */
int qcow2_map(struct qcow2 *q, uint64_t offset, uint64_t len,
	      struct qcow2_extent *e);
void qcow2_io_done(struct qcow2 *q);
/* A COMPRESSED extent's bytes into iov (e->len of them). -EIO when the
 * data does not inflate to exactly one cluster. */
int qcow2_read_compressed(struct qcow2 *q, const struct qcow2_extent *e,
			  const struct iovec *iov, unsigned nr);

/* What lies under the image, for copy-on-write: the backing file's
 * bytes, zeros past its end or without one. */
struct qcow2_below {
	int (*readv)(void *ctx, const struct iovec *iov, unsigned nr,
		     uint64_t offset);
	void *ctx;
};

/* Whole writes within the disk. Thread-safe; -EROFS on a read-only
 * image. */
int qcow2_writev(struct qcow2 *q, const struct iovec *iov, unsigned nr,
		 uint64_t offset, const struct qcow2_below *below);
/* Write-zeroes: the range reads as zeros afterwards. Whole clusters
 * become zero clusters (v3) or unallocated ones (v2 without a backing
 * file) and are freed; parts of clusters, and v2 clusters over a backing
 * file, are written with zeros. Discard does the same to whole clusters
 * (on v2 over a backing file they read as its bytes again) and leaves
 * parts of clusters alone: it is only advice. */
int qcow2_zero(struct qcow2 *q, uint64_t offset, uint64_t len, bool discard,
	       const struct qcow2_below *below);
/* The guest's flush: data, then every table that changed, on disk. */
int qcow2_flush(struct qcow2 *q);
/* Before the first change, once the image and its backing chain are
 * open: clears the autoclear bits, whose extensions (bitmaps) thpvm does
 * not keep up to date, as the specification asks. */
int qcow2_start_writing(struct qcow2 *q);

#endif
