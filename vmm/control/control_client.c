/* One request/reply exchange with a VM's control socket, bounded in time
 * (CONTROL_TIMEOUT_MS per step) and in reply size (CONTROL_REPLY_MAX). */
#include "control/control_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control_path.h"
#include "control/control_socket.h"
#include "control/control_server.h"
#include "lib/util.h"

static int result_fail(struct control_result *res, int err, const char *fmt,
		       ...) __attribute__((format(printf, 3, 4)));

static int result_fail(struct control_result *res, int err, const char *fmt,
		       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	return err;
}

static int client_connect(const char *name, struct control_result *res)
{
	char path[CONTROL_PATH_MAX];
	int fd, err;

	err = control_path_resolve(name, path, sizeof(path));
	if (err == -EINVAL)
		return result_fail(res, err, "invalid VM name \"%s\" (%s)",
				   name, CONTROL_NAME_RULE);
	if (err)
		return result_fail(res, err, "cannot find the socket of VM "
				   "\"%s\": %s", name, strerror(-err));
	fd = control_socket_connect(path, CONTROL_TIMEOUT_MS);
	if (fd < 0) {
		err = fd;
		if ((err == -ENOENT || err == -ECONNREFUSED) &&
		    control_path_is_path(name))
			return result_fail(res, err, "no VM listens on %s",
					   name);
		if (err == -ENOENT || err == -ECONNREFUSED)
			return result_fail(res, err, "no VM named \"%s\" (see "
					   "thpvm list)", name);
		if (err == -ETIMEDOUT)
			return result_fail(res, err,
					   "VM \"%s\" is not responding", name);
		return result_fail(res, err, "cannot connect to %s: %s",
				   path, strerror(-err));
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return result_fail(res, err, "fcntl: %s", strerror(-err));
	}
	return fd;
}

/* Waits until fd is ready for events, or the deadline passes. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - monotonic_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		int err;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			err = wait_fd(fd, POLLOUT, deadline);
			if (err)
				return err;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads into buf[0..cap) until a newline (returns the length before it)
 * or, with !line, until end of file (returns 0). -ECONNRESET: the peer
 * closed before the newline; -EMSGSIZE: no newline within cap. */
static ssize_t recv_until(int fd, char *buf, size_t cap, bool line,
			  int64_t deadline)
{
	size_t len = 0;

	for (;;) {
		char *nl;
		ssize_t n;
		int err;

		if (len == cap) {
			if (line)
				return -EMSGSIZE;
			len = 0;	/* draining: drop what came */
		}
		n = recv(fd, buf + len, cap - len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return line || errno != ECONNRESET ? -errno : 0;
			err = wait_fd(fd, POLLIN, deadline);
			if (err)
				return err;
			continue;
		}
		if (n == 0)
			return line ? -ECONNRESET : 0;
		nl = line ? memchr(buf + len, '\n', (size_t)n) : NULL;
		len += (size_t)n;
		if (nl)
			return nl - buf;
	}
}

/* Checks the reply line and moves it into res. */
static int reply_parse(const char *name, const char *line, size_t len,
		       struct control_result *res)
{
	struct json_error jerr;
	const char *msg;
	json_t *reply;
	int err, ok;

	err = json_parse(line, len, &reply, &jerr);
	if (err == -EINVAL)
		return result_fail(res, -EPROTO, "VM \"%s\" sent an invalid "
				   "reply: %s", name, jerr.msg);
	if (err)
		return result_fail(res, err, "reading the reply: %s",
				   strerror(-err));
	if (json_unpack(reply, "{s:b}", "ok", &ok)) {
		json_decref(reply);
		return result_fail(res, -EPROTO, "VM \"%s\" sent a reply "
				   "without \"ok\"", name);
	}
	if (!ok) {
		msg = json_string_value(json_object_get(reply, "error"));
		err = result_fail(res, -EREMOTEIO, "%s",
				  msg ? msg : "the request failed");
		json_decref(reply);
		return err;
	}
	res->reply = reply;
	return 0;
}

