/* The transport-independent virtio device: status, feature negotiation,
 * reset, queue set-up, device configuration space, interrupts, and a
 * thread per device (or per queue, for a device whose queues are
 * independent) that takes the driver's queue notifications (from KVM
 * ioeventfds) off the vCPU threads. Transports (virtio_pci.c,
 * virtio_mmio.c) translate their registers into these calls; devices
 * (blk, net, balloon) implement struct virtio_device_ops. */
#ifndef THPVM_VIRTIO_H
#define THPVM_VIRTIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/guest_ram.h"
#include "lib/log.h"
#include "virtio/virtqueue.h"

#define VIRTIO_MAX_QUEUES 8
#define VIRTIO_NO_VECTOR 0xffff
/* Interrupt status bits (the PCI ISR, the MMIO InterruptStatus). */
#define VIRTIO_ISR_QUEUE 0x1
#define VIRTIO_ISR_CONFIG 0x2

struct virtio_device;

struct virtio_device_ops {
	/* The driver notified queue q. Runs on the thread serving q without
	 * vdev->lock; the device takes the lock around virtq_pop/push. */
	void (*queue_notify)(struct virtio_device *vdev, unsigned q);
	/* Called with vdev->lock held on reset, once status is 0 (no queue
	 * is ready); it may wait on a condition variable of that lock for
	 * running requests. When it returns, no request may still touch a
	 * queue or guest buffers. */
	void (*reset)(struct virtio_device *vdev);
	/* Optional: the driver set DRIVER_OK (lock held). */
	void (*start)(struct virtio_device *vdev);
	/* Optional: extra checks of the driver's features (lock held). */
	bool (*features_ok)(struct virtio_device *vdev, uint64_t features);
	/* Optional: the driver wrote config bytes (lock held). */
	void (*config_write)(struct virtio_device *vdev, uint32_t offset,
			     uint32_t len);
	/* Optional: events on the fd given to virtio_device_watch for
	 * queue q (on the thread serving q, without the lock), for a
	 * backend such as a tap. */
	void (*watch_event)(struct virtio_device *vdev, unsigned q,
			    uint32_t events);
	/* Optional: the VM is pausing (lock held, the device's threads idle):
	 * return once no request the device took is still running. */
	void (*quiesce)(struct virtio_device *vdev);
	/* Optional: work the host side asked for with virtio_device_defer
	 * (thread 0, without the lock). */
	void (*deferred)(struct virtio_device *vdev);
};

struct virtio_queue {
	struct virtq vq;
	uint16_t max_size;
	uint16_t size;		/* what the driver chose */
	uint16_t vector;
	bool enabled;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	int kick_fd;		/* eventfd the notifications arrive on */
};

/* A thread taking notifications. Thread 0 serves every queue that has no
 * thread of its own, and the deferred work. */
struct virtio_thread {
	struct virtio_device *vdev;
	unsigned index;
	pthread_t thread;
	bool started;
	int epoll_fd;
	uint32_t watch_events;	/* see virtio_device_watch */
};

struct virtio_device {
	const char *name;	/* "virtio-blk0": for messages */
	uint16_t device_id;	/* VIRTIO_ID_* */
	uint64_t host_features;
	uint64_t driver_features;
	uint64_t features;	/* negotiated, once FEATURES_OK */
	uint8_t status;
	uint8_t isr;
	uint8_t config_generation;
	uint16_t config_vector;
	uint8_t *config;	/* device configuration space, little-endian */
	uint32_t config_size;
	unsigned nr_queues;
	struct virtio_queue queues[VIRTIO_MAX_QUEUES];
	const struct virtio_device_ops *ops;
	void *opaque;		/* the device's own state */
	const struct guest_ram *ram;

	/* Set by the transport, called with lock held: an interrupt is
	 * due on vector (VIRTIO_NO_VECTOR when the queue or configuration
	 * has none), with isr already saying why; and isr went back to 0
	 * (read, acknowledged or reset), which lowers a wired interrupt. */
	void (*notify)(void *transport, uint16_t vector);
	void (*isr_cleared)(void *transport);
	void *transport;

	pthread_mutex_t lock;
	/* Thread q serves queue q, for q < nr_threads (1 unless
	 * virtio_device_thread_per_queue). */
	struct virtio_thread threads[VIRTIO_MAX_QUEUES];
	unsigned nr_threads;
	int stop_fd;		/* eventfd: every thread returns */
	int defer_fd;		/* eventfd: virtio_device_defer */
	struct log_ratelimit error_rl;
	/* Pause: the threads handle nothing while paused, and busy counts
	 * those inside a handler; both under lock, running signals
	 * changes. */
	bool paused;
	unsigned busy;
	pthread_cond_t running;
};

