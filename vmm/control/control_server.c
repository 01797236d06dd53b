/* The control socket server: one thread polls the listening socket and up
 * to CONTROL_MAX_CLIENTS non-blocking clients. Each client gets one reply
 * per request line, and nothing it sends (or fails to read) can block the
 * thread or grow memory beyond one line and one reply per client. */
#include "control/control_server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control_path.h"
#include "control/control_socket.h"
#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/listener.h"
#include "lib/thread_start.h"
#include "lib/util.h"

#define TOO_MANY_CLIENTS "{\"ok\":false,\"error\":\"too many clients\"}\n"

struct control_client {
	int fd;			/* -1: a free slot */
	struct control_conn conn;
	int64_t last_active_ms;
};

struct control_server {
	char path[CONTROL_PATH_MAX];
	struct listener listener;
	int stop_fd;		/* eventfd: written to stop the thread */
	pthread_t thread;
	bool started;
	bool was_full;		/* all client slots were taken last round */
	struct control_commands commands;
	struct control_client clients[CONTROL_MAX_CLIENTS];
};

int control_server_open(const char *path, struct control_server **out)
{
	struct control_server *srv;
	unsigned i;
	int fd, err;

	if (strlen(path) >= sizeof(srv->path))
		return -ENAMETOOLONG;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	for (i = 0; i < CONTROL_MAX_CLIENTS; i++)
		srv->clients[i].fd = -1;
	srv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->stop_fd < 0) {
		err = -errno;
		goto fail;
	}
	strcpy(srv->path, path);
	fd = control_socket_listen(path, CONTROL_MAX_CLIENTS);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	listener_init(&srv->listener, fd, "control socket");
	*out = srv;
	return 0;
fail:
	if (srv->stop_fd >= 0)
		close(srv->stop_fd);
	free(srv);
	return err;
}

int control_server_add_command(struct control_server *srv, const char *cmd,
			       const char *const *args, control_handler_fn fn,
			       void *opaque)
{
	if (srv->started)
		return -EBUSY;
	return control_commands_add(&srv->commands, cmd, args, fn, opaque);
}

static void client_close(struct control_client *c)
{
	close(c->fd);
	c->fd = -1;
	control_conn_free(&c->conn);
}

/* Sends what the socket takes now; POLLOUT brings the rest. */
static void client_flush(struct control_client *c)
{
	while (control_conn_pending(&c->conn)) {
		size_t len;
		const char *out = control_conn_out(&c->conn, &len);
		ssize_t n = send(c->fd, out, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			client_close(c);	/* gone mid-reply */
			return;
		}
		control_conn_sent(&c->conn, (size_t)n);
		c->last_active_ms = monotonic_ms();
	}
}

/* Answers the complete lines buffered while their replies go out at
 * once; a reply the socket does not take yet holds the next line back. */
static void client_process(struct control_server *srv,
			   struct control_client *c)
{
	while (c->fd >= 0 && !control_conn_pending(&c->conn)) {
		int r = control_conn_answer_next(&c->conn, &srv->commands);

		if (r < 0) {
			client_close(c);
			return;
		}
		if (!r)
			break;
		client_flush(c);
	}
	if (c->fd >= 0 && control_conn_finished(&c->conn))
		client_close(c);
}

static void client_read(struct control_client *c)
{
	size_t room;
	char *in = control_conn_in(&c->conn, &room);
	ssize_t n = recv(c->fd, in, room, MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			client_close(c);
		return;
	}
	c->last_active_ms = monotonic_ms();
	if (n)
		control_conn_received(&c->conn, (size_t)n);
	else
		control_conn_input_ended(&c->conn);
}

static void client_event(struct control_server *srv, struct control_client *c,
			 short revents)
{
	if (revents & POLLNVAL) {
		client_close(c);
		return;
	}
	if (control_conn_pending(&c->conn))
		client_flush(c);
	else
		client_read(c);
	if (c->fd >= 0)
		client_process(srv, c);
}

