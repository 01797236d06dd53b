/* thpvm sandbox's guest script and status file (cli/sandbox_script.c):
 * the words the script runs are the user's, byte for byte, whatever the
 * shell would make of them. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The script sandbox_script_write makes for cwd, net and argv; freed by
 * the caller. */
static char *script_net(const char *cwd, const struct net_user_config *net,
			char *const argv[])
{
	char *script = NULL;
	size_t len;
	FILE *f = open_memstream(&script, &len);

	CHECK_EQ(sandbox_script_write(f, cwd, net, argv), 0);
	fclose(f);
	return script;
}

static char *script_for(const char *cwd, char *const argv[])
{
	return script_net(cwd, NULL, argv);
}

static void test_script(void)
{
	char *const argv[] = { "sh", "-c", "exit 3", "it's", NULL };
	char *script = script_for("/home/a b", argv);

	CHECK(!strncmp(script, "#!/bin/sh\n", 10));
	CHECK(strstr(script, "\ndir='/home/a b'\n"));
	CHECK(strstr(script, "\tmount -t 9p -o trans=virtio,version=9p2000.L "
			     SANDBOX_TAG " " SANDBOX_GUEST_DIR "; }"));
	/* The current directory at its own path, made where a tmpfs of the
	 * guest's hides it. */
	CHECK(strstr(script, "mkdir -p \"$dir\" &&\n\tmount -t 9p -o "
			     "trans=virtio,version=9p2000.L,msize=524288 "
			     SANDBOX_CWD_TAG " \"$dir\"; }"));
	CHECK(strstr(script, "\nelif ! cd \"$dir\"; then\n"));
	CHECK(strstr(script, "\nelse\n\t( exec 'sh' '-c' 'exit 3' "
			     "'it'\\''s' )\n\techo $? >" SANDBOX_GUEST_DIR "/"
			     SANDBOX_STATUS "\nfi\n"));
	/* The mounts, the cd, the command, its status, the power-off. */
	CHECK(strstr(script, SANDBOX_TAG) < strstr(script, SANDBOX_CWD_TAG));
	CHECK(strstr(script, SANDBOX_CWD_TAG) < strstr(script, "cd \"$dir\""));
	CHECK(strstr(script, "cd \"$dir\"") < strstr(script, "exec"));
	CHECK(strstr(script, "exec") < strstr(script, "echo $? >"));
	CHECK(strstr(script, "echo $? >") < strstr(script, "poweroff -f"));
	CHECK(strstr(script, "poweroff -f") <
	      strstr(script, "echo o >/proc/sysrq-trigger"));
	free(script);
}

/* No cwd (thpvm started in /): nothing mounted read-write over the
 * host's /, the command run there. */
static void test_script_root(void)
{
	char *const argv[] = { "true", NULL };
	char *script = script_for(NULL, argv);

	CHECK(strstr(script, "\ndir='/'\n"));
	CHECK(!strstr(script, SANDBOX_CWD_TAG));
	CHECK(!strstr(script, "mkdir -p"));
	CHECK(strstr(script, "; }; then\n\tunready \"cannot mount thpvm's "
			     "directory (9p tag " SANDBOX_TAG ") on "
			     SANDBOX_GUEST_DIR "\"\nelif ! cd \"$dir\"; "
			     "then\n"));
	free(script);
}

/* A user-mode network: eth0 at its first lease's address, routed
 * through its gateway, its DNS forwarder the name server; the command
 * runs only once that is done. None without one. */
static void test_script_net(void)
{
	char *const argv[] = { "true", NULL };
	struct net_user_config net;
	char *script;

	net_user_config_init(&net);
	CHECK(!net_user_parse_net("192.168.7.0/24", &net));
	script = script_net("/home/a", &net, argv);
	CHECK(strstr(script, "\tip addr add 192.168.7.15/24 dev eth0 &&\n"));
	CHECK(strstr(script, "\tip route add default via 192.168.7.2 || "
			     "return 1\n"));
	CHECK(strstr(script, "echo 'nameserver 192.168.7.3' >\"$resolv\""));
	CHECK(strstr(script, "mkdir -p \"${resolv%/*}\""));
	CHECK(strstr(script, "\nelif ! net_up; then\n\tunready \"cannot set up "
			     "eth0 on the user-mode network\"\n"));
	CHECK(strstr(script, SANDBOX_CWD_TAG) < strstr(script, "! net_up"));
	CHECK(strstr(script, "! net_up") < strstr(script, "cd \"$dir\""));
	free(script);
	script = script_for("/home/a", argv);
	CHECK(!strstr(script, "net_up"));
	free(script);
}

/* Both scripts are sh by sh's own reading (-n: read, never run). */
static void test_script_syntax(void)
{
	char *const argv[] = { "printf", "%s\n", "a'b", "$x", NULL };
	const char *const cwds[] = { "/home/a b", "/tmp/it's\n$(x)", NULL };
	char cmd[64];
	unsigned i;

	struct net_user_config net;

	net_user_config_init(&net);
	for (i = 0; i < 2 * ARRAY_SIZE(cwds); i++) {
		char *script = script_net(cwds[i / 2], i % 2 ? &net : NULL,
					  argv);
		char path[] = "/tmp/thpvm-script-XXXXXX";
		int fd = mkstemp(path);

		CHECK(fd >= 0);
		if (fd < 0)
			break;
		CHECK_EQ(write(fd, script, strlen(script)),
			 (ssize_t)strlen(script));
		close(fd);
		snprintf(cmd, sizeof(cmd), "sh -n %s", path);
		CHECK_EQ(system(cmd), 0);
		unlink(path);
		free(script);
	}
}

