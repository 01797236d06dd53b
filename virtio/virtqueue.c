/* Split virtqueue, device side (see virtqueue.h). Ring fields are
 * little-endian (virtio 1.x); index fields that the guest and the device
 * race on are read and written with acquire/release ordering. */
#include "virtio/virtqueue.h"

#include <endian.h>
#include <errno.h>
#include <linux/virtio_ring.h>
#include <string.h>

#include "lib/util.h"

#define DESC_SIZE 16
#define AVAIL_RING 4		/* offset of avail->ring[] */
#define USED_RING 4		/* offset of used->ring[] */
#define USED_ELEM_SIZE 8

static uint16_t load_idx(const uint8_t *p)
{
	return le16toh(__atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE));
}

static void store_idx(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, htole16(v), __ATOMIC_RELEASE);
}

int virtq_map(struct virtq *vq, const struct guest_ram *ram, uint16_t size,
	      uint64_t desc_gpa, uint64_t avail_gpa, uint64_t used_gpa,
	      uint64_t features)
{
	memset(vq, 0, sizeof(*vq));
	vq->ram = ram;
	vq->event_idx = features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = features & (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		vq->error = "queue size not a power of two up to 256";
	else if (!IS_ALIGNED(desc_gpa, 16) || !IS_ALIGNED(avail_gpa, 2) ||
		 !IS_ALIGNED(used_gpa, 4))
		vq->error = "misaligned ring";
	else if (!(vq->desc = guest_ram_ptr(ram, desc_gpa,
					    (uint64_t)DESC_SIZE * size)) ||
		 !(vq->avail = guest_ram_ptr(ram, avail_gpa,
					     AVAIL_RING + 2 * size + 2)) ||
		 !(vq->used = guest_ram_ptr(ram, used_gpa,
					    USED_RING + USED_ELEM_SIZE * size + 2)))
		vq->error = "ring outside guest RAM";
	if (vq->error) {
		vq->desc = vq->avail = vq->used = NULL;
		return -EINVAL;
	}
	/* Indices start at 0 (the driver zeroes the rings it hands over). */
	vq->size = size;
	return 0;
}

void virtq_unmap(struct virtq *vq)
{
	memset(vq, 0, sizeof(*vq));
}

static int broken(struct virtq *vq, const char *why)
{
	vq->error = why;
	return -EIO;
}

static int add_buffer(struct virtq *vq, struct virtq_chain *chain,
		      uint64_t addr, uint32_t len, bool writable)
{
	unsigned n = chain->nr_out + chain->nr_in;
	void *p;

	if (!len)
		return 0;
	if (!writable && chain->nr_in)
		return broken(vq, "readable buffer after a writable one");
	if (n == vq->size)
		return broken(vq, "chain longer than the queue");
	p = guest_ram_ptr(vq->ram, addr, len);
	if (!p)
		return broken(vq, "buffer outside guest RAM");
	chain->iov[n].iov_base = p;
	chain->iov[n].iov_len = len;
	chain->gpa[n] = addr;
	if (writable) {
		chain->nr_in++;
		chain->in_bytes += len;
	} else {
		chain->nr_out++;
		chain->out_bytes += len;
	}
	return 0;
}

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

static void read_desc(const uint8_t *table, uint16_t i, struct desc *d)
{
	uint8_t raw[DESC_SIZE];

	/* One copy: the guest may rewrite the descriptor under us. */
	memcpy(raw, table + (size_t)i * DESC_SIZE, sizeof(raw));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d->addr = get_le64(raw);
	d->len = get_le32(raw + 8);
	d->flags = get_le16(raw + 12);
	d->next = get_le16(raw + 14);
}

/* Walks an indirect table (flags and next are relative to it). */
static int walk_indirect(struct virtq *vq, struct virtq_chain *chain,
			 const struct desc *ind)
{
	const uint8_t *table;
	unsigned n, seen = 0;
	uint16_t i = 0;
	struct desc d;
	int err;

	if (ind->flags & VRING_DESC_F_NEXT)
		return broken(vq, "indirect descriptor with NEXT");
	if (!ind->len || ind->len % DESC_SIZE)
		return broken(vq, "indirect table length not a multiple of 16");
	n = ind->len / DESC_SIZE;
	/* Zero-length entries add no buffer, so only this bounds the walk. */
	if (n > vq->size)
		return broken(vq, "chain longer than the queue");
	table = guest_ram_ptr(vq->ram, ind->addr, ind->len);
	if (!table)
		return broken(vq, "indirect table outside guest RAM");
	for (;;) {
		if (i >= n)
			return broken(vq, "indirect next index out of range");
		if (++seen > n)
			return broken(vq, "loop in indirect table");
		read_desc(table, i, &d);
		if (d.flags & VRING_DESC_F_INDIRECT)
			return broken(vq, "nested indirect table");
		err = add_buffer(vq, chain, d.addr, d.len,
				 d.flags & VRING_DESC_F_WRITE);
		if (err)
			return err;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		i = d.next;
	}
}

int virtq_pop(struct virtq *vq, struct virtq_chain *chain)
{
	uint16_t avail_idx, i;
	unsigned seen = 0;
	struct desc d;
	int err;

	if (!vq->size || vq->error)
		return vq->error ? -EIO : 0;
	avail_idx = load_idx(vq->avail + 2);
	if (avail_idx == vq->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->size)
		return broken(vq, "avail index moved by more than the queue size");
	i = get_le16(vq->avail + AVAIL_RING +
		     2 * (vq->last_avail & (vq->size - 1)));
	if (i >= vq->size)
		return broken(vq, "head index out of range");
	chain->head = i;
	chain->nr_out = chain->nr_in = 0;
	chain->out_bytes = chain->in_bytes = 0;
	for (;;) {
		if (i >= vq->size)
			return broken(vq, "next index out of range");
		if (++seen > vq->size)
			return broken(vq, "loop in descriptor chain");
		read_desc(vq->desc, i, &d);
		if ((d.flags & VRING_DESC_F_INDIRECT) && !vq->indirect)
			return broken(vq, "indirect descriptor not negotiated");
		if (d.flags & VRING_DESC_F_INDIRECT)
			/* Ends the chain: NEXT with INDIRECT is refused. */
			err = walk_indirect(vq, chain, &d);
		else
			err = add_buffer(vq, chain, d.addr, d.len,
					 d.flags & VRING_DESC_F_WRITE);
		if (err)
			return err;
		if ((d.flags & VRING_DESC_F_INDIRECT) ||
		    !(d.flags & VRING_DESC_F_NEXT))
			break;
		i = d.next;
	}
	vq->last_avail++;
	return 1;
}

void virtq_unpop(struct virtq *vq)
{
	vq->last_avail--;
}

bool virtq_has_avail(const struct virtq *vq)
{
	return vq->size && load_idx(vq->avail + 2) != vq->last_avail;
}

void virtq_fill(struct virtq *vq, unsigned i, uint16_t head,
		uint32_t written)
{
	uint16_t slot = (vq->used_idx + i) & (vq->size - 1);
	uint8_t *elem = vq->used + USED_RING + USED_ELEM_SIZE * slot;

	put_le32(elem, head);
	put_le32(elem + 4, written);
}

void virtq_flush(struct virtq *vq, unsigned n)
{
	vq->used_idx += n;
	store_idx(vq->used + 2, vq->used_idx);
}

void virtq_push(struct virtq *vq, uint16_t head, uint32_t written)
{
	virtq_fill(vq, 0, head, written);
	virtq_flush(vq, 1);
}

bool virtq_need_interrupt(struct virtq *vq)
{
	uint16_t old = vq->signalled_used, used_event;
	bool valid = vq->signalled_valid;

	/* Our used index must be visible before we read the guest's
	 * suppression state, or both sides may wait for the other. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!vq->event_idx)
		return !(load_idx(vq->avail) & VRING_AVAIL_F_NO_INTERRUPT);
	vq->signalled_used = vq->used_idx;
	vq->signalled_valid = true;
	used_event = load_idx(vq->avail + AVAIL_RING + 2 * vq->size);
	return !valid || vring_need_event(used_event, vq->used_idx, old);
}

/* Where the device asks to be notified, after the used ring. */
static uint8_t *avail_event(struct virtq *vq)
{
	return vq->used + USED_RING + USED_ELEM_SIZE * vq->size;
}

void virtq_disable_notify(struct virtq *vq)
{
	/* With EVENT_IDX, avail_event one behind what was taken: a driver
	 * that adds after it saw everything taken crosses nothing and does
	 * not notify; left where enable put it, its next addition would. */
	if (vq->event_idx)
		store_idx(avail_event(vq), vq->last_avail - 1);
	else
		store_idx(vq->used, VRING_USED_F_NO_NOTIFY);
}

bool virtq_enable_notify(struct virtq *vq)
{
	if (vq->event_idx)
		store_idx(avail_event(vq), vq->last_avail);
	else
		store_idx(vq->used, 0);
	/* Publish before looking again, or a kick may be lost. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return load_idx(vq->avail + 2) != vq->last_avail;
}

uint64_t virtq_chain_read(const struct virtq_chain *chain, uint64_t skip,
			  void *dst, uint64_t len)
{
	return iov_to_buf(chain->iov, chain->nr_out, skip, dst, len);
}

uint64_t virtq_chain_write(const struct virtq_chain *chain, uint64_t skip,
			   const void *src, uint64_t len)
{
	return buf_to_iov(chain->iov + chain->nr_out, chain->nr_in, skip, src,
			  len);
}
