/* The device side of a split virtqueue (virtio/virtqueue.c) on rings the
 * input writes. The input: the queue size (a power of two, or with 0xf0
 * and up any 16-bit value that follows), the negotiated ring features
 * (EVENT_IDX, INDIRECT_DESC), a count and that many operations, then an
 * image of guest RAM from guest-physical 0: the descriptor table at 0,
 * the avail ring right after it, the used ring after that, buffers and
 * indirect tables wherever the descriptors say. Every chain taken must
 * lie within guest RAM, as its own iovecs and addresses say. */
#include <linux/virtio_ring.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/util.h"
#include "virtio/virtqueue.h"

#define HELD_MAX 4	/* chains held for one virtq_fill/flush batch */

static struct virtq vq;
static struct virtq_chain chains[HELD_MAX + 1];
static uint8_t copy[4096];

static void chain_check(const struct virtq_chain *c)
{
	uint64_t out = 0, in = 0;
	unsigned i;

	if (c->nr_out + c->nr_in > vq.size || c->head >= vq.size)
		abort();
	for (i = 0; i < c->nr_out + c->nr_in; i++) {
		if (!c->iov[i].iov_len ||
		    guest_ram_ptr(&fuzz_ram, c->gpa[i], c->iov[i].iov_len) !=
			    c->iov[i].iov_base)
			abort();
		*(i < c->nr_out ? &out : &in) += c->iov[i].iov_len;
	}
	if (out != c->out_bytes || in != c->in_bytes)
		abort();
}

/* Takes a chain into chains[slot]: 1, or 0 if none (the ring is empty or
 * the queue broke, which must say why). */
static int chain_take(unsigned slot)
{
	int got = virtq_pop(&vq, &chains[slot]);

	if (got < 0 && !vq.error)
		abort();
	if (got <= 0)
		return 0;
	chain_check(&chains[slot]);
	return 1;
}

/* Reads from the readable part and writes it back into the writable
 * part, as a device answering a request would. */
static uint32_t chain_echo(const struct virtq_chain *c, uint8_t op)
{
	uint64_t skip = op >> 4, len = (uint64_t)(op & 0xf) << 8;
	uint64_t n = virtq_chain_read(c, skip, copy, len);

	if (n > len || n > c->out_bytes)
		abort();
	n = virtq_chain_write(c, skip, copy, n);
	if (n > c->in_bytes)
		abort();
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t size_byte = fuzz_u8(&in);
	uint16_t qsize = size_byte >= 0xf0 ? fuzz_u16(&in) :
					     1u << (size_byte % 9);
	uint8_t features = fuzz_u8(&in);
	unsigned nr_ops = fuzz_u8(&in), held = 0, i;
	uint64_t avail = 16ULL * qsize;
	uint64_t used = ALIGN_UP(avail + 6 + 2ULL * qsize, 4);
	struct fuzz_input ops = { in.data, MIN(in.len, nr_ops) };

	in.data += ops.len;
	in.len -= ops.len;
	fuzz_ram_load(in.data, in.len);
	if (virtq_map(&vq, &fuzz_ram, qsize, 0, avail, used,
		      (features & 1 ? 1ULL << VIRTIO_RING_F_EVENT_IDX : 0) |
		      (features & 2 ? 1ULL << VIRTIO_RING_F_INDIRECT_DESC : 0)))
		return 0;
	while (ops.len) {
		uint8_t op = fuzz_u8(&ops);

		switch (op & 3) {
		case 0:	/* one request, answered at once */
			if (chain_take(HELD_MAX))
				virtq_push(&vq, chains[HELD_MAX].head,
					   chain_echo(&chains[HELD_MAX], op));
			break;
		case 1:	/* hold one for a batch */
			if (held < HELD_MAX)
				held += chain_take(held);
			break;
		case 2:	/* the batch used together */
			for (i = 0; i < held; i++)
				virtq_fill(&vq, i, chains[i].head,
					   chain_echo(&chains[i], op));
			virtq_flush(&vq, held);
			held = 0;
			virtq_need_interrupt(&vq);
			break;
		case 3:
			virtq_disable_notify(&vq);
			virtq_has_avail(&vq);
			virtq_enable_notify(&vq);
			break;
		}
	}
	/* Then drain what is left, as a device does. */
	for (i = 0; i < 2u * qsize && chain_take(HELD_MAX); i++)
		virtq_push(&vq, chains[HELD_MAX].head, 0);
	virtq_need_interrupt(&vq);
	virtq_unmap(&vq);
	return 0;
}
