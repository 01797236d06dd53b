/* The control socket's JSON (lib/json.c) on untrusted text: the parse,
 * then what replies are written with on what it parsed. What
 * json_encode() writes must parse, and writing that again must give the
 * same text (after one round: "-0" reads back as the integer 0). The
 * input's bytes as a string, as a client's or a file name's reach a
 * reply through json_string_lossy(), must come out as valid JSON too. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/json.h"

/* Writes v and parses the text back into *out; returns the text. */
static char *encode_parse(json_t *v, json_t **out)
{
	struct json_error err;
	char *text = json_encode(v);

	if (!text || json_parse(text, strlen(text), out, &err))
		abort();
	return text;
}

static void json_round_trip(json_t *v)
{
	char *t1, *t2, *t3;
	json_t *v2, *v3;

	t1 = encode_parse(v, &v2);
	t2 = encode_parse(v2, &v3);
	t3 = json_encode(v3);
	if (!t3 || strcmp(t2, t3))
		abort();
	json_decref(v2);
	json_decref(v3);
	free(t1);
	free(t2);
	free(t3);
}

/* The bytes up to the first NUL, as a string in a reply. */
static void json_lossy_check(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *text;
	json_t *j, *back;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	j = json_string_lossy(s);
	if (!j)
		abort();
	text = encode_parse(j, &back);
	/* Valid UTF-8 stays as it was; each bad byte grows to U+FFFD. */
	if (!json_is_string(back) || json_string_length(back) < strlen(s) ||
	    strlen(json_string_value(back)) != json_string_length(back))
		abort();
	json_decref(back);
	json_decref(j);
	free(text);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_error err;
	uint64_t u;
	json_t *v;

	json_lossy_check(data, size);
	if (json_parse((const char *)data, size, &v, &err)) {
		if ((err.offset > size && err.offset != JSON_OFFSET_NONE) ||
		    !err.msg[0])
			abort();
		return 0;
	}
	json_get_u64(v, "bytes", &u);
	json_round_trip(v);
	json_decref(v);
	return 0;
}
