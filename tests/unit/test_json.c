/* Tests for lib/json.c: the parse (jansson with the protocol's rules) on
 * valid and hostile input, and what replies are written with: strings
 * from bytes that are not UTF-8, figures, and the text itself, which must
 * be what thpvm has always written and parse back. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/json.h"
#include "unit.h"

static json_t *parse_ok(const char *text)
{
	json_t *v = NULL;
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
	json_t *v = NULL;
	int ret = json_parse(text, len, &v, &last_err);

	if (!ret) {
		json_decref(v);
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
	json_t *v;

	v = parse_ok(" true ");
	CHECK(json_is_true(v));
	json_decref(v);
	v = parse_ok("false");
	CHECK(json_is_false(v));
	json_decref(v);
	v = parse_ok("\n\t\r null");
	CHECK(json_is_null(v));
	json_decref(v);
	v = parse_ok("\"hi\"");
	CHECK_STR(json_string_value(v), "hi");
	json_decref(v);
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
		json_t *v = parse_ok(good[i].text);

		CHECK(json_is_number(v));
		if (!json_is_number(v))
			continue;
		CHECK_EQ(json_is_integer(v), good[i].is_int);
		if (good[i].is_int)
			CHECK_EQ(json_integer_value(v), good[i].i);
		CHECK(json_number_value(v) == good[i].d);
		json_decref(v);
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
		json_t *v = parse_ok(good[i].text);

		CHECK_STR(json_string_value(v), good[i].value);
		CHECK_EQ(json_string_length(v), strlen(good[i].value));
		json_decref(v);
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
	const char *key;
	json_t *v, *m;
	uint64_t u;

	v = parse_ok("{\"cmd\" : \"stat\", \"n\":[1, 2 ,{}], \"ok\":true,"
		     "\"x\":-1, \"f\":0.5, \"u\":9223372036854775807}");
	CHECK(json_is_object(v));
	if (!v)
		return;
	CHECK_EQ(json_object_size(v), 6);
	/* In document order. */
	key = json_object_iter_key(json_object_iter(v));
	CHECK_STR(key, "cmd");
	m = json_object_get(v, "n");
	CHECK_EQ(json_array_size(m), 3);
	CHECK_EQ(json_integer_value(json_array_get(m, 1)), 2);
	CHECK(json_is_object(json_array_get(m, 2)));
	CHECK(json_get_u64(v, "u", &u) && u == INT64_MAX);
	CHECK(!json_get_u64(v, "x", &u));	/* negative */
	CHECK(!json_get_u64(v, "f", &u));	/* not an integer */
	CHECK(!json_get_u64(v, "cmd", &u));
	CHECK(!json_get_u64(v, "missing", &u));
	CHECK(!json_get_u64(m, "x", &u));	/* not an object */
	CHECK(!json_get_u64(NULL, "x", &u));
	json_decref(v);

	v = parse_ok("[]");
	CHECK(json_is_array(v) && json_array_size(v) == 0);
	json_decref(v);

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
	json_t *v;
	unsigned i;

	for (i = 0; i < JSON_MAX_DEPTH; i++) {
		buf[i] = '[';
		buf[2 * JSON_MAX_DEPTH - 1 - i] = ']';
	}
	buf[2 * JSON_MAX_DEPTH] = '\0';
	v = parse_ok(buf);
	CHECK(v != NULL);
	json_decref(v);

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
		struct json_error err;
		json_t *v;
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
			json_decref(v);
	}
}

/* json_encode() of v (whose reference it takes), compared with want. */
static void check_encode(json_t *v, const char *want)
{
	char *text = v ? json_encode(v) : NULL;

	CHECK_STR(text, want);
	free(text);
	json_decref(v);
}

/* s through json_string_lossy() and back: what a reader gets. */
static char *lossy_round_trip(const char *s)
{
	json_t *j = json_string_lossy(s), *back = NULL;
	char *text = j ? json_encode(j) : NULL, *out = NULL;
	struct json_error err;

	json_decref(j);
	if (!text || json_parse(text, strlen(text), &back, &err)) {
		printf("# not written as valid JSON: %s\n", text);
		CHECK(0);
	} else {
		out = strdup(json_string_value(back));
	}
	json_decref(back);
	free(text);
	return out;
}

