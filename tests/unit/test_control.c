/* Tests for the control socket: paths and names, the server with fake
 * handlers answering real clients, and hostile clients. Everything runs
 * in a temporary XDG_RUNTIME_DIR. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control/control_client.h"
#include "control/control_path.h"
#include "control/control_socket.h"
#include "control/control_server.h"
#include "lib/util.h"
#include "unit.h"

static char tmp_root[] = "/tmp/thpvm-test-XXXXXX";
static char runtime_dir[64];

static void path_join(char *buf, size_t len, const char *a, const char *b)
{
	snprintf(buf, len, "%s/%s", a, b);
}

static void use_runtime_dir(void)
{
	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void socket_path(const char *name, char *buf)
{
	CHECK_EQ(control_path_socket(name, buf, CONTROL_PATH_MAX), 0);
}

/* control_server_open() at <dir>/<name>.sock, as thpvm run does. */
static int open_named(const char *name, struct control_server **srv)
{
	char dir[CONTROL_PATH_MAX], path[CONTROL_PATH_MAX];

	CHECK_EQ(control_path_dir_create(dir, sizeof(dir)), 0);
	socket_path(name, path);
	return control_server_open(path, srv);
}

/* Leaves a socket file that nobody listens on, as a crashed VM would. */
static void make_stale_socket(const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[CONTROL_PATH_MAX];
	int fd;

	CHECK_EQ(control_path_dir_create(dir, sizeof(dir)), 0);
	socket_path(name, addr.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
	CHECK(file_exists(addr.sun_path));
}

/* --- fake handlers --- */

static atomic_int stop_requested;

static int handle_echo(void *opaque, json_t *request, json_t *reply)
{
	const char *arg = json_string_value(json_object_get(request, "arg"));

	return control_reply_add(reply, json_pack("{s:s, s:s}",
						  "arg", arg ? arg : "",
						  "opaque", opaque));
}

static int handle_fail(void *opaque, json_t *request, json_t *reply)
{
	control_reply_add(reply, json_pack("{s:s}", "dropped", "this field"));
	return control_reply_error(reply, -EBUSY, "busy now (%d)", 7);
}

static int handle_errno(void *opaque, json_t *request, json_t *reply)
{
	return -ENOSPC;
}

static int handle_big(void *opaque, json_t *request, json_t *reply)
{
	size_t len = (size_t)(uintptr_t)opaque;
	char *s = malloc(len + 1);
	int err;

	if (!s)
		return -ENOMEM;
	memset(s, 'x', len);
	s[len] = '\0';
	err = control_reply_add(reply, json_pack("{s:s}", "data", s));
	free(s);
	return err;
}

/* A reply jansson cannot write: a string that is not UTF-8, which only
 * its *_nocheck calls let in. */
static int handle_misuse(void *opaque, json_t *request, json_t *reply)
{
	return control_reply_add(reply, json_pack("{s:o}", "x",
				 json_stringn_nocheck("\xff", 1)));
}

/* Figures and strings as replies have always written them. */
static int handle_figures(void *opaque, json_t *request, json_t *reply)
{
	return control_reply_add(reply, json_pack("{s:o, s:o, s:o, s:o, s:o}",
		"big", json_from_u64(UINT64_MAX),
		"pct", json_from_double(99.6),
		"whole", json_from_double(100),
		"age", json_from_double(51.926010853),
		"text", json_string_lossy("\x1b[1m\xff\"")));
}

static int handle_stop(void *opaque, json_t *request, json_t *reply)
{
	atomic_store(&stop_requested, 1);
	return 0;
}

static const char *const echo_args[] = { "arg", NULL };

static struct control_server *server_start(const char *name)
{
	struct control_server *srv = NULL;

	use_runtime_dir();
	CHECK_EQ(open_named(name, &srv), 0);
	if (!srv)
		return NULL;
	CHECK_EQ(control_server_add_command(srv, "echo", echo_args,
					    handle_echo, "opaque!"), 0);
	CHECK_EQ(control_server_add_command(srv, "fail", NULL, handle_fail,
					    NULL), 0);
	CHECK_EQ(control_server_add_command(srv, "errno", NULL, handle_errno,
					    NULL), 0);
	CHECK_EQ(control_server_add_command(srv, "big", NULL, handle_big,
					    (void *)(uintptr_t)(200 << 10)),
		 0);
	CHECK_EQ(control_server_add_command(srv, "huge", NULL, handle_big,
					    (void *)(uintptr_t)(2 << 20)), 0);
	CHECK_EQ(control_server_add_command(srv, "misuse", NULL, handle_misuse,
					    NULL), 0);
	CHECK_EQ(control_server_add_command(srv, "figures", NULL,
					    handle_figures, NULL), 0);
	CHECK_EQ(control_server_add_command(srv, "stop", NULL, handle_stop,
					    NULL), 0);
	CHECK_EQ(control_server_start(srv), 0);
	return srv;
}

/* --- a raw client, for what the real one never sends --- */

static int raw_connect(const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	socket_path(name, addr.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		CHECK(n > 0);
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* One reply line without its newline, NUL-terminated in a static
 * buffer; NULL on timeout or EOF. */
static const char *raw_line(int fd)
{
	static char line[CONTROL_REPLY_MAX];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t len = 0;

	while (len < sizeof(line)) {
		ssize_t n;

		if (poll(&p, 1, 5000) <= 0)
			return NULL;
		n = recv(fd, line + len, 1, 0);
		if (n <= 0)
			return NULL;
		if (line[len] == '\n') {
			line[len] = '\0';
			return line;
		}
		len++;
	}
	return NULL;
}

/* One reply line, parsed; NULL on timeout or EOF. */
static json_t *raw_reply(int fd)
{
	const char *line = raw_line(fd);
	struct json_error err;
	json_t *v = NULL;

	if (line && json_parse(line, strlen(line), &v, &err)) {
		printf("# reply is not JSON: %s\n", line);
		return NULL;
	}
	return v;
}

/* Checks that the next reply is ok:false with an error containing want. */
static void expect_error(int fd, const char *want)
{
	json_t *v = raw_reply(fd);
	const char *error = json_string_value(json_object_get(v, "error"));

	CHECK(v != NULL);
	CHECK(json_is_false(json_object_get(v, "ok")));
	CHECK(error && strstr(error, want));
	if (error && !strstr(error, want))
		printf("# error \"%s\" lacks \"%s\"\n", error, want);
	json_decref(v);
}

static void expect_echo(int fd, const char *arg)
{
	json_t *v = raw_reply(fd);

	CHECK(v != NULL);
	CHECK(json_is_true(json_object_get(v, "ok")));
	CHECK_STR(json_string_value(json_object_get(v, "arg")), arg);
	json_decref(v);
}

static void expect_served(const char *name)
{
	struct control_result res;

	CHECK_EQ(control_client_request(name, "{\"cmd\":\"echo\",\"arg\":\"hi\"}",
					0, &res), 0);
	CHECK_STR(json_string_value(json_object_get(res.reply, "arg")), "hi");
	control_result_free(&res);
}

static void expect_refused(const char *name, const char *request,
			   const char *error)
{
	struct control_result res;

	CHECK_EQ(control_client_request(name, request, 0, &res), -EREMOTEIO);
	CHECK_STR(res.error, error);
	CHECK(res.reply == NULL);
	control_result_free(&res);
}

/* --- tests --- */

static void test_names(void)
{
	static const char *const good[] = {
		"a", "vm1", "my-vm", "my_vm", "vm.2", "A.b-C_d", "9",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	static const char *const bad[] = {
		"", ".", "..", ".hidden", "-opt", "a/b", "a b", "a\nb", "caf\xc3\xa9",
		"a:b", "*",
		"01234567890123456789012345678901234567890123456789012345678901234",
	};
	unsigned i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(control_path_name_valid(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!control_path_name_valid(bad[i]));
}

static void test_dir(void)
{
	char buf[CONTROL_PATH_MAX], want[CONTROL_PATH_MAX], home[64];
	char link[CONTROL_PATH_MAX];
	struct stat st;

	setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	CHECK_EQ(control_path_dir(buf, sizeof(buf)), 0);
	path_join(want, sizeof(want), runtime_dir, "thpvm");
	CHECK_STR(buf, want);

	/* Created 0700, and reset to 0700 when found looser. */
	CHECK_EQ(control_path_dir_create(buf, sizeof(buf)), 0);
	CHECK(stat(buf, &st) == 0 && S_ISDIR(st.st_mode) &&
	      (st.st_mode & 07777) == 0700);
	CHECK_EQ(chmod(buf, 0755), 0);
	CHECK_EQ(control_path_dir_create(buf, sizeof(buf)), 0);
	CHECK(stat(buf, &st) == 0 && (st.st_mode & 07777) == 0700);

	CHECK_EQ(control_path_socket("vm1", buf, sizeof(buf)), 0);
	path_join(want, sizeof(want), runtime_dir, "thpvm/vm1.sock");
	CHECK_STR(buf, want);
	CHECK_EQ(control_path_socket("../x", buf, sizeof(buf)), -EINVAL);

	/* A relative XDG_RUNTIME_DIR is ignored for $HOME/.thpvm. */
	path_join(home, sizeof(home), tmp_root, "home");
	CHECK_EQ(mkdir(home, 0700), 0);
	setenv("HOME", home, 1);
	setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
	CHECK_EQ(control_path_dir(buf, sizeof(buf)), 0);
	path_join(want, sizeof(want), home, ".thpvm");
	CHECK_STR(buf, want);
	unsetenv("XDG_RUNTIME_DIR");
	CHECK_EQ(control_path_dir(buf, sizeof(buf)), 0);
	CHECK_STR(buf, want);

	/* A symlink in place of the directory is refused. */
	path_join(link, sizeof(link), tmp_root, "elsewhere");
	CHECK_EQ(mkdir(link, 0700), 0);
	CHECK_EQ(symlink(link, want), 0);
	CHECK_EQ(control_path_dir_create(buf, sizeof(buf)), -ENOTDIR);
	CHECK_EQ(unlink(want), 0);
	/* So is a file. */
	CHECK_EQ(close(open(want, O_CREAT | O_WRONLY, 0600)), 0);
	CHECK_EQ(control_path_dir_create(buf, sizeof(buf)), -ENOTDIR);
	CHECK_EQ(unlink(want), 0);

	/* Socket paths must fit sockaddr_un. */
	{
		char deep[200];

		memset(deep, 'd', sizeof(deep) - 1);
		deep[0] = '/';
		deep[sizeof(deep) - 1] = '\0';
		setenv("XDG_RUNTIME_DIR", deep, 1);
		CHECK_EQ(control_path_socket("vm1", buf, sizeof(buf)),
			 -ENAMETOOLONG);
	}
	use_runtime_dir();
}

static void test_socket_permissions(void)
{
	struct control_server *srv = NULL;
	char path[CONTROL_PATH_MAX], dir[CONTROL_PATH_MAX];
	struct stat st;

	use_runtime_dir();
	CHECK_EQ(open_named("perm", &srv), 0);
	if (!srv)
		return;
	socket_path("perm", path);
	CHECK_STR(control_server_path(srv), path);
	CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_EQ(control_path_dir(dir, sizeof(dir)), 0);
	CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0700);
	/* Closing a server that never started removes its socket too. */
	control_server_close(srv);
	CHECK(!file_exists(path));
	control_server_close(NULL);
}

static void test_duplicate_name(void)
{
	struct control_server *srv, *dup = NULL;
	char path[CONTROL_PATH_MAX];

	srv = server_start("dup");
	if (!srv)
		return;
	CHECK_EQ(open_named("dup", &dup), -EADDRINUSE);
	CHECK(dup == NULL);
	expect_served("dup");	/* the first one is unharmed */
	CHECK_EQ(control_client_remove_stale("dup"), -EADDRINUSE);
	socket_path("dup", path);
	CHECK(file_exists(path));
	control_server_close(srv);
	CHECK(!file_exists(path));
}

static void test_stale_socket(void)
{
	struct control_server *srv = NULL;
	struct control_result res;
	char path[CONTROL_PATH_MAX];

	use_runtime_dir();
	socket_path("stale", path);

	/* A client reports no VM; list's cleanup removes the file. */
	make_stale_socket("stale");
	CHECK_EQ(control_client_command("stale", "echo", 0, &res),
		 -ECONNREFUSED);
	CHECK(strstr(res.error, "no VM named \"stale\"") != NULL);
	CHECK(res.reply == NULL);
	control_result_free(&res);
	CHECK_EQ(control_client_remove_stale("stale"), 0);
	CHECK(!file_exists(path));
	CHECK_EQ(control_client_remove_stale("stale"), 0);

	/* A new VM of that name replaces the stale socket. */
	make_stale_socket("stale");
	CHECK_EQ(open_named("stale", &srv), 0);
	control_server_close(srv);

	/* Something that is not a socket is never removed. */
	CHECK_EQ(close(open(path, O_CREAT | O_WRONLY, 0600)), 0);
	srv = NULL;
	CHECK_EQ(open_named("stale", &srv), -EEXIST);
	CHECK_EQ(control_client_remove_stale("stale"), -EEXIST);
	CHECK(file_exists(path));
	CHECK_EQ(unlink(path), 0);

	/* No socket at all. */
	CHECK_EQ(control_client_command("nobody", "echo", 0, &res), -ENOENT);
	CHECK_STR(res.error, "no VM named \"nobody\" (see thpvm list)");
	control_result_free(&res);
}

/* A listener that never accepts: connections fill its backlog, and the
 * next connect gives up after its timeout instead of waiting for ever;
 * the socket it returns has no send timeout left. */
static void test_connect_timeout(void)
{
	char path[CONTROL_PATH_MAX];
	int listen_fd, fds[8], n = 0, fd, i;
	struct timespec start;
	double ms;
	struct timeval tv;
	socklen_t len = sizeof(tv);

	use_runtime_dir();
	socket_path("full", path);
	listen_fd = control_socket_listen(path, 0);
	CHECK(listen_fd >= 0);
	if (listen_fd < 0)
		return;
	fd = control_socket_connect(path, 100);
	CHECK(fd >= 0);
	CHECK_EQ(getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len), 0);
	CHECK(tv.tv_sec == 0 && tv.tv_usec == 0);
	fds[n++] = fd;
	do {
		clock_gettime(CLOCK_MONOTONIC, &start);
		fd = control_socket_connect(path, 100);
		if (fd >= 0)
			fds[n++] = fd;
	} while (fd >= 0 && n < (int)ARRAY_SIZE(fds));
	CHECK_EQ(fd, -ETIMEDOUT);
	/* The connect that failed waited its 100 ms, and not for ever (the
	 * upper bound is far above what a loaded machine adds). */
	ms = time_ms_since(&start);
	CHECK(ms >= 90 && ms < 10000);
	CHECK_EQ(control_socket_connect("/nonexistent/thpvm.sock", 100),
		 -ENOENT);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(listen_fd);
	unlink(path);
}

static void test_requests(void)
{
	struct control_server *srv = server_start("req");
	struct control_result res;

	if (!srv)
		return;
	CHECK_EQ(control_server_add_command(srv, "late", NULL, handle_echo,
					    NULL), -EBUSY);

	CHECK_EQ(control_client_request("req",
		"{\"cmd\":\"echo\",\"arg\":\"\\u00e9\\n\\\"\"}", 0, &res), 0);
	CHECK_STR(json_string_value(json_object_get(res.reply, "arg")),
		  "\xc3\xa9\n\"");
	CHECK_STR(json_string_value(json_object_get(res.reply, "opaque")),
		  "opaque!");
	control_result_free(&res);

	CHECK_EQ(control_client_command("req", "fail", 0, &res), -EREMOTEIO);
	CHECK_STR(res.error, "busy now (7)");
	CHECK(res.reply == NULL);
	control_result_free(&res);

	CHECK_EQ(control_client_command("req", "errno", 0, &res), -EREMOTEIO);
	CHECK_STR(res.error, strerror(ENOSPC));
	control_result_free(&res);

	CHECK_EQ(control_client_command("req", "nope", 0, &res), -EREMOTEIO);
	CHECK_STR(res.error, "unknown command \"nope\"");
	control_result_free(&res);

	/* Only "cmd" and the command's arguments, each once. */
	expect_refused("req", "{\"cmd\":\"echo\",\"agr\":\"x\"}",
		       "\"echo\" takes no member \"agr\"");
	expect_refused("req", "{\"cmd\":\"errno\",\"arg\":\"x\"}",
		       "\"errno\" takes no member \"arg\"");
	expect_refused("req", "{\"cmd\":\"echo\",\"arg\":\"x\",\"arg\":\"y\"}",
		       "invalid JSON at byte 29: member \"arg\" given twice");
	expect_refused("req", "{\"cmd\":\"echo\",\"cmd\":\"echo\"}",
		       "invalid JSON at byte 19: member \"cmd\" given twice");

	CHECK_EQ(control_client_command("req", "huge", 0, &res), -EREMOTEIO);
	CHECK(strstr(res.error, "too large") != NULL);
	control_result_free(&res);

	CHECK_EQ(control_client_command("req", "misuse", 0, &res), -EREMOTEIO);
	CHECK(strstr(res.error, "cannot send the reply") != NULL);
	control_result_free(&res);

	CHECK_EQ(control_client_command("req", "big", 0, &res), 0);
	control_result_free(&res);

	CHECK_EQ(control_client_command(".bad", "echo", 0, &res), -EINVAL);
	control_result_free(&res);
	/* With a '/' it is a socket path, here one with nothing there. */
	CHECK_EQ(control_client_command("bad/name", "echo", 0, &res), -ENOENT);
	CHECK_STR(res.error, "no VM listens on bad/name");
	control_result_free(&res);
	control_server_close(srv);
}

static void test_registration(void)
{
	/* one more than CONTROL_MAX_ARGS, then exactly that many */
	static const char *const many_args[] = {
		"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", NULL
	};
	struct control_server *srv = NULL;
	char long_name[CONTROL_COMMAND_NAME_MAX + 2];
	char name[16];
	unsigned i;

	use_runtime_dir();
	CHECK_EQ(open_named("reg", &srv), 0);
	if (!srv)
		return;
	CHECK_EQ(control_server_add_command(srv, "", NULL, handle_echo, NULL),
		 -EINVAL);
	memset(long_name, 'c', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK_EQ(control_server_add_command(srv, long_name, NULL, handle_echo,
					    NULL), -EINVAL);
	CHECK_EQ(control_server_add_command(srv, "args", many_args,
					    handle_echo, NULL), -EINVAL);
	CHECK_EQ(control_server_add_command(srv, "args", many_args + 1,
					    handle_echo, NULL), 0);
	CHECK_EQ(control_server_add_command(srv, "a", NULL, handle_echo, NULL),
		 0);
	CHECK_EQ(control_server_add_command(srv, "a", NULL, handle_echo, NULL),
		 -EEXIST);
	for (i = 2; i < CONTROL_MAX_COMMANDS; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		CHECK_EQ(control_server_add_command(srv, name, NULL, handle_echo,
						    NULL), 0);
	}
	CHECK_EQ(control_server_add_command(srv, "full", NULL, handle_echo,
					    NULL), -ENOSPC);
	control_server_close(srv);
}

static void test_garbage(void)
{
	static const char lines[] =
		"not json\n"
		"[1]\n"
		"{}\n"
		"{\"cmd\":5}\n"
		"\x01\x02\xff\xfe\x80\n"
		"\n"
		"{\"cmd\":\"echo\"} trailing\n"
		"{\"cmd\":\"echo\",\"arg\":\"a\"}\r\n"
		"{\"cmd\":\"\\u0000\"}\n"
		"{\"cmd\":\"echo\",\"arg\":\"b\"}\n";
	static const char nul_line[] = "{\"cmd\":\0\"echo\"}\n";
	struct control_server *srv = server_start("junk");
	size_t big = CONTROL_LINE_MAX + 5000;
	char *buf;
	int fd;

	if (!srv)
		return;
	fd = raw_connect("junk");
	raw_send(fd, lines, sizeof(lines) - 1);
	expect_error(fd, "invalid JSON at byte 3: invalid token");
	expect_error(fd, "must be a JSON object");
	expect_error(fd, "needs \"cmd\"");
	expect_error(fd, "needs \"cmd\"");
	expect_error(fd, "invalid JSON at byte 1: invalid token");
	expect_error(fd, "invalid JSON at byte 0: unexpected token");
	expect_error(fd, "end of file expected near 'trailing'");
	expect_echo(fd, "a");
	expect_error(fd, "\\u0000 in a string is not supported");
	expect_echo(fd, "b");
	raw_send(fd, nul_line, sizeof(nul_line) - 1);
	expect_error(fd, "invalid JSON at byte 8");

	/* Over-long lines get one error each, and the next line is served. */
	buf = malloc(big);
	CHECK(buf != NULL);
	if (!buf)
		goto out;
	memset(buf, 'a', big);
	raw_send(fd, buf, big);
	raw_send(fd, "\n{\"cmd\":\"echo\",\"arg\":\"c\"}\n", 26);
	expect_error(fd, "longer than 65536 bytes");
	expect_echo(fd, "c");
	memset(buf, '\xff', big);
	raw_send(fd, buf, big);
	raw_send(fd, buf, big);
	raw_send(fd, "\n{\"cmd\":\"echo\",\"arg\":\"d\"}\n", 26);
	expect_error(fd, "longer than");
	expect_echo(fd, "d");

	/* A line of exactly CONTROL_LINE_MAX bytes is fine. */
	memset(buf, ' ', CONTROL_LINE_MAX);
	memcpy(buf, "{\"cmd\":\"echo\",\"arg\":\"e\"}", 24);
	buf[CONTROL_LINE_MAX] = '\n';
	raw_send(fd, buf, CONTROL_LINE_MAX + 1);
	expect_echo(fd, "e");
	buf[CONTROL_LINE_MAX] = ' ';
	buf[CONTROL_LINE_MAX + 1] = '\n';
	raw_send(fd, buf, CONTROL_LINE_MAX + 2);
	expect_error(fd, "longer than");
	free(buf);
	close(fd);

	expect_served("junk");
out:
	control_server_close(srv);
}

/* Replies byte for byte: clients and scripts read these lines. */
static void test_reply_bytes(void)
{
	static const struct {
		const char *request;
		const char *reply;
	} cases[] = {
		/* A byte that is not UTF-8 comes out as U+FFFD itself. */
		{ "{\"cmd\":\"figures\"}",
		  "{\"ok\":true,\"big\":1.84467440737096e19,\"pct\":99.6,"
		  "\"whole\":100.0,\"age\":51.926010853,"
		  "\"text\":\"\\u001B[1m\xef\xbf\xbd\\\"\"}" },
		{ "{\"cmd\":\"echo\",\"arg\":\"\\u00e9\\t\"}",
		  "{\"ok\":true,\"arg\":\"\xc3\xa9\\t\","
		  "\"opaque\":\"opaque!\"}" },
		{ "{\"cmd\":\"nope\\u001F\"}",
		  "{\"ok\":false,\"error\":\"unknown command "
		  "\\\"nope\\u001F\\\"\"}" },
		{ "{\"cmd\":\"echo\",\"x\":1}",
		  "{\"ok\":false,\"error\":\"\\\"echo\\\" takes no member "
		  "\\\"x\\\"\"}" },
		{ "{\"cmd\":\"fail\"}",
		  "{\"ok\":false,\"error\":\"busy now (7)\"}" },
		{ "[1]",
		  "{\"ok\":false,\"error\":"
		  "\"a request must be a JSON object\"}" },
	};
	struct control_server *srv = server_start("bytes");
	unsigned i;
	int fd;

	if (!srv)
		return;
	fd = raw_connect("bytes");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		raw_send(fd, cases[i].request, strlen(cases[i].request));
		raw_send(fd, "\n", 1);
		CHECK_STR(raw_line(fd), cases[i].reply);
	}
	close(fd);
	control_server_close(srv);
}

static void test_clients(void)
{
	struct control_server *srv = server_start("busy");
	int idle[CONTROL_MAX_CLIENTS], fd;
	unsigned i;

	if (!srv)
		return;
	/* Silent clients do not hold up the others... */
	for (i = 0; i + 1 < CONTROL_MAX_CLIENTS; i++)
		idle[i] = raw_connect("busy");
	expect_served("busy");
	/* ...but their number is limited. */
	idle[i] = raw_connect("busy");
	fd = raw_connect("busy");
	expect_error(fd, "too many clients");
	close(fd);
	close(idle[0]);
	/* Served again once the server has seen the slot go free. */
	for (i = 0; i < 100; i++) {
		struct control_result res;
		int err = control_client_command("busy", "echo", 0, &res);

		control_result_free(&res);
		if (!err)
			break;
		usleep(20 * 1000);
	}
	CHECK(i < 100);

	/* A request without newline, then end of input: still answered. */
	fd = raw_connect("busy");
	raw_send(fd, "{\"cmd\":\"echo\",\"arg\":\"eof\"}", 26);
	shutdown(fd, SHUT_WR);
	expect_echo(fd, "eof");
	CHECK(raw_reply(fd) == NULL);	/* and then the server hangs up */
	close(fd);

	for (i = 1; i < CONTROL_MAX_CLIENTS; i++)
		close(idle[i]);
	control_server_close(srv);
}

/* Clients that vanish mid-request or mid-reply, or never read. */
static void test_vanishing_clients(void)
{
	struct control_server *srv = server_start("gone");
	unsigned i, j;
	int fd;

	if (!srv)
		return;
	for (i = 0; i < 20; i++) {
		fd = raw_connect("gone");
		for (j = 0; j < 10; j++)
			raw_send(fd, "{\"cmd\":\"big\"}\n", 14);
		if (i % 2)
			raw_send(fd, "{\"cmd\":\"ec", 10);
		close(fd);
	}
	/* One that keeps asking but never reads its replies. */
	fd = raw_connect("gone");
	for (j = 0; j < 50; j++)
		raw_send(fd, "{\"cmd\":\"echo\"}\n", 15);
	expect_served("gone");
	close(fd);
	expect_served("gone");
	control_server_close(srv);
}

struct stopper {
	struct control_server *srv;
	pthread_t thread;
};

/* Plays the VM's main loop: closes the server once "stop" came in. */
static void *stopper_thread(void *arg)
{
	struct stopper *s = arg;

	while (!atomic_load(&stop_requested))
		usleep(1000);
	usleep(50 * 1000);
	control_server_close(s->srv);
	return NULL;
}

static void test_wait_close(void)
{
	struct stopper s = { .srv = server_start("stopme") };
	struct control_result res;
	char path[CONTROL_PATH_MAX];

	if (!s.srv)
		return;
	socket_path("stopme", path);
	atomic_store(&stop_requested, 0);
	CHECK_EQ(pthread_create(&s.thread, NULL, stopper_thread, &s), 0);
	CHECK_EQ(control_client_command("stopme", "stop", CONTROL_WAIT_CLOSE,
					&res), 0);
	control_result_free(&res);
	/* The socket is gone by the time the client returns. */
	CHECK(!file_exists(path));
	pthread_join(s.thread, NULL);
}

static void test_unlink_path(void)
{
	struct control_server *srv = server_start("sig");
	char path[CONTROL_PATH_MAX];

	if (!srv)
		return;
	socket_path("sig", path);
	control_server_unlink_path(srv);
	CHECK(!file_exists(path));
	control_server_close(srv);
}

/* A socket at a path of its own (thpvm run --control-socket), which
 * clients name by that path; the usual directory is not involved. */
static void test_socket_at_path(void)
{
	struct control_server *srv = NULL, *dup = NULL;
	char path[CONTROL_PATH_MAX], buf[CONTROL_PATH_MAX], cwd[512];
	struct control_result res;
	char long_path[CONTROL_PATH_MAX + 1];

	unsetenv("XDG_RUNTIME_DIR");
	unsetenv("HOME");
	path_join(path, sizeof(path), tmp_root, "own.sock");
	CHECK(control_path_is_path(path));
	CHECK(!control_path_is_path("own.sock"));
	CHECK_EQ(control_path_resolve(path, buf, sizeof(buf)), 0);
	CHECK_STR(buf, path);
	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	CHECK_EQ(control_path_resolve(long_path, buf, sizeof(buf)),
		 -ENAMETOOLONG);
	CHECK_EQ(control_server_open(long_path, &srv), -ENAMETOOLONG);

	CHECK_EQ(control_server_open(path, &srv), 0);
	if (!srv)
		return;
	CHECK_EQ(control_server_add_command(srv, "echo", echo_args,
					    handle_echo, "opaque!"), 0);
	CHECK_EQ(control_server_start(srv), 0);
	expect_served(path);
	CHECK_EQ(control_server_open(path, &dup), -EADDRINUSE);
	/* A relative path, in the directory it is relative to. */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_EQ(chdir(tmp_root), 0);
	expect_served("./own.sock");
	CHECK_EQ(control_server_open("own.sock", &dup), -EADDRINUSE);
	CHECK_EQ(chdir(cwd), 0);
	control_server_close(srv);
	CHECK(!file_exists(path));
	CHECK_EQ(control_client_command(path, "echo", 0, &res), -ENOENT);
	CHECK(strstr(res.error, "no VM listens on ") != NULL);
	control_result_free(&res);
	/* A directory that does not exist is not made. */
	path_join(path, sizeof(path), tmp_root, "none/own.sock");
	CHECK_EQ(control_server_open(path, &srv), -ENOENT);
	use_runtime_dir();
}

static void cleanup(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp_root);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_names),
		UNIT_TEST(test_dir),
		UNIT_TEST(test_socket_permissions),
		UNIT_TEST(test_duplicate_name),
		UNIT_TEST(test_stale_socket),
		UNIT_TEST(test_connect_timeout),
		UNIT_TEST(test_requests),
		UNIT_TEST(test_registration),
		UNIT_TEST(test_garbage),
		UNIT_TEST(test_reply_bytes),
		UNIT_TEST(test_clients),
		UNIT_TEST(test_vanishing_clients),
		UNIT_TEST(test_wait_close),
		UNIT_TEST(test_unlink_path),
		UNIT_TEST(test_socket_at_path),
	};
	int rc;

	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	path_join(runtime_dir, sizeof(runtime_dir), tmp_root, "run");
	if (mkdir(runtime_dir, 0700) < 0) {
		perror("mkdir");
		return 1;
	}
	rc = UNIT_RUN(tests);
	cleanup();
	return rc;
}
