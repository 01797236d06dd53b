/* Unix stream sockets at control paths: listen, connect, probe. */
#include "control/control_socket.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control_path.h"
#include "lib/log.h"

/* The Unix socket address of path; -ENAMETOOLONG if it does not fit. */
static int unix_addr(const char *path, struct sockaddr_un *addr)
{
	if (strlen(path) >= sizeof(addr->sun_path))
		return -ENAMETOOLONG;
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	strcpy(addr->sun_path, path);
	return 0;
}

int control_socket_probe(const char *path)
{
	struct sockaddr_un addr;
	int fd, err = unix_addr(path, &addr);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A listener with a full backlog answers EAGAIN: still alive. */
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 &&
	    errno != EAGAIN)
		err = -errno;
	close(fd);
	return err;
}

int control_socket_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un addr;
	/* A Unix connect() waits for room in the backlog this long. */
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = timeout_ms % 1000 * 1000,
	};
	static const struct timeval no_timeout;
	int fd, err = unix_addr(path, &addr);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &no_timeout,
		       sizeof(no_timeout)) < 0)
		err = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT :
								-errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Called with the directory lock held, so that no other thpvm removes or
 * binds this path between the probe and bind(). */
static int path_bind(const char *path, int backlog)
{
	struct sockaddr_un addr;
	struct stat st;
	mode_t old_umask;
	int fd, err = unix_addr(path, &addr);

	if (err)
		return err;
	err = control_socket_probe(path);
	if (!err)
		return -EADDRINUSE;
	if (err == -ECONNREFUSED) {
		/* A VM that died without cleaning up; only ever remove a
		 * socket, never some other file. */
		if (lstat(path, &st) < 0)
			return -errno;
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return -errno;
		pr_debug("removed stale socket %s", path);
	} else if (err != -ENOENT) {
		return err;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* bind() creates the socket file with the umask applied: 0600. */
	old_umask = umask(0177);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	umask(old_umask);
	if (!err && listen(fd, backlog) < 0) {
		err = -errno;
		unlink(path);
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int control_socket_listen(const char *path, int backlog)
{
	int lock_fd, fd;

	if (strlen(path) >= CONTROL_PATH_MAX)
		return -ENAMETOOLONG;
	lock_fd = control_path_lock(path);
	if (lock_fd < 0)
		return lock_fd;
	fd = path_bind(path, backlog);
	control_path_unlock(lock_fd);
	return fd;
}
