/* Tests for lib/json_parse.c and lib/json_writer.c: the parser (jansson
 * and the copy into struct json_value) on valid and hostile input, and
 * the writer, checked by parsing what it wrote. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/json.h"
#include "unit.h"

static struct json_value *parse_ok(const char *text)
{
	struct json_value *v = NULL;
	struct json_error err;

	if (json_parse(text, strlen(text), &v, &err)) {
		printf("# parse of '%s' failed at %zu: %s\n", text, err.offset,
		       err.msg);
		return NULL;
	}
	return v;
}

/* The last refusal's words. */
static struct json_error last_err;

/* Returns the error offset (LONG_MAX: the document's as a whole), or -1
 * if text parsed. */
static long parse_err(const char *text, size_t len)
{
	struct json_value *v = NULL;
	int ret = json_parse(text, len, &v, &last_err);

	if (!ret) {
		json_free(v);
		return -1;
	}
	if (ret != -EINVAL || !last_err.msg[0])
		return -2;
	if (last_err.offset == JSON_OFFSET_NONE)
		return LONG_MAX;
	return last_err.offset > len ? -2 : (long)last_err.offset;
}

#define BAD(text) CHECK(parse_err(text, strlen(text)) >= 0)

static void test_scalars(void)
{
	struct json_value *v;

	v = parse_ok(" true ");
	CHECK(v && v->type == JSON_TYPE_BOOL && v->boolean);
	json_free(v);
	v = parse_ok("false");
	CHECK(v && v->type == JSON_TYPE_BOOL && !v->boolean);
	json_free(v);
	v = parse_ok("\n\t\r null");
	CHECK(v && v->type == JSON_TYPE_NULL);
	json_free(v);
	v = parse_ok("\"hi\"");
	CHECK(v && v->type == JSON_TYPE_STRING);
	if (v)
		CHECK_STR(v->string.s, "hi");
	json_free(v);
	BAD("");
	BAD("   ");
	BAD("tru");
	BAD("nul");
	BAD("True");
	BAD("truex");
	BAD("'a'");
	BAD("undefined");
}

static void test_numbers(void)
{
	static const struct {
		const char *text;
		bool is_int;
		int64_t i;
		double d;
	} good[] = {
		{ "0", true, 0, 0 },
		{ "-0", true, 0, 0 },
		{ "42", true, 42, 42 },
		{ "-17", true, -17, -17 },
		{ "9223372036854775807", true, INT64_MAX, 9223372036854775807.0 },
		{ "-9223372036854775808", true, INT64_MIN, -9223372036854775808.0 },
		{ "1.5", false, 0, 1.5 },
		{ "-0.25", false, 0, -0.25 },
		{ "1e3", false, 0, 1000 },
		{ "1E+3", false, 0, 1000 },
		{ "25e-1", false, 0, 2.5 },
		{ "1e-400", false, 0, 0 },
	};
	unsigned i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct json_value *v = parse_ok(good[i].text);

		CHECK(v && v->type == JSON_TYPE_NUMBER);
		if (!v || v->type != JSON_TYPE_NUMBER)
			continue;
		CHECK_EQ(v->number.is_int, good[i].is_int);
		if (good[i].is_int)
			CHECK_EQ(v->number.i, good[i].i);
		CHECK(v->number.d == good[i].d);
		json_free(v);
	}
	BAD("01");
	BAD("-");
	BAD("+1");
	BAD(".5");
	BAD("1.");
	BAD("1.e3");
	BAD("1e");
	BAD("1e+");
	BAD("0x10");
	BAD("1e400");
	BAD("-1e400");
	BAD("NaN");
	BAD("Infinity");
	/* Integers must fit int64_t. */
	BAD("9223372036854775808");
	BAD("-9223372036854775809");
}

