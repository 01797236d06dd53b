/* Accepting with a rest after failures that would repeat, and only
 * the owner's clients (listener.h). */
#include "lib/listener.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

void listener_init(struct listener *l, int fd, const char *what)
{
	l->fd = fd;
	l->rest_until_ms = 0;
	l->what = what;
	/* Without a socket, no owner: a listener is also reset after its
	 * close, under a seccomp filter without geteuid. */
	l->owner = fd >= 0 ? geteuid() : 0;
	memset(&l->refused_log, 0, sizeof(l->refused_log));
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

/* Each refusal is one line, rate limited per socket: a flood of refused
 * clients on one does not hide those of the other. */
static bool peer_allowed(struct listener *l, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		if (log_ratelimit_ok(&l->refused_log))
			pr_warn("%s: refused a client whose credentials "
				"cannot be read: %s", l->what, strerror(errno));
		return false;
	}
	if (cred.uid == l->owner || cred.uid == 0)
		return true;
	if (log_ratelimit_ok(&l->refused_log))
		pr_warn("%s: refused a client of uid %u (pid %d): only uid %u "
			"and root may control this VM", l->what,
			(unsigned)cred.uid, (int)cred.pid, (unsigned)l->owner);
	return false;
}

int listener_accept(struct listener *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			if (peer_allowed(l, fd))
				return fd;
			close(fd);
			continue;
		}
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
