/* The control socket's JSON parser (lib/json_parse.c) on untrusted text, and
 * the writer on what it parsed: what it writes must parse, and writing
 * that again must give the same text (after one round: "-0" reads back
 * as the integer 0). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/json.h"

/* Writes v into w, then parses the text into *out. */
static void json_write_parse(const struct json_value *v, struct json_writer *w,
			     struct json_value **out)
{
	struct json_error err;

	json_writer_init(w);
	json_write_value(w, v);
	if (w->err || json_parse(w->buf, w->len, out, &err))
		abort();
}

static void json_round_trip(const struct json_value *v)
{
	struct json_value *v2, *v3;
	struct json_writer w1, w2, w3;

	json_write_parse(v, &w1, &v2);
	json_write_parse(v2, &w2, &v3);
	json_writer_init(&w3);
	json_write_value(&w3, v3);
	if (w3.err || w2.len != w3.len || memcmp(w2.buf, w3.buf, w2.len))
		abort();
	json_free(v2);
	json_free(v3);
	json_writer_free(&w1);
	json_writer_free(&w2);
	json_writer_free(&w3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_value *v;
	struct json_error err;
	uint64_t u;
	double d;
	bool b;

	if (json_parse((const char *)data, size, &v, &err)) {
		if ((err.offset > size && err.offset != JSON_OFFSET_NONE) ||
		    !err.msg[0])
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
