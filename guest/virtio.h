/* virtio 1.x: split virtqueues (virtqueue.c, also used from ring 3) and
 * the modern PCI transport (virtio_pci.c). */
#ifndef TG_VIRTIO_H
#define TG_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>

#include "pci.h"

/* Device status. */
#define VIRTIO_S_ACKNOWLEDGE	0x01
#define VIRTIO_S_DRIVER		0x02
#define VIRTIO_S_DRIVER_OK	0x04
#define VIRTIO_S_FEATURES_OK	0x08
#define VIRTIO_S_NEEDS_RESET	0x40
#define VIRTIO_S_FAILED		0x80

/* Transport and ring feature bits. */
#define VIRTIO_F_INDIRECT_DESC	28
#define VIRTIO_F_EVENT_IDX	29
#define VIRTIO_F_VERSION_1	32

#define VIRTIO_PCI_VENDOR	0x1af4

/* Split ring layout (virtio 1.x, 2.7). */
#define VRING_DESC_F_NEXT	1
#define VRING_DESC_F_WRITE	2
#define VRING_DESC_F_INDIRECT	4
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY	1

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];	/* [size], then used_event */
};

struct vring_used_elem {
	uint32_t id;
	uint32_t len;
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[];	/* [size], then avail_event */
};

/* One buffer of a request as the driver sees it. */
struct vq_buf {
	uint64_t addr;
	uint32_t len;
	bool write;		/* device-writable */
};

#define VQ_MAX_SIZE	256

struct virtq {
	uint16_t index, size;
	uint16_t free_head, num_free;	/* free descriptors, linked by next */
	uint16_t avail_idx;		/* next avail slot, not yet published */
	uint16_t kicked_idx;		/* avail idx at the last notify check */
	uint16_t last_used;
	bool event_idx, irq_off;
	struct vring_desc *desc;
	volatile struct vring_avail *avail;
	volatile struct vring_used *used;
	void **token;			/* per head in flight, else 0 */
	uint64_t notify;		/* this queue's notify register */
};

void vq_alloc(struct virtq *vq);
void vq_init(struct virtq *vq, uint16_t size, bool event_idx);
int vq_add(struct virtq *vq, const struct vq_buf *b, unsigned n,
	   struct vring_desc *table, void *token);
bool vq_kick(struct virtq *vq);
void vq_notify(struct virtq *vq);
int vq_get_used(struct virtq *vq, void **token, uint32_t *len);
bool vq_arm(struct virtq *vq);
void vq_disarm(struct virtq *vq);

static inline volatile uint16_t *vq_used_event(struct virtq *vq)
{
	return &vq->avail->ring[vq->size];
}

static inline volatile uint16_t *vq_avail_event(struct virtq *vq)
{
	return (volatile uint16_t *)&vq->used->ring[vq->size];
}

/* A virtio device on the modern PCI transport with its first nvq
 * virtqueues (one for virtio-blk without VIRTIO_BLK_F_MQ, receive and
 * transmit for virtio-net, up to six for virtio-balloon). MSI-X entry 0 signals config changes, entry 1
 * every queue; IDT vectors VEC_VIRTIO_BASE + 2 * slot and the next one,
 * slots taken in probe order. */
#define VIRTIO_MAX_QUEUES	6

struct virtio_dev {
	const struct pci_func *pci;
	unsigned slot;
	uint64_t common, isr, device, notify_base;
	uint32_t notify_mult, notify_len;
	uint64_t features;	/* negotiated */
	unsigned nvq;
	struct virtq vq[VIRTIO_MAX_QUEUES];
	bool may_poll;		/* set by the driver: MSI-X not required */
	bool polled;		/* no MSI-X: virtio_idle() reads the ISR */
};

#define VIRTIO_MAX_DEVS		(VEC_VIRTIO_COUNT / 2)

bool virtio_probe(struct virtio_dev *d, const struct pci_func *f,
		  unsigned nvq, const char **why);
bool virtio_negotiate(struct virtio_dev *d, uint64_t want, const char **why);
bool virtio_finish(struct virtio_dev *d, const char **why);
bool virtio_start(struct virtio_dev *d, uint64_t want, const char **why);
bool virtio_reset(struct virtio_dev *d);
uint8_t virtio_status(struct virtio_dev *d);
uint8_t virtio_cfg_generation(struct virtio_dev *d);
void virtio_idle(struct virtio_dev *d);
unsigned virtio_config_irqs(struct virtio_dev *d);
unsigned virtio_queue_irqs(struct virtio_dev *d);

static inline bool virtio_has(const struct virtio_dev *d, unsigned bit)
{
	return d->features >> bit & 1;
}

#endif
