/* JSON for the control socket, on jansson: documents are jansson's json_t
 * throughout. What jansson does not do itself is here: the protocol's
 * parse (its nesting limit and error words), strings from bytes that may
 * not be UTF-8, unsigned figures, and reals written as replies write
 * them. */
#ifndef THPVM_JSON_H
#define THPVM_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 32		/* nested arrays and objects */

#define JSON_OFFSET_NONE SIZE_MAX	/* the error is the document's */

struct json_error {
	size_t offset;		/* bytes into the input, or JSON_OFFSET_NONE */
	char msg[160];		/* e.g. "'[' or '{' expected near 'x'" */
};

/* Parses exactly one JSON document (RFC 8259, UTF-8) from text[0..len),
 * which need not be NUL-terminated; the caller bounds len. Returns 0 with
 * *out set (json_decref() it), -EINVAL with *err filled for malformed
 * input (a member given twice, U+0000 in a string, an integer beyond
 * int64_t, nesting over JSON_MAX_DEPTH), or -ENOMEM. */
int json_parse(const char *text, size_t len, json_t **out,
	       struct json_error *err);

/* obj's member key as an integer in 0..INT64_MAX (a size, a count):
 * false when obj is not an object, or the member is missing or not one. */
bool json_get_u64(const json_t *obj, const char *key, uint64_t *out);

/* A string of s whose bytes that are not UTF-8 (a file name's, a message
 * cut short, what a client sent) become U+FFFD, which jansson's own
 * json_string() refuses. NULL only when out of memory. */
json_t *json_string_lossy(const char *s);
/* v, past INT64_MAX as a real: a reader's integers (jansson's too) are
 * int64_t, and a guest can report any 64-bit figure. */
json_t *json_from_u64(uint64_t v);
/* v; NaN and the infinities (not JSON) as null. */
json_t *json_from_double(double v);

/* doc as text on one line: compact, members in insertion order, reals
 * to 15 significant digits. NULL when out of memory or doc holds what
 * jansson cannot write; free() it. */
char *json_encode(json_t *doc);

#endif
