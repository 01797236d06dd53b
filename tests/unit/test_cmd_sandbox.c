/* thpvm sandbox's command line (cli/cmd_sandbox.c, run's options with a
 * command after them) and its throw-away directory (cli/sandbox_dir.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
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

static bool host_kernel_there(void)
{
	char path[PATH_MAX];
	struct utsname uts;

	if (uname(&uts) < 0)
		return true;
	snprintf(path, sizeof(path), "/boot/vmlinuz-%s", uts.release);
	return !access(path, F_OK);
}

/* Each is refused before anything is made, with status 2. */
static void test_usage_errors(void)
{
	CHECK_EQ(cmd_sandbox.main(1, ARGV(NULL)), EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none"), EXIT_USAGE);
	CHECK_EQ(MAIN("-k", "/boot/none", "--"), EXIT_USAGE);
	/* Without -k, the host's own kernel; refused where it is not
	 * there (where it is, this would boot it). */
	if (!host_kernel_there())
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

/* cmd_sandbox.main's status for argv, its stderr in err. */
static int main_err(int argc, char **argv, char *err, size_t len)
{
	int saved = dup(STDERR_FILENO);
	FILE *f = tmpfile();
	size_t n = 0;
	int rc;

	CHECK(saved >= 0 && f);
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	rc = cmd_sandbox.main(argc, argv);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(err, 1, len - 1, f);
	err[n] = '\0';
	fclose(f);
	return rc;
}

/* The sandbox's own shares count against a VM's 8: the host's /, its
 * directory and the current one, but for / (kept read-only, and said).
 * Refused before anything is made. */
static void test_share_limit(void)
{
#define SHARES "--9p", "/tmp,t1", "--9p", "/tmp,t2", "--9p", "/tmp,t3", \
	"--9p", "/tmp,t4", "--9p", "/tmp,t5", "--9p", "/tmp,t6"
	char *six[] = { "sandbox", "-k", "/boot/none", SHARES, "--", "true",
			NULL };
	char *seven[] = { "sandbox", "-k", "/boot/none", SHARES, "--9p",
			  "/tmp,t7", "--", "true", NULL };
#undef SHARES
	char parent[64], old[PATH_MAX], err[1024];

	runtime_dir(parent, sizeof(parent));
	CHECK(getcwd(old, sizeof(old)) != NULL);
	CHECK_EQ(chdir(parent), 0);
	CHECK_EQ(main_err(ARRAY_SIZE(six) - 1, six, err, sizeof(err)),
		 EXIT_USAGE);
	CHECK_STR(err, "thpvm: error: sandbox: at most 5 --9p shares, not 6: "
		  "the sandbox adds 3 of its own (the host's /, its "
		  "directory, the current directory) to a VM's 8\n");
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(main_err(ARRAY_SIZE(seven) - 1, seven, err, sizeof(err)),
		 EXIT_USAGE);
	CHECK_STR(err, "thpvm: warning: sandbox: the current directory is /, "
		  "which the guest gets read-only, not the whole host "
		  "read-write\n"
		  "thpvm: error: sandbox: at most 6 --9p shares, not 7: the "
		  "sandbox adds 2 of its own (the host's /, its directory) to "
		  "a VM's 8\n");
	CHECK_EQ(chdir(old), 0);
	/* Nothing made: the runtime directory is as it was, empty. */
	CHECK_EQ(rmdir(parent), 0);
}

static void test_dir(void)
{
	char *const argv[] = { "true", NULL };
	char parent[64], path[PATH_MAX + 16];
	struct sandbox_dir d;
	struct stat st;
	int status = -1;

	runtime_dir(parent, sizeof(parent));
	CHECK_EQ(sandbox_dir_make(&d, "/", NULL, argv), 0);
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
	CHECK_EQ(sandbox_dir_make(&d, "/", NULL, argv), -EINVAL);
	CHECK_EQ(d.path[0], '\0');
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_parse_args),
		UNIT_TEST(test_usage_errors),
		UNIT_TEST(test_help),
		UNIT_TEST(test_share_limit),
		UNIT_TEST(test_dir),
		UNIT_TEST(test_dir_unusable_parent),
	};

	return UNIT_RUN(tests);
}
