/* virtio-blk's worker-thread engine (see blk_engine.h): each queue's
 * thread takes chains off its virtqueue and appends them to one pending
 * list; BLK_WORKERS workers per disk take requests off it, do them with
 * blocking calls without the lock, and complete them in any order on the
 * queue each came from. The fallback where io_uring is refused. */
#include <pthread.h>
#include <string.h>

#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_name.h"
#include "virtio/blk_engine.h"

static void *worker(void *arg)
{
	struct virtio_blk *blk = arg;
	struct virtio_device *vdev = &blk->vdev;
	struct blk_request *req;
	unsigned q;

	sandbox_enter(SANDBOX_DEVICE);
	pthread_mutex_lock(&vdev->lock);
	for (;;) {
		while (!blk->pending && !blk->stopping)
			pthread_cond_wait(&blk->work, &vdev->lock);
		if (blk->stopping)
			break;
		req = blk->pending;
		blk->pending = req->next;
		if (!blk->pending)
			blk->pending_tail = &blk->pending;
		pthread_mutex_unlock(&vdev->lock);

		blk_execute(blk, req);

		pthread_mutex_lock(&vdev->lock);
		q = req->q;
		blk_complete(blk, req);
		blk_interrupt_pushed(blk, q);
	}
	pthread_mutex_unlock(&vdev->lock);
	return NULL;
}

static int threads_start(struct virtio_blk *blk, unsigned index)
{
	unsigned i;
	int err;

	for (i = 0; i < BLK_WORKERS; i++) {
		err = -pthread_create(&blk->workers[i], NULL, worker, blk);
		if (err) {
			pr_err("%s: cannot start a worker: %s", blk->name,
			       strerror(-err));
			return err;
		}
		thread_name_set(blk->workers[i], "blk%u-io", index);
		blk->nr_workers++;
	}
	return 0;
}

static void threads_stop(struct virtio_blk *blk)
{
	unsigned i;

	pthread_mutex_lock(&blk->vdev.lock);
	blk->stopping = true;
	pthread_cond_broadcast(&blk->work);
	pthread_mutex_unlock(&blk->vdev.lock);
	for (i = 0; i < blk->nr_workers; i++)
		pthread_join(blk->workers[i], NULL);
	blk->nr_workers = 0;
}

/* Takes every available chain for the workers. */
static void threads_serve(struct virtio_blk *blk, unsigned q)
{
	struct virtio_device *vdev = &blk->vdev;
	struct virtq *vq = &vdev->queues[q].vq;

	/* Readiness is checked under the lock: a reset may have come
	 * between the notification and here. */
	pthread_mutex_lock(&vdev->lock);
	while (virtio_queue_ready(vdev, q)) {
		virtq_disable_notify(vq);
		/* Notifications stay off while starved: a completion kicks. */
		if (blk_take_requests(blk, q) != VIRTIO_DRAIN_EMPTY ||
		    !virtio_queue_ready(vdev, q) || !virtq_enable_notify(vq))
			break;
	}
	blk_interrupt_pushed(blk, q);
	pthread_mutex_unlock(&vdev->lock);
}

static void threads_submit(struct virtio_blk *blk, struct blk_request *req)
{
	req->next = NULL;
	*blk->pending_tail = req;
	blk->pending_tail = &req->next;
	pthread_cond_signal(&blk->work);
}

static void threads_drop_queued(struct virtio_blk *blk)
{
	while (blk->pending) {
		struct blk_request *req = blk->pending;

		blk->pending = req->next;
		req->next = blk->spare;
		blk->spare = req;
		blk->queues[req->q].inflight--;
		blk->inflight--;
	}
	blk->pending_tail = &blk->pending;
}

const struct blk_engine_ops blk_threads_engine = {
	.start = threads_start,
	.stop = threads_stop,
	.serve = threads_serve,
	.submit = threads_submit,
	.drop_queued = threads_drop_queued,
};
