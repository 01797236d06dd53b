/* Asynchronous transfers and flushes on a disk image through io_uring:
 * requests are queued, submitted in batches and completed in batches,
 * most of them without a thread switch (a read from the page cache
 * completes inside the submitting call). The ring is locked down when it
 * is made: the image is its only file (registered, required on every
 * request) and readv, writev and fsync its only operations, so a bug
 * that reached the ring could do no more than the image allows. An
 * eventfd says when completions arrive (all of them: one that completes
 * on the block device's interrupt is posted by task work in the
 * submitting thread, which an "async only" eventfd would not count). */
#ifndef THPVM_DISK_RING_H
#define THPVM_DISK_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backend/disk_image.h"

struct disk_ring {
	struct io_uring ring;
	int file_fd;		/* the image, registered (see reopen()) */
	int event_fd;		/* readable: completions wait in the ring */
	unsigned queued;	/* prepared, not yet taken by the kernel */
	unsigned in_flight;	/* taken by the kernel, not yet reaped */
	int failed;		/* -errno of a submission that failed for
				 * good, or 0 */
	bool ready;
};

struct disk_ring_done {
	uint64_t tag;		/* what the request was queued with */
	int res;		/* bytes moved, 0 for a flush, or -errno */
};

/* A ring of entries requests for d. Returns 0 or -errno (the kernel has
 * no io_uring, or a sandbox refused it: the caller falls back to
 * threads); says nothing itself. */
int disk_ring_init(struct disk_ring *r, struct disk_image *d,
		   unsigned entries);
void disk_ring_exit(struct disk_ring *r);

/* Queues a transfer of iov's bytes at offset (iov must stay valid until
 * it completes), or a flush that starts only once everything queued
 * before it has completed. -EBUSY when even a submission leaves no
 * room; the failed submission's error once one has failed for good. */
int disk_ring_rw(struct disk_ring *r, bool write, const struct iovec *iov,
		 unsigned nr, uint64_t offset, uint64_t tag);
int disk_ring_flush(struct disk_ring *r, uint64_t tag);
/* Hands what was queued to the kernel. 0; -EAGAIN when the kernel put
 * some off while others are in flight (a call after their completions
 * tries again; with none in flight it waits up to a second itself); or
 * another -errno, after which the ring takes nothing more: what it had
 * queued completes with that error in disk_ring_reap, and so do later
 * requests at once. */
int disk_ring_submit(struct disk_ring *r);
/* Completions are waiting to be reaped. */
bool disk_ring_pending(struct disk_ring *r);
/* Up to max completions that have arrived, without waiting; with wait,
 * waits for one first if none has (and something is in flight).
 * Returns how many were stored, or -errno when the wait failed. */
int disk_ring_reap(struct disk_ring *r, struct disk_ring_done *out,
		   unsigned max, bool wait);

#endif
