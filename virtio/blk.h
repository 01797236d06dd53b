/* virtio-blk (virtio 1.x, 5.2) over a disk image: read, write, flush, get
 * ID, discard and write-zeroes. Requests run on one of two engines:
 * io_uring (the default where the kernel allows it), submitted and
 * completed in batches on the device thread, or a few worker threads
 * doing blocking calls. */
#ifndef THPVM_VIRTIO_BLK_H
#define THPVM_VIRTIO_BLK_H

#include <linux/virtio_blk.h>
#include <pthread.h>
#include <stdbool.h>

#include "backend/disk_image.h"
#include "backend/disk_ring.h"
#include "virtio/virtio.h"

#define BLK_WORKERS 4
#define BLK_QUEUE_SIZE 256
/* io_uring's poll window after a batch (see ring_poll); the ceiling is
 * QEMU's iothreads' default poll-max-ns. */
#define BLK_POLL_MIN_NS 2000
#define BLK_POLL_MAX_NS 32000

enum blk_engine {
	BLK_ENGINE_AUTO,	/* io_uring, or threads where it is refused */
	BLK_ENGINE_IO_URING,
	BLK_ENGINE_THREADS,
};

struct blk_request;

struct virtio_blk {
	struct virtio_device vdev;
	struct disk_image disk;
	struct virtio_blk_config config;
	char name[24];
	char serial[VIRTIO_BLK_ID_BYTES];
	enum blk_engine engine;		/* the one running: not AUTO */

	/* Under vdev.lock: requests taken from the queue and not yet
	 * completed, those waiting for a worker, and spare ones. */
	unsigned inflight;
	struct blk_request *pending;
	struct blk_request **pending_tail;
	struct blk_request *spare;
	pthread_cond_t work;		/* pending is not empty, or stopping */
	pthread_cond_t idle;		/* inflight dropped to 0 */
	/* drain_queue left chains on the ring for want of memory; the next
	 * completion kicks the queue. */
	bool starved;
	bool pushed;			/* used entries not yet signalled */
	bool stopping;
	pthread_t workers[BLK_WORKERS];
	unsigned nr_workers;
	struct disk_ring ring;		/* BLK_ENGINE_IO_URING */
	uint64_t poll_ns;		/* its poll window, device thread's */
};

/* Opens the image (one message on failure) and starts the engine; index
 * names the device (virtio-blk0...) and its default serial. */
int virtio_blk_create(struct virtio_blk *blk, unsigned index,
		      const char *path, bool read_only, bool direct,
		      enum blk_engine engine, const struct guest_ram *ram);
void virtio_blk_destroy(struct virtio_blk *blk);
const char *blk_engine_name(enum blk_engine engine);

#endif
