/* virtio-blk device (see blk.h). A request's layout (virtio 1.x, 5.2.6):
 * a 16-byte header {type, reserved, sector} in the readable part, data,
 * and a status byte, the last writable byte. Any of these may be split
 * across descriptors, so the code works on byte offsets in the chain. */
#include "virtio/blk.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_name.h"
#include "lib/util.h"

#define HEADER_SIZE 16
#define SEGMENT_SIZE 16		/* discard / write-zeroes segment */
#define SEG_MAX (BLK_QUEUE_SIZE - 2)	/* the header and status take two */
#define SIZE_MAX_BYTES (4u << 20)	/* largest data descriptor */
#define RANGE_MAX_SECTORS (1u << 22)	/* 2 GiB per discard segment */
#define RANGE_MAX_SEGS 32
#define DISCARD_ALIGN_SECTORS 8		/* 4 KiB: the host page */
#define WRITE_ZEROES_UNMAP 1u

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
	 * move on when the ring transfers less than asked. */
	struct iovec *iov;
	unsigned nr_iov;
	uint64_t offset, bytes, done;
	struct blk_result r;
};

static struct virtio_blk *to_blk(struct virtio_device *vdev)
{
	return vdev->opaque;
}

const char *blk_engine_name(enum blk_engine engine)
{
	switch (engine) {
	case BLK_ENGINE_IO_URING: return "io_uring";
	case BLK_ENGINE_THREADS: return "threads";
	default: return "auto";
	}
}

/* The data part of the chain: readable bytes after the header (skip) or
 * writable bytes before the status byte (trim), as an iovec array. */
static unsigned data_iov(const struct virtq_chain *c, bool writable,
			 struct iovec *out)
{
	unsigned n;

	if (!writable)
		return iov_slice(c->iov, c->nr_out, HEADER_SIZE, out);
	n = iov_slice(c->iov + c->nr_out, c->nr_in, 0, out);
	/* Drop the status byte at the end. */
	if (n && !--out[n - 1].iov_len)
		n--;
	return n;
}

static uint8_t *status_byte(const struct virtq_chain *c)
{
	unsigned i;

	for (i = c->nr_out + c->nr_in; i-- > c->nr_out;)
		if (c->iov[i].iov_len)
			return (uint8_t *)c->iov[i].iov_base +
			       c->iov[i].iov_len - 1;
	return NULL;
}

