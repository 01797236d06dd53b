/* The client side of the control socket: one request to a VM by name, one
 * reply (docs/control-protocol.md). */
#ifndef THPVM_CONTROL_CLIENT_H
#define THPVM_CONTROL_CLIENT_H

#include "lib/json.h"

#define CONTROL_TIMEOUT_MS 10000	/* for connecting, sending, replying */

/* After the reply, also wait (up to CONTROL_TIMEOUT_MS) until the VM
 * closes the connection: it does so when it shuts its control socket on
 * the way out, so `stop` returns once the VM has gone. */
#define CONTROL_WAIT_CLOSE 1u

struct control_result {
	json_t *reply;		/* the reply object when ok:true */
	char error[256];		/* on failure: one line for the user */
};

/* Sends request (one JSON object, no newline) to the VM called name (or,
 * when name has a '/', listening at that path) and reads its reply.
 * Returns 0 with res->reply set, or fills res->error and returns -ENOENT
 * (no such VM), -ECONNREFUSED (only a stale socket is left: also "no VM
 * named"), -ETIMEDOUT (the VM does not answer), -EPROTO (the reply is not
 * valid), -EREMOTEIO (the VM answered "ok":false; error holds its text),
 * -EINVAL (bad name), or -errno. Call control_result_free() in every
 * case. */
int control_client_request(const char *name, const char *request,
			   unsigned flags, struct control_result *res);
/* The same for a request built as JSON (NULL: building it failed); the
 * caller keeps its reference. */
int control_client_send(const char *name, json_t *request, unsigned flags,
			struct control_result *res);
/* The same for the request {"cmd":cmd}. */
int control_client_command(const char *name, const char *cmd, unsigned flags,
			   struct control_result *res);
void control_result_free(struct control_result *res);

/* Removes name's socket if nothing listens on it any more. 0 when it was
 * removed or was not there, -EADDRINUSE if a VM answers there, or -errno. */
int control_client_remove_stale(const char *name);

#endif
