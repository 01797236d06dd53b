/* virtio-net (virtio 1.x, 5.1) over a tap: one receive and one transmit
 * queue, a MAC address and a link that is always up, mergeable receive
 * buffers, no offloads. The device thread serves both queues and the tap
 * (virtio_device_watch), and every guest-memory access happens under
 * vdev.lock, which is what makes a reset immediate. */
#ifndef THPVM_VIRTIO_NET_H
#define THPVM_VIRTIO_NET_H

#include <linux/if_ether.h>
#include <linux/virtio_net.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "virtio/virtio.h"

#define NET_QUEUE_SIZE 256
#define NET_RXQ 0
#define NET_TXQ 1

struct virtio_net {
	struct virtio_device vdev;
	struct virtio_net_config config;
	int tap_fd;
	bool tap_lost;		/* it hung up: stop watching it */

	/* Under vdev.lock. The tap refused the transmit chain at the head
	 * of the ring with EAGAIN; it goes first when the tap is writable. */
	bool tx_pending;

	/* Receive chains taken from the queue and not yet used (a ring of
	 * rx_nr from rx_first), and the packet read from the tap that they
	 * are for (rx_len bytes, header included; 0: none). */
	struct virtq_chain *rx_chains;
	unsigned rx_first, rx_nr;
	uint64_t rx_held;	/* writable bytes in those chains */
	uint8_t *rx_buf;
	size_t rx_len;

	uint64_t rx_dropped;	/* too large, or no buffer could take it */
	uint64_t tx_dropped;	/* too large, or the tap refused it */
};

/* Takes over tap_fd (a tap from tap_open, or anything that reads and
 * writes one packet per call with the 12-byte header; it is closed on
 * failure too). */
int virtio_net_create(struct virtio_net *net, int tap_fd,
		      const uint8_t mac[ETH_ALEN], const struct guest_ram *ram);
/* Stops the device thread and closes the tap. */
void virtio_net_destroy(struct virtio_net *net);

#endif
