/* The JSON writer (see json.h): one document in a growable buffer,
 * always valid JSON whatever bytes it is given. */
#include "lib/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one UTF-8 sequence from s[0..n). Returns its length (1-4), or 0
 * when it is malformed, overlong, a surrogate or above U+10FFFF. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min_cp[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min_cp[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

void json_writer_init(struct json_writer *w)
{
	memset(w, 0, sizeof(*w));
}

void json_writer_reset(struct json_writer *w)
{
	char *buf = w->buf;
	size_t cap = w->cap;

	json_writer_init(w);
	w->buf = buf;
	w->cap = cap;
	if (buf)
		buf[0] = '\0';
}

void json_writer_free(struct json_writer *w)
{
	free(w->buf);
	json_writer_init(w);
}

const char *json_writer_str(const struct json_writer *w)
{
	return w->buf ? w->buf : "";
}

void json_write_raw(struct json_writer *w, const char *s, size_t len)
{
	if (w->err)
		return;
	if (len >= w->cap - w->len || !w->buf) {
		size_t cap = w->cap ? w->cap : 256;
		char *p;

		while (cap - w->len <= len) {
			if (cap > SIZE_MAX / 2) {
				w->err = -ENOMEM;
				return;
			}
			cap *= 2;
		}
		p = realloc(w->buf, cap);
		if (!p) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, len);
	w->len += len;
	w->buf[w->len] = '\0';
}

static void write_str(struct json_writer *w, const char *s)
{
	json_write_raw(w, s, strlen(s));
}

static bool in_object(const struct json_writer *w)
{
	return w->depth && (w->in_object >> (w->depth - 1) & 1);
}

/* Called before every value: the comma between array items, and the
 * checks that a value may go here. */
static void value_begin(struct json_writer *w)
{
	uint64_t bit = w->depth ? 1ULL << (w->depth - 1) : 0;

	if (w->err)
		return;
	if (in_object(w)) {
		if (!w->after_key)
			w->err = -EINVAL;
		w->after_key = false;
		return;
	}
	if (!w->depth && w->len) {
		w->err = -EINVAL;	/* a second top-level value */
		return;
	}
	if (w->has_items & bit)
		json_write_raw(w, ",", 1);
	w->has_items |= bit;
}

static void container_begin(struct json_writer *w, bool object)
{
	uint64_t bit;

	value_begin(w);
	if (w->err)
		return;
	if (w->depth >= JSON_MAX_DEPTH) {
		w->err = -EINVAL;
		return;
	}
	bit = 1ULL << w->depth;
	w->depth++;
	w->has_items &= ~bit;
	if (object)
		w->in_object |= bit;
	else
		w->in_object &= ~bit;
	json_write_raw(w, object ? "{" : "[", 1);
}

static void container_end(struct json_writer *w, bool object)
{
	if (w->err)
		return;
	if (!w->depth || in_object(w) != object || w->after_key) {
		w->err = -EINVAL;
		return;
	}
	w->depth--;
	json_write_raw(w, object ? "}" : "]", 1);
}

void json_write_object_begin(struct json_writer *w)
{
	container_begin(w, true);
}

void json_write_object_end(struct json_writer *w)
{
	container_end(w, true);
}

void json_write_array_begin(struct json_writer *w)
{
	container_begin(w, false);
}

void json_write_array_end(struct json_writer *w)
{
	container_end(w, false);
}

static void write_escaped(struct json_writer *w, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + len;
	char esc[8];

	json_write_raw(w, "\"", 1);
	while (p < end) {
		const unsigned char *run = p;
		uint32_t cp;
		size_t n;

		/* Copy runs of characters that need no escape in one go. */
		while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' &&
		       (n = utf8_decode(p, (size_t)(end - p), &cp)))
			p += n;
		json_write_raw(w, (const char *)run, (size_t)(p - run));
		if (p >= end)
			break;
		switch (*p) {
		case '"': write_str(w, "\\\""); break;
		case '\\': write_str(w, "\\\\"); break;
		case '\b': write_str(w, "\\b"); break;
		case '\f': write_str(w, "\\f"); break;
		case '\n': write_str(w, "\\n"); break;
		case '\r': write_str(w, "\\r"); break;
		case '\t': write_str(w, "\\t"); break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				write_str(w, esc);
			} else {
				write_str(w, "\\ufffd");	/* bad UTF-8 */
			}
		}
		p++;
	}
	json_write_raw(w, "\"", 1);
}

