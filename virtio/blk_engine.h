/* Inside virtio-blk: the request protocol (blk.c) and the engines that
 * run its requests on the image, io_uring (blk_uring.c) and worker
 * threads (blk_threads.c), see each other through this header; nothing
 * else includes it. The protocol takes chains off the virtqueues, checks
 * them and answers them; an engine moves the data and says when. */
#ifndef THPVM_VIRTIO_BLK_ENGINE_H
#define THPVM_VIRTIO_BLK_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtio/blk.h"

/* What a request does once taken and checked. */
enum blk_io {
	IO_DONE,	/* answered while taken: r holds the answer */
	IO_READ,
	IO_WRITE,
	IO_FLUSH,
	IO_RANGES,	/* discard, write-zeroes: blocking calls */
};

struct blk_result {
	uint8_t status;
	uint32_t written;	/* bytes written into the guest's buffers */
};

struct blk_request {
	struct blk_request *next;
	unsigned q;		/* the queue it came from */
	struct virtq_chain chain;
	uint8_t *status;	/* the chain's last writable byte */
	enum blk_io io;
	uint32_t type;
	/* IO_READ, IO_WRITE: the data, sliced in place out of chain.iov
	 * (nothing reads the chain's entries afterwards); offset and iov
	 * move on when an engine transfers less than asked. offset is the
	 * disk's until io_uring queues it, the image file's after. */
	struct iovec *iov;
	unsigned nr_iov;
	uint64_t offset, bytes, done;
	struct blk_result r;
};

/* An engine. Every hook but start and stop runs with vdev.lock held,
 * unless it says otherwise. */
struct blk_engine_ops {
	/* At creation, before the device's threads run: 0 or -errno, with
	 * what it started undone or left for stop. Says nothing itself
	 * (io_uring refused: the caller falls back to threads). */
	int (*start)(struct virtio_blk *blk, unsigned index);
	/* At destruction, once the device's threads have stopped: stops
	 * and frees what start made; safe after a start that failed. */
	void (*stop)(struct virtio_blk *blk);
	/* Queue q's notification (or its watched fd's event), on the
	 * queue's thread, without the lock: takes the queue's chains
	 * (blk_take_requests) and raises the interrupts they are due. */
	void (*serve)(struct virtio_blk *blk, unsigned q);
	/* Runs a request taken and checked (not IO_DONE) and completes it
	 * with blk_complete, now or later. May let the lock go. */
	void (*submit)(struct virtio_blk *blk, struct blk_request *req);
	/* Optional, on reset: requests not started yet go back to the
	 * spares, uncompleted. */
	void (*drop_queued)(struct virtio_blk *blk);
	/* Optional, on pause and reset: drives to completion what only
	 * the engine's own calls complete (io_uring reaps its rings;
	 * workers need no help), before the protocol waits for every
	 * request taken to complete. May let the lock go. */
	void (*quiesce)(struct virtio_blk *blk);
};

extern const struct blk_engine_ops blk_uring_engine;
extern const struct blk_engine_ops blk_threads_engine;

/* The protocol's side, for the engines. */
/* Takes queue q's available chains as requests and submits them to the
 * engine. VIRTIO_DRAIN_STOPPED: out of memory (the next completion
 * kicks the queue), or more requests than the queue holds (the device
 * needs a reset). */
enum virtio_drain blk_take_requests(struct virtio_blk *blk, unsigned q);
/* Does the request with blocking calls. */
void blk_execute(struct virtio_blk *blk, struct blk_request *req);
/* The answer to a read, write or flush that ended with err. */
void blk_set_result(struct virtio_blk *blk, struct blk_request *req,
		    int err);
/* The answer to the guest, and the request back to the spares. The
 * caller raises the interrupt, once per batch (blk_interrupt_pushed). */
void blk_complete(struct virtio_blk *blk, struct blk_request *req);
/* Queue q's interrupt, if anything was completed since the last. */
void blk_interrupt_pushed(struct virtio_blk *blk, unsigned q);

#endif