static bool segments_fit(const struct iovec *iov, unsigned n)
{
	unsigned i;

	if (n > SEG_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (iov[i].iov_len > SIZE_MAX_BYTES)
			return false;
	return true;
}

static bool in_range(const struct virtio_blk *blk, uint64_t sector,
		     uint64_t bytes)
{
	uint64_t capacity = blk->disk.size / DISK_SECTOR_SIZE;

	return sector <= capacity &&
	       bytes / DISK_SECTOR_SIZE <= capacity - sector;
}

static uint8_t io_status(struct virtio_blk *blk, int err, const char *what)
{
	if (!err)
		return VIRTIO_BLK_S_OK;
	pr_warn_ratelimited("%s: %s: %s", blk->name, what, strerror(-err));
	return VIRTIO_BLK_S_IOERR;
}

/* Discard and write-zeroes: an array of {sector, num_sectors, flags}. */
static uint8_t do_ranges(struct virtio_blk *blk, const struct virtq_chain *c,
			 uint32_t type)
{
	uint64_t bytes = c->out_bytes - HEADER_SIZE, i;
	bool discard = type == VIRTIO_BLK_T_DISCARD;
	uint32_t feature = discard ? VIRTIO_BLK_F_DISCARD :
				     VIRTIO_BLK_F_WRITE_ZEROES;
	uint8_t seg[SEGMENT_SIZE];
	int err = 0;

	if (!(blk->vdev.features & 1ULL << feature))
		return VIRTIO_BLK_S_UNSUPP;
	if (blk->disk.read_only || !bytes || bytes % SEGMENT_SIZE ||
	    bytes / SEGMENT_SIZE > RANGE_MAX_SEGS)
		return VIRTIO_BLK_S_IOERR;
	for (i = 0; i < bytes / SEGMENT_SIZE && !err; i++) {
		uint64_t sector;
		uint32_t count, flags;

		virtq_chain_read(c, HEADER_SIZE + i * SEGMENT_SIZE, seg,
				 sizeof(seg));
		sector = get_le64(seg);
		count = get_le32(seg + 8);
		flags = get_le32(seg + 12);
		/* Discard has no flags; write-zeroes only "unmap". */
		if (flags & ~(discard ? 0 : WRITE_ZEROES_UNMAP))
			return VIRTIO_BLK_S_UNSUPP;
		if (count > RANGE_MAX_SECTORS ||
		    !in_range(blk, sector, (uint64_t)count * DISK_SECTOR_SIZE))
			return VIRTIO_BLK_S_IOERR;
		if (discard)
			err = disk_image_discard(&blk->disk,
						 sector * DISK_SECTOR_SIZE,
						 (uint64_t)count * DISK_SECTOR_SIZE);
		else
			err = disk_image_write_zeroes(&blk->disk,
					sector * DISK_SECTOR_SIZE,
					(uint64_t)count * DISK_SECTOR_SIZE,
					flags & WRITE_ZEROES_UNMAP);
	}
	return io_status(blk, err, discard ? "discard" : "write zeroes");
}

static void prepare_rw(struct virtio_blk *blk, struct blk_request *req,
		       uint64_t sector)
{
	struct virtq_chain *c = &req->chain;
	bool write = req->type == VIRTIO_BLK_T_OUT;
	uint64_t bytes = write ? c->out_bytes - HEADER_SIZE : c->in_bytes - 1;

	req->iov = write ? c->iov : c->iov + c->nr_out;
	req->nr_iov = data_iov(c, !write, req->iov);
	if (bytes % DISK_SECTOR_SIZE || !in_range(blk, sector, bytes) ||
	    !segments_fit(req->iov, req->nr_iov) ||
	    (write && blk->disk.read_only))
		return;
	req->io = write ? IO_WRITE : IO_READ;
	req->offset = sector * DISK_SECTOR_SIZE;
	req->bytes = bytes;
	req->done = 0;
}

/* Reads and checks the request: what it does, or its answer. */
static void prepare(struct virtio_blk *blk, struct blk_request *req)
{
	struct virtq_chain *c = &req->chain;
	uint8_t hdr[HEADER_SIZE];

	req->io = IO_DONE;
	req->r = (struct blk_result){ VIRTIO_BLK_S_IOERR, 0 };
	req->status = status_byte(c);
	if (virtq_chain_read(c, 0, hdr, sizeof(hdr)) < sizeof(hdr))
		return;
	req->type = get_le32(hdr);
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		prepare_rw(blk, req, get_le64(hdr + 8));
		break;
	case VIRTIO_BLK_T_FLUSH:
		req->io = IO_FLUSH;
		break;
	case VIRTIO_BLK_T_GET_ID:
		req->r.written = virtq_chain_write(c, 0, blk->serial,
					MIN(c->in_bytes - 1,
					    sizeof(blk->serial)));
		req->r.status = VIRTIO_BLK_S_OK;
		break;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		req->io = IO_RANGES;
		break;
	default:
		req->r.status = VIRTIO_BLK_S_UNSUPP;
	}
}

/* The answer to a read, write or flush that ended with err. */
static void set_result(struct virtio_blk *blk, struct blk_request *req,
		       int err)
{
	static const char *const what[] = {
		[IO_READ] = "read", [IO_WRITE] = "write", [IO_FLUSH] = "flush",
	};

	req->r.status = io_status(blk, err, what[req->io]);
	req->r.written = !err && req->io == IO_READ ? req->bytes : 0;
}

