/* The option parsing every control subcommand shares, with and without
 * options of a command's own. */
#include <getopt.h>
#include <stdlib.h>

#include "cli/cmd_util.h"
#include "unit.h"

#define ARGV(...) ((char *[]){ "cmd", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "cmd", __VA_ARGS__ }) / sizeof(char *)))

enum { OPT_SIZE = CMD_OPT_BASE, OPT_WAIT };

static const struct command cmd = {
	.name = "cmd", .summary = "", .usage = "usage: thpvm cmd NAME\n",
};

struct taken {
	const char *size;
	const char *wait;
	bool all;
	unsigned calls;
};

static int take(void *ctx, int opt, const char *arg)
{
	struct taken *t = ctx;

	t->calls++;
	if (opt == OPT_SIZE)
		t->size = arg;
	else if (opt == 'a')
		t->all = true;
	else
		t->wait = arg ? arg : "default";
	return opt == OPT_SIZE && arg[0] == 'x' ? EXIT_USAGE : 0;
}

static const struct option own_options[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "wait", optional_argument, NULL, OPT_WAIT },
	{ "all", no_argument, NULL, 'a' },
	{ "inflate", required_argument, NULL, 'i' },
	{ NULL, 0, NULL, 0 },
};

#define PARSE(own, ...) \
	cmd_args_parse_opts(&cmd, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), 1, 1, \
			    own, &args)

static void test_plain(void)
{
	/* Named: args.argv points into it after the call. */
	char *argv[] = { "cmd", "vm", "--json", NULL };
	struct cmd_args args;

	CHECK_EQ(cmd_args_parse(&cmd, 3, argv, 1, 1, &args), -1);
	CHECK(args.json);
	CHECK_EQ(args.argc, 1);
	CHECK_STR(args.argv[0], "vm");
	CHECK_EQ(PARSE(NULL, "--size", "1"), EXIT_USAGE);
	CHECK_EQ(PARSE(NULL, "vm", "-x"), EXIT_USAGE);
	CHECK_EQ(PARSE(NULL, "vm", "other"), EXIT_USAGE);
	CHECK_EQ(cmd_args_parse(&cmd, 1, ARGV(NULL), 1, 1, &args), EXIT_USAGE);
}

static void test_own_options(void)
{
	char *argv[] = { "cmd", "--size", "4", "vm", "--wait", "--json", NULL };
	struct taken t = { NULL, NULL, false, 0 };
	const struct cmd_options own = { own_options, take, &t };
	struct cmd_args args;

	/* getopt permutes argv: the name ends up after the options. */
	CHECK_EQ(cmd_args_parse_opts(&cmd, 6, argv, 1, 1, &own, &args), -1);
	CHECK_STR(t.size, "4");
	CHECK_STR(t.wait, "default");
	CHECK_EQ(t.calls, 2);
	CHECK(args.json);
	CHECK_STR(args.argv[0], "vm");
	CHECK_EQ(PARSE(&own, "vm", "--wait=7"), -1);
	CHECK_EQ(args.argc, 1);
	CHECK_STR(t.wait, "7");
	/* The command's own verdict, a missing value, an unknown option. */
	CHECK_EQ(PARSE(&own, "vm", "--size", "x"), EXIT_USAGE);
	CHECK_EQ(PARSE(&own, "vm", "--size"), EXIT_USAGE);
	CHECK_EQ(PARSE(&own, "vm", "--sighs"), EXIT_USAGE);
	CHECK_EQ(PARSE(&own, "--size", "4"), EXIT_USAGE);
}

/* Own options with a short letter: -a and --all are one option. */
static void test_short_letters(void)
{
	struct taken t = { NULL, NULL, false, 0 };
	const struct cmd_options own = { own_options, take, &t };
	struct cmd_args args;

	CHECK_EQ(PARSE(&own, "-a", "vm"), -1);
	CHECK(t.all);
	t.all = false;
	CHECK_EQ(PARSE(&own, "vm", "--all"), -1);
	CHECK(t.all);
	/* A letter with a value, in getopt's spellings. */
	CHECK_EQ(PARSE(&own, "vm", "-i", "100"), -1);
	CHECK_EQ(PARSE(&own, "vm", "-i100"), -1);
	CHECK_EQ(PARSE(&own, "vm", "-i"), EXIT_USAGE);
	/* A letter the command does not take. */
	CHECK_EQ(PARSE(&own, "vm", "-z"), EXIT_USAGE);
	CHECK_EQ(PARSE(NULL, "vm", "-a"), EXIT_USAGE);
}

/* --wait 30 is --wait=30; a word that is not a number stays an argument.
 * The argv arrays are named: args.argv points into them after the call. */
static void test_optional_value_apart(void)
{
	char *after[] = { "cmd", "vm", "--wait", "30", NULL };
	char *before[] = { "cmd", "--wait", "30", "vm", "--json", NULL };
	char *word[] = { "cmd", "--wait", "vm", NULL };
	struct taken t = { NULL, NULL, false, 0 };
	const struct cmd_options own = { own_options, take, &t };
	struct cmd_args args;

	CHECK_EQ(cmd_args_parse_opts(&cmd, 4, after, 1, 1, &own, &args), -1);
	CHECK_STR(t.wait, "30");
	CHECK_EQ(args.argc, 1);
	CHECK_STR(args.argv[0], "vm");
	CHECK_EQ(cmd_args_parse_opts(&cmd, 5, before, 1, 1, &own, &args), -1);
	CHECK_STR(t.wait, "30");
	CHECK_STR(args.argv[0], "vm");
	CHECK(args.json);
	CHECK_EQ(cmd_args_parse_opts(&cmd, 3, word, 1, 1, &own, &args), -1);
	CHECK_STR(t.wait, "default");
	CHECK_STR(args.argv[0], "vm");
	CHECK_EQ(PARSE(&own, "--wait", "-5", "vm"), EXIT_USAGE);
	/* A required value may look like a number too, as before. */
	CHECK_EQ(PARSE(&own, "vm", "--size", "30"), -1);
	CHECK_STR(t.size, "30");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_plain),
		UNIT_TEST(test_own_options),
		UNIT_TEST(test_short_letters),
		UNIT_TEST(test_optional_value_apart),
	};

	return UNIT_RUN(tests);
}