static void test_strings(void)
{
	static const struct {
		const char *text;
		const char *value;
	} good[] = {
		{ "\"\"", "" },
		{ "\"a\\\"b\\\\c\\/d\"", "a\"b\\c/d" },
		{ "\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t" },
		{ "\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac" },
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" },
		{ "\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf" },
		{ "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "\"\x7f\"", "\x7f" },
	};
	unsigned i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct json_value *v = parse_ok(good[i].text);

		CHECK(v && v->type == JSON_TYPE_STRING);
		if (!v || v->type != JSON_TYPE_STRING)
			continue;
		CHECK_STR(v->string.s, good[i].value);
		CHECK_EQ(v->string.len, strlen(good[i].value));
		json_free(v);
	}
	BAD("\"abc");
	BAD("\"abc\\");
	BAD("\"abc\\\"");
	BAD("\"\\x41\"");
	BAD("\"\\u12\"");
	BAD("\"\\u12g4\"");
	BAD("\"\\u0000\"");
	BAD("\"\\ud83d\"");		/* lone high surrogate */
	BAD("\"\\ud83dx\"");
	BAD("\"\\ud83d\\u0041\"");	/* high + non-low */
	BAD("\"\\ude00\"");		/* lone low surrogate */
	BAD("\"a\nb\"");		/* raw control character */
	BAD("\"\t\"");
	BAD("\"\xff\"");		/* invalid UTF-8 */
	BAD("\"\xc3\"");		/* truncated sequence */
	BAD("\"\xc0\xaf\"");		/* overlong '/' */
	BAD("\"\xe0\x80\xaf\"");	/* overlong */
	BAD("\"\xed\xa0\x80\"");	/* encoded surrogate */
	BAD("\"\xf4\x90\x80\x80\"");	/* above U+10FFFF */
	BAD("\"\x80\"");		/* lone continuation byte */
	/* An embedded NUL byte is a control character. */
	CHECK(parse_err("\"a\0b\"", 5) == 2);
}

static void test_containers(void)
{
	const struct json_value *m;
	struct json_value *v;
	uint64_t u;
	double d;
	bool b;

	v = parse_ok("{\"cmd\" : \"stat\", \"n\":[1, 2 ,{}], \"ok\":true,"
		     "\"x\":-1, \"f\":0.5}");
	CHECK(v && v->type == JSON_TYPE_OBJECT);
	if (!v)
		return;
	CHECK_EQ(v->object.len, 5);
	/* In document order. */
	CHECK_STR(v->object.members[0].key, "cmd");
	CHECK_STR(v->object.members[4].key, "f");
	CHECK_STR(json_get_string(v, "cmd"), "stat");
	m = json_get(v, "n");
	CHECK(m && m->type == JSON_TYPE_ARRAY && m->array.len == 3);
	if (m && m->type == JSON_TYPE_ARRAY && m->array.len == 3) {
		CHECK(m->array.items[1].number.i == 2);
		CHECK(m->array.items[2].type == JSON_TYPE_OBJECT);
		CHECK_EQ(m->array.items[2].object.len, 0);
	}
	CHECK(json_get_bool(v, "ok", &b) && b);
	CHECK(!json_get_u64(v, "x", &u));	/* negative */
	CHECK(!json_get_u64(v, "f", &u));	/* not an integer */
	CHECK(json_get_double(v, "f", &d) && d == 0.5);
	CHECK(!json_get_string(v, "n"));
	CHECK(!json_get_string(v, "missing"));
	CHECK(!json_get_bool(v, "cmd", &b));
	CHECK(!json_get(m, "x"));	/* not an object */
	json_free(v);

	v = parse_ok("[]");
	CHECK(v && v->type == JSON_TYPE_ARRAY && v->array.len == 0);
	json_free(v);

	BAD("[");
	BAD("[1");
	BAD("[1,");
	BAD("[1,]");
	BAD("[,1]");
	BAD("[1 2]");
	BAD("{");
	BAD("{\"a\"}");
	BAD("{\"a\":}");
	BAD("{\"a\":1,}");
	BAD("{a:1}");
	BAD("{1:1}");
	BAD("{\"a\":1 \"b\":2}");
	BAD("[1]]");
	BAD("{} {}");
	BAD("]");
	BAD("}");
	/* A member given twice, named in the protocol's words. */
	CHECK_EQ(parse_err("{\"a\":1,\"cmd\":2,\"cmd\":3}", 23), 20);
	CHECK_STR(last_err.msg, "member \"cmd\" given twice");
	BAD("{\"a\":{\"b\":1,\"b\":1}}");
}