/* Does the request with blocking calls. */
static void execute(struct virtio_blk *blk, struct blk_request *req)
{
	switch (req->io) {
	case IO_READ:
		set_result(blk, req, disk_image_readv(&blk->disk, req->iov,
						      req->nr_iov, req->offset));
		break;
	case IO_WRITE:
		set_result(blk, req, disk_image_writev(&blk->disk, req->iov,
						       req->nr_iov, req->offset));
		break;
	case IO_FLUSH:
		set_result(blk, req, disk_image_flush(&blk->disk));
		break;
	case IO_RANGES:
		req->r.status = do_ranges(blk, &req->chain, req->type);
		break;
	case IO_DONE:
		break;
	}
}

/* A request just went back to the spares: queues that stopped for want
 * of one (see drain_queue) get their threads to look at them again. */
static void retry_starved(struct virtio_blk *blk)
{
	unsigned q;

	for (q = 0; q < blk->nr_queues; q++) {
		if (!blk->queues[q].starved)
			continue;
		blk->queues[q].starved = false;
		virtio_queue_kick(&blk->vdev, q);
	}
}

/* With the lock held: the answer to the guest, and the request back to
 * the spares. The caller raises the interrupt, once per batch
 * (interrupt_pushed). */
static void complete(struct virtio_blk *blk, struct blk_request *req)
{
	struct blk_queue *bq = &blk->queues[req->q];

	*req->status = req->r.status;
	virtq_push(&blk->vdev.queues[req->q].vq, req->chain.head,
		   req->r.written + 1);
	bq->pushed = true;
	bq->inflight--;
	req->next = blk->spare;
	blk->spare = req;
	retry_starved(blk);
	if (!--blk->inflight)
		pthread_cond_broadcast(&blk->idle);
}

/* Queue q's interrupt, if anything was completed since the last. A
 * reset may have unmapped the queue while this thread had let the lock go
 * (ring_reap): then there is nobody to tell. */
static void interrupt_pushed(struct virtio_blk *blk, unsigned q)
{
	if (!blk->queues[q].pushed)
		return;
	blk->queues[q].pushed = false;
	if (blk->vdev.queues[q].enabled)
		virtio_queue_interrupt(&blk->vdev, q);
}

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

		execute(blk, req);

		pthread_mutex_lock(&vdev->lock);
		q = req->q;
		complete(blk, req);
		interrupt_pushed(blk, q);
	}
	pthread_mutex_unlock(&vdev->lock);
	return NULL;
}

static struct disk_ring *ring_of(struct virtio_blk *blk,
				 const struct blk_request *req)
{
	return &blk->queues[req->q].ring;
}

/* io_uring: the request's transfer, or what is left of it, queued on its
 * queue's ring. */
static void ring_queue(struct virtio_blk *blk, struct blk_request *req)
{
	int err = req->io == IO_FLUSH ?
		disk_ring_flush(ring_of(blk, req), (uintptr_t)req) :
		disk_ring_rw(ring_of(blk, req), req->io == IO_WRITE, req->iov,
			     req->nr_iov, req->offset, (uintptr_t)req);

	if (err) {
		set_result(blk, req, err);
		complete(blk, req);
	}
}

static void ring_done(struct virtio_blk *blk, struct blk_request *req,
		      int res)
{
	if (res == -EAGAIN || res == -EINTR) {
		ring_queue(blk, req);
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
			ring_queue(blk, req);
			return;
		}
	}
	set_result(blk, req, MIN(res, 0));
	complete(blk, req);
}

/* Submits what queue q's ring holds and answers the completions that have
 * arrived (with wait, at least one if anything is in flight): how many.
 * With let_go (the queue's own thread), the system calls run without the
 * lock, so that the queues copy page-cache data in parallel. A submission
 * that failed for good fails its requests, and every later one, with an
 * I/O error. */
