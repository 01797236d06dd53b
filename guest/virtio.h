/* virtio 1.x: split virtqueues (virtqueue.c, also used from ring 3), the
 * transport-independent driver side (virtio.c) and the modern PCI and
 * virtio-mmio transports (virtio_pci.c, virtio_mmio.c). */
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

/* Interrupt status bits (PCI ISR, virtio-mmio InterruptStatus). */
#define VIRTIO_ISR_QUEUE	1
#define VIRTIO_ISR_CONFIG	2

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
	bool notify32;			/* written as 32 bits (virtio-mmio) */
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

/* A virtio device a transport found, not yet driven: PCI functions in
 * bus order first, then virtio-mmio devices in command line order
 * (virtio_scan; virtio= keeps a transport out). */
#define VIRTIO_MAX_CANDS	32
#define VIRTIO_WHERE_LEN	40

struct virtio_cand {
	unsigned id;			/* virtio device ID (spec 5) */
	const struct pci_func *pci;	/* on PCI; else on virtio-mmio: */
	uint64_t base, size;
	unsigned gsi, version;
	char where[VIRTIO_WHERE_LEN];	/* bdf=00:03.0, mmio=0x... gsi=N */
};

extern struct virtio_cand virtio_cands[VIRTIO_MAX_CANDS];
extern unsigned virtio_ncands;

struct virtio_dev;

/* What differs between the transports: register accesses, a queue's
 * set-up, the config interrupt, the interrupt status. The generic
 * sequence (virtio.c) calls them in the order the spec gives. */
struct virtio_ops {
	uint8_t (*status)(struct virtio_dev *d);
	void (*set_status)(struct virtio_dev *d, uint8_t st);
	uint32_t (*generation)(struct virtio_dev *d);
	uint64_t (*features)(struct virtio_dev *d);	/* offered */
	void (*set_features)(struct virtio_dev *d, uint64_t f);
	unsigned (*num_queues)(struct virtio_dev *d);
	/* Selects queue q and returns its maximum size. */
	uint16_t (*queue_max)(struct virtio_dev *d, unsigned q);
	/* The selected queue's size, rings and notify address, enabled. */
	bool (*queue_enable)(struct virtio_dev *d, unsigned q,
			     const char **why);
	/* Before DRIVER_OK: config change interrupts (0: nothing to do). */
	bool (*config_irq)(struct virtio_dev *d, const char **why);
	/* Interrupt status bits, read and acknowledged. */
	uint8_t (*isr)(struct virtio_dev *d);
};

/* A virtio device with its first nvq virtqueues (one for virtio-blk
 * without VIRTIO_BLK_F_MQ, receive and transmit for virtio-net, up to
 * six for virtio-balloon). Each probed device takes a slot, in probe
 * order, and with it IDT vectors VEC_VIRTIO_BASE + 2 * slot (config
 * changes) and the next one (every queue): MSI-X entries 0 and 1 on
 * PCI; on virtio-mmio the device's one wired line, level triggered,
 * goes to the second and the interrupt status says which it was. */
#define VIRTIO_MAX_QUEUES	8

struct virtio_dev {
	const struct virtio_ops *ops;
	const struct virtio_cand *cand;
	unsigned slot;
	uint64_t device;	/* device-specific configuration */
	/* PCI */
	uint64_t common, isr, notify_base;
	uint32_t notify_mult, notify_len;
	/* virtio-mmio: the register file */
	uint64_t base;
	uint64_t features;	/* negotiated */
	unsigned nvq;
	struct virtq vq[VIRTIO_MAX_QUEUES];
	bool may_poll;		/* set by the driver: MSI-X not required */
	bool config_optional;	/* set by the driver: no device config */
	bool polled;		/* no MSI-X: virtio_idle() reads the ISR */
	bool wired;		/* one line: virtio-mmio's, or PCI INTx */
};

#define VIRTIO_MAX_DEVS		(VEC_VIRTIO_COUNT / 2)

void virtio_scan(void);
void virtio_add_cand(const struct virtio_cand *c);
bool virtio_probe(struct virtio_dev *d, const struct virtio_cand *c,
		  unsigned nvq, const char **why);
bool virtio_negotiate(struct virtio_dev *d, uint64_t want, const char **why);
bool virtio_finish(struct virtio_dev *d, const char **why);
bool virtio_start(struct virtio_dev *d, uint64_t want, const char **why);
bool virtio_reset(struct virtio_dev *d);
bool virtio_fail(struct virtio_dev *d, const char *what, const char **why);
uint8_t virtio_status(struct virtio_dev *d);
uint32_t virtio_cfg_generation(struct virtio_dev *d);
void virtio_idle(struct virtio_dev *d);
unsigned virtio_config_irqs(struct virtio_dev *d);
unsigned virtio_queue_irqs(struct virtio_dev *d);
const char *virtio_irq_mode(const struct virtio_dev *d);

/* The transports (virtio_pci.c, virtio_mmio.c). */
void virtio_pci_scan(void);
bool virtio_pci_probe(struct virtio_dev *d, const char **why);
void virtio_mmio_scan(void);
bool virtio_mmio_probe(struct virtio_dev *d, const char **why);

static inline bool virtio_has(const struct virtio_dev *d, unsigned bit)
{
	return d->features >> bit & 1;
}

#endif
