/* thpvm run's console socket (run_console.h). */
#include "cli/run_console.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control_socket.h"
#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_start.h"
#include "lib/util.h"

/* With the guest's input buffer full, clients are read again after
 * this long. */
#define INPUT_RETRY_MS 20

int run_console_path_beside(const char *control_path, char *buf, size_t len)
{
	size_t n = strlen(control_path);
	size_t sfx = strlen(CONTROL_SOCKET_SUFFIX);

	if (n >= sfx && !strcmp(control_path + n - sfx, CONTROL_SOCKET_SUFFIX))
		n -= sfx;
	if ((size_t)snprintf(buf, len, "%.*s%s", (int)n, control_path,
			     RUN_CONSOLE_SUFFIX) >= MIN(len, CONTROL_PATH_MAX))
		return -ENAMETOOLONG;
	return 0;
}

void run_console_init(struct run_console *rc)
{
	unsigned i;

	memset(rc, 0, sizeof(*rc));
	byte_ring_init(&rc->scrollback, rc->scrollback_buf,
		       sizeof(rc->scrollback_buf));
	rc->out_rd = rc->out_wr = rc->stop_fd = -1;
	listener_init(&rc->listener, -1, "console socket");
	for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++)
		rc->clients[i].fd = -1;
}

int run_console_open(struct run_console *rc, const char *path)
{
	int fds[2], fd, err;

	run_console_init(rc);
	if (strlen(path) >= sizeof(rc->path)) {
		pr_err("console socket %s: longer than %zu bytes", path,
		       sizeof(rc->path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(rc->path, path);
	fd = control_socket_listen(path, RUN_CONSOLE_MAX_CLIENTS);
	if (fd < 0) {
		err = fd;
		if (err == -EADDRINUSE)
			pr_err("console socket %s: another VM listens there",
			       path);
		else if (err == -EEXIST)
			pr_err("cannot create the console socket %s: a file "
			       "that is not a socket is in the way", path);
		else
			pr_err("cannot create the console socket %s: %s", path,
			       strerror(-err));
		return err;
	}
	listener_init(&rc->listener, fd, "console socket");
	rc->linked = 1;
	rc->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rc->stop_fd < 0 || pipe2(fds, O_CLOEXEC) < 0) {
		err = -errno;
		pr_err("console socket %s: %s", path, strerror(errno));
		run_console_close(rc);
		return err;
	}
	rc->out_rd = fds[0];
	rc->out_wr = fds[1];
	return 0;
}

static void client_close(struct run_console_client *c)
{
	close(c->fd);
	c->fd = -1;
}

static void client_accept(struct run_console *rc)
{
	int fd = listener_accept(&rc->listener);
	unsigned i;

	if (fd < 0)
		return;
	for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++) {
		if (rc->clients[i].fd < 0) {
			/* The scrollback first: what the guest said last. */
			rc->clients[i].fd = fd;
			rc->clients[i].sent = rc->scrollback.head;
			return;
		}
	}
	/* What a client over the limit sees before it is closed. */
	dprintf(fd, "thpvm: this console has %d clients already\r\n",
		RUN_CONSOLE_MAX_CLIENTS);
	close(fd);
}

/* New output into the scrollback, over its oldest bytes; false once the
 * VM's side is closed. */
static bool output_take(struct run_console *rc)
{
	size_t room;
	uint8_t *p = byte_ring_overwrite_span(&rc->scrollback, &room);
	ssize_t n = read(rc->out_rd, p, room);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	byte_ring_produce(&rc->scrollback, n);
	return n > 0;
}

/* As much of the output the client lacks as it takes now. */
static void client_send(struct run_console_client *c,
			const struct run_console *rc)
{
	const uint8_t *p;
	size_t n;
	ssize_t got;

	/* Too slow: what the scrollback no longer holds is lost to it. */
	c->sent = MAX(c->sent, rc->scrollback.head);
	p = byte_ring_span_at(&rc->scrollback, c->sent, &n);
	got = send(c->fd, p, n, MSG_NOSIGNAL);
	if (got > 0)
		c->sent += got;
	else if (got < 0 && errno != EAGAIN && errno != EINTR)
		client_close(c);
}

/* What the guest's input buffer takes now; 0 once input stopped. */
static size_t guest_room(struct run_console *rc)
{
	size_t room;

	pthread_mutex_lock(&rc->lock);
	room = rc->guest ? vm_console_rx_room(rc->guest) : 0;
	pthread_mutex_unlock(&rc->lock);
	return room;
}

/* A client's keys for the guest, as many as its input buffer takes. A
 * client that hung up is closed even when the buffer is full (poll
 * would report it without end). */
static void client_read(struct run_console_client *c,
			struct run_console *rc, short revents)
{
	uint8_t buf[256];
	size_t room = guest_room(rc);
	ssize_t n;

	if (!room) {
		if (revents & (POLLHUP | POLLERR))
			client_close(c);
		return;
	}
	n = recv(c->fd, buf, MIN(room, sizeof(buf)), 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(c);
		return;
	}
	pthread_mutex_lock(&rc->lock);
	if (n > 0 && rc->guest)
		vm_console_receive(rc->guest, buf, n);
	pthread_mutex_unlock(&rc->lock);
}

static void *console_thread(void *arg)
{
	struct run_console *rc = arg;
	struct pollfd fds[3 + RUN_CONSOLE_MAX_CLIENTS];
	bool output_open = true;
	unsigned i;

	sandbox_enter(SANDBOX_CONSOLE);
	for (;;) {
		bool room = guest_room(rc) > 0;

		fds[0] = (struct pollfd){ rc->stop_fd, POLLIN, 0 };
		fds[1] = (struct pollfd){ output_open ? rc->out_rd : -1,
					  POLLIN, 0 };
		fds[2] = (struct pollfd){ listener_poll_fd(&rc->listener),
					  POLLIN, 0 };
		for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++) {
			struct run_console_client *c = &rc->clients[i];

			fds[3 + i] = (struct pollfd){
				c->fd,
				(room ? POLLIN : 0) |
				(c->sent < rc->scrollback.tail ? POLLOUT : 0),
				0 };
		}
		if (poll(fds, ARRAY_SIZE(fds), listener_timeout(&rc->listener,
				room ? -1 : INPUT_RETRY_MS)) < 0 &&
		    errno != EINTR)
			break;
		/* Stopped: what the VM left in the pipe went out above. */
		if (fds[0].revents && !output_open)
			break;
		if (fds[1].revents)
			output_open = output_take(rc);
		else if (fds[0].revents)
			output_open = false;
		if (fds[2].revents)
			client_accept(rc);
		for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++) {
			struct run_console_client *c = &rc->clients[i];

			if (c->fd >= 0 && (fds[3 + i].revents & POLLOUT))
				client_send(c, rc);
			if (c->fd >= 0 && (fds[3 + i].revents &
					   (POLLIN | POLLHUP | POLLERR)))
				client_read(c, rc, fds[3 + i].revents);
		}
	}
	/* The VM's last words, to whoever takes them now. */
	for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++)
		if (rc->clients[i].fd >= 0)
			client_send(&rc->clients[i], rc);
	return NULL;
}

