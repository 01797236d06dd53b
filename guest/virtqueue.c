/* Split virtqueues: descriptor table with a free list, avail and used
 * rings, direct chains and indirect tables, notification suppression both
 * ways (flags, or event indices with VIRTIO_F_EVENT_IDX). Nothing here is
 * privileged, so ring 3 drives queues with it too (blkbench). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

/* Room for the largest queue: descriptors, avail ring (and the tokens
 * behind it), used ring; one page each. */
void vq_alloc(struct virtq *vq)
{
	uint8_t *p = alloc_pages(3);

	vq->desc = (struct vring_desc *)p;
	vq->avail = (volatile struct vring_avail *)(p + 4096);
	vq->token = (void **)(p + 4096 + 1024);
	vq->used = (volatile struct vring_used *)(p + 8192);
}

/* Empties the queue for a device that was just reset. */
void vq_init(struct virtq *vq, uint16_t size, bool event_idx)
{
	vq->size = size;
	vq->free_head = 0;
	vq->num_free = size;
	vq->avail_idx = vq->kicked_idx = vq->last_used = 0;
	vq->event_idx = event_idx;
	vq->irq_off = false;
	for (unsigned i = 0; i < size; i++) {
		vq->desc[i].next = i + 1;
		vq->token[i] = 0;
	}
	vq->avail->flags = 0;
	vq->avail->idx = 0;
	*vq_used_event(vq) = 0;
	/* Stale entries from before the reset must not look used. */
	vq->used->flags = 0;
	vq->used->idx = 0;
	*vq_avail_event(vq) = 0;
}

static void set_desc(struct vring_desc *d, const struct vq_buf *b, bool more)
{
	d->addr = b->addr;
	d->len = b->len;
	d->flags = (b->write ? VRING_DESC_F_WRITE : 0) |
		   (more ? VRING_DESC_F_NEXT : 0);
}

/* Makes b[0..n) available as one chain, through table (an indirect table
 * of at least n entries) when given. The device does not see it before
 * vq_kick. Returns the head, or -1 if there are not enough free
 * descriptors. */
int vq_add(struct virtq *vq, const struct vq_buf *b, unsigned n,
	   struct vring_desc *table, void *token)
{
	uint16_t head = vq->free_head, i = head;

	if (!n || vq->num_free < (table ? 1 : n))
		return -1;
	if (table) {
		for (unsigned k = 0; k < n; k++) {
			set_desc(&table[k], &b[k], k + 1 < n);
			table[k].next = k + 1;
		}
		vq->desc[i].addr = (uint64_t)table;
		vq->desc[i].len = n * sizeof(*table);
		vq->desc[i].flags = VRING_DESC_F_INDIRECT;
		i = vq->desc[i].next;
		vq->num_free--;
	} else {
		/* Free descriptors are already linked in chain order. */
		for (unsigned k = 0; k < n; k++) {
			set_desc(&vq->desc[i], &b[k], k + 1 < n);
			i = vq->desc[i].next;
		}
		vq->num_free -= n;
	}
	vq->free_head = i;
	vq->token[head] = token;
	vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
	vq->avail_idx++;
	return head;
}

/* The queue's index: 16 bits on PCI, and a 32-bit write to QueueNotify
 * on virtio-mmio, whose registers take 32-bit accesses only. */
void vq_notify(struct virtq *vq)
{
	if (vq->notify32)
		mmio_write32(vq->notify, vq->index);
	else
		mmio_write16(vq->notify, vq->index);
}

/* Publishes what vq_add queued and notifies the device unless it asked
 * not to be. Returns whether it notified. */
bool vq_kick(struct virtq *vq)
{
	uint16_t old = vq->kicked_idx, new = vq->avail_idx;
	bool need;

	wmb();		/* ring entries before the index */
	vq->avail->idx = new;
	mb();			/* index, then the device's suppression */
	vq->kicked_idx = new;
	if (vq->event_idx)
		need = (uint16_t)(new - *vq_avail_event(vq) - 1) <
		       (uint16_t)(new - old);
	else
		need = !(vq->used->flags & VRING_USED_F_NO_NOTIFY);
	if (need)
		vq_notify(vq);
	return need;
}

/* Takes one used buffer and frees its descriptors: 1 with its token and
 * written length, 0 if there is none, -1 if the device returned an id
 * that is not in flight. */
int vq_get_used(struct virtq *vq, void **token, uint32_t *len)
{
	uint16_t mask = vq->size - 1, n = 1, tail;
	uint32_t id;

	if (vq->used->idx == vq->last_used)
		return 0;
	rmb();			/* the index, then the entry it covers */
	id = vq->used->ring[vq->last_used & mask].id;
	*len = vq->used->ring[vq->last_used & mask].len;
	if (id >= vq->size || !vq->token[id])
		return -1;
	*token = vq->token[id];
	vq->token[id] = 0;
	for (tail = id; vq->desc[tail].flags & VRING_DESC_F_NEXT; n++)
		tail = vq->desc[tail].next;
	vq->desc[tail].next = vq->free_head;
	vq->free_head = id;
	vq->num_free += n;
	vq->last_used++;
	if (vq->event_idx && vq->irq_off)
		*vq_used_event(vq) = vq->last_used - 1;
	return 1;
}

/* Asks for an interrupt for the next used buffer. Returns true if some
 * are there already, for which none may come: do not sleep then. */
bool vq_arm(struct virtq *vq)
{
	vq->irq_off = false;
	if (vq->event_idx)
		*vq_used_event(vq) = vq->last_used;
	else
		vq->avail->flags = 0;
	mb();			/* request before the check */
	return vq->used->idx != vq->last_used;
}

/* No interrupts for used buffers (a polling loop): the flag, or a
 * used_event just behind last_used, which vq_get_used keeps there. */
void vq_disarm(struct virtq *vq)
{
	vq->irq_off = true;
	if (vq->event_idx)
		*vq_used_event(vq) = vq->last_used - 1;
	else
		vq->avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
}
