/* The control socket's JSON parser (lib/json.c) on untrusted text, and
 * the writer on what it parsed: a parsed document written out must parse
 * again to the same text. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/json.h"

/* Writes v, parses that and writes it again: the two must agree. */
static void json_round_trip(const struct json_value *v)
{
	struct json_writer w1, w2;
	struct json_value *again;
	struct json_error err;

	json_writer_init(&w1);
	json_writer_init(&w2);
	json_write_value(&w1, v);
	if (w1.err)
		abort();
	if (json_parse(w1.buf, w1.len, &again, &err))
		abort();
	json_write_value(&w2, again);
	if (w2.err || w1.len != w2.len || memcmp(w1.buf, w2.buf, w1.len))
		abort();
	json_free(again);
	json_writer_free(&w1);
	json_writer_free(&w2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_value *v;
	struct json_error err;
	uint64_t u;
	double d;
	bool b;

	if (json_parse((const char *)data, size, &v, &err)) {
		if (err.offset > size || !err.msg)
			abort();
		return 0;
	}
	json_get_string(v, "cmd");
	json_get_u64(v, "bytes", &u);
	json_get_double(v, "seconds", &d);
	json_get_bool(v, "force", &b);
	json_round_trip(v);
	json_free(v);
	return 0;
}
