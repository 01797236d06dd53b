/* virtio-blk device (see blk.h): its request protocol. Requests are
 * taken off the virtqueues, checked and answered here; an engine
 * (blk_engine.h: blk_uring.c, blk_threads.c) moves their data. A
 * request's layout (virtio 1.x, 5.2.6): a 16-byte header {type,
 * reserved, sector} in the readable part, data, and a status byte, the
 * last writable byte. Any of these may be split across descriptors, so
 * the code works on byte offsets in the chain. */
#include "virtio/blk.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "virtio/blk_engine.h"

#define HEADER_SIZE 16
#define SEGMENT_SIZE 16		/* discard / write-zeroes segment */
#define SEG_MAX (BLK_QUEUE_SIZE - 2)	/* the header and status take two */
#define SIZE_MAX_BYTES (4u << 20)	/* largest data descriptor */
#define RANGE_MAX_SECTORS (1u << 22)	/* 2 GiB per discard segment */
#define RANGE_MAX_SEGS 32
#define DISCARD_ALIGN_SECTORS 8		/* 4 KiB: the host page */
#define WRITE_ZEROES_UNMAP 1u

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
			err = disk_discard(&blk->disk,
						 sector * DISK_SECTOR_SIZE,
						 (uint64_t)count * DISK_SECTOR_SIZE);
		else
			err = disk_write_zeroes(&blk->disk,
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

void blk_set_result(struct virtio_blk *blk, struct blk_request *req,
		    int err)
{
	static const char *const what[] = {
		[IO_READ] = "read", [IO_WRITE] = "write", [IO_FLUSH] = "flush",
	};

	req->r.status = io_status(blk, err, what[req->io]);
	req->r.written = !err && req->io == IO_READ ? req->bytes : 0;
}

void blk_execute(struct virtio_blk *blk, struct blk_request *req)
{
	switch (req->io) {
	case IO_READ:
		blk_set_result(blk, req, disk_readv(&blk->disk, req->iov,
						 req->nr_iov, req->offset));
		break;
	case IO_WRITE:
		blk_set_result(blk, req, disk_writev(&blk->disk, req->iov,
						  req->nr_iov, req->offset));
		break;
	case IO_FLUSH:
		blk_set_result(blk, req, disk_flush(&blk->disk));
		break;
	case IO_RANGES:
		req->r.status = do_ranges(blk, &req->chain, req->type);
		break;
	case IO_DONE:
		break;
	}
}

/* A request just went back to the spares: queues that stopped for want
 * of one (see blk_next_chain) get their threads to look at them again. */
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

void blk_complete(struct virtio_blk *blk, struct blk_request *req)
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

/* A reset may have unmapped the queue while this thread had let the
 * lock go (an engine's): then there is nobody to tell. */
void blk_interrupt_pushed(struct virtio_blk *blk, unsigned q)
{
	if (!blk->queues[q].pushed)
		return;
	blk->queues[q].pushed = false;
	if (blk->vdev.queues[q].enabled)
		virtio_queue_interrupt(&blk->vdev, q);
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
	if (req->io == IO_DONE)
		blk_complete(blk, req);
	else
		blk->engine_ops->submit(blk, req);
	return -EINPROGRESS;
}

/* Each chain straight into a request, handed to the engine, which
 * completes it and raises the interrupts. io_uring's submit may let the
 * lock go to wait for every queue's io_uring: a reset then ends the
 * drain as broken, and the look every enabled queue gets at DRIVER_OK
 * afterwards turns notifications back on. */
static const struct virtio_queue_server blk_server = {
	.may_take = blk_may_take,
	.chain = blk_next_chain,
	.serve = blk_serve,
};

enum virtio_drain blk_take_requests(struct virtio_blk *blk, unsigned q)
{
	unsigned taken = 0;

	return virtio_queue_drain(&blk->vdev, q, &blk_server, &taken);
}

static void blk_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_blk *blk = to_blk(vdev);

	blk->engine_ops->serve(blk, q);
}

/* An engine's fd (io_uring's eventfd: completions that did not finish
 * inline) is its queue's business too. */
static void blk_watch_event(struct virtio_device *vdev, unsigned q,
			    uint32_t events)
{
	blk_queue_notify(vdev, q);
}

/* Requests taken before the pause finish first, as a paused VM's disk
 * must not change under whoever looks at it. */
static void blk_quiesce(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);

	if (blk->engine_ops->quiesce)
		blk->engine_ops->quiesce(blk);
	while (blk->inflight)
		pthread_cond_wait(&blk->idle, &vdev->lock);
}

/* Requests not started yet are dropped; running ones finish first. */
static void blk_reset(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	unsigned q;

	/* No engine yet (a creation that failed): nothing was taken. */
	if (!blk->engine_ops)
		return;
	if (blk->engine_ops->drop_queued)
		blk->engine_ops->drop_queued(blk);
	for (q = 0; q < blk->nr_queues; q++)
		blk->queues[q].starved = false;
	blk_quiesce(vdev);
}

static const struct virtio_device_ops blk_ops = {
	.queue_notify = blk_queue_notify,
	.reset = blk_reset,
	.quiesce = blk_quiesce,
	.watch_event = blk_watch_event,
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
 * leaves one in flight whose completion retries (see blk_next_chain). */
static int make_first_request(struct virtio_blk *blk)
{
	blk->spare = calloc(1, sizeof(*blk->spare));
	if (blk->spare)
		return 0;
	pr_err("%s: out of memory", blk->name);
	return -ENOMEM;
}

/* io_uring unless told otherwise; where the kernel or a sandbox refuses
 * it, threads, unless io_uring was asked for by name. */
static int start_engine(struct virtio_blk *blk, unsigned index,
			enum blk_engine engine)
{
	int err;

	if (engine != BLK_ENGINE_THREADS) {
		blk->engine_ops = &blk_uring_engine;
		err = blk_uring_engine.start(blk, index);
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
	blk->engine_ops = &blk_threads_engine;
	return blk_threads_engine.start(blk, index);
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
	blk->disk.file.fd = -1;
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

	err = disk_open(&blk->disk, path, &opts->disk);
	if (err)
		return err;
	if (blk->disk.read_only)
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

	virtio_device_destroy(&blk->vdev);
	if (blk->engine_ops)
		blk->engine_ops->stop(blk);
	while ((req = blk->spare)) {
		blk->spare = req->next;
		free(req);
	}
	disk_close(&blk->disk);
}
