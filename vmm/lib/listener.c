/* Accepting with a rest after failures that would repeat (listener.h). */
#include "lib/listener.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/log.h"
#include "lib/util.h"

void listener_init(struct listener *l, int fd, const char *what)
{
	l->fd = fd;
	l->rest_until_ms = 0;
	l->what = what;
}

int listener_poll_fd(const struct listener *l)
{
	return l->rest_until_ms > monotonic_ms() ? -1 : l->fd;
}

int listener_timeout(const struct listener *l, int timeout_ms)
{
	int64_t left = l->rest_until_ms - monotonic_ms();

	if (left <= 0)
		return timeout_ms;
	return timeout_ms < 0 || left < timeout_ms ? (int)left : timeout_ms;
}

int listener_accept(struct listener *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0)
			return fd;
		/* Interrupted, or a client that gave up before we took
		 * it: the next one may be there. */
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			pr_warn_ratelimited("%s: accept: %s", l->what,
					    strerror(errno));
			l->rest_until_ms = monotonic_ms() + LISTENER_REST_MS;
		}
		return -1;
	}
}