static unsigned ring_reap(struct virtio_blk *blk, unsigned q, bool wait,
			  bool let_go)
{
	struct blk_queue *bq = &blk->queues[q];
	struct disk_ring_done done[32];
	int failed = bq->ring.failed, n, i, err;

	if (let_go) {
		bq->submitting = true;
		pthread_mutex_unlock(&blk->vdev.lock);
	}
	err = disk_ring_submit(&bq->ring);
	n = disk_ring_reap(&bq->ring, done, ARRAY_SIZE(done), wait);
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
	 * requests reaped here completed, not missing from the ring. */
	for (i = 0; i < n; i++)
		ring_done(blk, (struct blk_request *)(uintptr_t)done[i].tag,
			  done[i].res);
	if (let_go) {
		bq->submitting = false;
		pthread_cond_broadcast(&blk->settled);
	}
	return n;
}

/* With the lock held: everything in queue q's ring completed, or failed
 * with its submission. */
static void ring_wait_empty(struct virtio_blk *blk, unsigned q)
{
	struct disk_ring *ring = &blk->queues[q].ring;

	while (ring->in_flight || ring->queued) {
		/* Nothing came: a submission the kernel put off, or a wait
		 * that failed. Both pass; the kernel finishes what it took. */
		if (!ring_reap(blk, q, true, false))
			usleep(1000);
	}
}

/* With the lock held: every queue's ring empty, and what completed
 * signalled. The lock is held from a pass that found no queue's thread
 * submitting to its end, so nothing was added behind it. Another queue's
 * completions reaped here are signalled here too: reaping read its
 * ring's eventfd, so its own thread may never wake for them. */
static void rings_wait_empty(struct virtio_blk *blk)
{
	unsigned q;

retry:
	for (q = 0; q < blk->nr_queues; q++) {
		if (blk->queues[q].submitting) {
			pthread_cond_wait(&blk->settled, &blk->vdev.lock);
			goto retry;
		}
		ring_wait_empty(blk, q);
	}
	for (q = 0; q < blk->nr_queues; q++)
		interrupt_pushed(blk, q);
}

/* Starts a request on its queue's ring. Discard and write-zeroes, and
 * transfers that would go through the O_DIRECT bounce buffer (a widened
 * write is a read-modify-write of whole blocks), run here once every
 * ring is empty, so no transfer on any queue overlaps them: they are
 * rare, and blocking calls. */
static void ring_start(struct virtio_blk *blk, struct blk_request *req)
{
	if (req->io == IO_DONE) {
		complete(blk, req);
		return;
	}
	if (req->io == IO_RANGES ||
	    (req->io != IO_FLUSH &&
	     disk_image_bounces(&blk->disk, req->iov, req->nr_iov,
				req->offset))) {
		rings_wait_empty(blk);
		execute(blk, req);
		complete(blk, req);
		return;
	}
	ring_queue(blk, req);
}

/* A driver can have no more out than the ring holds; one that publishes
 * heads again would grow the pending list forever. */
static bool blk_may_take(struct virtio_device *vdev, unsigned q)
{
	struct virtio_blk *blk = to_blk(vdev);

	if (blk->queues[q].inflight < vdev->queues[q].vq.size)
		return true;
	virtio_device_error(vdev, "queue %u: more requests than the queue "
			    "holds", q);
	return false;
}

/* The next chain goes into the first spare request's own. Out of
 * memory: the guest will not kick again for chains it has published, so
 * the next completion must look again (retry_starved). One request is
 * made at creation and each is either spare or in flight, so that
 * completion comes. */
static struct virtq_chain *blk_next_chain(struct virtio_device *vdev,
					  unsigned q)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct blk_request *req = blk->spare;

	if (!req) {
		req = malloc(sizeof(*req));
		if (!req) {
			pr_warn_ratelimited("%s: out of memory", blk->name);
			blk->queues[q].starved = true;
			return NULL;
		}
		req->next = NULL;
		blk->spare = req;
	}
	return &req->chain;
}

/* The chain is the first spare request's (blk_next_chain). A chain with
 * no writable byte has nowhere for its status. */