int control_client_request(const char *name, const char *request,
			   unsigned flags, struct control_result *res)
{
	char *buf = NULL;
	ssize_t n;
	int fd, err;

	res->reply = NULL;
	res->error[0] = '\0';
	fd = client_connect(name, res);
	if (fd < 0)
		return fd;
	err = send_all(fd, request, strlen(request), monotonic_ms() + CONTROL_TIMEOUT_MS);
	if (!err)
		err = send_all(fd, "\n", 1, monotonic_ms() + CONTROL_TIMEOUT_MS);
	/* On other errors the VM may still have said why it hung up (e.g.
	 * too many clients): read on. */
	if (err == -ETIMEDOUT) {
		result_fail(res, err, "VM \"%s\" is not responding", name);
		goto out;
	}
	buf = malloc(CONTROL_REPLY_MAX);
	if (!buf) {
		err = result_fail(res, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	n = recv_until(fd, buf, CONTROL_REPLY_MAX, true,
		       monotonic_ms() + CONTROL_TIMEOUT_MS);
	if (n == -ETIMEDOUT)
		err = result_fail(res, -ETIMEDOUT, "VM \"%s\" is not "
				  "responding", name);
	else if (n == -EMSGSIZE)
		err = result_fail(res, -EPROTO, "VM \"%s\" sent a reply over "
				  "%d bytes", name, CONTROL_REPLY_MAX);
	else if (n < 0)
		err = result_fail(res, (int)n, "VM \"%s\" closed the "
				  "connection without replying", name);
	else
		err = reply_parse(name, buf, (size_t)n, res);
	if (err || !(flags & CONTROL_WAIT_CLOSE))
		goto out;
	n = recv_until(fd, buf, CONTROL_REPLY_MAX, false,
		       monotonic_ms() + CONTROL_TIMEOUT_MS);
	if (n < 0)
		err = result_fail(res, (int)n, "VM \"%s\" did not exit within "
				  "%d s", name, CONTROL_TIMEOUT_MS / 1000);
out:
	free(buf);
	close(fd);
	return err;
}

int control_client_send(const char *name, json_t *request, unsigned flags,
			struct control_result *res)
{
	char *text = request ? json_encode(request) : NULL;
	int err;

	if (!text) {
		res->reply = NULL;
		return result_fail(res, -ENOMEM, "cannot build the request: %s",
				   strerror(ENOMEM));
	}
	err = control_client_request(name, text, flags, res);
	free(text);
	return err;
}

int control_client_command(const char *name, const char *cmd, unsigned flags,
			   struct control_result *res)
{
	json_t *req = json_pack("{s:s}", "cmd", cmd);
	int err = control_client_send(name, req, flags, res);

	json_decref(req);
	return err;
}

void control_result_free(struct control_result *res)
{
	json_decref(res->reply);
	res->reply = NULL;
}

int control_client_remove_stale(const char *name)
{
	char path[CONTROL_PATH_MAX];
	struct stat st;
	int err, lock_fd;

	err = control_path_resolve(name, path, sizeof(path));
	if (err)
		return err;
	lock_fd = control_path_lock(path);
	if (lock_fd < 0)
		return lock_fd == -ENOENT ? 0 : lock_fd;
	err = control_socket_probe(path);
	if (!err) {
		err = -EADDRINUSE;
	} else if (err == -ENOENT) {
		err = 0;
	} else if (err == -ECONNREFUSED) {
		/* Only ever remove a socket, never some other file. */
		if (lstat(path, &st) < 0)
			err = errno == ENOENT ? 0 : -errno;
		else if (!S_ISSOCK(st.st_mode))
			err = -EEXIST;
		else
			err = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	}
	control_path_unlock(lock_fd);
	return err;
}