static void test_error_offsets(void)
{
	/* jansson's offset: just past the token it could not take. */
	CHECK_EQ(parse_err("{\"a\" 1}", 7), 6);
	CHECK_STR(last_err.msg, "':' expected near '1'");
	CHECK_EQ(parse_err("[1, x]", 6), 5);
	CHECK_EQ(parse_err("[1] x", 5), 5);
	CHECK_EQ(parse_err("\"ab", 3), 3);
	CHECK_EQ(parse_err("[\"\\q\"]", 6), 4);
	CHECK_EQ(parse_err("[1", 2), 2);
	/* The length bounds the input: a NUL-free buffer without a
	 * terminator is never read past len. */
	CHECK_EQ(parse_err("[1]", 2), 2);
}

static void test_depth_limit(void)
{
	char buf[2 * (JSON_MAX_DEPTH + 1) + 1];
	struct json_value *v;
	unsigned i;

	for (i = 0; i < JSON_MAX_DEPTH; i++) {
		buf[i] = '[';
		buf[2 * JSON_MAX_DEPTH - 1 - i] = ']';
	}
	buf[2 * JSON_MAX_DEPTH] = '\0';
	v = parse_ok(buf);
	CHECK(v != NULL);
	json_free(v);

	for (i = 0; i <= JSON_MAX_DEPTH; i++) {
		buf[i] = '[';
		buf[2 * JSON_MAX_DEPTH + 1 - i] = ']';
	}
	buf[2 * JSON_MAX_DEPTH + 2] = '\0';
	CHECK_EQ(parse_err(buf, strlen(buf)), LONG_MAX);
	CHECK_STR(last_err.msg, "nesting deeper than 32 levels");

	/* Deep garbage must not recurse without bound either: jansson
	 * stops at its own limit. */
	{
		size_t n = 1 << 20;
		char *deep = malloc(n);

		CHECK(deep != NULL);
		if (!deep)
			return;
		memset(deep, '[', n);
		CHECK(parse_err(deep, n) >= 0);
		free(deep);
	}
}

/* Random bytes and mutated documents: only looking for crashes and leaks
 * (under the sanitizers), and for errors that point into the input. */
static void test_garbage(void)
{
	static const char base[] =
		"{\"cmd\":\"stat\",\"a\":[1,-2.5e3,true,false,null,\"\\u00e9\"],"
		"\"b\":{\"c\":\"\\ud83d\\ude00\"}}";
	static const char alphabet[] = "{}[]\",:\\u0123456789.eE+-tfn \x80\xc3";
	uint32_t seed = 12345;
	char buf[sizeof(base)];
	unsigned i, j;

	for (i = 0; i < 20000; i++) {
		size_t len = sizeof(base) - 1;
		struct json_value *v;
		struct json_error err;
		int ret;

		memcpy(buf, base, len);
		for (j = 0; j < 1 + i % 4; j++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % len] = i % 2 ?
				(char)(seed >> 16) :
				alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		if (i % 3 == 0)
			len = (seed >> 4) % len;
		ret = json_parse(buf, len, &v, &err);
		if (ret)
			CHECK(ret == -EINVAL && (err.offset <= len ||
						 err.offset == JSON_OFFSET_NONE));
		else
			json_free(v);
	}
}

static char *write_and_read(struct json_writer *w, const char *s, size_t len)
{
	struct json_value *v = NULL;
	struct json_error err;
	char *out = NULL;

	json_writer_reset(w);
	json_write_string_len(w, s, len);
	CHECK_EQ(w->err, 0);
	if (json_parse(w->buf, w->len, &v, &err)) {
		printf("# writer produced invalid JSON: %s\n", w->buf);
		CHECK(0);
		return NULL;
	}
	if (v->type == JSON_TYPE_STRING)
		out = strdup(v->string.s);
	json_free(v);
	return out;
}

