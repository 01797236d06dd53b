/* Accepting on a listening socket from a poll loop. When accept() fails
 * for want of descriptors or memory, the connection stays queued and the
 * socket readable, so a loop that polled it again at once would spin:
 * the listener then rests for LISTENER_REST_MS before it tries again. */
#ifndef THPVM_LISTENER_H
#define THPVM_LISTENER_H

#include <stdint.h>

#define LISTENER_REST_MS 100

struct listener {
	int fd;
	int64_t rest_until_ms;	/* monotonic_ms(); 0: not resting */
	const char *what;	/* names the socket in the warning */
};

void listener_init(struct listener *l, int fd, const char *what);
/* The descriptor to poll for POLLIN: -1 while resting. */
int listener_poll_fd(const struct listener *l);
/* A poll timeout (ms, -1: none) shortened to the end of a rest. */
int listener_timeout(const struct listener *l, int timeout_ms);
/* A new connection (non-blocking, close-on-exec), or -1 when none is
 * waiting or after a failure that starts a rest (warned, rate limited). */
int listener_accept(struct listener *l);

#endif