static int64_t blk_serve(struct virtio_device *vdev, unsigned q,
			 const struct virtq_chain *c)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct blk_request *req = blk->spare;

	if (!c->in_bytes) {
		virtio_device_error(vdev, "request without a status byte");
		return -EIO;
	}
	blk->spare = req->next;
	req->q = q;
	blk->queues[q].inflight++;
	blk->inflight++;
	prepare(blk, req);
	if (blk->engine == BLK_ENGINE_IO_URING) {
		ring_start(blk, req);
	} else if (req->io == IO_DONE) {
		complete(blk, req);
	} else {
		req->next = NULL;
		*blk->pending_tail = req;
		blk->pending_tail = &req->next;
		pthread_cond_signal(&blk->work);
	}
	return -EINPROGRESS;
}

/* Every available chain, each completed (and interrupts raised) by the
 * engine. io_uring's ring_start may let the lock go to wait for the
 * rings (rings_wait_empty): a reset then ends the drain as broken, and
 * the look every enabled queue gets at DRIVER_OK afterwards turns
 * notifications back on. */
static const struct virtio_queue_server blk_server = {
	.may_take = blk_may_take,
	.chain = blk_next_chain,
	.serve = blk_serve,
};

static enum virtio_drain drain_queue(struct virtio_blk *blk, unsigned q)
{
	unsigned taken = 0;

	return virtio_queue_drain(&blk->vdev, q, &blk_server, &taken);
}

/* Worker threads: takes every available chain for the workers. */
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
		if (drain_queue(blk, q) != VIRTIO_DRAIN_EMPTY ||
		    !virtio_queue_ready(vdev, q) || !virtq_enable_notify(vq))
			break;
	}
	interrupt_pushed(blk, q);
	pthread_mutex_unlock(&vdev->lock);
}

/* With the lock let go, notifications off: new chains or completions
 * within the poll window? A guest that submits again soon then needs no
 * kick (an exit) and this thread no wake-up. The window doubles while
 * polling finds work and halves when it does not, between BLK_POLL_MIN_NS
 * and BLK_POLL_MAX_NS. */
static bool ring_poll(struct virtio_blk *blk, unsigned q)
{
	struct virtio_device *vdev = &blk->vdev;
	struct blk_queue *bq = &blk->queues[q];
	uint64_t end = monotonic_ns() + bq->poll_ns;
	bool work = false;

	do {
		pthread_mutex_lock(&vdev->lock);
		work = !virtio_queue_ready(vdev, q) ||
		       virtq_has_avail(&vdev->queues[q].vq) ||
		       disk_ring_pending(&bq->ring);
		pthread_mutex_unlock(&vdev->lock);
	} while (!work && monotonic_ns() < end);
	bq->poll_ns = work ? MIN(bq->poll_ns * 2, BLK_POLL_MAX_NS) :
			     MAX(bq->poll_ns / 2, BLK_POLL_MIN_NS);
	return work;
}

/* io_uring, on queue q's thread: takes every available chain and submits
 * them as one batch, answers what completed, raises one interrupt, and
 * polls for more before it turns notifications back on. */
static void ring_serve(struct virtio_blk *blk, unsigned q)
{
	struct virtio_device *vdev = &blk->vdev;
	struct virtq *vq = &vdev->queues[q].vq;

	pthread_mutex_lock(&vdev->lock);
	while (virtio_queue_ready(vdev, q)) {
		enum virtio_drain res;

		virtq_disable_notify(vq);
		res = drain_queue(blk, q);
		/* Page-cache hits complete inside the submission. */
		while (ring_reap(blk, q, false, true))
			;
		interrupt_pushed(blk, q);
		/* Notifications stay off while starved: a completion kicks. */
		if (res != VIRTIO_DRAIN_EMPTY)
			break;
		pthread_mutex_unlock(&vdev->lock);
		if (ring_poll(blk, q)) {
			pthread_mutex_lock(&vdev->lock);
			continue;
		}
		pthread_mutex_lock(&vdev->lock);
		if (!virtio_queue_ready(vdev, q) || !virtq_enable_notify(vq))
			break;
	}
	/* Completions that came after the last look. */
	while (ring_reap(blk, q, false, true))
		;
	interrupt_pushed(blk, q);
	pthread_mutex_unlock(&vdev->lock);
}

