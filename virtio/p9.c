/* virtio-9p device (see p9.h). The device thread takes chains off the
 * queue and reads their header: a Tflush it answers itself or holds on
 * the request it names, anything else goes to the pending list, where
 * P9_WORKERS workers take requests in turn and answer them with
 * p9_server_handle, without the lock, straight from and into the
 * chain's buffers. A request's chain goes back to the guest with its
 * reply, then the Tflushes held on it with theirs. A worker that
 * answered one and finds none pending polls the queue a while for the
 * next (answer_and_poll), so that a guest with one request at a time costs
 * neither a kick nor a thread's wake-up per request. */
#include "virtio/p9.h"

#include <errno.h>
#include <linux/virtio_9p.h>
#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_start.h"
#include "lib/util.h"

#define REQ_QUEUE 0
/* A Tflush: the header, then oldtag[2]. */
#define TFLUSH_SIZE (P9_HEADER_SIZE + 2)

/* The server takes as many buffers as a chain can have. */
_Static_assert(VIRTQ_MAX_SIZE <= P9_MAX_BUFFERS, "a chain's buffers");

struct p9_request {
	struct p9_request *next;	/* in its list */
	uint16_t tag;
	/* Tflushes naming this request, answered after it, in order. */
	struct p9_request *flushes;
	struct virtq_chain chain;
};

static struct virtio_p9 *to_p9(struct virtio_device *vdev)
{
	return vdev->opaque;
}

/* Back to the spares: its chain is used, or the driver reset. */
static void request_free(struct virtio_p9 *p9, struct p9_request *req)
{
	req->next = p9->spare;
	p9->spare = req;
	if (!--p9->inflight)
		pthread_cond_broadcast(&p9->idle);
}

/* Rflush: the header alone. */
static void push_rflush(struct virtio_p9 *p9, struct p9_request *flush)
{
	uint8_t reply[P9_HEADER_SIZE];

	put_le32(reply, sizeof(reply));
	reply[4] = P9_RFLUSH;
	put_le16(reply + 5, flush->tag);
	virtq_chain_write(&flush->chain, 0, reply, sizeof(reply));
	virtq_push(&p9->vdev.queues[REQ_QUEUE].vq, flush->chain.head,
		   sizeof(reply));
	request_free(p9, flush);
}

/* The pending or running request with tag, or NULL. */
static struct p9_request *request_find(struct virtio_p9 *p9, uint16_t tag)
{
	struct p9_request *lists[] = { p9->running, p9->pending };
	struct p9_request *req;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(lists); i++)
		for (req = lists[i]; req; req = req->next)
			if (req->tag == tag)
				return req;
	return NULL;
}

static void flush_hold(struct p9_request *target, struct p9_request *flush)
{
	struct p9_request **tail = &target->flushes;

	while (*tail)
		tail = &(*tail)->next;
	flush->next = NULL;
	*tail = flush;
}

/* A driver can have no more out than the ring holds; one that publishes
 * heads again would take every request. */
static bool p9_may_take(struct virtio_device *vdev, unsigned q)
{
	struct virtio_p9 *p9 = to_p9(vdev);

	if (p9->inflight < vdev->queues[q].vq.size)
		return true;
	virtio_device_error(vdev, "more requests than the queue holds");
	return false;
}

/* The first spare request's chain: p9_may_take leaves one, as there are
 * P9_QUEUE_SIZE of them and no queue is larger. */
static struct virtq_chain *p9_next_chain(struct virtio_device *vdev,
					 unsigned q)
{
	return &to_p9(vdev)->spare->chain;
}

/* The chain is the first spare's (p9_next_chain). Every request has a
 * header to read and room for one in its reply, or the guest broke the
 * protocol. */