/* s with each from replaced by to; freed by the caller. */
static char *replaced(const char *s, const char *from, const char *to)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	const char *at;

	while ((at = strstr(s, from))) {
		fwrite(s, 1, at - s, f);
		fputs(to, f);
		s = at + strlen(from);
	}
	fputs(s, f);
	fclose(f);
	return buf;
}

/* What the script's unready line and its part from dir= to fi do, run
 * by /bin/sh with a scratch directory standing for SANDBOX_GUEST_DIR
 * (nothing of the host's is touched) and mount a function that fails
 * for the tag failing (NULL: for none): its output (stderr too) in out,
 * the status it left in *status (-1: none). */
static void run_part(const char *cwd, const char *failing, char *out,
		     size_t len, int *status)
{
	char *const argv[] = { "sh", "-c", "echo ran; exit 3", NULL };
	char top[] = "/tmp/thpvm-script-XXXXXX", guest_dir[64], path[96];
	char *script = script_for(cwd, argv), *part, *unready, *dir, *fi;
	FILE *f, *p;
	size_t n = 0;

	*status = -1;
	out[0] = '\0';
	CHECK(mkdtemp(top) != NULL);
	snprintf(guest_dir, sizeof(guest_dir), "%s/guest", top);
	unready = strstr(script, "\nunready() ");
	dir = strstr(script, "\ndir=");
	fi = strstr(script, "\nfi\n");
	CHECK(unready && dir && fi);
	if (!unready || !dir || !fi)
		goto out;
	*strchr(unready + 1, '\n') = '\0';
	fi[4] = '\0';
	part = replaced(dir, SANDBOX_GUEST_DIR, guest_dir);
	snprintf(path, sizeof(path), "%s/part", top);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		if (failing)
			fprintf(f, "mount() { case \" $* \" in *\" %s \"*) "
				"return 1;; esac; }", failing);
		else
			fputs("mount() { :; }", f);
		fprintf(f, "%s%s", unready, part);
		fclose(f);
	}
	free(part);
	snprintf(path, sizeof(path), "sh %s/part 2>&1", top);
	p = popen(path, "r");
	CHECK(p != NULL);
	if (p) {
		n = fread(out, 1, len - 1, p);
		pclose(p);
	}
	out[n] = '\0';
	snprintf(path, sizeof(path), "%s/" SANDBOX_STATUS, guest_dir);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", status) != 1)
			*status = -2;
		fclose(f);
		unlink(path);
	}
	rmdir(guest_dir);
	snprintf(path, sizeof(path), "%s/part", top);
	unlink(path);
out:
	rmdir(top);
	free(script);
}

/* The command runs only where every mount and the cd worked; where one
 * fails it is said and no status is left, which thpvm reports as the
 * command unfinished (125). */
static void test_script_failures(void)
{
	char cwd[] = "/tmp/thpvm-cwd-XXXXXX", out[512], want[256];
	int status;

	CHECK(mkdtemp(cwd) != NULL);
	run_part(cwd, NULL, out, sizeof(out), &status);
	CHECK_STR(out, "ran\n");
	CHECK_EQ(status, 3);
	run_part(NULL, NULL, out, sizeof(out), &status);
	CHECK_STR(out, "ran\n");
	CHECK_EQ(status, 3);

	run_part(cwd, SANDBOX_TAG, out, sizeof(out), &status);
	CHECK(strstr(out, "thpvm sandbox: cannot mount thpvm's directory (9p "
			  "tag " SANDBOX_TAG ") on /tmp/") == out);
	CHECK(strstr(out, "; the command is not run\n"));
	CHECK(!strstr(out, "ran\n"));
	CHECK_EQ(status, -1);

	run_part(cwd, SANDBOX_CWD_TAG, out, sizeof(out), &status);
	snprintf(want, sizeof(want), "thpvm sandbox: cannot mount the current "
		 "directory (9p tag " SANDBOX_CWD_TAG ") on %s; the command "
		 "is not run\n", cwd);
	CHECK_STR(out, want);
	CHECK_EQ(status, -1);
	CHECK_EQ(rmdir(cwd), 0);

	/* No mount point to be made: mkdir's own line, then the script's. */
	run_part("/dev/null/x", NULL, out, sizeof(out), &status);
	CHECK(strstr(out, "thpvm sandbox: cannot mount the current directory "
			  "(9p tag " SANDBOX_CWD_TAG ") on /dev/null/x; the "
			  "command is not run\n"));
	CHECK(!strstr(out, "ran\n"));
	CHECK_EQ(status, -1);
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
		UNIT_TEST(test_script_root),
		UNIT_TEST(test_script_net),
		UNIT_TEST(test_script_syntax),
		UNIT_TEST(test_script_failures),
		UNIT_TEST(test_status),
	};

	return UNIT_RUN(tests);
}