/* Fills in the generic part; host_features gets VERSION_1, EVENT_IDX and
 * INDIRECT_DESC added. queue_sizes has nr_queues entries. */
int virtio_device_init(struct virtio_device *vdev, const char *name,
		       uint16_t device_id, uint64_t host_features,
		       unsigned nr_queues, const uint16_t *queue_sizes,
		       void *config, uint32_t config_size,
		       const struct virtio_device_ops *ops, void *opaque,
		       const struct guest_ram *ram);
/* Transport side, at set-up: has KVM signal each queue's notification
 * eventfd on guest writes of len bytes to its notify register, at base +
 * q * stride; with stride 0 all queues share the register at base and
 * KVM tells them apart by the value written (the queue index). Reports
 * its own errors. */
int virtio_bind_notify(struct virtio_device *vdev, int vm_fd, uint64_t base,
		       uint64_t stride, uint32_t len);
/* Before virtio_device_start: queues 1 to nr_queues - 1 get a thread
 * each, so that a device whose queues share nothing but the lock (the
 * queues of a multiqueue disk) serves them in parallel. Reports its own
 * errors. */
int virtio_device_thread_per_queue(struct virtio_device *vdev);
/* Starts the notification threads (after the transport is attached). */
int virtio_device_start(struct virtio_device *vdev);
/* The VM pauses: returns once the threads are idle and every request
 * taken has completed; nothing new is taken until virtio_device_resume. */
void virtio_device_pause(struct virtio_device *vdev);
void virtio_device_resume(struct virtio_device *vdev);
/* virtio_device_pause and _resume in the form the device registry calls
 * (opaque = the struct virtio_device). */
void virtio_registry_pause(void *vdev);
void virtio_registry_resume(void *vdev);
/* Stops the threads, resets the device, closes the eventfds. */
void virtio_device_destroy(struct virtio_device *vdev);
/* From any thread, without vdev->lock: has thread 0 call
 * ops->deferred once it is done with what it is handling (at most one
 * budgeted pass of queue work; after resume, while the VM is paused), so
 * that the caller (the control socket) never waits for queue work. Calls
 * made before it runs are one call. */
int virtio_device_defer(struct virtio_device *vdev);
/* With vdev->lock held, or before virtio_device_start: the thread serving
 * queue q also waits for events (EPOLLIN, EPOLLOUT) on fd and passes them
 * to ops->watch_event with q; 0 stops watching. One fd per thread, which
 * stays open until virtio_device_destroy. On an error (logged) the watch
 * stays as it was and the next call tries again, so a device that updates
 * its watch as its state changes may ignore the result. */
int virtio_device_watch(struct virtio_device *vdev, unsigned q, int fd,
			uint32_t events);

/* Transport side; each takes vdev->lock where it reads or changes
 * state. */
uint32_t virtio_get_device_features(struct virtio_device *vdev, unsigned sel);
uint32_t virtio_get_driver_features(struct virtio_device *vdev, unsigned sel);
void virtio_set_driver_features(struct virtio_device *vdev, unsigned sel,
				uint32_t value);
uint8_t virtio_get_status(struct virtio_device *vdev);
/* 0 resets; FEATURES_OK is kept only if the features are acceptable. */
void virtio_set_status(struct virtio_device *vdev, uint8_t status);
uint16_t virtio_get_config_vector(struct virtio_device *vdev);
void virtio_set_config_vector(struct virtio_device *vdev, uint16_t vector);
/* Reads clear the ISR (as on PCI). */
uint8_t virtio_read_isr(struct virtio_device *vdev);
/* Clears the ISR bits the driver acknowledges (as on MMIO). */
void virtio_ack_isr(struct virtio_device *vdev, uint8_t bits);
void virtio_config_access(struct virtio_device *vdev, uint32_t offset,
			  uint8_t *data, uint32_t len, bool is_write);

/* Queue registers, for q < nr_queues; writes are ignored while the queue
 * is enabled. Enabling maps the rings (a bad ring sets NEEDS_RESET). */
