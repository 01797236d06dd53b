/* Naming the VMs a control subcommand acts on: NAME, -n, -p, -a. */
#include <getopt.h>

#include "cli/vm_select.h"
#include "unit.h"

static const struct command cmd = {
	.name = "cmd", .summary = "", .usage = "usage: thpvm cmd NAME\n",
};

static const struct option options[] = {
	VM_SELECT_OPTIONS,
	VM_SELECT_OPTION_ALL,
	{ NULL, 0, NULL, 0 },
};

static int take(void *ctx, int opt, const char *arg)
{
	return vm_select_take(ctx, &cmd, opt, arg);
}

static int parse(struct vm_select *sel, int argc, char **argv)
{
	const struct cmd_options own = { options, take, sel };
	struct cmd_args args;

	*sel = (struct vm_select){ NULL };
	return vm_select_parse(sel, &cmd, argc, argv, &own, &args);
}

#define PARSE(sel, ...) \
	parse(sel, (int)(sizeof((char *[]){ "cmd", __VA_ARGS__ }) / \
			 sizeof(char *)), (char *[]){ "cmd", __VA_ARGS__, NULL })

static void test_each_spelling(void)
{
	struct vm_select sel;

	CHECK_EQ(PARSE(&sel, "vm1"), -1);
	CHECK_STR(sel.name, "vm1");
	CHECK_EQ(PARSE(&sel, "-n", "vm1"), -1);
	CHECK_STR(sel.name, "vm1");
	CHECK_EQ(PARSE(&sel, "--name=vm1"), -1);
	CHECK_STR(sel.name, "vm1");
	CHECK_EQ(PARSE(&sel, "--name", "vm1", "--json"), -1);
	CHECK_STR(sel.name, "vm1");
	CHECK_EQ(PARSE(&sel, "-p", "4242"), -1);
	CHECK_EQ(sel.pid, 4242);
	CHECK(!sel.name);
	CHECK_EQ(PARSE(&sel, "--pid=7"), -1);
	CHECK_EQ(sel.pid, 7);
	CHECK_EQ(PARSE(&sel, "-a"), -1);
	CHECK(sel.all && !sel.name && !sel.pid);
	CHECK_EQ(PARSE(&sel, "--all"), -1);
	CHECK(sel.all);
	/* A path (with a '/') names a VM by its control socket. */
	CHECK_EQ(PARSE(&sel, "./vm1.sock"), -1);
	CHECK_STR(sel.name, "./vm1.sock");
	CHECK_EQ(PARSE(&sel, "-n", "/run/vm/ctl"), -1);
	CHECK_STR(sel.name, "/run/vm/ctl");
}

/* Exactly one way, each value well formed: usage errors otherwise. */
static void test_refused(void)
{
	struct vm_select sel;

	CHECK_EQ(PARSE(&sel, "--json"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "vm1", "-n", "vm2"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-n", "vm1", "-n", "vm2"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "vm1", "-a"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "12", "-a"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "12", "vm1"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "vm1", "vm2"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-n", "a b"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-n", ""), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, ".hidden"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-n"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "0"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "-3"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "12x"), EXIT_USAGE);
	CHECK_EQ(PARSE(&sel, "-p", "99999999999"), EXIT_USAGE);
}

/* A command without -a in its table refuses it as unknown. */
static void test_all_not_taken(void)
{
	static const struct option no_all[] = {
		VM_SELECT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct vm_select sel = { NULL };
	const struct cmd_options own = { no_all, take, &sel };
	char *argv[] = { "cmd", "-a", NULL };
	struct cmd_args args;

	CHECK_EQ(cmd_args_parse_opts(&cmd, 2, argv, 0, 1, &own, &args),
		 EXIT_USAGE);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_each_spelling),
		UNIT_TEST(test_refused),
		UNIT_TEST(test_all_not_taken),
	};

	return UNIT_RUN(tests);
}
