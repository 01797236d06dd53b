/* The console output filter: text and a Linux console's escapes pass
 * byte for byte; titles, clipboard writes, terminal reports, resets and
 * broken UTF-8 go; sequences split across calls are judged whole. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/console_filter.h"
#include "unit.h"

/* Filters len bytes of s and returns what passed, NUL-terminated, in a
 * static buffer. */
static const char *filter(struct console_filter *f, const char *s, size_t len)
{
	static uint8_t out[8192 + CONSOLE_FILTER_SEQ_MAX + 1];
	size_t n = console_filter_run(f, (const uint8_t *)s, len, out);

	out[n] = 0;
	return (const char *)out;
}

/* What passes of s, filtered in one call by a fresh filter; *removed
 * the bytes removed. */
static const char *once(const char *s, uint64_t *removed)
{
	static struct console_filter f;
	const char *out;

	console_filter_init(&f);
	out = filter(&f, s, strlen(s));
	*removed = f.removed;
	return out;
}

static void check_passes(const char *s)
{
	uint64_t removed;

	CHECK_STR(once(s, &removed), s);
	CHECK_EQ(removed, 0);
}

static void check_removed(const char *s, const char *kept)
{
	uint64_t removed;

	CHECK_STR(once(s, &removed), kept);
	CHECK_EQ(removed, strlen(s) - strlen(kept));
}

static void test_text_and_line_controls(void)
{
	check_passes("login: root\r\n\tls -l\b\b\r\n");
	check_passes("\x0e" "lqk" "\x0f");	/* SO/SI: line drawing */
	check_removed("a\x07" "b\x01" "c", "abc");
	check_removed("x\x7f" "y\x05" "z", "xyz");
}

static void test_console_escapes_pass(void)
{
	check_passes("\x1b[1;31mred\x1b[0m");
	check_passes("\x1b[H\x1b[2J\x1b[10;20H\x1b[K\x1b[3A\x1b[2C");
	check_passes("\x1b[?25l\x1b[?1049h\x1b[?7h\x1b[4l\x1b[1;24r");
	check_passes("\x1b" "7\x1b" "8\x1b" "M\x1b(0q\x1b(B\x1b)0\x1b=\x1b>");
	check_passes("\x1b[s\x1b[u\x1b[2P\x1b[3@\x1b[L\x1b[M\x1b[5X");
}

static void test_reports_and_resets_removed(void)
{
	check_removed("\x1b[6nA", "A");		/* cursor position report */
	check_removed("\x1b[cB\x1b[>0c", "B");	/* device attributes */
	check_removed("\x1b[21tC\x1b[14t", "C");	/* title, size reports */
	check_removed("\x1b" "cD", "D");		/* full reset */
	check_removed("\x1b[3JE", "E");		/* the scrollback */
	check_removed("\x1b[2 qF", "F");		/* intermediate byte */
	check_removed("\x1b#8G", "8G");		/* DEC test: ESC # only */
}

static void test_strings_removed(void)
{
	check_removed("a\x1b]0;owned\x07" "b", "ab");
	check_removed("a\x1b]52;c;aGVsbG8=\x1b\\b", "ab");	/* clipboard */
	check_removed("\x1bP+q544e\x1b\\x", "x");		/* DCS query */
	check_removed("\x1b_apc\x1b\\\x1b^pm\x07y", "y");
	/* An ESC inside a string ends it and starts a sequence. */
	check_removed("\x1b]2;t\x1b[31mz", "\x1b[31mz");
}

static void test_long_string_ends(void)
{
	static char s[CONSOLE_FILTER_STRING_MAX + 16];
	uint64_t removed;

	s[0] = '\x1b';
	s[1] = ']';
	memset(s + 2, 'a', CONSOLE_FILTER_STRING_MAX);
	strcpy(s + 2 + CONSOLE_FILTER_STRING_MAX, "ok");
	CHECK_STR(once(s, &removed), "ok");
	CHECK_EQ(removed, CONSOLE_FILTER_STRING_MAX + 2);
}

static void test_long_csi_removed(void)
{
	char s[64] = "\x1b[";

	memset(s + 2, '1', 40);
	strcpy(s + 42, "mX");
	/* Held back to the limit, then removed; the rest is text. */
	CHECK_STR(once(s, &(uint64_t){ 0 }), "11111111111mX");
}

