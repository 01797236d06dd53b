/* The control protocol as its server speaks it to one client
 * (control/control_conn.c and control_commands.c), in-process: the bytes
 * a client sends, in pieces split where the input says, through line
 * buffering, JSON parsing, member checks and dispatch; every reply must
 * be one JSON object per line, one for each request. The first byte
 * gives the number of pieces, the next ones their lengths; the rest is
 * what the client sends, after which its input ends. Inputs stay far
 * below CONTROL_LINE_MAX (libFuzzer's -max_len), so each request gets
 * exactly one reply. The commands are stand-ins for the VM's (a VM needs
 * KVM): one echoes its arguments, one fails with a message, one with a
 * bare error number. What needs a real socket (partial sends, clients
 * that vanish or never read, too many of them) is unit-control's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control_conn.h"
#include "fuzz.h"
#include "lib/util.h"

static struct control_commands commands;
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

static void commands_setup(void)
{
	static const char *const echo_args[] = { "value", "bytes", "force",
						 NULL };

	if (control_commands_add(&commands, "echo", echo_args, handle_echo,
				 NULL) ||
	    control_commands_add(&commands, "fail", NULL, handle_fail, NULL) ||
	    control_commands_add(&commands, "errno", NULL, handle_errno,
				 NULL))
		abort();
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

/* What the server does after each receive: answers every line it can,
 * each reply taken whole by the client, into reply[*got...]. */
static void answer_all(struct control_conn *c, size_t *got)
{
	int r;

	while ((r = control_conn_answer_next(c, &commands)) == 1) {
		size_t len;
		const char *out = control_conn_out(c, &len);

		if (*got + len > sizeof(reply))
			abort();
		memcpy(reply + *got, out, len);
		*got += len;
		control_conn_sent(c, len);
	}
	if (r < 0)
		abort();
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
	struct control_conn conn;
	size_t lens[8], got = 0;

	for (i = 0; i < pieces; i++)
		lens[i] = fuzz_u8(&in);
	if (!commands.nr)
		commands_setup();
	if (control_conn_init(&conn))
		abort();
	requests = requests_count(in.data, in.len);
	for (i = 0; i <= pieces && in.len; i++) {
		size_t len = i < pieces ? MIN(lens[i], in.len) : in.len, room;
		char *to = control_conn_in(&conn, &room);

		if (len > room)
			abort();
		memcpy(to, in.data, len);
		control_conn_received(&conn, len);
		in.data += len;
		in.len -= len;
		answer_all(&conn, &got);
	}
	control_conn_input_ended(&conn);
	answer_all(&conn, &got);
	if (!control_conn_finished(&conn))
		abort();
	control_conn_free(&conn);
	replies_check(reply, got, requests);
	return 0;
}
