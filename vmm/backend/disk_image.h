/* An image file or block device as bytes (disk.c gives it a format),
 * opened read-write or read-only, optionally with O_DIRECT, and locked so
 * that two VMs cannot both write it (an OFD lock: a write lock for a
 * read-write disk, a read lock for a read-only one, as QEMU does). */
#ifndef THPVM_DISK_IMAGE_H
#define THPVM_DISK_IMAGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#define DISK_SECTOR_SIZE 512

struct disk_image {
	const char *path;
	int fd;
	uint64_t size;		/* bytes; whole sectors */
	uint64_t file_bytes;	/* bytes, the last sector's part included */
	bool read_only;
	bool direct;		/* O_DIRECT */
	bool block_device;
	unsigned direct_align;	/* buffer and offset alignment for O_DIRECT */
	/* O_DIRECT writes of partial blocks read, modify and write whole
	 * blocks: they hold this exclusively, other writes shared, so two
	 * requests sharing a block never lose each other's bytes. */
	pthread_rwlock_t rmw_lock;
};

/* Prints one message and returns -errno on failure: missing, locked by
 * another process, smaller than a sector, or not a file or block device. */
int disk_image_open(struct disk_image *d, const char *path, bool read_only,
		    bool direct);
void disk_image_close(struct disk_image *d);

/* Whole transfers (short reads and writes are retried); -errno on error.
 * Unaligned buffers under O_DIRECT go through a bounce buffer of at most
 * 1 MiB, whatever the request's size. */
int disk_image_readv(struct disk_image *d, const struct iovec *iov,
		     unsigned nr, uint64_t offset);
int disk_image_writev(struct disk_image *d, const struct iovec *iov,
		      unsigned nr, uint64_t offset);
int disk_image_flush(struct disk_image *d);
/* Whether a transfer of iov at offset goes through the bounce buffer:
 * O_DIRECT with a buffer, length or offset off the image's alignment. */
bool disk_image_bounces(const struct disk_image *d, const struct iovec *iov,
			unsigned nr, uint64_t offset);
/* Deallocates the range (it reads as zeros afterwards on files). */
int disk_image_discard(struct disk_image *d, uint64_t offset, uint64_t len);
/* Makes the range read as zeros, deallocating it if unmap is set. */
int disk_image_write_zeroes(struct disk_image *d, uint64_t offset,
			    uint64_t len, bool unmap);

#endif
