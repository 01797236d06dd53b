/* virtio-blk (virtio 1.x, 5.2) over a disk image: read, write, flush, get
 * ID, discard and write-zeroes, on one request queue or several
 * (VIRTIO_BLK_F_MQ), each served by a thread of its own. Requests run on
 * one of two engines: io_uring (the default where the kernel allows it),
 * a ring per queue, submitted and completed in batches on the queue's
 * thread, or a few worker threads doing blocking calls. */
#ifndef THPVM_VIRTIO_BLK_H
#define THPVM_VIRTIO_BLK_H

#include <linux/virtio_blk.h>
#include <pthread.h>
#include <stdbool.h>

#include "backend/disk.h"
#include "backend/disk_ring.h"
#include "virtio/virtio.h"

#define BLK_WORKERS 4
#define BLK_QUEUE_SIZE 256
#define BLK_MAX_QUEUES VIRTIO_MAX_QUEUES
/* io_uring's poll window after a batch (see uring_poll); the ceiling is
 * QEMU's iothreads' default poll-max-ns. */
#define BLK_POLL_MIN_NS 2000
#define BLK_POLL_MAX_NS 32000

enum blk_engine {
	BLK_ENGINE_AUTO,	/* io_uring, or threads where it is refused */
	BLK_ENGINE_IO_URING,
	BLK_ENGINE_THREADS,
};

struct blk_options {
	struct disk_options disk;	/* format, ro, O_DIRECT */
	enum blk_engine engine;	/* how its requests run */
	unsigned queues;	/* request queues, 1 to BLK_MAX_QUEUES */
};

struct blk_request;
struct blk_engine_ops;

/* A request queue's own state, under vdev.lock. */
struct blk_queue {
	unsigned inflight;	/* taken from it and not yet completed */
	/* Chains were left on the virtqueue for want of memory; the next
	 * completion kicks the queue. */
	bool starved;
	bool pushed;		/* used entries not yet signalled */
	/* BLK_ENGINE_IO_URING: the queue's io_uring. Its thread lets the
	 * lock go while it submits and reaps, and says so with submitting;
	 * anyone else waits for that to clear before touching the
	 * io_uring. */
	struct disk_ring uring;
	bool submitting;
	uint64_t poll_ns;	/* its poll window, its thread's own */
};

struct virtio_blk {
	struct virtio_device vdev;
	struct disk disk;
	struct virtio_blk_config config;
	char name[24];
	char serial[VIRTIO_BLK_ID_BYTES];
	enum blk_engine engine;		/* the one running: not AUTO */
	const struct blk_engine_ops *engine_ops;	/* its hooks */
	unsigned nr_queues;
	struct blk_queue queues[BLK_MAX_QUEUES];

	/* Under vdev.lock: requests taken from the queues and not yet
	 * completed, and spare ones. */
	unsigned inflight;
	struct blk_request *spare;
	pthread_cond_t idle;		/* inflight dropped to 0 */
	/* BLK_ENGINE_IO_URING: */
	pthread_cond_t settled;		/* a queue's submitting cleared */
	/* BLK_ENGINE_THREADS: requests waiting for a worker, and the
	 * workers. */
	struct blk_request *pending;
	struct blk_request **pending_tail;
	pthread_cond_t work;		/* pending is not empty, or stopping */
	bool stopping;
	pthread_t workers[BLK_WORKERS];
	unsigned nr_workers;
};

/* Opens the image (one message on failure) and starts the engine; index
 * names the device (virtio-blk0...) and its default serial. */
int virtio_blk_create(struct virtio_blk *blk, unsigned index,
		      const char *path, const struct blk_options *opts,
		      const struct guest_ram *ram);
void virtio_blk_destroy(struct virtio_blk *blk);
const char *blk_engine_name(enum blk_engine engine);

#endif
