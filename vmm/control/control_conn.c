/* A control connection's lines and replies (control_conn.h). */
#include "control/control_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int control_conn_init(struct control_conn *c)
{
	*c = (struct control_conn){ .in = malloc(CONTROL_LINE_MAX + 1) };
	return c->in ? 0 : -ENOMEM;
}

void control_conn_free(struct control_conn *c)
{
	free(c->in);
	free(c->out);
	*c = (struct control_conn){ 0 };
}

char *control_conn_in(struct control_conn *c, size_t *room)
{
	*room = CONTROL_LINE_MAX + 1 - c->in_len;
	return c->in + c->in_len;
}

void control_conn_received(struct control_conn *c, size_t n)
{
	c->in_len += n;
}

void control_conn_input_ended(struct control_conn *c)
{
	c->eof = true;
}

bool control_conn_pending(const struct control_conn *c)
{
	return c->out_pos < c->out_len;
}

const char *control_conn_out(const struct control_conn *c, size_t *len)
{
	*len = c->out_len - c->out_pos;
	return c->out + c->out_pos;
}

void control_conn_sent(struct control_conn *c, size_t n)
{
	c->out_pos += n;
}

bool control_conn_finished(const struct control_conn *c)
{
	return c->eof && !c->in_len && !control_conn_pending(c);
}

/* reply as the line to send, with its newline; NULL when it cannot be
 * written (out of memory, or a reply jansson cannot write). */
static char *reply_line(json_t *reply, size_t *len)
{
	char *text = json_encode(reply), *line;

	if (!text)
		return NULL;
	*len = strlen(text);
	line = realloc(text, *len + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[(*len)++] = '\n';
	line[*len] = '\0';
	return line;
}

/* Makes reply (NULL: out of memory) the line c sends next. */
static int conn_reply(struct control_conn *c, json_t *reply)
{
	size_t len = 0;
	char *line;

	if (!reply)
		return -ENOMEM;
	line = reply_line(reply, &len);
	if (!line || len > CONTROL_REPLY_MAX) {
		control_reply_error(reply, -EIO, "cannot send the reply: %s",
				    line ? "too large" :
					   "it cannot be written as JSON");
		free(line);
		line = reply_line(reply, &len);
	}
	json_decref(reply);
	if (!line)
		return -ENOMEM;
	free(c->out);
	c->out = line;
	c->out_len = len;
	c->out_pos = 0;
	return 1;
}

static void conn_consume(struct control_conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

int control_conn_answer_next(struct control_conn *c,
			     const struct control_commands *t)
{
	json_t *reply;

	if (control_conn_pending(c))
		return 0;
	for (;;) {
		char *nl = memchr(c->in, '\n', c->in_len);

		if (c->discarding) {
			if (!nl) {
				c->in_len = 0;
				return 0;
			}
			conn_consume(c, (size_t)(nl + 1 - c->in));
			c->discarding = false;
			continue;
		}
		if (nl) {
			reply = control_commands_answer(t, c->in,
							(size_t)(nl - c->in));
			conn_consume(c, (size_t)(nl + 1 - c->in));
			return conn_reply(c, reply);
		}
		if (c->in_len > CONTROL_LINE_MAX) {
			c->discarding = true;
			c->in_len = 0;
			reply = json_object();
			if (reply)
				control_reply_error(reply, -E2BIG,
						    "request line longer than "
						    "%d bytes",
						    CONTROL_LINE_MAX);
			return conn_reply(c, reply);
		}
		if (c->eof && c->in_len) {
			/* A last request without its newline. */
			reply = control_commands_answer(t, c->in, c->in_len);
			c->in_len = 0;
			return conn_reply(c, reply);
		}
		return 0;
	}
}
