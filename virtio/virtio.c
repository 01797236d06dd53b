/* Transport-independent virtio device (see virtio.h). */
#include "virtio/virtio.h"

#include <errno.h>
#include <linux/kvm.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/sandbox.h"
#include "lib/thread_name.h"
#include "lib/util.h"

#define STATUS_READY_MASK (VIRTIO_CONFIG_S_FEATURES_OK | \
			   VIRTIO_CONFIG_S_DRIVER_OK | \
			   VIRTIO_CONFIG_S_NEEDS_RESET | VIRTIO_CONFIG_S_FAILED)
#define STATUS_READY (VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK)

#define STOP_TOKEN VIRTIO_MAX_QUEUES
#define WATCH_TOKEN (VIRTIO_MAX_QUEUES + 1)
#define DEFER_TOKEN (VIRTIO_MAX_QUEUES + 2)
#define NR_TOKENS (VIRTIO_MAX_QUEUES + 3)

/* Has thread t's epoll_fd wait for fd, reporting token. */
static int thread_add(struct virtio_thread *t, int fd, uint32_t token)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = token };

	return epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static struct virtio_thread *thread_of(struct virtio_device *vdev,
				       unsigned q)
{
	return &vdev->threads[q < vdev->nr_threads ? q : 0];
}

int virtio_device_init(struct virtio_device *vdev, const char *name,
		       uint16_t device_id, uint64_t host_features,
		       unsigned nr_queues, const uint16_t *queue_sizes,
		       void *config, uint32_t config_size,
		       const struct virtio_device_ops *ops, void *opaque,
		       const struct guest_ram *ram)
{
	struct virtio_thread *t0 = &vdev->threads[0];
	unsigned q;
	int err;

	memset(vdev, 0, sizeof(*vdev));
	vdev->stop_fd = vdev->defer_fd = -1;
	for (q = 0; q < VIRTIO_MAX_QUEUES; q++) {
		vdev->queues[q].kick_fd = -1;
		vdev->threads[q] = (struct virtio_thread){
			.vdev = vdev, .index = q, .epoll_fd = -1,
		};
	}
	if (nr_queues > VIRTIO_MAX_QUEUES)
		return -EINVAL;
	vdev->name = name;
	vdev->device_id = device_id;
	vdev->host_features = host_features | 1ULL << VIRTIO_F_VERSION_1 |
			      1ULL << VIRTIO_RING_F_EVENT_IDX |
			      1ULL << VIRTIO_RING_F_INDIRECT_DESC;
	vdev->config = config;
	vdev->config_size = config_size;
	vdev->config_vector = VIRTIO_NO_VECTOR;
	vdev->nr_queues = nr_queues;
	vdev->nr_threads = 1;
	vdev->ops = ops;
	vdev->opaque = opaque;
	vdev->ram = ram;
	pthread_mutex_init(&vdev->lock, NULL);
	pthread_cond_init(&vdev->running, NULL);

	t0->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	vdev->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vdev->defer_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t0->epoll_fd < 0 || vdev->stop_fd < 0 || vdev->defer_fd < 0)
		return -errno;
	for (q = 0; q < nr_queues; q++) {
		struct virtio_queue *vq = &vdev->queues[q];

		vq->max_size = vq->size = queue_sizes[q];
		vq->vector = VIRTIO_NO_VECTOR;
		vq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vq->kick_fd < 0)
			return -errno;
		err = thread_add(t0, vq->kick_fd, q);
		if (err)
			return err;
	}
	err = thread_add(t0, vdev->stop_fd, STOP_TOKEN);
	return err ? err : thread_add(t0, vdev->defer_fd, DEFER_TOKEN);
}