static int64_t p9_serve(struct virtio_device *vdev, unsigned q,
			const struct virtq_chain *c)
{
	struct virtio_p9 *p9 = to_p9(vdev);
	struct p9_request *req = p9->spare, *target;
	uint8_t hdr[TFLUSH_SIZE];
	uint64_t got;

	if (c->out_bytes < P9_HEADER_SIZE || c->in_bytes < P9_HEADER_SIZE) {
		virtio_device_error(vdev, "request without room for a 9p "
				    "header (%llu bytes readable, %llu "
				    "writable)",
				    (unsigned long long)c->out_bytes,
				    (unsigned long long)c->in_bytes);
		return -EIO;
	}
	got = virtq_chain_read(c, 0, hdr, sizeof(hdr));
	p9->spare = req->next;
	p9->inflight++;
	req->tag = get_le16(hdr + 5);
	req->flushes = NULL;
	/* A Tflush whose size is not a Tflush's is the server's to refuse. */
	if (hdr[4] == P9_TFLUSH && got == TFLUSH_SIZE &&
	    get_le32(hdr) == TFLUSH_SIZE) {
		target = request_find(p9, get_le16(hdr + P9_HEADER_SIZE));
		if (target)
			flush_hold(target, req);
		else
			push_rflush(p9, req);
		return -EINPROGRESS;
	}
	req->next = NULL;
	*p9->pending_tail = req;
	p9->pending_tail = &req->next;
	/* A polling worker takes the first itself. */
	if (!p9->polling || p9->pending != req)
		pthread_cond_signal(&p9->work);
	return -EINPROGRESS;
}

static const struct virtio_queue_server p9_server = {
	.may_take = p9_may_take,
	.chain = p9_next_chain,
	.serve = p9_serve,
};

/* A poll that gave up sizes the window by when the next request came:
 * soon after (a longer window would have caught it), it doubles; later,
 * it halves (as KVM sizes its halt polling). */
static void poll_window_update(struct virtio_p9 *p9)
{
	uint64_t late;

	if (!p9->poll_missed)
		return;
	late = monotonic_ns() - p9->poll_missed;
	p9->poll_ns = late < P9_POLL_MAX_NS ?
		      MIN(p9->poll_ns * 2, P9_POLL_MAX_NS) :
		      MAX(p9->poll_ns / 2, P9_POLL_MIN_NS);
	p9->poll_missed = 0;
}

static void p9_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_p9 *p9 = to_p9(vdev);

	pthread_mutex_lock(&vdev->lock);
	poll_window_update(p9);
	virtio_queue_serve(vdev, q, &p9_server);
	pthread_mutex_unlock(&vdev->lock);
}

static struct p9_request *pending_take(struct virtio_p9 *p9)
{
	struct p9_request *req = p9->pending;

	p9->pending = req->next;
	if (!p9->pending)
		p9->pending_tail = &p9->pending;
	req->next = p9->running;
	p9->running = req;
	return req;
}

static void running_remove(struct virtio_p9 *p9, struct p9_request *req)
{
	struct p9_request **p = &p9->running;

	while (*p != req)
		p = &(*p)->next;
	*p = req->next;
}

/* req, and the flushes held on it, back to the spares unanswered. */
static void drop_with_flushes(struct virtio_p9 *p9, struct p9_request *req)
{
	struct p9_request *flush;

	while ((flush = req->flushes)) {
		req->flushes = flush->next;
		request_free(p9, flush);
	}
	request_free(p9, req);
}

/* A worker answered req with len bytes: the reply, then the flushes
 * held on it, and the interrupt. -EPROTO: the guest broke the protocol,
 * and the device needs a reset, which nothing on this queue outlives. */
static void request_done(struct virtio_p9 *p9, struct p9_request *req,
			 int64_t len)
{
	struct virtio_device *vdev = &p9->vdev;
	struct p9_request *flush;

	running_remove(p9, req);
	if (len < 0) {
		virtio_device_error(vdev, "request %u: no 9p header, or no "
				    "room for a reply", req->tag);
		drop_with_flushes(p9, req);
		return;
	}
	virtq_push(&vdev->queues[REQ_QUEUE].vq, req->chain.head, len);
	while ((flush = req->flushes)) {
		req->flushes = flush->next;
		push_rflush(p9, flush);
	}
	request_free(p9, req);
	virtio_queue_interrupt(vdev, REQ_QUEUE);
}