static void blk_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_blk *blk = to_blk(vdev);

	if (blk->engine == BLK_ENGINE_IO_URING)
		ring_serve(blk, q);
	else
		threads_serve(blk, q);
}

/* Queue q's ring's eventfd: completions that did not finish inline; the
 * guest may answer them with new requests, which ring_serve polls for. */
static void blk_ring_event(struct virtio_device *vdev, unsigned q,
			   uint32_t events)
{
	ring_serve(to_blk(vdev), q);
}

/* Requests taken before the pause finish first, as a paused VM's disk
 * must not change under whoever looks at it. */
static void blk_quiesce(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);

	if (blk->engine == BLK_ENGINE_IO_URING)
		rings_wait_empty(blk);
	while (blk->inflight)
		pthread_cond_wait(&blk->idle, &vdev->lock);
}

/* Requests not started yet are dropped; running ones finish first. */
static void blk_reset(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	unsigned q;

	while (blk->pending) {
		struct blk_request *req = blk->pending;

		blk->pending = req->next;
		req->next = blk->spare;
		blk->spare = req;
		blk->queues[req->q].inflight--;
		blk->inflight--;
	}
	blk->pending_tail = &blk->pending;
	for (q = 0; q < blk->nr_queues; q++)
		blk->queues[q].starved = false;
	blk_quiesce(vdev);
}

static const struct virtio_device_ops blk_ops = {
	.queue_notify = blk_queue_notify,
	.reset = blk_reset,
	.quiesce = blk_quiesce,
	.watch_event = blk_ring_event,
};

static void fill_config(struct virtio_blk *blk)
{
	struct virtio_blk_config *c = &blk->config;

	put_le64(&c->capacity, blk->disk.size / DISK_SECTOR_SIZE);
	put_le32(&c->size_max, SIZE_MAX_BYTES);
	put_le32(&c->seg_max, SEG_MAX);
	put_le32(&c->blk_size, DISK_SECTOR_SIZE);
	put_le16(&c->num_queues, blk->nr_queues);
	put_le32(&c->max_discard_sectors, RANGE_MAX_SECTORS);
	put_le32(&c->max_discard_seg, RANGE_MAX_SEGS);
	put_le32(&c->discard_sector_alignment, DISCARD_ALIGN_SECTORS);
	put_le32(&c->max_write_zeroes_sectors, RANGE_MAX_SECTORS);
	put_le32(&c->max_write_zeroes_seg, RANGE_MAX_SEGS);
	c->write_zeroes_may_unmap = 1;
}

/* One request from the start, so that running out of memory always
 * leaves one in flight whose completion retries (see drain_queue). */
static int make_first_request(struct virtio_blk *blk)
{
	blk->spare = calloc(1, sizeof(*blk->spare));
	if (blk->spare)
		return 0;
	pr_err("%s: out of memory", blk->name);
	return -ENOMEM;
}

static int start_workers(struct virtio_blk *blk, unsigned index)
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

/* A ring per queue, each watched by its queue's thread. */
static int start_rings(struct virtio_blk *blk)
{
	unsigned q;
	int err = 0;

	for (q = 0; q < blk->nr_queues && !err; q++) {
		struct disk_ring *ring = &blk->queues[q].ring;

		err = disk_ring_init(ring, &blk->disk, BLK_QUEUE_SIZE);
		if (!err)
			err = virtio_device_watch(&blk->vdev, q, ring->event_fd,
						  EPOLLIN);
	}
	if (err)
		for (q = 0; q < blk->nr_queues; q++)
			disk_ring_exit(&blk->queues[q].ring);
	return err;
}

/* io_uring unless told otherwise; where the kernel or a sandbox refuses
 * it, threads, unless io_uring was asked for by name. */
static int start_engine(struct virtio_blk *blk, unsigned index,
			enum blk_engine engine)
{
	int err;

