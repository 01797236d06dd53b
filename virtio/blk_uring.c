/* virtio-blk's io_uring engine (see blk_engine.h): an io_uring per
 * virtqueue (backend/disk_ring.c), on which the queue's thread queues
 * the transfers of every chain it takes, submits them as one batch and
 * answers their completions, the lock let go around the system calls.
 * Names here say which ring: uring_* and bq->uring are the io_uring,
 * the virtqueue is vq with its avail and used rings. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "virtio/blk_engine.h"

static struct disk_ring *uring_of(struct virtio_blk *blk,
				  const struct blk_request *req)
{
	return &blk->queues[req->q].uring;
}

/* The request's transfer, or what is left of it, queued on its queue's
 * io_uring. */
static void uring_queue(struct virtio_blk *blk, struct blk_request *req)
{
	int err = req->io == IO_FLUSH ?
		disk_ring_flush(uring_of(blk, req), (uintptr_t)req) :
		disk_ring_rw(uring_of(blk, req), req->io == IO_WRITE,
			     req->iov, req->nr_iov, req->offset,
			     (uintptr_t)req);

	if (err) {
		blk_set_result(blk, req, err);
		blk_complete(blk, req);
	}
}

static void uring_done(struct virtio_blk *blk, struct blk_request *req,
		       int res)
{
	if (res == -EAGAIN || res == -EINTR) {
		uring_queue(blk, req);
		return;
	}
	if (req->io != IO_FLUSH && res >= 0) {
		/* Less than asked (0: the image shrank under us): the rest
		 * goes again. Nothing asked is done, as on threads. */
		if (!res && req->bytes) {
			res = -EIO;
		} else if ((req->done += res) < req->bytes) {
			req->offset += res;
			req->nr_iov = iov_slice(req->iov, req->nr_iov, res,
						req->iov);
			uring_queue(blk, req);
			return;
		}
	}
	blk_set_result(blk, req, MIN(res, 0));
	blk_complete(blk, req);
}

/* Submits what queue q's io_uring holds and answers the completions that
 * have arrived (with wait, at least one if anything is in flight): how
 * many. With let_go (the queue's own thread), the system calls run
 * without the lock, so that the queues copy page-cache data in
 * parallel. A submission that failed for good fails its requests, and
 * every later one, with an I/O error. */
static unsigned uring_reap(struct virtio_blk *blk, unsigned q, bool wait,
			   bool let_go)
{
	struct blk_queue *bq = &blk->queues[q];
	struct disk_ring_done done[32];
	int failed = bq->uring.failed, n, i, err;

	if (let_go) {
		bq->submitting = true;
		pthread_mutex_unlock(&blk->vdev.lock);
	}
	err = disk_ring_submit(&bq->uring);
	n = disk_ring_reap(&bq->uring, done, ARRAY_SIZE(done), wait);
	if (let_go)
		pthread_mutex_lock(&blk->vdev.lock);
	if (err && err != -EAGAIN && !failed)
		pr_warn("%s: io_uring submission failed: %s; its requests "
			"fail from now on", blk->name, strerror(-err));
	if (n < 0) {
		pr_warn_ratelimited("%s: waiting for io_uring: %s", blk->name,
				    strerror(-n));
		n = 0;
	}
	/* Before submitting clears: whoever waits for it must find the
	 * requests reaped here completed, not missing from the io_uring. */
	for (i = 0; i < n; i++)
		uring_done(blk, (struct blk_request *)(uintptr_t)done[i].tag,
			   done[i].res);
	if (let_go) {
		bq->submitting = false;
		pthread_cond_broadcast(&blk->settled);
	}
	return n;
}

/* With the lock held: everything in queue q's io_uring completed, or
 * failed with its submission. */
static void uring_wait_empty(struct virtio_blk *blk, unsigned q)
{
	struct disk_ring *uring = &blk->queues[q].uring;

	while (uring->in_flight || uring->queued) {
		/* Nothing came: a submission the kernel put off, or a wait
		 * that failed. Both pass; the kernel finishes what it took. */
		if (!uring_reap(blk, q, true, false))
			usleep(1000);
	}
}

/* With the lock held: every queue's io_uring empty, and what completed
 * signalled. The lock is held from a pass that found no queue's thread
 * submitting to its end, so nothing was added behind it. Another
 * queue's completions reaped here are signalled here too: reaping read
 * its io_uring's eventfd, so its own thread may never wake for them. */
static void uring_wait_all_empty(struct virtio_blk *blk)
{
	unsigned q;

retry:
	for (q = 0; q < blk->nr_queues; q++) {
		if (blk->queues[q].submitting) {
			pthread_cond_wait(&blk->settled, &blk->vdev.lock);
			goto retry;
		}
		uring_wait_empty(blk, q);
	}
	for (q = 0; q < blk->nr_queues; q++)
		blk_interrupt_pushed(blk, q);
}