/* Answers req and polls until a request is pending: notifications go
 * off before the reply goes out, as the guest's next request may follow
 * it at once and then needs no kick; the lock is let go between looks,
 * and chains are taken here, for up to the window (poll_window_update).
 * Then notifications go back on, and
 * what the guest adds meanwhile is the device thread's, so that other
 * workers take it while this one answers its own. One worker polls at
 * a time (another just answers), never while the device pauses, resets
 * or stops. Called and returns with the lock held. */
static void answer_and_poll(struct virtio_p9 *p9, struct p9_request *req,
			    int64_t len)
{
	struct virtio_device *vdev = &p9->vdev;
	struct virtq *vq = &vdev->queues[REQ_QUEUE].vq;
	uint64_t end = monotonic_ns() + p9->poll_ns;
	unsigned taken = 0;
	uint16_t used;

	if (p9->polling) {
		request_done(p9, req, len);
		return;
	}
	p9->polling = true;
	if (virtio_queue_ready(vdev, REQ_QUEUE))
		virtq_disable_notify(vq);
	request_done(p9, req, len);
	while (!p9->pending && !p9->stopping && !vdev->paused &&
	       virtio_queue_ready(vdev, REQ_QUEUE) && monotonic_ns() < end) {
		if (virtq_has_avail(vq)) {
			used = vq->used_idx;
			virtio_queue_drain(vdev, REQ_QUEUE, &p9_server, &taken);
			/* Tflushes answered at once; not on a queue that
			 * broke. */
			if (virtio_queue_ready(vdev, REQ_QUEUE) &&
			    vq->used_idx != used)
				virtio_queue_interrupt(vdev, REQ_QUEUE);
			continue;
		}
		/* A reset or pause may come in between. */
		pthread_mutex_unlock(&vdev->lock);
		pthread_mutex_lock(&vdev->lock);
	}
	p9->polling = false;
	p9->poll_missed = p9->pending ? 0 : monotonic_ns();
	if (virtio_queue_ready(vdev, REQ_QUEUE) && virtq_enable_notify(vq))
		virtio_queue_kick(vdev, REQ_QUEUE);
}

static void *worker(void *arg)
{
	struct virtio_p9 *p9 = arg;
	struct virtio_device *vdev = &p9->vdev;
	struct p9_request *req;
	struct virtq_chain *c;
	int64_t len;

	sandbox_enter(SANDBOX_9P);
	pthread_mutex_lock(&vdev->lock);
	for (;;) {
		while (!p9->pending && !p9->stopping)
			pthread_cond_wait(&p9->work, &vdev->lock);
		if (p9->stopping)
			break;
		req = pending_take(p9);
		pthread_mutex_unlock(&vdev->lock);

		c = &req->chain;
		len = p9_server_handle(p9->server, c->iov, c->nr_out,
				       c->iov + c->nr_out, c->nr_in);

		pthread_mutex_lock(&vdev->lock);
		answer_and_poll(p9, req, len);
	}
	pthread_mutex_unlock(&vdev->lock);
	return NULL;
}

/* Requests taken before the pause finish first: a paused VM's share
 * must not change under whoever looks at it. */
static void p9_quiesce(struct virtio_device *vdev)
{
	struct virtio_p9 *p9 = to_p9(vdev);

	while (p9->inflight)
		pthread_cond_wait(&p9->idle, &vdev->lock);
}

/* Requests no worker took yet are dropped, running ones finish; then
 * the new driver finds no fid of the old one's. */
