/* virtio-rng device (see rng.h). Queue work, the period's budget and
 * every guest-memory access happen on the device thread under vdev->lock,
 * so a reset forgets everything at once. */
#include "virtio/rng.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#define RNG_NAME "virtio-rng0"
#define REQ_QUEUE 0

static struct virtio_rng *to_rng(struct virtio_device *vdev)
{
	return vdev->opaque;
}

static bool time_reached(const struct timespec *now,
			 const struct timespec *t)
{
	return now->tv_sec > t->tv_sec ||
	       (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

/* A new period once the last one is over: its full budget, for a
 * second from now. */
static void budget_refill(struct virtio_rng *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!time_reached(&now, &r->period_end))
		return;
	r->budget = r->bytes_per_sec;
	r->period_end = now;
	r->period_end.tv_sec++;
}

/* Requests are left on the ring until the period ends; the timer then
 * has the device thread look again (rng_watch_event). */
static void wait_for_period(struct virtio_rng *r)
{
	struct itimerspec its = { .it_value = r->period_end };

	if (r->waiting)
		return;
	if (timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		pr_warn_ratelimited("%s: cannot set its timer: %s", RNG_NAME,
				    strerror(errno));
		return;
	}
	r->waiting = true;
}

static void timer_stop(struct virtio_rng *r)
{
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };

	timerfd_settime(r->timer_fd, 0, &off, NULL);
	r->waiting = false;
}

/* Fills up to len bytes of buf with random bytes; returns how many. */
static size_t fill(uint8_t *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = getrandom(buf + done, len - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			pr_warn_ratelimited("%s: getrandom: %s", RNG_NAME,
					    n ? strerror(errno) : "no bytes");
			break;
		}
		done += n;
	}
	return done;
}

/* One request: random bytes into its writable buffers, as many as they
 * hold and the period has left. Returns the bytes written, or -EIO for
 * a chain no driver sends (the device then needs a reset). */
static int64_t serve(struct virtio_device *vdev, unsigned q,
		     const struct virtq_chain *c)
{
	struct virtio_rng *r = to_rng(vdev);
	const struct iovec *iov = c->iov + c->nr_out;
	uint64_t want = MIN(c->in_bytes, r->budget), done = 0;
	unsigned i;

	if (c->nr_out) {
		virtio_device_error(&r->vdev, "request with a device-readable "
				    "buffer");
		return -EIO;
	}
	if (!c->in_bytes) {
		virtio_device_error(&r->vdev, "request without a writable "
				    "byte");
		return -EIO;
	}
	for (i = 0; i < c->nr_in && done < want; i++) {
		size_t n = MIN(iov[i].iov_len, want - done);
		size_t got = fill(iov[i].iov_base, n);

		done += got;
		if (got < n)
			break;
	}
	r->budget -= MIN(r->budget, MAX(done, RNG_MIN_CHARGE));
	r->served += done;
	r->requests++;
	return done;
}

/* Periods start with a request, not before. Over budget: notifications
 * stay off, and the timer comes for what waits. */
static bool may_take(struct virtio_device *vdev, unsigned q)
{
	struct virtio_rng *r = to_rng(vdev);

	budget_refill(r);
	if (r->budget)
		return true;
	wait_for_period(r);
	return false;
}

static const struct virtio_queue_server server = {
	.may_take = may_take,
	.serve = serve,
};

static void process(struct virtio_rng *r)
{
	virtio_queue_serve(&r->vdev, REQ_QUEUE, &server);
}

static void rng_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_rng *r = to_rng(vdev);

	pthread_mutex_lock(&vdev->lock);
	/* Waiting for the timer: a kick changes nothing before it. */
	if (!r->waiting && virtio_queue_ready(vdev, REQ_QUEUE))
		process(r);
	pthread_mutex_unlock(&vdev->lock);
}

static void rng_watch_event(struct virtio_device *vdev, unsigned q,
			    uint32_t events)
{
	struct virtio_rng *r = to_rng(vdev);
	uint64_t expirations;

	/* Nothing to read: a reset stopped the timer meanwhile. */
	if (read(r->timer_fd, &expirations, sizeof(expirations)) < 0)
		return;
	pthread_mutex_lock(&vdev->lock);
	if (r->waiting) {
		r->waiting = false;
		if (virtio_queue_ready(vdev, REQ_QUEUE))
			process(r);
	}
	pthread_mutex_unlock(&vdev->lock);
}

/* The period's budget outlives a reset: a driver resetting in a loop
 * gets no more than one that asks. */
static void rng_reset(struct virtio_device *vdev)
{
	timer_stop(to_rng(vdev));
}

static const struct virtio_device_ops rng_ops = {
	.queue_notify = rng_queue_notify,
	.reset = rng_reset,
	.watch_event = rng_watch_event,
};

int virtio_rng_create(struct virtio_rng *r, uint64_t bytes_per_sec,
		      const struct guest_ram *ram)
{
	const uint16_t size = RNG_QUEUE_SIZE;
	int err;

	memset(r, 0, sizeof(*r));
	r->timer_fd = -1;
	r->bytes_per_sec = bytes_per_sec;
	if (!bytes_per_sec || bytes_per_sec > RNG_MAX_BYTES_PER_SEC) {
		pr_err("%s: %llu bytes per second is not from 1 to %llu",
		       RNG_NAME, (unsigned long long)bytes_per_sec,
		       RNG_MAX_BYTES_PER_SEC);
		return -EINVAL;
	}
	err = virtio_device_init(&r->vdev, RNG_NAME, VIRTIO_ID_RNG, 0, 1,
				 &size, NULL, 0, &rng_ops, r, ram);
	if (!err) {
		r->timer_fd = timerfd_create(CLOCK_MONOTONIC,
					     TFD_NONBLOCK | TFD_CLOEXEC);
		if (r->timer_fd < 0)
			err = -errno;
	}
	if (!err) {
		pthread_mutex_lock(&r->vdev.lock);
		err = virtio_device_watch(&r->vdev, 0, r->timer_fd, EPOLLIN);
		pthread_mutex_unlock(&r->vdev.lock);
	}
	if (err) {
		pr_err("%s: cannot set up the device: %s", RNG_NAME,
		       strerror(-err));
		virtio_rng_destroy(r);
	}
	return err;
}

void virtio_rng_destroy(struct virtio_rng *r)
{
	virtio_device_destroy(&r->vdev);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
	r->timer_fd = -1;
}

void virtio_rng_info(struct virtio_rng *r, struct virtio_rng_info *info)
{
	pthread_mutex_lock(&r->vdev.lock);
	info->bytes_per_sec = r->bytes_per_sec;
	info->served = r->served;
	info->requests = r->requests;
	pthread_mutex_unlock(&r->vdev.lock);
}
