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

/* Guest output: a chain's readable bytes to the console output buffer,
 * which takes what fits and never waits. */
static int64_t tx_serve(struct virtio_device *vdev, unsigned q,
			const struct virtq_chain *chain)
{
	struct virtio_console *c = to_console(vdev);
	unsigned i;

	if (chain->nr_in) {
		virtio_device_error(vdev, "transmit chain with a "
				    "device-writable buffer");
		return -EIO;
	}
	for (i = 0; c->out && i < chain->nr_out; i++)
		console_out_put(c->out, chain->iov[i].iov_base,
				chain->iov[i].iov_len);
	c->tx_bytes += chain->out_bytes;
	return 0;
}

/* A queue's worth per pass: a guest that keeps it fed must not hold the
 * device lock, which typed input waits on, for ever. The rest comes
 * after the device thread's other events. */
static const struct virtio_queue_server tx_server = {
	.budget = VCONS_QUEUE_SIZE,
	.serve = tx_serve,
};

/* Receive buffers are taken only while there is typed input; without,
 * notifications stay off: the next keystroke comes through deferred,
 * and needs no kick. */
static bool rx_wants(struct virtio_device *vdev, unsigned q)
{
	return byte_ring_used(&to_console(vdev)->in);
}

/* Typed input into a receive chain's writable buffers, oldest first, as
 * much as they take; the rest waits for more buffers. */
static int64_t rx_serve(struct virtio_device *vdev, unsigned q,
			const struct virtq_chain *chain)
{
	struct virtio_console *c = to_console(vdev);
	uint64_t want = MIN(byte_ring_used(&c->in), chain->in_bytes);
	uint64_t done = 0;
	const uint8_t *p;
	size_t n;

	if (chain->nr_out || !chain->in_bytes) {
		virtio_device_error(vdev, "receive chain %s", chain->nr_out ?
				    "with a device-readable buffer" :
				    "without a writable byte");
		return -EIO;
	}
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

static const struct virtio_queue_server rx_server = {
	.wants = rx_wants,
	.serve = rx_serve,
};

static void vcons_queue_notify(struct virtio_device *vdev, unsigned q)
{
	pthread_mutex_lock(&vdev->lock);
	virtio_queue_serve(vdev, q, q == TX_QUEUE ? &tx_server : &rx_server);
	pthread_mutex_unlock(&vdev->lock);
}

/* Input arrived (virtio_console_ops.receive). Input typed before the
 * driver started waits for it, through resets too, as a UART's would:
 * DRIVER_OK kicks the receive queue. */
static void vcons_deferred(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	virtio_queue_serve(vdev, RX_QUEUE, &rx_server);
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