static void p9_reset(struct virtio_device *vdev)
{
	struct virtio_p9 *p9 = to_p9(vdev);
	struct p9_request *req;

	while ((req = p9->pending)) {
		p9->pending = req->next;
		drop_with_flushes(p9, req);
	}
	p9->pending_tail = &p9->pending;
	p9_quiesce(vdev);
	/* No server yet (a creation that failed): nothing to forget. */
	if (p9->server)
		p9_server_reset(p9->server);
}

static const struct virtio_device_ops p9_ops = {
	.queue_notify = p9_queue_notify,
	.reset = p9_reset,
	.quiesce = p9_quiesce,
};

static int workers_start(struct virtio_p9 *p9, unsigned index)
{
	char name[16];
	unsigned i;
	int err;

	snprintf(name, sizeof(name), "9p%u-io", index);
	for (i = 0; i < P9_WORKERS; i++) {
		err = thread_start_unsignalled(&p9->workers[i], worker, p9,
					       name);
		if (err) {
			pr_err("%s: cannot start a worker: %s", p9->name,
			       strerror(-err));
			return err;
		}
		p9->nr_workers++;
	}
	return 0;
}

static void workers_stop(struct virtio_p9 *p9)
{
	unsigned i;

	pthread_mutex_lock(&p9->vdev.lock);
	p9->stopping = true;
	pthread_cond_broadcast(&p9->work);
	pthread_mutex_unlock(&p9->vdev.lock);
	for (i = 0; i < p9->nr_workers; i++)
		pthread_join(p9->workers[i], NULL);
	p9->nr_workers = 0;
}

static int requests_make(struct virtio_p9 *p9)
{
	unsigned i;

	p9->requests = calloc(P9_QUEUE_SIZE, sizeof(*p9->requests));
	if (!p9->requests) {
		pr_err("%s: out of memory", p9->name);
		return -ENOMEM;
	}
	for (i = 0; i < P9_QUEUE_SIZE; i++) {
		p9->requests[i].next = p9->spare;
		p9->spare = &p9->requests[i];
	}
	return 0;
}

int virtio_p9_create(struct virtio_p9 *p9, unsigned index, const char *dir,
		     const char *tag, bool read_only,
		     const struct guest_ram *ram)
{
	const uint16_t size = P9_QUEUE_SIZE;
	size_t tag_len = strlen(tag);
	int err;

	memset(p9, 0, sizeof(*p9));
	p9->pending_tail = &p9->pending;
	p9->poll_ns = P9_POLL_MIN_NS;
	pthread_cond_init(&p9->idle, NULL);
	pthread_cond_init(&p9->work, NULL);
	snprintf(p9->name, sizeof(p9->name), "virtio-9p%u", index);
	if (!tag_len || tag_len > P9_TAG_MAX) {
		pr_err("%s: mount tag \"%s\": expected 1 to %d bytes",
		       p9->name, tag, P9_TAG_MAX);
		return -EINVAL;
	}
	p9->dir = dir;
	p9->read_only = read_only;
	memcpy(p9->tag, tag, tag_len);
	put_le16(p9->config, tag_len);
	memcpy(p9->config + 2, tag, tag_len);

	err = virtio_device_init(&p9->vdev, p9->name, VIRTIO_ID_9P,
				 1ULL << VIRTIO_9P_MOUNT_TAG, 1, &size,
				 p9->config, 2 + tag_len, &p9_ops, p9, ram);
	if (err)
		pr_err("%s: cannot set up the device: %s", p9->name,
		       strerror(-err));
	if (!err)
		err = requests_make(p9);
	if (!err)
		err = p9_server_create(&p9->server, p9->name, dir, read_only);
	if (!err)
		err = workers_start(p9, index);
	if (err)
		virtio_p9_destroy(p9);
	return err;
}

/* The device first: its reset waits for the workers' requests. */
void virtio_p9_destroy(struct virtio_p9 *p9)
{
	virtio_device_destroy(&p9->vdev);
	workers_stop(p9);
	p9_server_destroy(p9->server);
	p9->server = NULL;
	free(p9->requests);
	p9->requests = NULL;
}
