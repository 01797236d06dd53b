/* virtio-console device (see console.h). Queue work and every
 * guest-memory access happen on the device thread under vdev->lock; the
 * input loop only adds to the input buffer and has the device thread
 * deliver it (virtio_device_defer), so it never waits for the guest. */
#include "virtio/console.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"

#define VCONS_NAME "virtio-console0"
/* Port 0's queues; without VIRTIO_CONSOLE_F_MULTIPORT there are no
 * others. */
#define RX_QUEUE 0
#define TX_QUEUE 1

static struct virtio_console *to_console(struct virtio_device *vdev)
{
	return vdev->opaque;
}

/* Guest output: each chain's readable bytes to the console output
 * buffer, which takes what fits and never waits. */
static void process_tx(struct virtio_console *c)
{
	struct virtio_device *vdev = &c->vdev;
	struct virtq *vq = &vdev->queues[TX_QUEUE].vq;
	uint16_t used = vq->used_idx;
	struct virtq_chain chain;
	unsigned i, done = 0;
	int got;

	for (;;) {
		virtq_disable_notify(vq);
		while (virtio_queue_ready(vdev, TX_QUEUE) &&
		       virtq_has_avail(vq)) {
			/* A queue's worth per pass: a guest that keeps it fed
			 * must not hold the device lock, which typed input
			 * waits on, for ever. The rest comes after the
			 * device thread's other events. */
			if (done++ == VCONS_QUEUE_SIZE) {
				virtio_queue_kick(vdev, TX_QUEUE);
				goto out;
			}
			got = virtq_pop(vq, &chain);
			if (got < 0)
				virtio_device_error(vdev, "queue %u: %s",
						    TX_QUEUE, vq->error);
			if (got <= 0)
				break;
			if (chain.nr_in) {
				virtio_device_error(vdev, "transmit chain with "
						    "a device-writable buffer");
				break;
			}
			for (i = 0; c->out && i < chain.nr_out; i++)
				console_out_put(c->out, chain.iov[i].iov_base,
						chain.iov[i].iov_len);
			c->tx_bytes += chain.out_bytes;
			virtq_push(vq, chain.head, 0);
		}
		if (!virtio_queue_ready(vdev, TX_QUEUE) ||
		    !virtq_enable_notify(vq))
			break;
	}
out:
	if (vq->used_idx != used)
		virtio_queue_interrupt(vdev, TX_QUEUE);
}

/* Copies up to len bytes of typed input into the chain's writable
 * buffers, oldest first, and takes them off the input buffer. */
static uint32_t rx_fill(struct virtio_console *c,
			const struct virtq_chain *chain)
{
	uint64_t want = MIN(byte_ring_used(&c->in), chain->in_bytes);
	uint64_t done = 0;
	const uint8_t *p;
	size_t n;

	while (done < want) {
		p = byte_ring_peek(&c->in, &n);
		n = MIN(n, want - done);
		virtq_chain_write(chain, done, p, n);
		byte_ring_consume(&c->in, n);
		done += n;
	}
	c->rx_bytes += want;
	return want;
}

/* Typed input into the receive buffers the guest has given, while there
 * is input; the rest waits for more buffers. */
static void process_rx(struct virtio_console *c)
{
	struct virtio_device *vdev = &c->vdev;
	struct virtq *vq = &vdev->queues[RX_QUEUE].vq;
	uint16_t used = vq->used_idx;
	struct virtq_chain chain;
	int got;

	for (;;) {
		virtq_disable_notify(vq);
		while (byte_ring_used(&c->in) &&
		       virtio_queue_ready(vdev, RX_QUEUE) &&
		       virtq_has_avail(vq)) {
			got = virtq_pop(vq, &chain);
			if (got < 0)
				virtio_device_error(vdev, "queue %u: %s",
						    RX_QUEUE, vq->error);
			if (got <= 0)
				break;
			if (chain.nr_out || !chain.in_bytes) {
				virtio_device_error(vdev, "receive chain %s",
						    chain.nr_out ?
						    "with a device-readable "
						    "buffer" :
						    "without a writable byte");
				break;
			}
			virtq_push(vq, chain.head, rx_fill(c, &chain));
		}
		/* No input: the next keystroke comes through deferred, and
		 * needs no kick. */
		if (!byte_ring_used(&c->in) ||
		    !virtio_queue_ready(vdev, RX_QUEUE) ||
		    !virtq_enable_notify(vq))
			break;
	}
	if (vq->used_idx != used)
		virtio_queue_interrupt(vdev, RX_QUEUE);
}

static void vcons_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_console *c = to_console(vdev);

	pthread_mutex_lock(&vdev->lock);
	if (q == TX_QUEUE)
		process_tx(c);
	else if (virtio_queue_ready(vdev, RX_QUEUE))
		process_rx(c);
	pthread_mutex_unlock(&vdev->lock);
}

/* Input arrived (virtio_console_ops.receive). Input typed before the
 * driver started waits for it, through resets too, as a UART's would:
 * DRIVER_OK kicks the receive queue. */
static void vcons_deferred(struct virtio_device *vdev)
{
	struct virtio_console *c = to_console(vdev);

	pthread_mutex_lock(&vdev->lock);
	if (virtio_queue_ready(vdev, RX_QUEUE))
		process_rx(c);
	pthread_mutex_unlock(&vdev->lock);
}

static const struct virtio_device_ops vcons_ops = {
	.queue_notify = vcons_queue_notify,
	.deferred = vcons_deferred,
};

int virtio_console_create(struct virtio_console *c, struct console_out *out,
			  const struct guest_ram *ram)
{
	const uint16_t sizes[] = { VCONS_QUEUE_SIZE, VCONS_QUEUE_SIZE };
	int err;

	memset(c, 0, sizeof(*c));
	c->out = out;
	byte_ring_init(&c->in, c->in_buf, sizeof(c->in_buf));
	/* No feature is offered, so the driver reads none of it; it is
	 * there, zero, for one that looks. */
	err = virtio_device_init(&c->vdev, VCONS_NAME, VIRTIO_ID_CONSOLE, 0,
				 ARRAY_SIZE(sizes), sizes, &c->config,
				 sizeof(c->config), &vcons_ops, c, ram);
	if (err) {
		pr_err("%s: cannot set up the device: %s", VCONS_NAME,
		       strerror(-err));
		virtio_console_destroy(c);
	}
	return err;
}

void virtio_console_destroy(struct virtio_console *c)
{
	virtio_device_destroy(&c->vdev);
}

static size_t vcons_receive(void *dev, const uint8_t *buf, size_t len)
{
	struct virtio_console *c = dev;
	size_t n;

	pthread_mutex_lock(&c->vdev.lock);
	n = byte_ring_put(&c->in, buf, len);
	pthread_mutex_unlock(&c->vdev.lock);
	if (n)
		virtio_device_defer(&c->vdev);
	return n;
}

static size_t vcons_rx_room(void *dev)
{
	struct virtio_console *c = dev;
	size_t room;

	pthread_mutex_lock(&c->vdev.lock);
	room = byte_ring_room(&c->in);
	pthread_mutex_unlock(&c->vdev.lock);
	return room;
}

const struct vm_console_ops virtio_console_ops = {
	.receive = vcons_receive,
	.rx_room = vcons_rx_room,
};
