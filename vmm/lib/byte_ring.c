/* Byte FIFO over caller storage (see byte_ring.h). */
#include "lib/byte_ring.h"

#include <string.h>

#include "lib/util.h"

void byte_ring_init(struct byte_ring *r, void *buf, size_t size)
{
	r->buf = buf;
	r->size = size;
	r->head = r->tail = 0;
}

void byte_ring_clear(struct byte_ring *r)
{
	r->head = r->tail;
}

size_t byte_ring_put(struct byte_ring *r, const void *data, size_t len)
{
	size_t take = MIN(len, byte_ring_room(r));
	size_t at = r->tail % r->size;
	size_t first = MIN(take, r->size - at);

	memcpy(r->buf + at, data, first);
	memcpy(r->buf, (const uint8_t *)data + first, take - first);
	r->tail += take;
	return take;
}

const uint8_t *byte_ring_span_at(const struct byte_ring *r, uint64_t pos,
				 size_t *len)
{
	size_t at = pos % r->size;

	*len = MIN(r->tail - pos, r->size - at);
	return r->buf + at;
}

void byte_ring_consume(struct byte_ring *r, size_t n)
{
	r->head += n;
}

size_t byte_ring_get(struct byte_ring *r, void *dst, size_t max)
{
	size_t want = MIN(max, byte_ring_used(r)), done = 0, n;
	const uint8_t *p;

	/* Two pieces at most: up to the end of the storage, then on from
	 * its start. */
	while (done < want) {
		p = byte_ring_peek(r, &n);
		n = MIN(n, want - done);
		memcpy((uint8_t *)dst + done, p, n);
		byte_ring_consume(r, n);
		done += n;
	}
	return done;
}

uint8_t *byte_ring_overwrite_span(struct byte_ring *r, size_t *len)
{
	size_t at = r->tail % r->size;

	*len = r->size - at;
	return r->buf + at;
}

void byte_ring_produce(struct byte_ring *r, size_t n)
{
	r->tail += n;
	if (r->tail - r->head > r->size)
		r->head = r->tail - r->size;
}
