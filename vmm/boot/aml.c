/* The AML writer (aml.h). Opcodes and encodings are ACPI 6.5's, chapter
 * 20 (AML grammar) and 6.4 (resource data types). */
#include "boot/aml.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

#define ZERO_OP			0x00
#define ONE_OP			0x01
#define NAME_OP			0x08
#define BYTE_PREFIX		0x0a
#define WORD_PREFIX		0x0b
#define DWORD_PREFIX		0x0c
#define STRING_PREFIX		0x0d
#define QWORD_PREFIX		0x0e
#define SCOPE_OP		0x10
#define BUFFER_OP		0x11
#define PACKAGE_OP		0x12
#define DUAL_NAME_PREFIX	0x2e
#define MULTI_NAME_PREFIX	0x2f
#define EXT_OP_PREFIX		0x5b
#define DEVICE_OP		0x82	/* after EXT_OP_PREFIX */
#define ROOT_CHAR		'\\'

/* A PkgLength is reserved at its longest, 4 bytes (lengths below 2^28),
 * and the body moved down on close if it needs fewer. */
#define PKG_LENGTH_MAX_BYTES	4
#define PKG_LENGTH_LIMIT	(1u << 28)
#define NAME_SEG_LEN		4
#define MAX_NAME_SEGS		16

enum frame_kind { FRAME_SCOPE, FRAME_PACKAGE };

/* Resource descriptors (6.4): small ones carry their tag and length in
 * one byte; large ones a tag byte and a 16-bit length. */
#define RES_IRQ_NO_FLAGS	0x22	/* small, type 4, 2 bytes */
#define RES_IO			0x47	/* small, type 8, 7 bytes */
#define RES_END_TAG		0x79	/* small, type 15, 1 byte */
#define RES_MEMORY32_FIXED	0x86
#define RES_DWORD_ADDRESS	0x87
#define RES_WORD_ADDRESS	0x88
#define RES_EXT_INTERRUPT	0x89

#define IO_DECODE16		0x01
#define MEMORY_READ_WRITE	0x01
#define ADDRESS_TYPE_MEMORY	0
#define ADDRESS_TYPE_BUS	2
/* General flags of an address space: min and max fixed, positive
 * decode, produced for the devices below (bit 0 clear). */
#define ADDRESS_FIXED_PRODUCER	0x0c
#define EXT_IRQ_CONSUMER	0x01
#define EXT_IRQ_EDGE		0x02
#define EXT_IRQ_ACTIVE_LOW	0x04
#define EXT_IRQ_SHARED		0x08

