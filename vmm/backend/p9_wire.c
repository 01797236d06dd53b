/* 9P2000.L's wire format (see p9_wire.h). */
#include "backend/p9_wire.h"

#include <string.h>

#include "lib/util.h"

/* The next n bytes of r, or NULL (and r bad) where there are fewer. */
static const uint8_t *take(struct p9_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || r->len - r->pos < n) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->pos;
	r->pos += n;
	return p;
}

uint8_t p9_get_u8(struct p9_reader *r)
{
	const uint8_t *p = take(r, 1);

	return p ? *p : 0;
}

uint16_t p9_get_u16(struct p9_reader *r)
{
	const uint8_t *p = take(r, 2);

	return p ? get_le16(p) : 0;
}

uint32_t p9_get_u32(struct p9_reader *r)
{
	const uint8_t *p = take(r, 4);

	return p ? get_le32(p) : 0;
}

uint64_t p9_get_u64(struct p9_reader *r)
{
	const uint8_t *p = take(r, 8);

	return p ? get_le64(p) : 0;
}

void p9_get_str(struct p9_reader *r, char *buf, size_t cap)
{
	uint16_t len = p9_get_u16(r);
	const uint8_t *p = take(r, len);

	buf[0] = 0;
	if (!p || len >= cap || memchr(p, 0, len)) {
		r->bad = true;
		return;
	}
	memcpy(buf, p, len);
	buf[len] = 0;
}

/* Room for n more bytes in w, or NULL (and w bad). */
static uint8_t *room(struct p9_writer *w, size_t n)
{
	uint8_t *p;

	if (w->bad || w->cap - w->pos < n) {
		w->bad = true;
		return NULL;
	}
	p = w->p + w->pos;
	w->pos += n;
	return p;
}

void p9_put_u8(struct p9_writer *w, uint8_t v)
{
	uint8_t *p = room(w, 1);

	if (p)
		*p = v;
}

void p9_put_u16(struct p9_writer *w, uint16_t v)
{
	uint8_t *p = room(w, 2);

	if (p)
		put_le16(p, v);
}

void p9_put_u32(struct p9_writer *w, uint32_t v)
{
	uint8_t *p = room(w, 4);

	if (p)
		put_le32(p, v);
}

void p9_put_u64(struct p9_writer *w, uint64_t v)
{
	uint8_t *p = room(w, 8);

	if (p)
		put_le64(p, v);
}

void p9_put_str(struct p9_writer *w, const char *s, size_t len)
{
	uint8_t *p;

	if (len > UINT16_MAX) {
		w->bad = true;
		return;
	}
	p9_put_u16(w, len);
	p = room(w, len);
	if (p)
		memcpy(p, s, len);
}

void p9_put_qid(struct p9_writer *w, const struct p9_qid *q)
{
	p9_put_u8(w, q->type);
	p9_put_u32(w, q->version);
	p9_put_u64(w, q->path);
}

void p9_begin(struct p9_writer *w, uint8_t type, uint16_t tag)
{
	w->pos = 0;
	w->bad = false;
	p9_put_u32(w, 0);
	p9_put_u8(w, type);
	p9_put_u16(w, tag);
}

size_t p9_end(struct p9_writer *w, size_t data_len)
{
	if (w->bad || data_len > UINT32_MAX - w->pos)
		return 0;
	put_le32(w->p, w->pos + data_len);
	return w->pos + data_len;
}
