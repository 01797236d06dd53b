/* The control socket of one VM (docs/control-protocol.md): a thread that
 * accepts clients on its socket (control_path.h), reads newline-delimited JSON
 * requests {"cmd":"...", ...} and answers each with one line, from the
 * handler registered for that cmd (control_commands.h; each connection's
 * lines and replies: control_conn.h). */
#ifndef THPVM_CONTROL_SERVER_H
#define THPVM_CONTROL_SERVER_H

#include "control/control_commands.h"
#include "control/control_conn.h"

#define CONTROL_MAX_CLIENTS 16
#define CONTROL_IDLE_TIMEOUT_MS 30000	/* then a silent client is dropped */

struct control_server;

/* Listens on the socket at path (mode 0600), whose directory must exist
 * (control_path_dir_create() makes the usual one). A socket left by a VM
 * that died is replaced; a live one gives -EADDRINUSE. Other errors:
 * -ENAMETOOLONG, -EEXIST (a file that is not a socket is there), -errno. */
int control_server_open(const char *path, struct control_server **out);
/* Before control_server_start() only: control_commands_add()'s command
 * (and its errors), or -EBUSY (already started). */
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

#endif
