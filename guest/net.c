/* virtio-net driver: start-up and configuration, receive buffers and the
 * reassembly of frames that span several (VIRTIO_NET_F_MRG_RXBUF),
 * transmit slots. No offloads: every header the driver writes is zero and
 * every header it receives must say so. net_rx, net_tx and their helpers
 * are unprivileged so that ring 3 can use them. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "net.h"

#define CFG_MAC			0x00
#define CFG_STATUS		0x06
#define RAM_RX			0
#define RAM_TX			(512 * 1024)
#define RAM_FRAME		(1024 * 1024)
#define RAM_TABLES		(RAM_FRAME + ALIGN_UP(NET_FRAME_MAX, 4096))

/* Without VIRTIO_NET_F_MAC the driver picks an address: locally
 * administered, "tg". */
static const uint8_t default_mac[ETH_ALEN] = { 0x02, 0x74, 0x67, 0, 0, 1 };

/* Buffers in a run of free RAM (see NET_RAM): false if there is none. */
bool net_alloc(struct net_dev *n)
{
	uint64_t ram = free_ram(NET_RAM);

	if (!ram)
		return false;
	n->rx_bufs = ram + RAM_RX;
	n->tx_bufs = ram + RAM_TX;
	n->frame = (uint8_t *)(ram + RAM_FRAME);
	n->tx_tables = (struct vring_desc *)(ram + RAM_TABLES);
	return true;
}

static void rx_post(struct net_dev *n, uint64_t buf)
{
	struct vq_buf b = { buf, n->rx_buf_size, true };

	/* The descriptor it came back in is free again: this cannot fail. */
	vq_add(&n->vd.vq[NET_RXQ], &b, 1, 0, (void *)buf);
}

/* Resets and starts the device, reads the MAC address and the link
 * state (two 32-bit reads cover both), fills the receive queue. */
bool net_start(struct net_dev *n, const char **why)
{
	uint64_t want = 1ULL << VIRTIO_NET_F_MAC | 1ULL << VIRTIO_NET_F_STATUS;
	struct virtio_dev *d = &n->vd;
	struct virtq *rx = &d->vq[NET_RXQ];
	uint8_t mac[ETH_ALEN];
	uint16_t status;
	uint32_t gen;

	if (!(params.vfeat_off & VFEAT_NOMRG))
		want |= 1ULL << VIRTIO_NET_F_MRG_RXBUF;
	if (!virtio_start(d, want, why))
		return false;
	/* Each field with accesses of its own width, as virtio-mmio
	 * requires (4.2.2.2) and PCI asks (4.1.3.1): the MAC address byte
	 * by byte, the status as 16 bits. */
	do {
		gen = virtio_cfg_generation(d);
		for (unsigned i = 0; i < ETH_ALEN; i++)
			mac[i] = mmio_read8(d->device + CFG_MAC + i);
		status = mmio_read16(d->device + CFG_STATUS);
	} while (gen != virtio_cfg_generation(d));
	memcpy(n->self.mac, virtio_has(d, VIRTIO_NET_F_MAC) ? mac : default_mac,
	       ETH_ALEN);
	n->link = !virtio_has(d, VIRTIO_NET_F_STATUS) ||
		  (status & VIRTIO_NET_S_LINK_UP);
	n->rx_buf_size = virtio_has(d, VIRTIO_NET_F_MRG_RXBUF) ?
			 NET_RX_BUF_MRG : NET_RX_BUF;
	for (unsigned i = 0; i < rx->size; i++)
		rx_post(n, n->rx_bufs + i * n->rx_buf_size);
	vq_kick(rx);
	n->tx_nfree = 0;
	for (unsigned i = d->vq[NET_TXQ].size; i--;)
		n->tx_free[n->tx_nfree++] = i;
	return true;
}

/* Takes the next used receive buffer into the frame at *off and posts
 * it again: 1, 0 if there is none, or a NET_ERR_*. The first buffer of
 * a frame (first) starts with the header, and *nbuf is set from it. */
