/* The control protocol's commands (docs/control-protocol.md): a table of
 * the handlers registered for each "cmd", and the answer to one request
 * line, from parsing to the reply object. No sockets here: the server
 * (control_server.h) and the fuzz target both answer through it. */
#ifndef THPVM_CONTROL_COMMANDS_H
#define THPVM_CONTROL_COMMANDS_H

#include <stddef.h>

#include "lib/json.h"

#define CONTROL_MAX_COMMANDS 32
#define CONTROL_COMMAND_NAME_MAX 31
#define CONTROL_MAX_ARGS 8

/* Handles one request. The reply is an object that already holds
 * "ok":true: add members (control_reply_add()) and return 0. To fail,
 * return control_reply_error(reply, -errno, "why"); returning -errno
 * without it answers with strerror(). Runs on the server thread, one
 * request at a time, so it should not block for long. */
typedef int (*control_handler_fn)(void *opaque, json_t *request,
				  json_t *reply);

struct control_command {
	char name[CONTROL_COMMAND_NAME_MAX + 1];
	const char *const *args;	/* NULL-terminated, or NULL */
	control_handler_fn fn;
	void *opaque;
};

struct control_commands {
	struct control_command cmd[CONTROL_MAX_COMMANDS];
	unsigned nr;
};

/* cmd is copied; args, the names of the members the command takes
 * besides "cmd" (NULL-terminated, at most CONTROL_MAX_ARGS; NULL for
 * none), must outlive the table: requests with other members, or with
 * one twice, are refused before fn runs. -EEXIST, -ENOSPC, -EINVAL (name
 * empty or too long, too many args). */
int control_commands_add(struct control_commands *t, const char *cmd,
			 const char *const *args, control_handler_fn fn,
			 void *opaque);
/* The reply to the request line[0..len) (no newline): the handler's, or
 * {"ok":false,"error":...} for a line that is not a request of a known
 * command with its members. NULL when out of memory. */
json_t *control_commands_answer(const struct control_commands *t,
				const char *line, size_t len);

/* Adds the members of fields, an object from json_pack() (NULL: that
 * failed), to reply in their order. Returns 0 or -ENOMEM. */
int control_reply_add(json_t *reply, json_t *fields);
/* Turns reply into {"ok":false,"error":"<fmt...>"} and returns err. */
int control_reply_error(json_t *reply, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
