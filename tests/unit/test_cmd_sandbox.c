/* thpvm sandbox's command line (cli/cmd_sandbox.c, run's options with a
 * command after them) and its throw-away directory (cli/sandbox_dir.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/run_options.h"
#include "cli/sandbox_dir.h"
#include "cli/sandbox_script.h"
#include "unit.h"

#define ARGV(...) ((char *[]){ "sandbox", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "sandbox", __VA_ARGS__ }) / sizeof(char *)))
#define MAIN(...) cmd_sandbox.main(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_parse_args(void)
{
	char *with_dashes[] = { "sandbox", "-m", "64M", "--", "ls", "-l",
				NULL };
	char *without[] = { "sandbox", "-c", "1", "ls", "-l", NULL };
	struct run_options opts;
	int first = -1;

	CHECK_EQ(run_options_parse_args(6, with_dashes, &opts, &first),
		 RUN_PARSE_OK);
	CHECK_EQ(first, 4);
	CHECK_EQ(opts.machine.vm.ram_size, 64 << 20);
	/* Options end at the command: its own -l is left to it. */
	CHECK_EQ(run_options_parse_args(5, without, &opts, &first),
		 RUN_PARSE_OK);
	CHECK_EQ(first, 3);
}

/* Each is refused before anything is made, with status 2. */
static void test_usage_errors(void)
{
	CHECK_EQ(cmd_sandbox.main(1, ARGV(NULL)), EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none"), EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none", "--"), EXIT_USAGE);
	CHECK_EQ(MAIN("--", "true"), EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none", "--detach", "--", "true"),
		 EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none", "-d", "/", "--", "true"),
		 EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none", "--no-such-option", "--", "true"),
		 EXIT_USAGE);
}

/* -h among the options: sandbox's usage, not run's. */
static void test_help(void)
{
	int out = dup(STDOUT_FILENO);
	FILE *f = tmpfile();
	char text[64] = "";
	int rc;

	CHECK(out >= 0 && f);
	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	rc = MAIN("-m", "64M", "-h");
	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	close(out);
	rewind(f);
	CHECK(fgets(text, sizeof(text), f) != NULL);
	fclose(f);
	CHECK_EQ(rc, 0);
	CHECK(!strncmp(text, "usage: thpvm sandbox ", 21));
}

/* A fresh directory for $XDG_RUNTIME_DIR, in buf. */
static void runtime_dir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/thpvm-test-XXXXXX");
	CHECK(mkdtemp(buf) != NULL);
	setenv("XDG_RUNTIME_DIR", buf, 1);
}

static void file_put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_dir(void)
{
	char *const argv[] = { "true", NULL };
	char parent[64], path[PATH_MAX + 16];
	struct sandbox_dir d;
	struct stat st;
	int status = -1;

	runtime_dir(parent, sizeof(parent));
	CHECK_EQ(sandbox_dir_make(&d, "/", argv), 0);
	CHECK(!strncmp(d.path, parent, strlen(parent)));
	CHECK_EQ(stat(d.path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/" SANDBOX_SCRIPT, d.path);
	CHECK_EQ(access(path, X_OK), 0);
	/* No status: the guest never got there. */
	CHECK_EQ(sandbox_dir_status(&d, &status), -ENOENT);
	/* A FIFO the guest made there (Tmknod) is no status, and opening
	 * it must not wait for a writer. */
	snprintf(path, sizeof(path), "%s/" SANDBOX_STATUS, d.path);
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK_EQ(sandbox_dir_status(&d, &status), -ENOENT);
	CHECK_EQ(unlink(path), 0);
	file_put(d.path, SANDBOX_STATUS, "oops\n");
	CHECK_EQ(sandbox_dir_status(&d, &status), -EINVAL);
	file_put(d.path, SANDBOX_STATUS, "42\n");
	CHECK_EQ(sandbox_dir_status(&d, &status), 0);
	CHECK_EQ(status, 42);
	/* What the guest left goes too, its links unfollowed. */
	snprintf(path, sizeof(path), "%s/sub", d.path);
	CHECK_EQ(mkdir(path, 0700), 0);
	file_put(path, "file", "x");
	snprintf(path, sizeof(path), "%s/link", d.path);
	CHECK_EQ(symlink(parent, path), 0);
	snprintf(path, sizeof(path), "%s", d.path);
	sandbox_dir_remove(&d);
	CHECK_EQ(d.path[0], '\0');
	CHECK_EQ(access(path, F_OK), -1);
	CHECK_EQ(rmdir(parent), 0);
}

/* init= cannot carry a space: such a parent is refused, nothing made. */
static void test_dir_unusable_parent(void)
{
	char *const argv[] = { "true", NULL };
	struct sandbox_dir d;

	setenv("XDG_RUNTIME_DIR", "/tmp/a b", 1);
	CHECK_EQ(sandbox_dir_make(&d, "/", argv), -EINVAL);
	CHECK_EQ(d.path[0], '\0');
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_parse_args),
		UNIT_TEST(test_usage_errors),
		UNIT_TEST(test_help),
		UNIT_TEST(test_dir),
		UNIT_TEST(test_dir_unusable_parent),
	};

	return UNIT_RUN(tests);
}