static void test_strings_lossy(void)
{
	char all[128], *back;
	unsigned i;

	/* Every ASCII character but NUL round-trips. */
	for (i = 1; i < 128; i++)
		all[i - 1] = (char)i;
	all[127] = '\0';
	back = lossy_round_trip(all);
	CHECK_STR(back, all);
	free(back);

	/* Control characters as \u escapes, jansson's upper case. */
	check_encode(json_string_lossy("q\"b\\n\n\x01\x1f\x1b/"),
		     "\"q\\\"b\\\\n\\n\\u0001\\u001F\\u001B/\"");

	/* Valid UTF-8 passes as is; invalid bytes become U+FFFD. */
	back = lossy_round_trip("\xc3\xa9\xf0\x9f\x98\x80");
	CHECK_STR(back, "\xc3\xa9\xf0\x9f\x98\x80");
	free(back);
	back = lossy_round_trip("a\xff" "b\xc3");
	CHECK_STR(back, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	free(back);
	back = lossy_round_trip("\xed\xa0\x80");	/* a surrogate */
	CHECK_STR(back, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(back);
	back = lossy_round_trip("\xc0\xaf" "\xf4\x90\x80\x80");
	CHECK_STR(back, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			"\xef\xbf\xbd\xef\xbf\xbd");
	free(back);
	/* A message cut in the middle of a character. */
	back = lossy_round_trip("caf\xc3");
	CHECK_STR(back, "caf\xef\xbf\xbd");
	free(back);
}

static void test_encode(void)
{
	json_t *v;

	/* A reply: compact, in insertion order, reals to 15 digits. */
	v = json_pack("{s:b, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		      "ok", true, "name", json_string_lossy("vm\"1"),
		      "neg", -5, "big", json_from_u64(UINT64_MAX),
		      "max", json_from_u64(INT64_MAX),
		      "pct", json_from_double(99.6),
		      "whole", json_from_double(100),
		      "nan", json_from_double(NAN),
		      "inf", json_from_double(-INFINITY),
		      "list", json_pack("[i, n, [], {}]", 1));
	check_encode(v, "{\"ok\":true,\"name\":\"vm\\\"1\",\"neg\":-5,"
		     "\"big\":1.84467440737096e19,"
		     "\"max\":9223372036854775807,\"pct\":99.6,\"whole\":100.0,"
		     "\"nan\":null,\"inf\":null,\"list\":[1,null,[],{}]}");

	/* Reals to 15 digits, without 17's noise. */
	check_encode(json_pack("[o, o, o, o, o, o]",
			       json_from_double(0.1 + 0.2),
			       json_from_double(1.25),
			       json_from_double(100.0 / 3),
			       json_from_double(-0.0),
			       json_from_double(1e-5),
			       json_from_double(1e15)),
		     "[0.3,1.25,33.3333333333333,-0.0,1e-5,1e15]");
	/* A parsed document is written back the same. */
	v = parse_ok("{\"a\":[1.5,-2,\"\\u001f\\\\u001F\"],\"b\":1e3,"
		     "\"c\":-0}");
	check_encode(v, "{\"a\":[1.5,-2,\"\\u001F\\\\u001F\"],\"b\":1000.0,"
		     "\"c\":0}");
	check_encode(json_string_lossy(""), "\"\"");
	check_encode(json_true(), "true");

	/* What jansson cannot write (a string that is not UTF-8, which only
	 * its *_nocheck calls let in) gives NULL, not bad text. */
	v = json_pack("{s:o}", "x", json_stringn_nocheck("\xff", 1));
	CHECK(v != NULL);
	CHECK(v && !json_encode(v));
	json_decref(v);
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
		UNIT_TEST(test_strings_lossy),
		UNIT_TEST(test_encode),
	};

	return UNIT_RUN(tests);
}
