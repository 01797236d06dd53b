/* The control socket of one VM (docs/control-protocol.md): a thread that
 * accepts clients on its socket (control_path.h), reads newline-delimited JSON
 * requests {"cmd":"...", ...} and answers each with one line, from the
 * handler registered for that cmd. */
#ifndef THPVM_CONTROL_SERVER_H
#define THPVM_CONTROL_SERVER_H

#include "lib/json.h"

#define CONTROL_LINE_MAX (64 * 1024)	/* request bytes, newline excluded */
#define CONTROL_REPLY_MAX (1024 * 1024)	/* reply bytes, newline included */
#define CONTROL_MAX_CLIENTS 16
#define CONTROL_MAX_COMMANDS 32
#define CONTROL_COMMAND_NAME_MAX 31
#define CONTROL_MAX_ARGS 8
#define CONTROL_IDLE_TIMEOUT_MS 30000	/* then a silent client is dropped */

struct control_server;

/* Handles one request. The reply is an object that already holds
 * "ok":true: add members (control_reply_add()) and return 0. To fail,
 * return control_reply_error(reply, -errno, "why"); returning -errno
 * without it answers with strerror(). Runs on the server thread, one
 * request at a time, so it should not block for long. */
typedef int (*control_handler_fn)(void *opaque, json_t *request,
				  json_t *reply);

/* Listens on the socket at path (mode 0600), whose directory must exist
 * (control_path_dir_create() makes the usual one). A socket left by a VM
 * that died is replaced; a live one gives -EADDRINUSE. Other errors:
 * -ENAMETOOLONG, -EEXIST (a file that is not a socket is there), -errno. */
int control_server_open(const char *path, struct control_server **out);
/* Before control_server_start() only. cmd is copied; args, the names of
 * the members the command takes besides "cmd" (NULL-terminated, at most
 * CONTROL_MAX_ARGS; NULL for none), must outlive the server: requests
 * with other members, or with one twice, are refused before fn runs.
 * -EEXIST, -ENOSPC, -EINVAL (name empty or too long, too many args),
 * -EBUSY (already started). */
int control_server_add_command(struct control_server *srv, const char *cmd,
			       const char *const *args, control_handler_fn fn,
			       void *opaque);
/* Starts the server thread (with all signals blocked). */
int control_server_start(struct control_server *srv);
/* Stops the thread, drops the clients, removes the socket and frees srv.
 * NULL is fine. */
void control_server_close(struct control_server *srv);
/* Only removes the socket file: async-signal-safe, for a fatal-signal
 * handler (which must not use srv after control_server_close()). */
void control_server_unlink_path(const struct control_server *srv);
const char *control_server_path(const struct control_server *srv);

/* Adds the members of fields, an object from json_pack() (NULL: that
 * failed), to reply in their order. Returns 0 or -ENOMEM. */
int control_reply_add(json_t *reply, json_t *fields);
/* Turns reply into {"ok":false,"error":"<fmt...>"} and returns err. */
int control_reply_error(json_t *reply, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