static void test_writer_escaping(void)
{
	struct json_writer w;
	char all[128], *back;
	unsigned i;

	json_writer_init(&w);
	CHECK_STR(json_writer_str(&w), "");

	/* Every ASCII character but NUL round-trips. */
	for (i = 1; i < 128; i++)
		all[i - 1] = (char)i;
	all[127] = '\0';
	back = write_and_read(&w, all, 127);
	CHECK_STR(back, all);
	free(back);

	json_writer_reset(&w);
	json_write_string(&w, "q\"b\\n\n\x01\x1f/");
	CHECK_STR(json_writer_str(&w), "\"q\\\"b\\\\n\\n\\u0001\\u001f/\"");

	/* Valid UTF-8 passes as is; invalid bytes become U+FFFD. */
	back = write_and_read(&w, "\xc3\xa9\xf0\x9f\x98\x80", 6);
	CHECK_STR(back, "\xc3\xa9\xf0\x9f\x98\x80");
	free(back);
	back = write_and_read(&w, "a\xff" "b\xc3", 4);
	CHECK_STR(back, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	free(back);
	back = write_and_read(&w, "\xed\xa0\x80", 3);
	CHECK_STR(back, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(back);
	json_writer_free(&w);
}

static void test_writer_structure(void)
{
	struct json_writer w;
	struct json_value *v;

	json_writer_init(&w);
	json_write_object_begin(&w);
	json_field_bool(&w, "ok", true);
	json_field_string(&w, "name", "vm\"1");
	json_field_int(&w, "neg", -5);
	json_field_uint(&w, "big", UINT64_MAX);
	json_field_double(&w, "pct", 99.6);
	json_field_double(&w, "nan", NAN);
	json_write_key(&w, "list");
	json_write_array_begin(&w);
	json_write_int(&w, 1);
	json_write_null(&w);
	json_write_array_begin(&w);
	json_write_array_end(&w);
	json_write_object_begin(&w);
	json_write_object_end(&w);
	json_write_array_end(&w);
	json_write_object_end(&w);
	CHECK_EQ(w.err, 0);
	CHECK_STR(json_writer_str(&w),
		  "{\"ok\":true,\"name\":\"vm\\\"1\",\"neg\":-5,"
		  "\"big\":1.8446744073709552e+19,\"pct\":99.6,\"nan\":null,"
		  "\"list\":[1,null,[],{}]}");

	/* What the parser reads, the writer writes back the same. */
	v = parse_ok(json_writer_str(&w));
	CHECK(v != NULL);
	if (v) {
		struct json_writer w2;

		json_writer_init(&w2);
		json_write_value(&w2, v);
		CHECK_STR(json_writer_str(&w2),
			  "{\"ok\":true,\"name\":\"vm\\\"1\",\"neg\":-5,"
			  "\"big\":1.8446744073709552e+19,\"pct\":99.6,"
			  "\"nan\":null,\"list\":[1,null,[],{}]}");
		json_writer_free(&w2);
		json_free(v);
	}

	/* Doubles read back exactly. */
	json_writer_reset(&w);
	json_write_double(&w, 0.1 + 0.2);
	CHECK(strtod(json_writer_str(&w), NULL) == 0.1 + 0.2);
	json_writer_free(&w);
}

static void test_writer_misuse(void)
{
	struct json_writer w;
	unsigned i;

	json_writer_init(&w);
	json_write_object_begin(&w);
	json_write_int(&w, 1);			/* value without a key */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_array_begin(&w);
	json_write_key(&w, "a");		/* key in an array */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_key(&w, "a");		/* key at top level */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_array_begin(&w);
	json_write_object_end(&w);		/* mismatched end */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_array_end(&w);		/* nothing open */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_object_begin(&w);
	json_write_key(&w, "a");
	json_write_object_end(&w);		/* key without a value */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	json_write_int(&w, 1);
	json_write_int(&w, 2);			/* two documents */
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	for (i = 0; i <= JSON_MAX_DEPTH; i++)
		json_write_array_begin(&w);
	CHECK_EQ(w.err, -EINVAL);

	json_writer_reset(&w);
	CHECK_EQ(w.err, 0);
	json_write_bool(&w, false);
	CHECK_STR(json_writer_str(&w), "false");
	json_writer_free(&w);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_scalars),
		UNIT_TEST(test_numbers),
		UNIT_TEST(test_strings),
		UNIT_TEST(test_containers),
		UNIT_TEST(test_error_offsets),
		UNIT_TEST(test_depth_limit),
		UNIT_TEST(test_garbage),
		UNIT_TEST(test_writer_escaping),
		UNIT_TEST(test_writer_structure),
		UNIT_TEST(test_writer_misuse),
	};

	return UNIT_RUN(tests);
}