static void test_split_across_calls(void)
{
	struct console_filter f;

	console_filter_init(&f);
	CHECK_STR(filter(&f, "a\x1b[3", 4), "a");
	CHECK_STR(filter(&f, "1mb", 3), "\x1b[31mb");
	CHECK_STR(filter(&f, "\x1b]0;ti", 6), "");
	CHECK_STR(filter(&f, "tle\x07" "c", 5), "c");
	CHECK_STR(filter(&f, "\xe2\x82", 2), "");
	CHECK_STR(filter(&f, "\xac", 1), "\xe2\x82\xac");
	CHECK_STR(filter(&f, "\x1b[6", 3), "");
	CHECK_STR(filter(&f, "n", 1), "");
	CHECK_EQ(f.removed, 10 + 4);
}

static void test_utf8(void)
{
	check_passes("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad");
	check_removed("a\xc2\x9b" "6nb", "a6nb");	/* C1 CSI as UTF-8 */
	check_removed("a\x9b" "6nb", "a6nb");		/* C1 CSI, 8-bit */
	check_removed("\xc0\xaf\xe0\x80\xaf/", "/");	/* overlong */
	check_removed("\xed\xa0\x80x", "x");		/* a surrogate */
	check_removed("\xf4\x90\x80\x80y", "y");	/* past U+10FFFF */
	check_removed("\xe2\x82z", "z");		/* cut short */
}

/* The filter's output as a terminal reads it, across calls: false at
 * what should have gone, a string introducer (OSC, DCS, APC, PM), a
 * full reset, a report request (CSI n, c, t) or erasing the
 * scrollback (CSI 3 J). A C0 control inside a CSI is carried out and
 * the sequence goes on, as terminals do. */
struct terminal {
	enum { TEXT, ESCAPE, CSI } state;
	char params[32];
	size_t len;
};

static bool terminal_reads(struct terminal *t, uint8_t c)
{
	switch (t->state) {
	case TEXT:
		if (c == 0x1b)
			t->state = ESCAPE;
		return true;
	case ESCAPE:
		t->state = c == '[' ? CSI : c == 0x1b ? ESCAPE : TEXT;
		t->len = 0;
		return !(c && strchr("]P_^Xc", c));
	case CSI:
		if (c == 0x1b) {
			t->state = ESCAPE;
		} else if (c >= 0x20 && c <= 0x3f) {
			if (t->len < sizeof(t->params) - 1)
				t->params[t->len++] = (char)c;
		} else if (c >= 0x40 && c <= 0x7e) {
			t->params[t->len] = 0;
			t->state = TEXT;
			return !strchr("nct", c) &&
			       !(c == 'J' && !strcmp(t->params, "3"));
		}
		return true;
	}
	return false;
}

/* Whatever comes in, in pieces of any length: the output fits the
 * documented bound, a terminal finds in it nothing that should have
 * gone (even where a sequence spans two outputs), and it holds no C1
 * control as UTF-8 (0xc2 0x80-0x9f) and no removed C0 control. (0x9b
 * alone is not checked: it is a continuation byte of valid characters
 * too.) */
static void test_random_input(void)
{
	static const char alphabet[] = "\x1b[]P_^X\\;0123456789?mncJt\x07\x9b"
				       "\xc2\xe2\x82\xac\x80\x00\x7f" "ab\r\n";
	struct console_filter f;
	struct terminal term = { .state = TEXT };
	uint8_t in[300], out[300 + CONSOLE_FILTER_SEQ_MAX];
	bool clean = true;

	srand(7);
	console_filter_init(&f);
	for (unsigned round = 0; round < 20000 && clean; round++) {
		size_t len = (size_t)rand() % sizeof(in), n;

		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)alphabet[rand() %
						  (sizeof(alphabet) - 1)];
		n = console_filter_run(&f, in, len, out);
		clean = n <= len + CONSOLE_FILTER_SEQ_MAX;
		for (size_t i = 0; i < n && clean; i++) {
			uint8_t next = i + 1 < n ? out[i + 1] : 0;

			clean = out[i] != 0 && out[i] != 0x07 &&
				out[i] != 0x7f &&
				!(out[i] == 0xc2 && next < 0xa0) &&
				terminal_reads(&term, out[i]);
		}
	}
	CHECK(clean);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_text_and_line_controls),
		UNIT_TEST(test_console_escapes_pass),
		UNIT_TEST(test_reports_and_resets_removed),
		UNIT_TEST(test_strings_removed),
		UNIT_TEST(test_long_string_ends),
		UNIT_TEST(test_long_csi_removed),
		UNIT_TEST(test_split_across_calls),
		UNIT_TEST(test_utf8),
		UNIT_TEST(test_random_input),
	};

	return UNIT_RUN(tests);
}