static void fail(struct aml_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

void aml_init(struct aml_writer *w)
{
	memset(w, 0, sizeof(*w));
}

static void emit(struct aml_writer *w, const void *data, size_t len)
{
	if (w->err)
		return;
	if (w->len + len > w->cap) {
		size_t cap = MAX(w->cap * 2, w->len + len + 256);
		uint8_t *buf = realloc(w->buf, cap);

		if (!buf) {
			fail(w, -ENOMEM);
			return;
		}
		w->buf = buf;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, data, len);
	w->len += len;
}

static void emit_byte(struct aml_writer *w, uint8_t b)
{
	emit(w, &b, 1);
}

/* The bytes a PkgLength takes for a body of len bytes (the PkgLength
 * counts itself); 0 when it cannot be encoded. */
static unsigned pkg_length_bytes(size_t len)
{
	if (len + 1 < 64)
		return 1;
	for (unsigned n = 2; n <= PKG_LENGTH_MAX_BYTES; n++)
		if (len + n < 1u << (4 + 8 * (n - 1)))
			return n;
	return 0;
}

/* PkgLength of n bytes for a body of len bytes: one byte up to 63, else
 * the count of bytes that follow in bits 6-7, the low nibble, then the
 * rest of the value a byte at a time. */
static void put_pkg_length(uint8_t *p, unsigned n, size_t len)
{
	size_t v = len + n;

	if (n == 1) {
		p[0] = v;
		return;
	}
	p[0] = (n - 1) << 6 | (v & 0x0f);
	v >>= 4;
	for (unsigned i = 1; i < n; i++, v >>= 8)
		p[i] = v;
}

/* A NameSeg from up to four characters, padded with '_'. */
static bool name_seg(const char *s, size_t len, uint8_t seg[NAME_SEG_LEN])
{
	if (!len || len > NAME_SEG_LEN)
		return false;
	for (size_t i = 0; i < NAME_SEG_LEN; i++) {
		char c = i < len ? s[i] : '_';
		bool lead = (c >= 'A' && c <= 'Z') || c == '_';

		if (!lead && (i == 0 || !(c >= '0' && c <= '9')))
			return false;
		seg[i] = c;
	}
	return true;
}

static void emit_name(struct aml_writer *w, const char *name)
{
	uint8_t segs[MAX_NAME_SEGS][NAME_SEG_LEN];
	unsigned n = 0;
	const char *p = name;

	if (*p == ROOT_CHAR) {
		emit_byte(w, ROOT_CHAR);
		p++;
	}
	for (;;) {
		size_t len = strcspn(p, ".");

		if (n == MAX_NAME_SEGS || !name_seg(p, len, segs[n])) {
			fail(w, -EINVAL);
			return;
		}
		n++;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (n == 2) {
		emit_byte(w, DUAL_NAME_PREFIX);
	} else if (n > 2) {
		emit_byte(w, MULTI_NAME_PREFIX);
		emit_byte(w, n);
	}
	emit(w, segs, n * NAME_SEG_LEN);
}

/* Takes the place of the next data object: the value of a pending Name
 * (which it then ends) or one more element of the open package. False,
 * and the writer failed, where no data object may go. */
static bool data_place(struct aml_writer *w)
{
	struct aml_frame *top = w->depth ? &w->open[w->depth - 1] : NULL;

	if (w->err)
		return false;
	if (w->name_pending) {
		w->name_pending = 0;
		return true;
	}
	if (top && top->kind == FRAME_PACKAGE) {
		top->elements++;
		return true;
	}
	fail(w, -EINVAL);
	return false;
}

/* Where a named object (Scope, Device, Name) may go: a term list. */
static bool term_allowed(struct aml_writer *w)
{
	if (w->err)
		return false;
	if (w->name_pending ||
	    (w->depth && w->open[w->depth - 1].kind == FRAME_PACKAGE)) {
		fail(w, -EINVAL);
		return false;
	}
	return true;
}

/* After the opcode: reserves the PkgLength and opens the frame. */
static void open_frame(struct aml_writer *w, enum frame_kind kind)
{
	static const uint8_t reserved[PKG_LENGTH_MAX_BYTES];

	if (w->depth == AML_MAX_DEPTH)
		fail(w, -EINVAL);
	if (w->err)
		return;
	w->open[w->depth++] = (struct aml_frame){ .start = w->len,
						  .kind = kind };
	emit(w, reserved, sizeof(reserved));
}

void aml_scope(struct aml_writer *w, const char *name)
{
	if (!term_allowed(w))
		return;
	emit_byte(w, SCOPE_OP);
	open_frame(w, FRAME_SCOPE);
	emit_name(w, name);
}

void aml_device(struct aml_writer *w, const char *name)
{
	if (!term_allowed(w))
		return;
	emit_byte(w, EXT_OP_PREFIX);
	emit_byte(w, DEVICE_OP);
	open_frame(w, FRAME_SCOPE);
	emit_name(w, name);
}

void aml_name(struct aml_writer *w, const char *name)
{
	if (!term_allowed(w))
		return;
	emit_byte(w, NAME_OP);
	emit_name(w, name);
	w->name_pending = 1;
}

void aml_package(struct aml_writer *w)
{
	if (!data_place(w))
		return;
	emit_byte(w, PACKAGE_OP);
	open_frame(w, FRAME_PACKAGE);
	emit_byte(w, 0);	/* NumElements, filled in by aml_end */
}

void aml_end(struct aml_writer *w)
{
	struct aml_frame *f;
	size_t body;
	unsigned n;

	if (w->err)
		return;
	if (!w->depth || w->name_pending) {
		fail(w, -EINVAL);
		return;
	}
	f = &w->open[--w->depth];
	body = w->len - f->start - PKG_LENGTH_MAX_BYTES;
	n = pkg_length_bytes(body);
	if (!n || (f->kind == FRAME_PACKAGE && f->elements > 0xff)) {
		fail(w, -EINVAL);
		return;
	}
	memmove(w->buf + f->start + n,
		w->buf + f->start + PKG_LENGTH_MAX_BYTES, body);
	w->len -= PKG_LENGTH_MAX_BYTES - n;
	put_pkg_length(w->buf + f->start, n, body);
	if (f->kind == FRAME_PACKAGE)
		w->buf[f->start + n] = f->elements;
}

/* The shortest encoding of v into b: ZeroOp, OneOp, or a prefix and 1,
 * 2, 4 or 8 little-endian bytes. Returns its length. */
static size_t encode_integer(uint8_t b[9], uint64_t v)
{
	unsigned n;

	if (v <= 1) {
		b[0] = v ? ONE_OP : ZERO_OP;
		return 1;
	}
	if (v <= 0xff) {
		b[0] = BYTE_PREFIX;
		n = 1;
	} else if (v <= 0xffff) {
		b[0] = WORD_PREFIX;
		n = 2;
	} else if (v <= 0xffffffff) {
		b[0] = DWORD_PREFIX;
		n = 4;
	} else {
		b[0] = QWORD_PREFIX;
		n = 8;
	}
	for (unsigned i = 0; i < n; i++)
		b[1 + i] = v >> (8 * i);
	return 1 + n;
}

void aml_integer(struct aml_writer *w, uint64_t value)
{
	uint8_t b[9];

	if (data_place(w))
		emit(w, b, encode_integer(b, value));
}

void aml_string(struct aml_writer *w, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p > 0x7f)
			fail(w, -EINVAL);
	if (!data_place(w))
		return;
	emit_byte(w, STRING_PREFIX);
	emit(w, s, strlen(s) + 1);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void aml_eisaid(struct aml_writer *w, const char *id)
{
	uint8_t b[5] = { DWORD_PREFIX };
	unsigned c[3];
	int d[4];

	if (strlen(id) != 7) {
		fail(w, -EINVAL);
		return;
	}
	for (unsigned i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z') {
			fail(w, -EINVAL);
			return;
		}
		c[i] = id[i] - 0x40;	/* 'A' is 1: five bits each */
	}
	for (unsigned i = 0; i < 4; i++) {
		d[i] = hex_digit(id[3 + i]);
		if (d[i] < 0) {
			fail(w, -EINVAL);
			return;
		}
	}
	if (!data_place(w))
		return;
	/* The letters packed big-endian into 15 bits, then the product
	 * number's digits, as bytes in that order. */
	b[1] = c[0] << 2 | c[1] >> 3;
	b[2] = (c[1] & 7) << 5 | c[2];
	b[3] = d[0] << 4 | d[1];
	b[4] = d[2] << 4 | d[3];
	emit(w, b, sizeof(b));
}

void aml_buffer(struct aml_writer *w, const uint8_t *data, size_t len)
{
	uint8_t size[9], head[PKG_LENGTH_MAX_BYTES];
	/* BufferSize is an integer term inside the package. */
	size_t size_len = encode_integer(size, len);
	unsigned n = pkg_length_bytes(size_len + len);

	if (!n)
		fail(w, -EINVAL);
	if (!data_place(w))
		return;
	emit_byte(w, BUFFER_OP);
	put_pkg_length(head, n, size_len + len);
	emit(w, head, n);
	emit(w, size, size_len);
	emit(w, data, len);
}

int aml_finish(struct aml_writer *w, uint8_t **aml, size_t *len)
{
	if (!w->err && (w->depth || w->name_pending))
		w->err = -EINVAL;
	if (w->err) {
		free(w->buf);
		w->buf = NULL;
		return w->err;
	}
	*aml = w->buf;
	*len = w->len;
	w->buf = NULL;
	return 0;
}

void aml_res_init(struct aml_resources *r)
{
	r->len = 0;
	r->err = 0;
}

static uint8_t *res_add(struct aml_resources *r, size_t len)
{
	uint8_t *p;

	if (r->err)
		return NULL;
	/* Room for the end tag stays. */
	if (r->len + len + 2 > AML_RESOURCES_MAX) {
		r->err = -ENOSPC;
		return NULL;
	}
	p = r->buf + r->len;
	r->len += len;
	return p;
}

/* A large descriptor's tag and length; returns where its data go. */
static uint8_t *res_large(struct aml_resources *r, uint8_t tag,
			  uint16_t len)
{
	uint8_t *p = res_add(r, 3 + len);

	if (!p)
		return NULL;
	p[0] = tag;
	put_le16(p + 1, len);
	return p + 3;
}

void aml_res_io(struct aml_resources *r, uint16_t base, uint8_t len)
{
	uint8_t *p = res_add(r, 8);

	if (!p)
		return;
	p[0] = RES_IO;
	p[1] = IO_DECODE16;
	put_le16(p + 2, base);	/* minimum */
	put_le16(p + 4, base);	/* maximum */
	p[6] = 1;		/* alignment */
	p[7] = len;
}

void aml_res_irq(struct aml_resources *r, unsigned irq)
{
	uint8_t *p;

	if (irq > 15) {
		r->err = r->err ?: -EINVAL;
		return;
	}
	p = res_add(r, 3);
	if (!p)
		return;
	p[0] = RES_IRQ_NO_FLAGS;
	put_le16(p + 1, 1u << irq);
}

void aml_res_memory32_fixed(struct aml_resources *r, uint32_t base,
			    uint32_t size)
{
	uint8_t *p = res_large(r, RES_MEMORY32_FIXED, 9);

	if (!p)
		return;
	p[0] = MEMORY_READ_WRITE;
	put_le32(p + 1, base);
	put_le32(p + 5, size);
}

void aml_res_interrupt(struct aml_resources *r, uint32_t gsi,
		       unsigned flags)
{
	uint8_t *p = res_large(r, RES_EXT_INTERRUPT, 6);

	if (!p)
		return;
	p[0] = EXT_IRQ_CONSUMER |
	       (flags & AML_IRQ_LEVEL ? 0 : EXT_IRQ_EDGE) |
	       (flags & AML_IRQ_ACTIVE_LOW ? EXT_IRQ_ACTIVE_LOW : 0) |
	       (flags & AML_IRQ_SHARED ? EXT_IRQ_SHARED : 0);
	p[1] = 1;		/* one interrupt in the table */
	put_le32(p + 2, gsi);
}

void aml_res_bus_numbers(struct aml_resources *r, uint16_t first,
			 uint16_t last)
{
	uint8_t *p;

	if (last < first) {
		r->err = r->err ?: -EINVAL;
		return;
	}
	p = res_large(r, RES_WORD_ADDRESS, 13);
	if (!p)
		return;
	p[0] = ADDRESS_TYPE_BUS;
	p[1] = ADDRESS_FIXED_PRODUCER;
	p[2] = 0;		/* no type-specific flags */
	put_le16(p + 3, 0);	/* granularity */
	put_le16(p + 5, first);
	put_le16(p + 7, last);
	put_le16(p + 9, 0);	/* translation */
	put_le16(p + 11, last - first + 1);
}

void aml_res_memory32_window(struct aml_resources *r, uint32_t base,
			     uint32_t size)
{
	uint8_t *p;

	if (!size || base + (uint64_t)size - 1 > UINT32_MAX) {
		r->err = r->err ?: -EINVAL;
		return;
	}
	p = res_large(r, RES_DWORD_ADDRESS, 23);
	if (!p)
		return;
	p[0] = ADDRESS_TYPE_MEMORY;
	p[1] = ADDRESS_FIXED_PRODUCER;
	p[2] = MEMORY_READ_WRITE;	/* and non-cacheable */
	put_le32(p + 3, 0);	/* granularity */
	put_le32(p + 7, base);
	put_le32(p + 11, base + size - 1);
	put_le32(p + 15, 0);	/* translation */
	put_le32(p + 19, size);
}

void aml_resources(struct aml_writer *w, const struct aml_resources *r)
{
	uint8_t buf[AML_RESOURCES_MAX];

	if (r->err) {
		fail(w, r->err);
		return;
	}
	memcpy(buf, r->buf, r->len);
	buf[r->len] = RES_END_TAG;
	buf[r->len + 1] = 0;	/* checksum 0: not checked */
	aml_buffer(w, buf, r->len + 2);
}
