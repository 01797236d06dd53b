/* The control socket's server (control/control_server.c): request lines
 * from the input, sent over a real connection in pieces split where the
 * input says, through the server thread's line buffering, JSON parsing,
 * member checks and dispatch; every reply must be one JSON object per
 * line. The first byte gives the number of pieces, the next ones their
 * lengths; the rest is what the client sends, after which it closes its
 * side and reads the replies to the end. Inputs stay far below
 * CONTROL_LINE_MAX (libFuzzer's -max_len), so each request gets exactly
 * one reply. The commands are stand-ins for the VM's (a VM needs KVM):
 * one echoes its arguments, one fails with a message, one with a bare
 * error number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control_server.h"
#include "fuzz.h"
#include "lib/util.h"

static struct control_server *srv;
static char reply[CONTROL_REPLY_MAX * 2];

static int handle_echo(void *opaque, json_t *request, json_t *reply)
{
	json_t *force = json_object_get(request, "force");
	json_t *v = json_object_get(request, "value");
	uint64_t bytes;
	int err = 0;

	if (json_get_u64(request, "bytes", &bytes))
		err = control_reply_add(reply, json_pack("{s:o}", "bytes",
						 json_from_u64(bytes)));
	if (!err && json_is_boolean(force))
		err = control_reply_add(reply, json_pack("{s:O}", "force",
							 force));
	if (!err && v)
		err = control_reply_add(reply, json_pack("{s:O}", "value", v));
	return err;
}

static int handle_fail(void *opaque, json_t *request, json_t *reply)
{
	return control_reply_error(reply, -EBUSY, "busy with %s",
				   json_string_value(json_object_get(request,
								     "cmd")));
}

static int handle_errno(void *opaque, json_t *request, json_t *reply)
{
	return -ENOSPC;
}

static void control_teardown(void)
{
	control_server_close(srv);
}

static void control_setup(void)
{
	static const char *const echo_args[] = { "value", "bytes", "force",
						 NULL };
	char path[64];

	snprintf(path, sizeof(path), "/tmp/thpvm-fuzz-control-%d.sock",
		 (int)getpid());
	if (control_server_open(path, &srv) ||
	    control_server_add_command(srv, "echo", echo_args, handle_echo,
				       NULL) ||
	    control_server_add_command(srv, "fail", NULL, handle_fail, NULL) ||
	    control_server_add_command(srv, "errno", NULL, handle_errno,
				       NULL) ||
	    control_server_start(srv)) {
		fprintf(stderr, "fuzz_control: cannot start a server at %s\n",
			path);
		abort();
	}
	atexit(control_teardown);
}

static int control_connect(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s",
		 control_server_path(srv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		abort();
	return fd;
}

/* Requests in text[0..len): one per newline, and one for a last line
 * without one (the input is shorter than the longest line). */
static unsigned requests_count(const uint8_t *text, size_t len)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += text[i] == '\n';
	return n + (len && text[len - 1] != '\n');
}

static void control_send(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			abort();
		buf += n;
		len -= n;
	}
}

/* Each line of the replies must be a JSON object saying "ok", one for
 * each request. */
static void replies_check(const char *buf, size_t len, unsigned requests)
{
	unsigned n = 0;

	for (; len; n++) {
		const char *nl = memchr(buf, '\n', len);
		struct json_error err;
		json_t *v;

		if (!nl || json_parse(buf, nl - buf, &v, &err))
			abort();
		if (!json_is_boolean(json_object_get(v, "ok")))
			abort();
		json_decref(v);
		len -= nl + 1 - buf;
		buf = nl + 1;
	}
	if (n != requests)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	unsigned pieces = fuzz_u8(&in) % 8, requests, i;
	size_t lens[8], got = 0;
	ssize_t n;
	int fd;

	for (i = 0; i < pieces; i++)
		lens[i] = fuzz_u8(&in);
	if (!srv)
		control_setup();
	requests = requests_count(in.data, in.len);
	fd = control_connect();
	for (i = 0; i <= pieces && in.len; i++) {
		size_t len = i < pieces ? MIN(lens[i], in.len) : in.len;

		control_send(fd, in.data, len);
		in.data += len;
		in.len -= len;
	}
	shutdown(fd, SHUT_WR);
	/* libFuzzer's timeout alarm interrupts system calls. */
	while ((n = recv(fd, reply + got, sizeof(reply) - got, 0)) > 0 ||
	       (n < 0 && errno == EINTR))
		got += n > 0 ? n : 0;
	if (n < 0)
		abort();
	close(fd);
	replies_check(reply, got, requests);
	return 0;
}
