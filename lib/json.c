/* JSON parser and writer (see json.h). The parser reads untrusted input from
 * the control socket: it validates UTF-8, bounds recursion by
 * JSON_MAX_DEPTH and allocation by JSON_MAX_VALUES and the input size, and
 * never reads past the given length. */
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

static size_t utf8_encode(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* --- parser --- */

struct parser {
	const char *start;
	const char *p;
	const char *end;
	unsigned depth;
	size_t values;
	struct json_error *err;
};

static int parse_value(struct parser *ps, struct json_value *v);

static int parse_fail(struct parser *ps, const char *at, const char *msg)
{
	ps->err->offset = (size_t)(at - ps->start);
	ps->err->msg = msg;
	return -EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static void value_clear(struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_STRING:
		free(v->string.s);
		break;
	case JSON_ARRAY:
		for (i = 0; i < v->array.len; i++)
			value_clear(&v->array.items[i]);
		free(v->array.items);
		break;
	case JSON_OBJECT:
		for (i = 0; i < v->object.len; i++) {
			free(v->object.members[i].key);
			value_clear(&v->object.members[i].value);
		}
		free(v->object.members);
		break;
	default:
		break;
	}
	v->type = JSON_NULL;
}

static int hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* The code point of a \u escape at ps->p (just past the 'u'), joining a
 * surrogate pair. */
static int parse_unicode_escape(struct parser *ps, const char *esc,
				uint32_t *cp)
{
	uint32_t hi, lo;

	if (ps->end - ps->p < 4 || hex4(ps->p, &hi))
		return parse_fail(ps, esc, "bad \\u escape");
	ps->p += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return parse_fail(ps, esc, "unpaired surrogate in \\u escape");
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
		    hex4(ps->p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return parse_fail(ps, esc,
					  "unpaired surrogate in \\u escape");
		ps->p += 6;
		hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (hi == 0)
		return parse_fail(ps, esc, "\\u0000 is not supported");
	*cp = hi;
	return 0;
}

/* ps->p is at the opening quote. The decoded string is never longer than
 * its source, so a first pass bounds the allocation. */
static int parse_string(struct parser *ps, char **out, size_t *out_len)
{
	const char *q = ps->p + 1;
	char *s, *d;
	int err;

	while (q < ps->end && *q != '"')
		q += (*q == '\\') ? 2 : 1;
	if (q >= ps->end)
		return parse_fail(ps, ps->p, "unterminated string");
	s = malloc((size_t)(q - ps->p));
	if (!s)
		return -ENOMEM;
	d = s;
	ps->p++;
	for (;;) {
		unsigned char c = (unsigned char)*ps->p;
		const char *at = ps->p;
		uint32_t cp;
		size_t n;

		if (c == '"')
			break;
		if (c < 0x20) {
			err = parse_fail(ps, at, "control character in string");
			goto fail;
		}
		if (c != '\\') {
			n = utf8_decode((const unsigned char *)at,
					(size_t)(ps->end - at), &cp);
			if (!n) {
				err = parse_fail(ps, at, "invalid UTF-8");
				goto fail;
			}
			if (cp == 0) {
				err = parse_fail(ps, at, "NUL in string");
				goto fail;
			}
			memcpy(d, at, n);
			d += n;
			ps->p += n;
			continue;
		}
		ps->p += 2;
		switch (at[1]) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '/': *d++ = '/'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			err = parse_unicode_escape(ps, at, &cp);
			if (err)
				goto fail;
			d += utf8_encode(cp, d);
			break;
		default:
			err = parse_fail(ps, at, "bad escape in string");
			goto fail;
		}
	}
	ps->p++;
	*d = '\0';
	*out = s;
	*out_len = (size_t)(d - s);
	return 0;
fail:
	free(s);
	return err;
}

static const char *skip_digits(const char *p, const char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

static int parse_number(struct parser *ps, struct json_value *v)
{
	char buf[JSON_MAX_NUMBER_LEN + 1];
	const char *p = ps->p, *start = ps->p, *end = ps->end;
	bool is_int = true;
	size_t len;
	char *tail;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		p = skip_digits(p, end);
	else
		return parse_fail(ps, p, "bad number");
	if (p < end && *p == '.') {
		is_int = false;
		if (++p >= end || *p < '0' || *p > '9')
			return parse_fail(ps, p, "bad number: digit expected");
		p = skip_digits(p, end);
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return parse_fail(ps, p, "bad number: digit expected");
		p = skip_digits(p, end);
	}
	len = (size_t)(p - start);
	if (len > JSON_MAX_NUMBER_LEN)
		return parse_fail(ps, start, "number too long");
	/* strtod/strtoll need a terminated copy; the C locale is in effect
	 * since thpvm never calls setlocale(). */
	memcpy(buf, start, len);
	buf[len] = '\0';
	v->type = JSON_NUMBER;
	v->number.is_int = false;
	if (is_int) {
		errno = 0;
		v->number.i = strtoll(buf, &tail, 10);
		v->number.is_int = errno != ERANGE;
	}
	v->number.d = strtod(buf, &tail);
	if (isinf(v->number.d))
		return parse_fail(ps, start, "number out of range");
	ps->p = p;
	return 0;
}

static int parse_literal(struct parser *ps, struct json_value *v)
{
	static const struct {
		const char *text;
		enum json_type type;
		bool boolean;
	} lit[] = {
		{ "true", JSON_BOOL, true },
		{ "false", JSON_BOOL, false },
		{ "null", JSON_NULL, false },
	};
	size_t i, n;

	for (i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		n = strlen(lit[i].text);
		if ((size_t)(ps->end - ps->p) >= n &&
		    !memcmp(ps->p, lit[i].text, n)) {
			v->type = lit[i].type;
			v->boolean = lit[i].boolean;
			ps->p += n;
			return 0;
		}
	}
	return parse_fail(ps, ps->p, "unexpected character");
}

/* Grows an array of elem-sized items to hold one more; *cap counts items. */
static int grow(void **items, size_t len, size_t *cap, size_t elem)
{
	size_t new_cap;
	void *p;

	if (len < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : 4;
	p = realloc(*items, new_cap * elem);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = new_cap;
	return 0;
}

/* Arrays and objects: ps->p is at '[' or '{'. On failure v holds what was
 * parsed so far and the caller clears it. */
static int parse_array(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;
	int err;

	v->type = JSON_ARRAY;
	v->array.items = NULL;
	v->array.len = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		err = grow((void **)&v->array.items, v->array.len, &cap,
			   sizeof(*v->array.items));
		if (err)
			return err;
		err = parse_value(ps, &v->array.items[v->array.len]);
		if (err)
			return err;
		v->array.len++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return 0;
		}
		return parse_fail(ps, ps->p, "expected ',' or ']'");
	}
}

static int parse_object(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;
	int err;

	v->type = JSON_OBJECT;
	v->object.members = NULL;
	v->object.len = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct json_member *m;

		err = grow((void **)&v->object.members, v->object.len, &cap,
			   sizeof(*v->object.members));
		if (err)
			return err;
		m = &v->object.members[v->object.len];
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"')
			return parse_fail(ps, ps->p, "expected a string key");
		err = parse_string(ps, &m->key, &m->key_len);
		if (err)
			return err;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			free(m->key);
			return parse_fail(ps, ps->p, "expected ':'");
		}
		ps->p++;
		err = parse_value(ps, &m->value);
		if (err) {
			free(m->key);
			return err;
		}
		v->object.len++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return 0;
		}
		return parse_fail(ps, ps->p, "expected ',' or '}'");
	}
}