	if (engine != BLK_ENGINE_THREADS) {
		err = start_rings(blk);
		if (!err) {
			blk->engine = BLK_ENGINE_IO_URING;
			return 0;
		}
		if (engine == BLK_ENGINE_IO_URING) {
			pr_err("%s: cannot use io_uring: %s", blk->name,
			       strerror(-err));
			return err;
		}
		pr_debug("%s: io_uring refused (%s): worker threads instead",
			 blk->name, strerror(-err));
	}
	blk->engine = BLK_ENGINE_THREADS;
	return start_workers(blk, index);
}

int virtio_blk_create(struct virtio_blk *blk, unsigned index,
		      const char *path, const struct blk_options *opts,
		      const struct guest_ram *ram)
{
	uint16_t queue_sizes[BLK_MAX_QUEUES];
	uint64_t features = 1ULL << VIRTIO_BLK_F_SIZE_MAX |
			    1ULL << VIRTIO_BLK_F_SEG_MAX |
			    1ULL << VIRTIO_BLK_F_BLK_SIZE |
			    1ULL << VIRTIO_BLK_F_FLUSH;
	unsigned q;
	int err;

	memset(blk, 0, sizeof(*blk));
	blk->disk.fd = -1;
	blk->pending_tail = &blk->pending;
	pthread_cond_init(&blk->work, NULL);
	pthread_cond_init(&blk->idle, NULL);
	pthread_cond_init(&blk->settled, NULL);
	snprintf(blk->name, sizeof(blk->name), "virtio-blk%u", index);
	/* Up to 20 bytes, no terminator needed (the guest pads). */
	snprintf(blk->serial, sizeof(blk->serial), "thpvm-disk%u", index);
	if (!opts->queues || opts->queues > BLK_MAX_QUEUES) {
		pr_err("%s: %u queues: expected 1 to %u", blk->name,
		       opts->queues, BLK_MAX_QUEUES);
		return -EINVAL;
	}
	blk->nr_queues = opts->queues;
	for (q = 0; q < blk->nr_queues; q++) {
		queue_sizes[q] = BLK_QUEUE_SIZE;
		blk->queues[q].poll_ns = BLK_POLL_MIN_NS;
	}

	err = disk_image_open(&blk->disk, path, opts->read_only, opts->direct);
	if (err)
		return err;
	if (opts->read_only)
		features |= 1ULL << VIRTIO_BLK_F_RO;
	else
		features |= 1ULL << VIRTIO_BLK_F_DISCARD |
			    1ULL << VIRTIO_BLK_F_WRITE_ZEROES;
	if (blk->nr_queues > 1)
		features |= 1ULL << VIRTIO_BLK_F_MQ;
	fill_config(blk);
	err = virtio_device_init(&blk->vdev, blk->name, VIRTIO_ID_BLOCK,
				 features, blk->nr_queues, queue_sizes,
				 &blk->config, sizeof(blk->config), &blk_ops,
				 blk, ram);
	if (err)
		pr_err("%s: cannot set up the device: %s", blk->name,
		       strerror(-err));
	if (!err && blk->nr_queues > 1)
		err = virtio_device_thread_per_queue(&blk->vdev);
	if (!err)
		err = make_first_request(blk);
	if (!err)
		err = start_engine(blk, index, opts->engine);
	if (err)
		virtio_blk_destroy(blk);
	return err;
}

void virtio_blk_destroy(struct virtio_blk *blk)
{
	struct blk_request *req;
	unsigned i;

	virtio_device_destroy(&blk->vdev);
	pthread_mutex_lock(&blk->vdev.lock);
	blk->stopping = true;
	pthread_cond_broadcast(&blk->work);
	pthread_mutex_unlock(&blk->vdev.lock);
	for (i = 0; i < blk->nr_workers; i++)
		pthread_join(blk->workers[i], NULL);
	for (i = 0; i < blk->nr_queues; i++)
		disk_ring_exit(&blk->queues[i].ring);
	while ((req = blk->spare)) {
		blk->spare = req->next;
		free(req);
	}
	disk_image_close(&blk->disk);
}
