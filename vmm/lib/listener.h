/* Accepting on a listening socket from a poll loop. When accept() fails
 * for want of descriptors or memory, the connection stays queued and the
 * socket readable, so a loop that polled it again at once would spin:
 * the listener then rests for LISTENER_REST_MS before it tries again.
 * Every socket a VM listens on (control, console) takes only clients of
 * the user that made it, and root: past the file modes, a client another
 * user was let through (a loosened mode, a handed-on fd) is refused by
 * its credentials, with one line. */
#ifndef THPVM_LISTENER_H
#define THPVM_LISTENER_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/log.h"

#define LISTENER_REST_MS 100

struct listener {
	int fd;
	int64_t rest_until_ms;	/* monotonic_ms(); 0: not resting */
	const char *what;	/* names the socket in the warnings */
	uid_t owner;		/* the uid clients must have, or root */
	struct log_ratelimit refused_log;
};

/* With a socket (fd >= 0), its owner is the caller's effective uid:
 * call it before any drop to --user (the socket is root's then). */
void listener_init(struct listener *l, int fd, const char *what);
/* The descriptor to poll for POLLIN: -1 while resting. */
int listener_poll_fd(const struct listener *l);
/* A poll timeout (ms, -1: none) shortened to the end of a rest. */
int listener_timeout(const struct listener *l, int timeout_ms);
/* A new connection (non-blocking, close-on-exec) of the owner or root,
 * or -1 when none is waiting or after a failure that starts a rest
 * (warned, rate limited). Others are closed, warned, and skipped. */
int listener_accept(struct listener *l);

#endif