static int rx_take(struct net_dev *n, bool first, uint32_t *off,
		   unsigned *nbuf)
{
	const struct virtio_net_hdr *h;
	void *token;
	uint32_t len, skip = first ? NET_HDR_LEN : 0;
	int rc = vq_get_used(&n->vd.vq[NET_RXQ], &token, &len);

	if (rc <= 0)
		return rc < 0 ? NET_ERR_BAD_ID : 0;
	h = token;
	if (len < skip || len > n->rx_buf_size)
		rc = NET_ERR_USED_LEN;
	else if (first && (h->gso_type || h->flags))
		rc = NET_ERR_HDR;
	else if (*off + len - skip > NET_FRAME_MAX)
		rc = NET_ERR_TOO_BIG;
	if (rc == 1) {
		if (first)
			*nbuf = virtio_has(&n->vd, VIRTIO_NET_F_MRG_RXBUF) ?
				h->num_buffers : 1;
		memcpy(n->frame + *off, (uint8_t *)token + skip, len - skip);
		*off += len - skip;
	}
	rx_post(n, (uint64_t)token);
	return rc;
}

/* Receives the next frame into n->frame: 1, 0 if none has come, or a
 * NET_ERR_*. The buffers go back to the device at once. */
int net_rx(struct net_dev *n)
{
	struct virtq *rx = &n->vd.vq[NET_RXQ];
	uint32_t off = 0;
	unsigned nbuf = 0;
	int rc = rx_take(n, true, &off, &nbuf);

	if (!rc)
		return 0;
	if (rc == 1 && (!nbuf || nbuf > rx->size))
		rc = NET_ERR_NUM_BUFFERS;
	/* The device publishes every buffer of a frame at once
	 * (5.1.6.4.2): all of them are there already. */
	for (unsigned i = 1; rc == 1 && i < nbuf; i++)
		if (!(rc = rx_take(n, false, &off, &nbuf)))
			rc = NET_ERR_NUM_BUFFERS;
	vq_kick(rx);
	n->frame_len = off;
	n->frame_bufs = nbuf;
	return rc;
}

/* Frees the transmit slots the device has used: how many, or
 * NET_ERR_BAD_ID. */
int net_tx_reclaim(struct net_dev *n)
{
	void *token;
	uint32_t len;
	int rc, done = 0;

	while ((rc = vq_get_used(&n->vd.vq[NET_TXQ], &token, &len)) > 0) {
		n->tx_free[n->tx_nfree++] = ((uint64_t)token - n->tx_bufs) /
					    NET_TX_BUF;
		done++;
	}
	return rc < 0 ? NET_ERR_BAD_ID : done;
}

/* Where to build the next frame (NET_TX_FRAME_MAX bytes), and its slot
 * for net_tx; 0 if no slot is free (net_tx_reclaim frees them). */
uint8_t *net_tx_frame(struct net_dev *n, int *slot)
{
	if (!n->tx_nfree)
		return 0;
	*slot = n->tx_free[--n->tx_nfree];
	return (uint8_t *)(n->tx_bufs + *slot * NET_TX_BUF + NET_HDR_LEN);
}

/* Queues the frame of len bytes built in slot, without notifying: the
 * header and the frame in one descriptor, or (split) in two, through an
 * indirect table when negotiated. 0 or NET_ERR_TX_FULL. */
int net_tx(struct net_dev *n, int slot, uint32_t len, bool split)
{
	uint64_t hdr = n->tx_bufs + slot * NET_TX_BUF;
	struct vq_buf b[2] = {
		{ hdr, NET_HDR_LEN, false },
		{ hdr + NET_HDR_LEN, len, false },
	};
	bool indirect = virtio_has(&n->vd, VIRTIO_F_INDIRECT_DESC);

	memset((void *)hdr, 0, NET_HDR_LEN);
	if (!split)
		b[0].len += len;
	if (vq_add(&n->vd.vq[NET_TXQ], b, split ? 2 : 1,
		   split && indirect ? n->tx_tables + 2 * slot : 0,
		   (void *)hdr) < 0) {
		n->tx_free[n->tx_nfree++] = slot;
		return NET_ERR_TX_FULL;
	}
	return 0;
}

const char *net_err_name(int rc)
{
	switch (rc) {
	case 0: return "timeout";
	case NET_ERR_BAD_ID: return "bad-used-id";
	case NET_ERR_USED_LEN: return "bad-used-len";
	case NET_ERR_NUM_BUFFERS: return "bad-num-buffers";
	case NET_ERR_HDR: return "offload-header";
	case NET_ERR_TOO_BIG: return "frame-too-big";
	case NET_ERR_NEEDS_RESET: return "needs-reset";
	case NET_ERR_TX_FULL: return "tx-full";
	default: return "unknown";
	}
}
