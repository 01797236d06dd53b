/* The control socket directory, socket paths and VM names. */
#include "control/control_path.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

bool control_path_name_valid(const char *name)
{
	size_t i, len = strnlen(name, VM_NAME_MAX + 1);

	if (len == 0 || len > VM_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

int control_path_dir(char *buf, size_t len)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	const char *leaf = "thpvm";
	int n;

	if (!base || base[0] != '/') {
		struct passwd *pw;

		leaf = ".thpvm";
		base = getenv("HOME");
		if (!base || base[0] != '/') {
			pw = getpwuid(getuid());
			base = pw ? pw->pw_dir : NULL;
		}
		if (!base || base[0] != '/')
			return -ENOENT;
	}
	n = snprintf(buf, len, "%s%s%s", base,
		     base[strlen(base) - 1] == '/' ? "" : "/", leaf);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int control_path_dir_create(char *buf, size_t len)
{
	struct stat st;
	int fd, err;

	err = control_path_dir(buf, len);
	if (err)
		return err;
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* Check what is there through an fd, so the checks and the chmod
	 * apply to the same object. */
	fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
	} else if (st.st_uid != geteuid()) {
		err = -EPERM;
	} else if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
		err = -errno;
	} else {
		err = 0;
	}
	close(fd);
	return err;
}

int control_path_socket(const char *name, char *buf, size_t len)
{
	char dir[CONTROL_PATH_MAX];
	int err, n;

	if (!control_path_name_valid(name))
		return -EINVAL;
	err = control_path_dir(dir, sizeof(dir));
	if (err)
		return err;
	n = snprintf(buf, len, "%s/%s%s", dir, name, CONTROL_SOCKET_SUFFIX);
	if (n < 0 || (size_t)n >= len || (size_t)n >= CONTROL_PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

bool control_path_is_path(const char *vm)
{
	return strchr(vm, '/') != NULL;
}

int control_path_resolve(const char *vm, char *buf, size_t len)
{
	if (!control_path_is_path(vm))
		return control_path_socket(vm, buf, len);
	if (strlen(vm) >= MIN(len, CONTROL_PATH_MAX))
		return -ENAMETOOLONG;
	strcpy(buf, vm);
	return 0;
}

int control_path_lock(const char *path)
{
	const char *slash = strrchr(path, '/');
	/* "/x.sock" is in "/", "x.sock" in "." */
	size_t n = slash ? MAX((size_t)(slash - path), 1) : 1;
	char dir[CONTROL_PATH_MAX];
	int fd, err;

	if (n >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, slash ? path : ".", n);
	dir[n] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	return fd;
}

void control_path_unlock(int lock_fd)
{
	close(lock_fd);	/* drops the flock */
}

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

int control_path_probe(const char *path)
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

int control_path_connect(const char *path, int timeout_ms)
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
	err = control_path_probe(path);
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

int control_path_listen(const char *path, int backlog)
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
