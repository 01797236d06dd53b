/* thpvm sandbox's guest script and status file (cli/sandbox_script.c):
 * the words the script runs are the user's, byte for byte, whatever the
 * shell would make of them. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "cli/sandbox_script.h"
#include "unit.h"

/* What shell_quote writes for s; freed by the caller. */
static char *quoted(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	shell_quote(f, s);
	fclose(f);
	return buf;
}

static void test_quote(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "''" },
		{ "plain", "'plain'" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "'", "''\\'''" },
		{ "$HOME `id` \\ \"x\" *", "'$HOME `id` \\ \"x\" *'" },
		{ "line\nbreak", "'line\nbreak'" },
	};
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *q = quoted(cases[i].in);

		CHECK_STR(q, cases[i].out);
		free(q);
	}
}

/* The words come back from /bin/sh exactly as they went in. */
static void test_quote_round_trip(void)
{
	static const char *const words[] = {
		"a b", "it's", "'", "$HOME", "$(echo no)", "`echo no`", "\\",
		"\"", "*", "line\nbreak", "-n", "", "\t;|&<>",
	};
	char *script = NULL, out[256], want[256] = "";
	size_t len, i, n = 0;
	FILE *f = open_memstream(&script, &len), *p;

	fputs("printf '%s|'", f);
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		fputc(' ', f);
		shell_quote(f, words[i]);
		strcat(want, words[i]);
		strcat(want, "|");
	}
	fclose(f);
	/* popen runs it with /bin/sh -c. */
	p = popen(script, "r");
	CHECK(p != NULL);
	if (p) {
		n = fread(out, 1, sizeof(out) - 1, p);
		CHECK_EQ(pclose(p), 0);
	}
	out[n] = '\0';
	CHECK_STR(out, want);
	free(script);
}

static void test_script(void)
{
	char *const argv[] = { "sh", "-c", "exit 3", "it's", NULL };
	char *script = NULL;
	size_t len;
	FILE *f = open_memstream(&script, &len);

	CHECK_EQ(sandbox_script_write(f, "/home/a b", argv), 0);
	fclose(f);
	CHECK(!strncmp(script, "#!/bin/sh\n", 10));
	CHECK(strstr(script, "\nmount -t 9p -o trans=virtio,version=9p2000.L "
			     SANDBOX_TAG " " SANDBOX_GUEST_DIR "\n"));
	CHECK(strstr(script, "\ncd '/home/a b' 2>/dev/null || cd /\n"
			     "( exec 'sh' '-c' 'exit 3' 'it'\\''s' )\n"
			     "echo $? >" SANDBOX_GUEST_DIR "/" SANDBOX_STATUS
			     "\n"));
	/* The status is written after the command, the power-off last. */
	CHECK(strstr(script, "exec") < strstr(script, "echo $? >"));
	CHECK(strstr(script, "echo $? >") < strstr(script, "poweroff -f"));
	CHECK(strstr(script, "poweroff -f") <
	      strstr(script, "echo o >/proc/sysrq-trigger"));
	free(script);
}

static void test_status(void)
{
	static const char *const bad[] = {
		"", "\n", "3", "03\n", "256\n", "-1\n", "3 \n", "x\n",
		"1000\n", "3\n\n",
	};
	int status = -1;
	unsigned i;

	CHECK_EQ(sandbox_status_parse("0\n", 2, &status), 0);
	CHECK_EQ(status, 0);
	CHECK_EQ(sandbox_status_parse("3\n", 2, &status), 0);
	CHECK_EQ(status, 3);
	CHECK_EQ(sandbox_status_parse("255\n", 4, &status), 0);
	CHECK_EQ(status, 255);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		status = -1;
		CHECK_EQ(sandbox_status_parse(bad[i], strlen(bad[i]), &status),
			 -EINVAL);
		CHECK_EQ(status, -1);
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_quote),
		UNIT_TEST(test_quote_round_trip),
		UNIT_TEST(test_script),
		UNIT_TEST(test_status),
	};

	return UNIT_RUN(tests);
}