static struct control_client *server_free_slot(struct control_server *srv)
{
	unsigned i;

	for (i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (srv->clients[i].fd < 0)
			return &srv->clients[i];
	return NULL;
}

static void server_accept(struct control_server *srv)
{
	for (;;) {
		struct control_client *c = server_free_slot(srv);
		int fd;

		/* When full, first let one more poll round handle the
		 * clients: those that hung up meanwhile free their slots. */
		if (!c && !srv->was_full) {
			srv->was_full = true;
			return;
		}
		srv->was_full = !c;
		fd = listener_accept(&srv->listener);
		if (fd < 0)
			return;
		if (!c || control_conn_init(&c->conn)) {
			ssize_t n = send(fd, TOO_MANY_CLIENTS,
					 sizeof(TOO_MANY_CLIENTS) - 1,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			(void)n;	/* best effort */
			close(fd);
			continue;
		}
		c->fd = fd;
		c->last_active_ms = monotonic_ms();
	}
}

/* Drops clients that made no progress for CONTROL_IDLE_TIMEOUT_MS, and
 * returns the poll timeout until the next deadline (-1: none). */
static int server_expire(struct control_server *srv)
{
	int64_t now = monotonic_ms(), next = -1;
	unsigned i;

	for (i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *c = &srv->clients[i];
		int64_t left;

		if (c->fd < 0)
			continue;
		left = c->last_active_ms + CONTROL_IDLE_TIMEOUT_MS - now;
		if (left <= 0) {
			client_close(c);
			continue;
		}
		if (next < 0 || left < next)
			next = left;
	}
	return listener_timeout(&srv->listener, (int)next);
}

static void *server_thread(void *arg)
{
	struct control_server *srv = arg;
	struct pollfd pfd[2 + CONTROL_MAX_CLIENTS];
	struct control_client *owner[2 + CONTROL_MAX_CLIENTS];

	sandbox_enter(SANDBOX_CONTROL);
	for (;;) {
		int timeout = server_expire(srv);
		nfds_t n = 0, i;

		pfd[n++] = (struct pollfd){ .fd = srv->stop_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){
			.fd = listener_poll_fd(&srv->listener),
			.events = POLLIN,
		};
		for (i = 0; i < CONTROL_MAX_CLIENTS; i++) {
			struct control_client *c = &srv->clients[i];

			if (c->fd < 0)
				continue;
			owner[n] = c;
			pfd[n++] = (struct pollfd){
				.fd = c->fd,
				.events = control_conn_pending(&c->conn) ?
						  POLLOUT : POLLIN,
			};
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR || errno == ENOMEM)
				continue;
			pr_err("control socket: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		for (i = 2; i < n; i++)
			if (pfd[i].revents)
				client_event(srv, owner[i], pfd[i].revents);
		if (pfd[1].revents & POLLIN)
			server_accept(srv);
	}
	return NULL;
}

int control_server_start(struct control_server *srv)
{
	int err;

	if (srv->started)
		return -EBUSY;
	err = thread_start_unsignalled(&srv->thread, server_thread, srv,
				       "control");
	srv->started = !err;
	return err;
}

void control_server_unlink_path(const struct control_server *srv)
{
	unlink(srv->path);
}

const char *control_server_path(const struct control_server *srv)
{
	return srv->path;
}

void control_server_close(struct control_server *srv)
{
	unsigned i;

	if (!srv)
		return;
	if (srv->started) {
		int err = eventfd_signal(srv->stop_fd);

		/* A thread that was not told would be waited for ever. */
		if (err)
			pr_err("control socket: cannot stop its thread: %s",
			       strerror(-err));
		else
			pthread_join(srv->thread, NULL);
	}
	/* Unlink while still listening: another thpvm probing the path
	 * meanwhile sees a live VM, never a stale socket to replace. */
	control_server_unlink_path(srv);
	for (i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (srv->clients[i].fd >= 0)
			client_close(&srv->clients[i]);
	close(srv->listener.fd);
	close(srv->stop_fd);
	free(srv);
}
