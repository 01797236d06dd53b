/* virtio-net device (see net.h). Every packet on either queue starts with
 * the 12-byte struct virtio_net_hdr_v1. With no offloads negotiated its
 * fields carry nothing but num_buffers, so the device writes its own
 * zeroed header in both directions rather than pass on the guest's
 * (which could ask the host for segmentation we never offered) or the
 * host's (which may say "checksum valid", not ours to say without
 * VIRTIO_NET_F_GUEST_CSUM). */
#include "virtio/net.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#define NET_NAME "virtio-net0"
#define HDR_SIZE sizeof(struct virtio_net_hdr_v1)
#define NUM_BUFFERS_OFF offsetof(struct virtio_net_hdr_v1, num_buffers)
/* The largest frame without offloads: 5.1.6.3.1 sizes receive buffers
 * for it at 65562 bytes, header included. */
#define MAX_FRAME 65550u
#define MAX_PACKET (HDR_SIZE + MAX_FRAME)
/* One byte more than a packet may have, to see a read cut short. */
#define RX_BUF_SIZE (MAX_PACKET + 1)
/* Packets per turn on a queue, so that the lock is let go now and then
 * and neither direction starves the other. */
#define BUDGET 64

static struct virtio_net *to_net(struct virtio_device *vdev)
{
	return vdev->opaque;
}

static bool mergeable(const struct virtio_net *net)
{
	return net->vdev.features & 1ULL << VIRTIO_NET_F_MRG_RXBUF;
}

/* The tap hung up (its interface was deleted): the link is down for
 * good, and the driver hears of it through the status field. */
static void tap_lost(struct virtio_net *net)
{
	if (net->tap_lost)
		return;
	net->tap_lost = true;
	pr_warn("%s: the tap hung up; the link is down", NET_NAME);
	put_le16(&net->config.status, 0);
	virtio_config_changed(&net->vdev);
}

/* A transmit chain the device cannot even frame breaks the layout both
 * sides agreed on (a legacy 10-byte header, queues swapped): later
 * packets cannot be trusted either, so the device asks for a reset, as
 * blk does for a request without a status byte. */
static bool tx_chain_ok(struct virtio_net *net, const struct virtq_chain *c)
{
	struct virtio_device *vdev = &net->vdev;

	if (c->nr_in)
		virtio_device_error(vdev, "transmit buffer with a "
				    "device-writable part");
	else if (c->out_bytes < HDR_SIZE)
		virtio_device_error(vdev, "transmit buffer of %llu bytes, "
				    "shorter than the %zu-byte header",
				    (unsigned long long)c->out_bytes, HDR_SIZE);
	else
		return true;
	return false;
}

/* Sends the chain, with our header in place of the guest's. 0 when done
 * with it (sent or dropped), -EAGAIN when the tap cannot take it now. */
static int tx_send(struct virtio_net *net, const struct virtq_chain *c)
{
	static const uint8_t hdr[HDR_SIZE];
	struct iovec iov[VIRTQ_MAX_SIZE + 1];
	unsigned n;

	if (net->tap_lost) {
		net->tx_dropped++;
		return 0;
	}
	if (c->out_bytes > MAX_PACKET) {
		net->tx_dropped++;
		pr_warn_ratelimited("%s: dropped a frame to send: larger "
				    "than %u bytes", NET_NAME, MAX_FRAME);
		return 0;
	}
	iov[0].iov_base = (void *)hdr;
	iov[0].iov_len = HDR_SIZE;
	n = 1 + iov_slice(c->iov, c->nr_out, HDR_SIZE, iov + 1);
	if (writev(net->tap_fd, iov, n) >= 0)
		return 0;
	if (errno == EAGAIN)
		return -EAGAIN;
	net->tx_dropped++;
	/* EIO: the interface is down, the user's choice, like a cable
	 * left unplugged; anything else is worth a line. */
	if (errno != EIO)
		pr_warn_ratelimited("%s: the tap refused a frame: %s",
				    NET_NAME, strerror(errno));
	return 0;
}

/* One transmit chain. One the tap cannot take now goes back to the head
 * of the ring, and kicks stay off until the tap is writable again. */
static int64_t tx_serve(struct virtio_device *vdev, unsigned q,
			const struct virtq_chain *c)
{
	struct virtio_net *net = to_net(vdev);

	if (!tx_chain_ok(net, c))
		return -EIO;
	if (tx_send(net, c) == -EAGAIN) {
		net->tx_pending = true;
		return -EAGAIN;
	}
	return 0;
}

/* Past the budget the queue kicks itself: back after the other events. */
static const struct virtio_queue_server tx_server = {
	.budget = BUDGET,
	.serve = tx_serve,
};

static void tx_process(struct virtio_net *net)
{
	/* What waited for the tap is at the head of the ring again. */
	net->tx_pending = false;
	virtio_queue_serve(&net->vdev, NET_TXQ, &tx_server);
}

