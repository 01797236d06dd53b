/* The Unix stream sockets that control and console clients and servers
 * meet on, at the paths control_path.h names. */
#ifndef THPVM_CONTROL_SOCKET_H
#define THPVM_CONTROL_SOCKET_H

/* A listening Unix stream socket at path (mode 0600, non-blocking,
 * close-on-exec), whose directory must exist, under control_path_lock:
 * a stale socket there is replaced; a live one gives -EADDRINUSE, a file
 * that is not a socket -EEXIST. Returns the fd or -errno. */
int control_socket_listen(const char *path, int backlog);

/* A blocking connection to the Unix stream socket at path, or -errno;
 * a listener whose backlog stays full for timeout_ms gives -ETIMEDOUT.
 * The timeout bounds connect() only: the socket has none after. */
int control_socket_connect(const char *path, int timeout_ms);

/* Whether a server listens on path: 0 if one does (even with a full
 * backlog), -ECONNREFUSED for a stale socket that nobody listens on,
 * -ENOENT when there is no such file, else -errno. Never blocks. */
int control_socket_probe(const char *path);

#endif