int virtio_device_thread_per_queue(struct virtio_device *vdev)
{
	unsigned q;
	int err = 0;

	for (q = 1; q < vdev->nr_queues && !err; q++) {
		struct virtio_thread *t = &vdev->threads[q];
		int kick_fd = vdev->queues[q].kick_fd;

		t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (t->epoll_fd < 0 ||
		    epoll_ctl(vdev->threads[0].epoll_fd, EPOLL_CTL_DEL,
			      kick_fd, NULL) < 0)
			err = -errno;
		if (!err)
			err = thread_add(t, kick_fd, q);
		if (!err)
			err = thread_add(t, vdev->stop_fd, STOP_TOKEN);
		if (!err)
			vdev->nr_threads = q + 1;
	}
	if (err)
		pr_err("%s: cannot give each queue a thread: %s", vdev->name,
		       strerror(-err));
	return err;
}

/* Before handling an event: waits while the VM is paused, then counts
 * the thread busy so that a pause waits for the handler to return. */
static void handler_enter(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	while (vdev->paused)
		pthread_cond_wait(&vdev->running, &vdev->lock);
	vdev->busy++;
	pthread_mutex_unlock(&vdev->lock);
}

static void handler_exit(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	if (!--vdev->busy)
		pthread_cond_broadcast(&vdev->running);
	pthread_mutex_unlock(&vdev->lock);
}

void virtio_device_pause(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	vdev->paused = true;
	while (vdev->busy)
		pthread_cond_wait(&vdev->running, &vdev->lock);
	if (vdev->ops->quiesce)
		vdev->ops->quiesce(vdev);
	pthread_mutex_unlock(&vdev->lock);
}

void virtio_device_resume(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	vdev->paused = false;
	pthread_cond_broadcast(&vdev->running);
	pthread_mutex_unlock(&vdev->lock);
}