static struct virtq_chain *rx_chain(struct virtio_net *net, unsigned i)
{
	return &net->rx_chains[(net->rx_first + i) % VIRTQ_MAX_SIZE];
}

/* Takes one more receive chain: 1, 0 when the queue is empty, -ENOSPC
 * when the whole queue is held already, -EIO when the guest broke the
 * protocol (the device then needs a reset). */
static int rx_take(struct virtio_net *net)
{
	struct virtio_device *vdev = &net->vdev;
	struct virtq *vq = &vdev->queues[NET_RXQ].vq;
	struct virtq_chain *c;
	int got;

	/* Never more than the queue holds, even if the guest publishes
	 * heads we hold again. */
	if (net->rx_nr == vq->size)
		return -ENOSPC;
	c = rx_chain(net, net->rx_nr);
	got = virtio_queue_pop(vdev, NET_RXQ, c);
	if (got <= 0)
		return got;
	/* With MRG_RXBUF every buffer must hold the header (5.1.6.3.1);
	 * without it, a buffer that cannot would stall the queue. */
	if (c->nr_out || c->in_bytes < HDR_SIZE) {
		virtio_device_error(vdev, "receive buffer %s", c->nr_out ?
				    "with a device-readable part" :
				    "smaller than the header");
		return -EIO;
	}
	net->rx_nr++;
	net->rx_held += c->in_bytes;
	return 1;
}

static void rx_drop(struct virtio_net *net, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rx_drop(struct virtio_net *net, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	net->rx_dropped++;
	net->rx_len = 0;
	pr_warn_ratelimited("%s: dropped a received frame: %s", NET_NAME, why);
}

/* Copies the packet into the first n held chains and hands them to the
 * guest. */
static void rx_fill(struct virtio_net *net, unsigned n)
{
	struct virtq *vq = &net->vdev.queues[NET_RXQ].vq;
	uint64_t off = 0, len;
	unsigned i;

	memset(net->rx_buf, 0, NUM_BUFFERS_OFF);
	put_le16(net->rx_buf + NUM_BUFFERS_OFF, n);
	for (i = 0; i < n; i++) {
		struct virtq_chain *c = rx_chain(net, i);

		len = virtq_chain_write(c, 0, net->rx_buf + off,
					net->rx_len - off);
		virtq_fill(vq, i, c->head, len);
		off += len;
		net->rx_held -= c->in_bytes;
	}
	/* All at once: the driver must find every buffer of the packet
	 * used when it sees the first (5.1.6.4.2). */
	virtq_flush(vq, n);
	net->rx_first = (net->rx_first + n) % VIRTQ_MAX_SIZE;
	net->rx_nr -= n;
	net->rx_len = 0;
}

/* Places the packet read from the tap: 1 when done with it (delivered or
 * dropped), 0 when it waits for more receive buffers, -EIO. */
static int rx_deliver(struct virtio_net *net)
{
	bool mrg = mergeable(net);
	uint64_t sum = 0;
	unsigned n = 0;
	int got;

	/* Without MRG_RXBUF the first chain alone must take it. */
	while (mrg ? net->rx_held < net->rx_len : !net->rx_nr) {
		got = rx_take(net);
		if (got == -ENOSPC) {
			rx_drop(net, "%zu bytes with its header, more than "
				"all receive buffers hold", net->rx_len);
			return 1;
		}
		if (got <= 0)
			return got;
	}
	if (!mrg && rx_chain(net, 0)->in_bytes < net->rx_len) {
		/* The chain stays for a smaller packet. */
		rx_drop(net, "%zu bytes with its header, more than the "
			"receive buffer holds (%llu)", net->rx_len,
			(unsigned long long)rx_chain(net, 0)->in_bytes);
		return 1;
	}
	while (sum < net->rx_len)
		sum += rx_chain(net, n++)->in_bytes;
	rx_fill(net, n);
	return 1;
}

/* Reads the next packet into rx_buf: 1 when one was read (rx_len stays
 * 0 if it had to be dropped), 0 when there is none, -EIO when the tap
 * is gone. */
static int rx_read(struct virtio_net *net)
{
	ssize_t n = read(net->tap_fd, net->rx_buf, RX_BUF_SIZE);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		if (n < 0)
			pr_warn("%s: cannot read the tap: %s", NET_NAME,
				strerror(errno));
		tap_lost(net);
		return -EIO;
	}
	net->rx_len = n;
	if (net->rx_len > MAX_PACKET)
		rx_drop(net, "larger than %u bytes", MAX_FRAME);
	else if (net->rx_len < HDR_SIZE)
		rx_drop(net, "%zu bytes, shorter than its header",
			net->rx_len);
	return 1;
}

/* The receive queue ran dry: the driver is to say when it adds buffers.
 * True if some came meanwhile. */
static bool rx_wait(struct virtq *vq)
{
	if (!virtq_enable_notify(vq))
		return false;
	virtq_disable_notify(vq);
	return true;
}