void json_write_key(struct json_writer *w, const char *key)
{
	uint64_t bit;

	if (w->err)
		return;
	if (!in_object(w) || w->after_key) {
		w->err = -EINVAL;
		return;
	}
	bit = 1ULL << (w->depth - 1);
	if (w->has_items & bit)
		json_write_raw(w, ",", 1);
	w->has_items |= bit;
	write_escaped(w, key, strlen(key));
	json_write_raw(w, ":", 1);
	w->after_key = true;
}

void json_write_string_len(struct json_writer *w, const char *s, size_t len)
{
	value_begin(w);
	write_escaped(w, s, len);
}

void json_write_string(struct json_writer *w, const char *s)
{
	json_write_string_len(w, s, strlen(s));
}

void json_write_int(struct json_writer *w, int64_t v)
{
	char buf[24];

	value_begin(w);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	write_str(w, buf);
}

void json_write_uint(struct json_writer *w, uint64_t v)
{
	char buf[24];

	if (v > INT64_MAX) {
		json_write_double(w, (double)v);
		return;
	}
	value_begin(w);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	write_str(w, buf);
}

void json_write_double(struct json_writer *w, double v)
{
	char buf[32];
	int prec;

	if (!isfinite(v)) {
		json_write_null(w);
		return;
	}
	value_begin(w);
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	write_str(w, buf);
}

void json_write_bool(struct json_writer *w, bool v)
{
	value_begin(w);
	write_str(w, v ? "true" : "false");
}

void json_write_null(struct json_writer *w)
{
	value_begin(w);
	write_str(w, "null");
}

void json_write_value(struct json_writer *w, const struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_TYPE_NULL:
		json_write_null(w);
		break;
	case JSON_TYPE_BOOL:
		json_write_bool(w, v->boolean);
		break;
	case JSON_TYPE_NUMBER:
		if (v->number.is_int)
			json_write_int(w, v->number.i);
		else
			json_write_double(w, v->number.d);
		break;
	case JSON_TYPE_STRING:
		json_write_string_len(w, v->string.s, v->string.len);
		break;
	case JSON_TYPE_ARRAY:
		json_write_array_begin(w);
		for (i = 0; i < v->array.len; i++)
			json_write_value(w, &v->array.items[i]);
		json_write_array_end(w);
		break;
	case JSON_TYPE_OBJECT:
		json_write_object_begin(w);
		for (i = 0; i < v->object.len; i++) {
			json_write_key(w, v->object.members[i].key);
			json_write_value(w, &v->object.members[i].value);
		}
		json_write_object_end(w);
		break;
	}
}

void json_field_string(struct json_writer *w, const char *key, const char *v)
{
	json_write_key(w, key);
	json_write_string(w, v);
}

void json_field_int(struct json_writer *w, const char *key, int64_t v)
{
	json_write_key(w, key);
	json_write_int(w, v);
}

void json_field_uint(struct json_writer *w, const char *key, uint64_t v)
{
	json_write_key(w, key);
	json_write_uint(w, v);
}

void json_field_double(struct json_writer *w, const char *key, double v)
{
	json_write_key(w, key);
	json_write_double(w, v);
}

void json_field_bool(struct json_writer *w, const char *key, bool v)
{
	json_write_key(w, key);
	json_write_bool(w, v);
}
