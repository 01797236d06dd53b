/* Where control sockets live and what a VM may be called. Each running VM
 * listens on <dir>/<name>.sock, where dir is $XDG_RUNTIME_DIR/thpvm when
 * XDG_RUNTIME_DIR is an absolute path, else $HOME/.thpvm, unless it was
 * given a path of its own (thpvm run --control-socket PATH): clients then
 * name it by that path, which is told from a name by its '/'. */
#ifndef THPVM_CONTROL_PATH_H
#define THPVM_CONTROL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

/* Room for a socket path: sockaddr_un.sun_path, NUL included. */
#define CONTROL_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
#define CONTROL_SOCKET_SUFFIX ".sock"
/* For error messages about bad names. */
#define CONTROL_NAME_RULE \
	"1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with . or -"

/* 1..VM_NAME_MAX characters of [A-Za-z0-9._-], not starting with '.' or
 * '-' (so a name is never an option, a hidden file, "." or ".."). */
bool control_path_name_valid(const char *name);

/* The directory path, without touching the file system. 0, -ENOENT when
 * neither variable is usable, or -ENAMETOOLONG. */
int control_path_dir(char *buf, size_t len);
/* Same, and creates the directory with mode 0700 if needed; an existing
 * one must be a real directory (not a symlink) owned by this user, and is
 * reset to 0700. */
int control_path_dir_create(char *buf, size_t len);
/* <dir>/<name>.sock into buf (CONTROL_PATH_MAX bytes). -EINVAL for a bad
 * name, -ENAMETOOLONG when it does not fit a socket address. */
int control_path_socket(const char *name, char *buf, size_t len);

/* Whether a VM is named by its socket's path (it has a '/'). */
bool control_path_is_path(const char *vm);
/* The socket of vm, a name or a path, into buf (CONTROL_PATH_MAX bytes):
 * control_path_socket() for a name; a path is copied, -ENAMETOOLONG when
 * it does not fit a socket address. */
int control_path_resolve(const char *vm, char *buf, size_t len);

/* Serialises the steps "is this socket stale? remove it; bind a new one"
 * between processes: an exclusive flock on the directory that holds the
 * socket at path. Returns the lock's fd or -errno; control_path_unlock()
 * releases it. */
int control_path_lock(const char *path);
void control_path_unlock(int lock_fd);

#endif
