/* The control socket directory, socket paths and VM names. */
#include "control/control_path.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/vm.h"
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