enum virtio_queue_reg {
	VQ_REG_MAX_SIZE,	/* read-only */
	VQ_REG_SIZE,
	VQ_REG_VECTOR,
	VQ_REG_ENABLE,
	VQ_REG_DESC,
	VQ_REG_AVAIL,
	VQ_REG_USED,
};
uint64_t virtio_queue_read(struct virtio_device *vdev, unsigned q,
			   enum virtio_queue_reg reg);
void virtio_queue_write(struct virtio_device *vdev, unsigned q,
			enum virtio_queue_reg reg, uint64_t value);
/* The driver wrote the notify register of queue q. */
void virtio_queue_kick(struct virtio_device *vdev, unsigned q);

/* Device side, with vdev->lock held. */
/* A used-buffer interrupt for queue q if the driver wants one now. */
void virtio_queue_interrupt(struct virtio_device *vdev, unsigned q);
/* Device configuration changed. */
void virtio_config_changed(struct virtio_device *vdev);
/* The guest broke the protocol: one rate-limited message, NEEDS_RESET,
 * a configuration interrupt; the queues stop until the driver resets. */
void virtio_device_error(struct virtio_device *vdev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether the device may process queue q now (DRIVER_OK, not broken). */
bool virtio_queue_ready(const struct virtio_device *vdev, unsigned q);
/* The one way chains are taken off queue q: 1 with one in c, 0 when
 * none waits, -EIO when the guest broke a rule (virtio_device_error has
 * said which, and the device needs a reset). */
int virtio_queue_pop(struct virtio_device *vdev, unsigned q,
		     struct virtq_chain *c);

/* How a device serves a queue with virtio_queue_serve or _drain. Every
 * hook runs with vdev->lock held; only under virtio_queue_drain may one
 * let it go for a while. */
struct virtio_queue_server {
	/* Chains taken per call at most (0: no limit). With one more
	 * waiting, the queue kicks itself and the call ends with
	 * notifications off: the rest comes after the thread's other
	 * events, so a busy queue starves neither the others nor whoever
	 * waits for the lock. */
	unsigned budget;
	/* Optional, asked before each look at the ring: false ends the call
	 * with notifications left off, for a device that comes back by
	 * itself (with typed input to deliver, with a kick of its own). */
	bool (*wants)(struct virtio_device *vdev, unsigned q);
	/* Optional, asked with a chain waiting, before it is taken: false
	 * leaves it there and ends the call with notifications off (a
	 * limit whose end a timer brings, or a guest error reported). */
	bool (*may_take)(struct virtio_device *vdev, unsigned q);
	/* Optional: where to read the next chain (a request's own), asked
	 * after may_take; NULL (out of memory) ends the call as may_take
	 * does. Without it, a chain of the call's own. */
	struct virtq_chain *(*chain)(struct virtio_device *vdev, unsigned q);
	/* One chain taken. Returns the bytes the device wrote into it, and
	 * it is used now; -EINPROGRESS: the device keeps it and pushes it
	 * itself later; -EAGAIN: the device cannot take it now: it goes
	 * back to the head of the ring, not used, for a later call, and
	 * this one ends with notifications off (the device comes back:
	 * a kick of its own, a watched fd); another -errno: the guest broke
	 * the protocol, and virtio_device_error said so. */
	int64_t (*serve)(struct virtio_device *vdev, unsigned q,
			 const struct virtq_chain *c);
};

/* Where virtio_queue_drain stopped. */
enum virtio_drain {
	VIRTIO_DRAIN_EMPTY,	/* no chain waits: notifications may go on */
	VIRTIO_DRAIN_STOPPED,	/* the device takes no more now: they stay
				 * off */
	/* The queue is not ready: the guest broke the protocol, or a reset
	 * came while a hook let the lock go. */
	VIRTIO_DRAIN_BROKEN,
};

/* With vdev->lock held: takes queue q's chains while it is ready and s
 * allows, notifications as the caller left them; *taken counts the
 * chains taken against s->budget, across calls. For a device that
 * wraps a loop of its own around it (blk submits and reaps between
 * drains, and keeps its own count of what is to be signalled). */
enum virtio_drain virtio_queue_drain(struct virtio_device *vdev, unsigned q,
				     const struct virtio_queue_server *s,
				     unsigned *taken);
/* With vdev->lock held, a queue's processing loop (nothing when queue q
 * is not ready): with notifications off, drains; then turns them back
 * on and drains again what the driver added meanwhile, or leaves them
 * off when the device stopped taking; then one interrupt if any chain
 * was used. */
void virtio_queue_serve(struct virtio_device *vdev, unsigned q,
			const struct virtio_queue_server *s);

#endif
