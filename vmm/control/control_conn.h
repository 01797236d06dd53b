/* One client's connection to the control socket, without the socket:
 * the bytes it sent, cut into request lines, each answered in turn by the
 * command table, and the reply line waiting to go out. The next line is
 * answered only once the previous reply has gone, which bounds what a
 * client that does not read can make the server hold: one line in, one
 * reply out. The server (control_server.c) moves the bytes; the fuzz
 * target drives the same functions in-process. */
#ifndef THPVM_CONTROL_CONN_H
#define THPVM_CONTROL_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include "control/control_commands.h"

#define CONTROL_LINE_MAX (64 * 1024)	/* request bytes, newline excluded */
#define CONTROL_REPLY_MAX (1024 * 1024)	/* reply bytes, newline included */

struct control_conn {
	char *in;		/* CONTROL_LINE_MAX + 1 bytes */
	size_t in_len;
	bool discarding;	/* skipping the rest of a too-long line */
	bool eof;		/* the client sends no more */
	char *out;		/* the reply line being sent */
	size_t out_len;
	size_t out_pos;
};

/* -ENOMEM, or 0. */
int control_conn_init(struct control_conn *c);
void control_conn_free(struct control_conn *c);

/* Where the next received bytes go, and how many fit (0 once a line
 * fills the buffer: answering it makes room). */
char *control_conn_in(struct control_conn *c, size_t *room);
/* n bytes were written at control_conn_in(). */
void control_conn_received(struct control_conn *c, size_t n);
/* The client sends no more: a last line without its newline is then
 * answered too. */
void control_conn_input_ended(struct control_conn *c);

/* With no reply waiting, answers the next complete line (or refuses a
 * line longer than CONTROL_LINE_MAX, or answers a last line without its
 * newline at the end of input). 1: there is a reply to send; 0: nothing
 * to answer yet; -ENOMEM: not even an error reply could be made (drop
 * the client). */
int control_conn_answer_next(struct control_conn *c,
			     const struct control_commands *t);

/* The reply bytes still to send, and how many of them went. */
const char *control_conn_out(const struct control_conn *c, size_t *len);
void control_conn_sent(struct control_conn *c, size_t n);
bool control_conn_pending(const struct control_conn *c);
/* The client's input ended and everything it asked is answered and
 * sent. */
bool control_conn_finished(const struct control_conn *c);

#endif
