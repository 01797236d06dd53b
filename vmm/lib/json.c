/* JSON on jansson (see json.h): the control socket's input is untrusted,
 * and jansson's parser is small, widely used and fuzzed continuously
 * upstream. Only the protocol's own rules are added here. */
#include "lib/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether j nests no deeper than JSON_MAX_DEPTH from depth on (jansson's
 * own parser stops at 2048 levels, which bounds the recursion). */
static bool depth_ok(json_t *j, unsigned depth)
{
	const char *key;
	json_t *item;
	size_t i;

	if (!json_is_array(j) && !json_is_object(j))
		return true;
	if (depth == JSON_MAX_DEPTH)
		return false;
	/* Each loop is empty for the other kind of container. */
	json_array_foreach(j, i, item)
		if (!depth_ok(item, depth + 1))
			return false;
	json_object_foreach(j, key, item)
		if (!depth_ok(item, depth + 1))
			return false;
	return true;
}

/* jansson says "duplicate object key near '"KEY"'"; the protocol's own
 * words name the member. */
static void duplicate_message(struct json_error *err, const char *text)
{
	const char *near = strstr(text, "near '\"");
	size_t len = near ? strlen(near + 7) : 0;

	if (len >= 2 && !strcmp(near + 7 + len - 2, "\"'"))
		snprintf(err->msg, sizeof(err->msg),
			 "member \"%.*s\" given twice", (int)(len - 2),
			 near + 7);
	else
		snprintf(err->msg, sizeof(err->msg), "%s", text);
}

int json_parse(const char *text, size_t len, json_t **out,
	       struct json_error *err)
{
	json_error_t jerr;
	json_t *j;

	/* Any value at the top (the caller checks for an object); a key
	 * given twice, and U+0000 in a string, are errors. */
	j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
		       &jerr);
	if (!j) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return -ENOMEM;
		err->offset = jerr.position;
		if (json_error_code(&jerr) == json_error_duplicate_key)
			duplicate_message(err, jerr.text);
		else if (json_error_code(&jerr) == json_error_null_character)
			snprintf(err->msg, sizeof(err->msg),
				 "\\u0000 in a string is not supported");
		else
			snprintf(err->msg, sizeof(err->msg), "%s", jerr.text);
		return -EINVAL;
	}
	if (!depth_ok(j, 0)) {
		json_decref(j);
		err->offset = JSON_OFFSET_NONE;
		snprintf(err->msg, sizeof(err->msg),
			 "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return -EINVAL;
	}
	*out = j;
	return 0;
}

bool json_get_u64(const json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* The length (1-4) of the UTF-8 sequence at s[0..n), or 0 when it is
 * malformed, overlong, a surrogate or above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	static const uint32_t min_cp[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
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
	return len;
}

json_t *json_string_lossy(const char *s)
{
	static const char fffd[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), bad = 0, i, n;
	char *buf, *o;
	json_t *j;

	for (i = 0; i < len; i += n ? n : 1)
		bad += !(n = utf8_len(p + i, len - i));
	if (!bad)
		return json_stringn_nocheck(s, len);
	/* Each bad byte, one U+FFFD of three bytes. */
	buf = malloc(len + 2 * bad);
	if (!buf)
		return NULL;
	for (i = 0, o = buf; i < len; i += n ? n : 1) {
		n = utf8_len(p + i, len - i);
		memcpy(o, n ? s + i : fffd, n ? n : 3);
		o += n ? n : 3;
	}
	j = json_stringn_nocheck(buf, (size_t)(o - buf));
	free(buf);
	return j;
}

json_t *json_from_u64(uint64_t v)
{
	if (v > INT64_MAX)
		return json_real((double)v);
	return json_integer((json_int_t)v);
}

json_t *json_from_double(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

char *json_encode(json_t *doc)
{
	/* Members come in insertion order, which jansson always keeps
	 * (JSON_PRESERVE_ORDER is a no-op since 2.8). The reals replies
	 * carry are measures (seconds, percentages): 15 digits keep them
	 * exact without 17's noise (51.926010853000001). */
	return json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY |
			       JSON_REAL_PRECISION(15));
}