int run_console_start(struct run_console *rc, const struct vm_console *guest)
{
	int err;

	rc->guest = guest;
	pthread_mutex_init(&rc->lock, NULL);
	err = thread_start_unsignalled(&rc->thread, console_thread, rc,
				       "console-sock");
	if (err) {
		pr_err("cannot start the console socket's thread: %s",
		       strerror(-err));
		return err;
	}
	rc->started = true;
	return 0;
}

void run_console_stop_input(struct run_console *rc)
{
	if (!rc->started)
		return;
	pthread_mutex_lock(&rc->lock);
	rc->guest = NULL;
	pthread_mutex_unlock(&rc->lock);
}

void run_console_unlink_path(const struct run_console *rc)
{
	if (rc->linked)
		unlink(rc->path);
}

void run_console_remove(struct run_console *rc)
{
	run_console_unlink_path(rc);
	rc->linked = 0;
}

void run_console_close(struct run_console *rc)
{
	unsigned i;

	run_console_remove(rc);
	if (rc->started) {
		/* The VM's end of the pipe first: the thread reads to its
		 * end, then sees the stop. */
		if (rc->out_wr >= 0)
			close(rc->out_wr);
		rc->out_wr = -1;
		/* A thread that cannot be told to stop is not waited for. */
		if (eventfd_signal(rc->stop_fd) == 0)
			pthread_join(rc->thread, NULL);
		else
			pr_err("console socket: cannot stop its thread");
		pthread_mutex_destroy(&rc->lock);
		rc->started = false;
	}
	for (i = 0; i < RUN_CONSOLE_MAX_CLIENTS; i++)
		if (rc->clients[i].fd >= 0)
			client_close(&rc->clients[i]);
	if (rc->listener.fd >= 0)
		close(rc->listener.fd);
	if (rc->out_rd >= 0)
		close(rc->out_rd);
	if (rc->out_wr >= 0)
		close(rc->out_wr);
	if (rc->stop_fd >= 0)
		close(rc->stop_fd);
	run_console_init(rc);
}
