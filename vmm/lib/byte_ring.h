/* A byte FIFO of any capacity over storage its user provides: the
 * consoles' queues (a UART's receive buffer, typed input waiting for the
 * guest, guest output waiting for stdout, the console socket's
 * scrollback). Not thread-safe: each user keeps its own lock.
 *
 * Positions count bytes from init, so a reader that keeps its own place
 * in the stream (a console client behind in the scrollback) can tell
 * what it lost. What a full ring does is its user's choice:
 * byte_ring_put takes what fits and leaves the newest bytes out;
 * byte_ring_overwrite_span and byte_ring_produce drop the oldest. */
#ifndef THPVM_BYTE_RING_H
#define THPVM_BYTE_RING_H

#include <stddef.h>
#include <stdint.h>

struct byte_ring {
	uint8_t *buf;
	size_t size;
	uint64_t head;		/* position of the oldest byte held */
	uint64_t tail;		/* after the newest: the bytes ever put */
};

/* Empty, over the size bytes at buf (size > 0). */
void byte_ring_init(struct byte_ring *r, void *buf, size_t size);

static inline size_t byte_ring_used(const struct byte_ring *r)
{
	return r->tail - r->head;
}

static inline size_t byte_ring_room(const struct byte_ring *r)
{
	return r->size - byte_ring_used(r);
}

/* Drops everything held. */
void byte_ring_clear(struct byte_ring *r);
/* Adds what fits of data's len bytes; returns how many. */
size_t byte_ring_put(struct byte_ring *r, const void *data, size_t len);
/* Takes up to max of the oldest bytes into dst; returns how many. */
size_t byte_ring_get(struct byte_ring *r, void *dst, size_t max);

/* The bytes held from stream position pos (head <= pos <= tail) that
 * lie in one piece: *len of them, 0 at tail. They stay where they are
 * until consumed (or overwritten), so a lock may be let go while a
 * write(2) reads them. */
const uint8_t *byte_ring_span_at(const struct byte_ring *r, uint64_t pos,
				 size_t *len);

/* The oldest bytes in one piece, for a write(2) that may take fewer;
 * byte_ring_consume then drops what it took. */
static inline const uint8_t *byte_ring_peek(const struct byte_ring *r,
					    size_t *len)
{
	return byte_ring_span_at(r, r->head, len);
}

/* Drops the n oldest bytes (n <= used). */
void byte_ring_consume(struct byte_ring *r, size_t n);

/* The storage after the newest byte, up to its end, for a read(2)
 * straight into the ring whatever it holds: what goes there overwrites
 * the oldest bytes. byte_ring_produce then adds what was read. */
uint8_t *byte_ring_overwrite_span(struct byte_ring *r, size_t *len);
/* n bytes were written at the tail (n up to the span's length); the
 * oldest ones beyond the capacity are dropped. */
void byte_ring_produce(struct byte_ring *r, size_t n);

#endif