/* Starts a request on its queue's io_uring, its offset turned into the
 * image file's. Discard and write-zeroes, transfers that would go
 * through the O_DIRECT bounce buffer (a widened write is a
 * read-modify-write of whole blocks), those that are not one run of the
 * file (qcow2: backing files, compressed or zero clusters, runs split
 * across the file, writes that allocate) and a qcow2 image's flushes
 * (its tables are written then) run here with blocking calls once every
 * io_uring is empty, so no transfer on any queue overlaps them. */
static void uring_submit(struct virtio_blk *blk, struct blk_request *req)
{
	uint64_t at = 0;

	if (req->io == IO_RANGES ||
	    (req->io == IO_FLUSH && !disk_is_raw(&blk->disk)) ||
	    (req->io != IO_FLUSH &&
	     (!disk_map(&blk->disk, req->offset, req->bytes,
			req->io == IO_WRITE, &at) ||
	      disk_image_bounces(&blk->disk.file, req->iov, req->nr_iov,
				 at)))) {
		uring_wait_all_empty(blk);
		blk_execute(blk, req);
		blk_complete(blk, req);
		return;
	}
	if (req->io != IO_FLUSH)
		req->offset = at;
	uring_queue(blk, req);
}

/* With the lock let go, notifications off: new chains or completions
 * within the poll window? A guest that submits again soon then needs no
 * kick (an exit) and this thread no wake-up. The window doubles while
 * polling finds work and halves when it does not, between BLK_POLL_MIN_NS
 * and BLK_POLL_MAX_NS. */
static bool uring_poll(struct virtio_blk *blk, unsigned q)
{
	struct virtio_device *vdev = &blk->vdev;
	struct blk_queue *bq = &blk->queues[q];
	uint64_t end = monotonic_ns() + bq->poll_ns;
	bool work = false;

	do {
		pthread_mutex_lock(&vdev->lock);
		work = !virtio_queue_ready(vdev, q) ||
		       virtq_has_avail(&vdev->queues[q].vq) ||
		       disk_ring_pending(&bq->uring);
		pthread_mutex_unlock(&vdev->lock);
	} while (!work && monotonic_ns() < end);
	bq->poll_ns = work ? MIN(bq->poll_ns * 2, BLK_POLL_MAX_NS) :
			     MAX(bq->poll_ns / 2, BLK_POLL_MIN_NS);
	return work;
}

/* On queue q's thread, for a notification of its virtqueue or an event
 * of its io_uring's eventfd (completions that did not finish inline,
 * which the guest may answer with new requests): takes every available
 * chain and submits them as one batch, answers what completed, raises
 * one interrupt, and polls for more before it turns notifications back
 * on. */
static void uring_serve(struct virtio_blk *blk, unsigned q)
{
	struct virtio_device *vdev = &blk->vdev;
	struct virtq *vq = &vdev->queues[q].vq;

	pthread_mutex_lock(&vdev->lock);
	while (virtio_queue_ready(vdev, q)) {
		enum virtio_drain res;

		virtq_disable_notify(vq);
		res = blk_take_requests(blk, q);
		/* Page-cache hits complete inside the submission. */
		while (uring_reap(blk, q, false, true))
			;
		blk_interrupt_pushed(blk, q);
		/* Notifications stay off while starved: a completion kicks. */
		if (res != VIRTIO_DRAIN_EMPTY)
			break;
		pthread_mutex_unlock(&vdev->lock);
		if (uring_poll(blk, q)) {
			pthread_mutex_lock(&vdev->lock);
			continue;
		}
		pthread_mutex_lock(&vdev->lock);
		if (!virtio_queue_ready(vdev, q) || !virtq_enable_notify(vq))
			break;
	}
	/* Completions that came after the last look. */
	while (uring_reap(blk, q, false, true))
		;
	blk_interrupt_pushed(blk, q);
	pthread_mutex_unlock(&vdev->lock);
}

static void uring_stop(struct virtio_blk *blk)
{
	unsigned q;

	for (q = 0; q < blk->nr_queues; q++)
		disk_ring_exit(&blk->queues[q].uring);
}

/* An io_uring per queue, each watched by its queue's thread. */
static int uring_start(struct virtio_blk *blk, unsigned index)
{
	unsigned q;
	int err = 0;

	for (q = 0; q < blk->nr_queues && !err; q++) {
		struct disk_ring *uring = &blk->queues[q].uring;

		err = disk_ring_init(uring, &blk->disk.file, BLK_QUEUE_SIZE);
		if (!err)
			err = virtio_device_watch(&blk->vdev, q,
						  uring->event_fd, EPOLLIN);
	}
	if (err)
		uring_stop(blk);
	return err;
}

const struct blk_engine_ops blk_uring_engine = {
	.start = uring_start,
	.stop = uring_stop,
	.serve = uring_serve,
	.submit = uring_submit,
	.quiesce = uring_wait_all_empty,
};
