/* JSON for the control socket: a parser for untrusted input that builds a
 * tree (jansson underneath; bounded nesting, errors with a byte offset),
 * and a writer that builds one document in a growable buffer. */
#ifndef THPVM_JSON_H
#define THPVM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 32		/* nested arrays and objects */

enum json_type {
	JSON_TYPE_NULL,
	JSON_TYPE_BOOL,
	JSON_TYPE_NUMBER,
	JSON_TYPE_STRING,
	JSON_TYPE_ARRAY,
	JSON_TYPE_OBJECT,
};

struct json_member;

struct json_value {
	enum json_type type;
	union {
		bool boolean;
		struct {
			double d;	/* always set */
			int64_t i;	/* set when is_int */
			bool is_int;	/* integer syntax (which must fit
					 * int64_t) */
		} number;
		struct {
			char *s;	/* valid UTF-8, NUL-terminated; U+0000
					 * is rejected so strlen(s) == len */
			size_t len;
		} string;
		struct {
			struct json_value *items;
			size_t len;
		} array;
		struct {
			struct json_member *members;	/* in document order */
			size_t len;
		} object;
	};
};

struct json_member {
	char *key;
	size_t key_len;
	struct json_value value;
};

#define JSON_OFFSET_NONE SIZE_MAX	/* the error is the document's */

struct json_error {
	size_t offset;		/* bytes into the input, or JSON_OFFSET_NONE */
	char msg[160];		/* e.g. "'[' or '{' expected near 'x'" */
};

/* Parses exactly one JSON document (RFC 8259, UTF-8) from text[0..len),
 * which need not be NUL-terminated; the caller bounds len. Returns 0 with
 * *out set (free it with json_free), -EINVAL with *err filled for
 * malformed input (a member given twice, U+0000 in a string, an integer
 * beyond int64_t, nesting over JSON_MAX_DEPTH), or -ENOMEM. */
int json_parse(const char *text, size_t len, struct json_value **out,
	       struct json_error *err);
void json_free(struct json_value *v);

/* Object lookups. All return NULL/false when obj is not an object or the
 * member is missing or of another type. */
const struct json_value *json_get(const struct json_value *obj,
				  const char *key);
const char *json_get_string(const struct json_value *obj, const char *key);
bool json_get_bool(const struct json_value *obj, const char *key,
		   bool *out);
/* An integer in 0..INT64_MAX. */
bool json_get_u64(const struct json_value *obj, const char *key,
		  uint64_t *out);
bool json_get_double(const struct json_value *obj, const char *key,
		     double *out);

/* The writer. Calls after a failure do nothing; err holds the first one:
 * -ENOMEM, or -EINVAL for misuse (a value in an object without a key, a
 * key outside an object, unbalanced ends, nesting over JSON_MAX_DEPTH). */
struct json_writer {
	char *buf;		/* NUL-terminated once anything is written */
	size_t len;
	size_t cap;
	int err;
	unsigned depth;
	uint64_t in_object;	/* bit d: the container at depth d is an
				 * object (else an array) */
	uint64_t has_items;	/* bit d: it has an item already */
	bool after_key;
};

void json_writer_init(struct json_writer *w);
/* Empties the document, keeping the buffer. */
void json_writer_reset(struct json_writer *w);
void json_writer_free(struct json_writer *w);
/* The document so far ("" when empty). */
const char *json_writer_str(const struct json_writer *w);

void json_write_object_begin(struct json_writer *w);
void json_write_object_end(struct json_writer *w);
void json_write_array_begin(struct json_writer *w);
void json_write_array_end(struct json_writer *w);
void json_write_key(struct json_writer *w, const char *key);
/* Bytes that are not valid UTF-8 are written as U+FFFD, so the output is
 * always valid JSON. */
void json_write_string(struct json_writer *w, const char *s);
void json_write_string_len(struct json_writer *w, const char *s, size_t len);
void json_write_int(struct json_writer *w, int64_t v);
/* Past INT64_MAX as a double: a reader's integers (jansson's too) are
 * int64_t, and a guest can report any 64-bit figure. */
void json_write_uint(struct json_writer *w, uint64_t v);
/* The shortest form that reads back to the same double; NaN and the
 * infinities (not JSON) are written as null. */
void json_write_double(struct json_writer *w, double v);
void json_write_bool(struct json_writer *w, bool v);
void json_write_null(struct json_writer *w);
/* A parsed tree, e.g. to pass on a reply. */
void json_write_value(struct json_writer *w, const struct json_value *v);
/* Bytes appended as they are, outside the JSON structure (e.g. the
 * newline that ends a protocol line). */
void json_write_raw(struct json_writer *w, const char *s, size_t len);

/* An object member: the key, then the value. */
void json_field_string(struct json_writer *w, const char *key, const char *v);
void json_field_int(struct json_writer *w, const char *key, int64_t v);
void json_field_uint(struct json_writer *w, const char *key, uint64_t v);
void json_field_double(struct json_writer *w, const char *key, double v);
void json_field_bool(struct json_writer *w, const char *key, bool v);

#endif