int virtio_bind_notify(struct virtio_device *vdev, int vm_fd, uint64_t base,
		       uint64_t stride, uint32_t len)
{
	unsigned q;

	for (q = 0; q < vdev->nr_queues; q++) {
		struct kvm_ioeventfd ev = {
			.addr = base + q * stride,
			.len = len,
			.fd = vdev->queues[q].kick_fd,
			.datamatch = q,
			.flags = stride ? 0 : KVM_IOEVENTFD_FLAG_DATAMATCH,
		};

		if (ioctl(vm_fd, KVM_IOEVENTFD, &ev) < 0) {
			int err = -errno;

			pr_err("%s: KVM_IOEVENTFD: %s", vdev->name,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

void virtio_registry_pause(void *vdev)
{
	virtio_device_pause(vdev);
}

void virtio_registry_resume(void *vdev)
{
	virtio_device_resume(vdev);
}

/* Handles one event of thread t. */
static void thread_event(struct virtio_thread *t, unsigned token,
			 uint32_t events)
{
	struct virtio_device *vdev = t->vdev;
	uint64_t count;
	bool ready;

	if (token == WATCH_TOKEN) {
		vdev->ops->watch_event(vdev, t->index, events);
		return;
	}
	if (token == DEFER_TOKEN) {
		if (read(vdev->defer_fd, &count, sizeof(count)) > 0 &&
		    vdev->ops->deferred)
			vdev->ops->deferred(vdev);
		return;
	}
	if (read(vdev->queues[token].kick_fd, &count, sizeof(count)) < 0)
		return;
	pthread_mutex_lock(&vdev->lock);
	ready = virtio_queue_ready(vdev, token);
	pthread_mutex_unlock(&vdev->lock);
	if (ready)
		vdev->ops->queue_notify(vdev, token);
}

static void *device_thread(void *arg)
{
	struct virtio_thread *t = arg;
	struct virtio_device *vdev = t->vdev;
	struct epoll_event evs[NR_TOKENS];
	int i, n;

	sandbox_enter(SANDBOX_DEVICE);
	for (;;) {
		n = epoll_wait(t->epoll_fd, evs, NR_TOKENS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_err("%s: epoll_wait: %s", vdev->name,
			       strerror(errno));
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.u32 == STOP_TOKEN)
				return NULL;
			handler_enter(vdev);
			thread_event(t, evs[i].data.u32, evs[i].events);
			handler_exit(vdev);
		}
	}
}

int virtio_device_start(struct virtio_device *vdev)
{
	/* "blk0" for virtio-blk0: the prefix would take a third of the 15
	 * characters a thread name keeps. */
	const char *base = strncmp(vdev->name, "virtio-", 7) ? vdev->name :
							       vdev->name + 7;
	unsigned i;

	for (i = 0; i < vdev->nr_threads; i++) {
		struct virtio_thread *t = &vdev->threads[i];
		int err = pthread_create(&t->thread, NULL, device_thread, t);

		if (err) {
			pr_err("%s: cannot start its thread: %s", vdev->name,
			       strerror(err));
			return -err;
		}
		t->started = true;
		if (i)
			thread_name_set(t->thread, "%s-q%u", base, i);
		else
			thread_name_set(t->thread, "%s", base);
	}
	return 0;
}

int virtio_device_defer(struct virtio_device *vdev)
{
	int err = eventfd_signal(vdev->defer_fd);

	if (err)
		pr_warn_ratelimited("%s: cannot reach its thread: %s",
				    vdev->name, strerror(-err));
	return err;
}

int virtio_device_watch(struct virtio_device *vdev, unsigned q, int fd,
			uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u32 = WATCH_TOKEN };
	struct virtio_thread *t = thread_of(vdev, q);
	int op = EPOLL_CTL_MOD;

	if (events == t->watch_events)
		return 0;
	/* Delete rather than watch for nothing: epoll reports errors and
	 * hang-ups even then, and a dead tap would keep the thread busy. */
	if (!events)
		op = EPOLL_CTL_DEL;
	else if (!t->watch_events)
		op = EPOLL_CTL_ADD;
	if (epoll_ctl(t->epoll_fd, op, fd, &ev) < 0) {
		int err = -errno;	/* before logging can change errno */

		pr_warn_ratelimited("%s: cannot watch its backend: %s",
				    vdev->name, strerror(-err));
		return err;
	}
	t->watch_events = events;
	return 0;
}

/* With lock held: the driver has seen these ISR bits. */
static void isr_clear(struct virtio_device *vdev, uint8_t bits)
{
	uint8_t was = vdev->isr;

	vdev->isr &= ~bits;
	if (was && !vdev->isr)
		vdev->isr_cleared(vdev->transport);
}

static void reset_locked(struct virtio_device *vdev)
{
	unsigned q;

	/* Not ready from here on, so nothing new is taken off a ring while
	 * the device's hook waits (with the lock let go) for running
	 * requests to finish. */
	vdev->status = 0;
	if (vdev->ops->reset)
		vdev->ops->reset(vdev);
	for (q = 0; q < vdev->nr_queues; q++) {
		struct virtio_queue *vq = &vdev->queues[q];

		virtq_unmap(&vq->vq);
		vq->size = vq->max_size;
		vq->vector = VIRTIO_NO_VECTOR;
		vq->enabled = false;
		vq->desc_gpa = vq->avail_gpa = vq->used_gpa = 0;
	}
	vdev->driver_features = vdev->features = 0;
	vdev->status = 0;
	isr_clear(vdev, 0xff);
	vdev->config_vector = VIRTIO_NO_VECTOR;
}

/* The stop eventfd stays readable, so every thread sees it. A thread
 * that cannot be told to stop would go on using what destroy frees, so
 * that ends the process instead. */
static void threads_stop(struct virtio_device *vdev)
{
	unsigned i;
	int err;

	if (!vdev->threads[0].started)
		return;
	/* A paused thread would never see the stop. */
	virtio_device_resume(vdev);
	err = eventfd_signal(vdev->stop_fd);
	if (err) {
		pr_err("%s: cannot stop its threads: %s", vdev->name,
		       strerror(-err));
		abort();
	}
	for (i = 0; i < vdev->nr_threads; i++) {
		if (vdev->threads[i].started)
			pthread_join(vdev->threads[i].thread, NULL);
		vdev->threads[i].started = false;
	}
}

void virtio_device_destroy(struct virtio_device *vdev)
{
	unsigned q;

	threads_stop(vdev);
	pthread_mutex_lock(&vdev->lock);
	reset_locked(vdev);
	pthread_mutex_unlock(&vdev->lock);
	for (q = 0; q < vdev->nr_queues; q++) {
		if (vdev->queues[q].kick_fd >= 0)
			close(vdev->queues[q].kick_fd);
		vdev->queues[q].kick_fd = -1;
	}
	for (q = 0; q < VIRTIO_MAX_QUEUES; q++) {
		if (vdev->threads[q].epoll_fd >= 0)
			close(vdev->threads[q].epoll_fd);
		vdev->threads[q].epoll_fd = -1;
	}
	if (vdev->stop_fd >= 0)
		close(vdev->stop_fd);
	if (vdev->defer_fd >= 0)
		close(vdev->defer_fd);
	vdev->stop_fd = vdev->defer_fd = -1;
}

uint32_t virtio_get_device_features(struct virtio_device *vdev, unsigned sel)
{
	return sel < 2 ? vdev->host_features >> (32 * sel) : 0;
}

uint32_t virtio_get_driver_features(struct virtio_device *vdev, unsigned sel)
{
	uint32_t v;

	pthread_mutex_lock(&vdev->lock);
	v = sel < 2 ? vdev->driver_features >> (32 * sel) : 0;
	pthread_mutex_unlock(&vdev->lock);
	return v;
}

void virtio_set_driver_features(struct virtio_device *vdev, unsigned sel,
				uint32_t value)
{
	uint64_t mask;

	if (sel >= 2)
		return;
	mask = 0xffffffffULL << (32 * sel);
	pthread_mutex_lock(&vdev->lock);
	/* Fixed once FEATURES_OK is set. */
	if (!(vdev->status & VIRTIO_CONFIG_S_FEATURES_OK))
		vdev->driver_features = (vdev->driver_features & ~mask) |
					((uint64_t)value << (32 * sel));
	pthread_mutex_unlock(&vdev->lock);
}

uint8_t virtio_get_status(struct virtio_device *vdev)
{
	uint8_t s;

	pthread_mutex_lock(&vdev->lock);
	s = vdev->status;
	pthread_mutex_unlock(&vdev->lock);
	return s;
}

static bool features_acceptable(struct virtio_device *vdev)
{
	uint64_t f = vdev->driver_features;

	if (f & ~vdev->host_features) {
		pr_warn_ratelimited("%s: driver accepted features 0x%llx that "
				    "were not offered", vdev->name,
				    (unsigned long long)(f & ~vdev->host_features));
		return false;
	}
	if (!(f & 1ULL << VIRTIO_F_VERSION_1)) {
		pr_warn_ratelimited("%s: driver did not accept VERSION_1 "
				    "(legacy drivers are not supported)",
				    vdev->name);
		return false;
	}
	return !vdev->ops->features_ok || vdev->ops->features_ok(vdev, f);
}

void virtio_set_status(struct virtio_device *vdev, uint8_t status)
{
	uint8_t added;
	unsigned q;

	pthread_mutex_lock(&vdev->lock);
	if (!status) {
		reset_locked(vdev);
		pthread_mutex_unlock(&vdev->lock);
		return;
	}
	added = status & ~vdev->status;
	/* NEEDS_RESET is the device's to set; keep it until reset. */
	status = (status & ~VIRTIO_CONFIG_S_NEEDS_RESET) |
		 (vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	if (added & VIRTIO_CONFIG_S_FEATURES_OK) {
		if (features_acceptable(vdev))
			vdev->features = vdev->driver_features;
		else
			status &= ~VIRTIO_CONFIG_S_FEATURES_OK;
	}
	vdev->status = status;
	if ((added & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    (status & VIRTIO_CONFIG_S_FEATURES_OK)) {
		if (vdev->ops->start)
			vdev->ops->start(vdev);
		/* Buffers made available before DRIVER_OK wait for a look. */
		for (q = 0; q < vdev->nr_queues; q++)
			if (vdev->queues[q].enabled)
				virtio_queue_kick(vdev, q);
	}
	pthread_mutex_unlock(&vdev->lock);
}

uint16_t virtio_get_config_vector(struct virtio_device *vdev)
{
	uint16_t v;

	pthread_mutex_lock(&vdev->lock);
	v = vdev->config_vector;
	pthread_mutex_unlock(&vdev->lock);
	return v;
}

void virtio_set_config_vector(struct virtio_device *vdev, uint16_t vector)
{
	pthread_mutex_lock(&vdev->lock);
	vdev->config_vector = vector;
	pthread_mutex_unlock(&vdev->lock);
}

uint8_t virtio_read_isr(struct virtio_device *vdev)
{
	uint8_t isr;

	pthread_mutex_lock(&vdev->lock);
	isr = vdev->isr;
	isr_clear(vdev, isr);
	pthread_mutex_unlock(&vdev->lock);
	return isr;
}

void virtio_ack_isr(struct virtio_device *vdev, uint8_t bits)
{
	pthread_mutex_lock(&vdev->lock);
	isr_clear(vdev, bits);
	pthread_mutex_unlock(&vdev->lock);
}

void virtio_config_access(struct virtio_device *vdev, uint32_t offset,
			  uint8_t *data, uint32_t len, bool is_write)
{
	pthread_mutex_lock(&vdev->lock);
	if (offset > vdev->config_size || len > vdev->config_size - offset) {
		if (!is_write)
			memset(data, 0, len);
	} else if (!is_write) {
		memcpy(data, vdev->config + offset, len);
	} else if (vdev->ops->config_write) {
		/* Only devices with writable fields store anything. */
		memcpy(vdev->config + offset, data, len);
		vdev->ops->config_write(vdev, offset, len);
	}
	pthread_mutex_unlock(&vdev->lock);
}

uint64_t virtio_queue_read(struct virtio_device *vdev, unsigned q,
			   enum virtio_queue_reg reg)
{
	struct virtio_queue *vq;
	uint64_t v = 0;

	if (q >= vdev->nr_queues)
		return 0;
	vq = &vdev->queues[q];
	pthread_mutex_lock(&vdev->lock);
	switch (reg) {
	case VQ_REG_MAX_SIZE: v = vq->max_size; break;
	case VQ_REG_SIZE: v = vq->size; break;
	case VQ_REG_VECTOR: v = vq->vector; break;
	case VQ_REG_ENABLE: v = vq->enabled; break;
	case VQ_REG_DESC: v = vq->desc_gpa; break;
	case VQ_REG_AVAIL: v = vq->avail_gpa; break;
	case VQ_REG_USED: v = vq->used_gpa; break;
	}
	pthread_mutex_unlock(&vdev->lock);
	return v;
}

static void queue_enable_locked(struct virtio_device *vdev, unsigned q)
{
	struct virtio_queue *vq = &vdev->queues[q];

	if (vq->size > vq->max_size) {
		virtio_device_error(vdev, "queue %u: size %u above the "
				    "maximum %u", q, vq->size, vq->max_size);
		return;
	}
	if (virtq_map(&vq->vq, vdev->ram, vq->size, vq->desc_gpa,
		      vq->avail_gpa, vq->used_gpa, vdev->features)) {
		virtio_device_error(vdev, "queue %u: %s", q, vq->vq.error);
		return;
	}
	vq->enabled = true;
}

void virtio_queue_write(struct virtio_device *vdev, unsigned q,
			enum virtio_queue_reg reg, uint64_t value)
{
	struct virtio_queue *vq;

	if (q >= vdev->nr_queues)
		return;
	vq = &vdev->queues[q];
	pthread_mutex_lock(&vdev->lock);
	if (reg == VQ_REG_VECTOR) {
		/* Vectors may change at any time (the transport checks the
		 * range and reads back NO_VECTOR when it cannot use one). */
		vq->vector = value;
	} else if (!vq->enabled) {
		switch (reg) {
		case VQ_REG_SIZE:
			vq->size = value;
			break;
		case VQ_REG_ENABLE:
			if (value == 1)
				queue_enable_locked(vdev, q);
			break;
		case VQ_REG_DESC: vq->desc_gpa = value; break;
		case VQ_REG_AVAIL: vq->avail_gpa = value; break;
		case VQ_REG_USED: vq->used_gpa = value; break;
		case VQ_REG_MAX_SIZE:
		case VQ_REG_VECTOR:
			break;
		}
	}
	pthread_mutex_unlock(&vdev->lock);
}

void virtio_queue_kick(struct virtio_device *vdev, unsigned q)
{
	int err;

	if (q >= vdev->nr_queues)
		return;
	err = eventfd_signal(vdev->queues[q].kick_fd);
	if (err)
		pr_warn_ratelimited("%s: queue %u: lost a notification: %s",
				    vdev->name, q, strerror(-err));
}

bool virtio_queue_ready(const struct virtio_device *vdev, unsigned q)
{
	return (vdev->status & STATUS_READY_MASK) == STATUS_READY &&
	       q < vdev->nr_queues && vdev->queues[q].enabled &&
	       !vdev->queues[q].vq.error;
}

void virtio_queue_interrupt(struct virtio_device *vdev, unsigned q)
{
	struct virtio_queue *vq = &vdev->queues[q];

	if (!virtq_need_interrupt(&vq->vq))
		return;
	vdev->isr |= VIRTIO_ISR_QUEUE;
	vdev->notify(vdev->transport, vq->vector);
}

void virtio_config_changed(struct virtio_device *vdev)
{
	vdev->config_generation++;
	vdev->isr |= VIRTIO_ISR_CONFIG;
	vdev->notify(vdev->transport, vdev->config_vector);
}

void virtio_device_error(struct virtio_device *vdev, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_ratelimit_ok(&vdev->error_rl))
		pr_warn("%s: %s; the device needs a reset", vdev->name, msg);
	if (vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	vdev->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	virtio_config_changed(vdev);
}

int virtio_queue_pop(struct virtio_device *vdev, unsigned q,
		     struct virtq_chain *c)
{
	struct virtq *vq = &vdev->queues[q].vq;
	int got = virtq_pop(vq, c);

	if (got < 0)
		virtio_device_error(vdev, "queue %u: %s", q, vq->error);
	return got;
}

enum virtio_drain virtio_queue_drain(struct virtio_device *vdev, unsigned q,
				     const struct virtio_queue_server *s,
				     unsigned *taken)
{
	struct virtq *vq = &vdev->queues[q].vq;
	struct virtq_chain own, *c;
	int64_t written;
	int got;

	for (;;) {
		if (!virtio_queue_ready(vdev, q))
			return VIRTIO_DRAIN_BROKEN;
		if (s->wants && !s->wants(vdev, q))
			return VIRTIO_DRAIN_STOPPED;
		if (!virtq_has_avail(vq))
			return VIRTIO_DRAIN_EMPTY;
		if (s->budget && *taken == s->budget) {
			virtio_queue_kick(vdev, q);
			return VIRTIO_DRAIN_STOPPED;
		}
		if (s->may_take && !s->may_take(vdev, q))
			return VIRTIO_DRAIN_STOPPED;
		c = s->chain ? s->chain(vdev, q) : &own;
		if (!c)
			return VIRTIO_DRAIN_STOPPED;
		got = virtio_queue_pop(vdev, q, c);
		if (got <= 0)
			return got ? VIRTIO_DRAIN_BROKEN : VIRTIO_DRAIN_EMPTY;
		written = s->serve(vdev, q, c);
		if (written == -EAGAIN) {
			virtq_unpop(vq);
			return VIRTIO_DRAIN_STOPPED;
		}
		if (written < 0 && written != -EINPROGRESS)
			return VIRTIO_DRAIN_BROKEN;
		if (written >= 0)
			virtq_push(vq, c->head, written);
		(*taken)++;
	}
}

void virtio_queue_serve(struct virtio_device *vdev, unsigned q,
			const struct virtio_queue_server *s)
{
	struct virtq *vq = &vdev->queues[q].vq;
	uint16_t used = vq->used_idx;
	unsigned taken = 0;

	if (!virtio_queue_ready(vdev, q))
		return;
	do {
		virtq_disable_notify(vq);
	} while (virtio_queue_drain(vdev, q, s, &taken) == VIRTIO_DRAIN_EMPTY &&
		 virtq_enable_notify(vq));
	if (vq->used_idx != used)
		virtio_queue_interrupt(vdev, q);
}