/* On failure, v is left with nothing allocated. */
static int parse_value(struct parser *ps, struct json_value *v)
{
	int err;

	v->type = JSON_NULL;
	skip_ws(ps);
	if (ps->p >= ps->end)
		return parse_fail(ps, ps->p, "unexpected end of input");
	if (++ps->values > JSON_MAX_VALUES)
		return parse_fail(ps, ps->p, "too many values");
	switch (*ps->p) {
	case '[':
	case '{':
		if (ps->depth >= JSON_MAX_DEPTH)
			return parse_fail(ps, ps->p, "nesting too deep");
		ps->depth++;
		err = *ps->p == '[' ? parse_array(ps, v) : parse_object(ps, v);
		ps->depth--;
		if (err)
			value_clear(v);
		return err;
	case '"':
		err = parse_string(ps, &v->string.s, &v->string.len);
		if (!err)
			v->type = JSON_STRING;
		return err;
	case '-':
	case '0' ... '9':
		return parse_number(ps, v);
	default:
		return parse_literal(ps, v);
	}
}

int json_parse(const char *text, size_t len, struct json_value **out,
	       struct json_error *err)
{
	struct parser ps = {
		.start = text, .p = text, .end = text + len, .err = err,
	};
	struct json_value *v;
	int ret;

	v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = parse_value(&ps, v);
	if (!ret) {
		skip_ws(&ps);
		if (ps.p < ps.end) {
			value_clear(v);
			ret = parse_fail(&ps, ps.p, "unexpected data after the value");
		}
	}
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	return 0;
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	value_clear(v);
	free(v);
}

const struct json_value *json_object_get(const struct json_value *obj,
					 const char *key)
{
	size_t i;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < obj->object.len; i++)
		if (!strcmp(obj->object.members[i].key, key))
			return &obj->object.members[i].value;
	return NULL;
}

const char *json_get_string(const struct json_value *obj, const char *key)
{
	const struct json_value *v = json_object_get(obj, key);

	return v && v->type == JSON_STRING ? v->string.s : NULL;
}

bool json_get_bool(const struct json_value *obj, const char *key, bool *out)
{
	const struct json_value *v = json_object_get(obj, key);

	if (!v || v->type != JSON_BOOL)
		return false;
	*out = v->boolean;
	return true;
}

bool json_get_u64(const struct json_value *obj, const char *key,
		  uint64_t *out)
{
	const struct json_value *v = json_object_get(obj, key);

	if (!v || v->type != JSON_NUMBER || !v->number.is_int ||
	    v->number.i < 0)
		return false;
	*out = (uint64_t)v->number.i;
	return true;
}

bool json_get_double(const struct json_value *obj, const char *key,
		     double *out)
{
	const struct json_value *v = json_object_get(obj, key);

	if (!v || v->type != JSON_NUMBER)
		return false;
	*out = v->number.d;
	return true;
}

/* --- writer --- */

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
	case JSON_NULL:
		json_write_null(w);
		break;
	case JSON_BOOL:
		json_write_bool(w, v->boolean);
		break;
	case JSON_NUMBER:
		if (v->number.is_int)
			json_write_int(w, v->number.i);
		else
			json_write_double(w, v->number.d);
		break;
	case JSON_STRING:
		json_write_string_len(w, v->string.s, v->string.len);
		break;
	case JSON_ARRAY:
		json_write_array_begin(w);
		for (i = 0; i < v->array.len; i++)
			json_write_value(w, &v->array.items[i]);
		json_write_array_end(w);
		break;
	case JSON_OBJECT:
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