/* Reads the tap only with a buffer to take the packet: otherwise the
 * packet waits in the tap (which drops what overflows its queue). */
static void rx_process(struct virtio_net *net)
{
	struct virtio_device *vdev = &net->vdev;
	struct virtq *vq = &vdev->queues[NET_RXQ].vq;
	uint16_t used = vq->used_idx;
	unsigned budget = BUDGET;
	int got;

	if (!virtio_queue_ready(vdev, NET_RXQ))
		return;
	virtq_disable_notify(vq);
	while (virtio_queue_ready(vdev, NET_RXQ) && !net->tap_lost) {
		if (!net->rx_len && net->rx_nr) {
			/* EPOLLIN stays on: back after other events. */
			if (!budget-- || rx_read(net) <= 0)
				break;
			continue;
		}
		got = net->rx_len ? rx_deliver(net) : rx_take(net);
		if (got < 0 || (!got && !rx_wait(vq)))
			break;
	}
	if (vq->used_idx != used)
		virtio_queue_interrupt(vdev, NET_RXQ);
}

/* What the device thread waits for on the tap: packets while there is a
 * receive buffer for one, room while a packet to send waits. */
static void update_watch(struct virtio_net *net)
{
	struct virtio_device *vdev = &net->vdev;
	uint32_t events = 0;

	if (!net->tap_lost) {
		if (virtio_queue_ready(vdev, NET_RXQ) && net->rx_nr &&
		    !net->rx_len)
			events |= EPOLLIN;
		if (virtio_queue_ready(vdev, NET_TXQ) && net->tx_pending)
			events |= EPOLLOUT;
	}
	virtio_device_watch(vdev, 0, net->tap_fd, events);
}

static void net_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_net *net = to_net(vdev);

	pthread_mutex_lock(&vdev->lock);
	if (q == NET_RXQ)
		rx_process(net);
	else
		tx_process(net);
	update_watch(net);
	pthread_mutex_unlock(&vdev->lock);
}

static void net_watch_event(struct virtio_device *vdev, unsigned q,
			    uint32_t events)
{
	struct virtio_net *net = to_net(vdev);

	pthread_mutex_lock(&vdev->lock);
	if (events & (EPOLLERR | EPOLLHUP)) {
		tap_lost(net);
	} else {
		if (events & EPOLLOUT)
			tx_process(net);
		if (events & EPOLLIN)
			rx_process(net);
	}
	update_watch(net);
	pthread_mutex_unlock(&vdev->lock);
}

/* Every guest-memory access above holds the lock that reset is called
 * with, so forgetting the chains taken is all it takes. A packet read
 * and not delivered yet is lost, as on a real NIC's reset. */
static void net_reset(struct virtio_device *vdev)
{
	struct virtio_net *net = to_net(vdev);

	if (net->rx_len)
		net->rx_dropped++;
	net->rx_len = 0;
	net->rx_first = net->rx_nr = 0;
	net->rx_held = 0;
	net->tx_pending = false;
	virtio_device_watch(vdev, 0, net->tap_fd, 0);
}

static const struct virtio_device_ops net_ops = {
	.queue_notify = net_queue_notify,
	.reset = net_reset,
	.watch_event = net_watch_event,
};

int virtio_net_create(struct virtio_net *net, int tap_fd,
		      const uint8_t mac[ETH_ALEN], const struct guest_ram *ram)
{
	static const uint16_t sizes[] = { NET_QUEUE_SIZE, NET_QUEUE_SIZE };
	uint64_t features = 1ULL << VIRTIO_NET_F_MAC |
			    1ULL << VIRTIO_NET_F_STATUS |
			    1ULL << VIRTIO_NET_F_MRG_RXBUF;
	int err;

	memset(net, 0, sizeof(*net));
	net->tap_fd = tap_fd;
	memcpy(net->config.mac, mac, ETH_ALEN);
	put_le16(&net->config.status, VIRTIO_NET_S_LINK_UP);
	err = virtio_device_init(&net->vdev, NET_NAME, VIRTIO_ID_NET, features,
				 ARRAY_SIZE(sizes), sizes, &net->config,
				 sizeof(net->config), &net_ops, net, ram);
	if (!err) {
		net->rx_buf = malloc(RX_BUF_SIZE);
		net->rx_chains = calloc(VIRTQ_MAX_SIZE,
					sizeof(*net->rx_chains));
		if (!net->rx_buf || !net->rx_chains)
			err = -ENOMEM;
	}
	if (err) {
		pr_err("%s: cannot set up the device: %s", NET_NAME,
		       strerror(-err));
		virtio_net_destroy(net);
	}
	return err;
}

void virtio_net_destroy(struct virtio_net *net)
{
	virtio_device_destroy(&net->vdev);
	if (net->tap_fd >= 0)
		close(net->tap_fd);
	net->tap_fd = -1;
	free(net->rx_buf);
	free(net->rx_chains);
	net->rx_buf = NULL;
	net->rx_chains = NULL;
}
