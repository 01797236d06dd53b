/* The control socket server: one thread polls the listening socket and up
 * to CONTROL_MAX_CLIENTS non-blocking clients. Each client gets one reply
 * per request line, and nothing it sends (or fails to read) can block the
 * thread or grow memory beyond one line and one reply per client. */
#include "control/control_server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
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

struct control_command {
	char name[CONTROL_COMMAND_NAME_MAX + 1];
	const char *const *args;	/* NULL-terminated, or NULL */
	control_handler_fn fn;
	void *opaque;
};

struct control_client {
	int fd;			/* -1: a free slot */
	char *in;		/* CONTROL_LINE_MAX + 1 bytes */
	size_t in_len;
	bool discarding;	/* skipping the rest of a too-long line */
	bool eof;		/* the client sends no more */
	char *out;		/* the reply line being sent */
	size_t out_len;
	size_t out_pos;
	int64_t last_active_ms;
};

struct control_server {
	char path[CONTROL_PATH_MAX];
	struct listener listener;
	int stop_fd;		/* eventfd: written to stop the thread */
	pthread_t thread;
	bool started;
	bool was_full;		/* all client slots were taken last round */
	struct control_command commands[CONTROL_MAX_COMMANDS];
	unsigned nr_commands;
	struct control_client clients[CONTROL_MAX_CLIENTS];
};

int control_reply_add(json_t *reply, json_t *fields)
{
	return json_object_update_new(reply, fields) ? -ENOMEM : 0;
}

int control_reply_error(json_t *reply, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_clear(reply);
	/* The message may hold what the client sent, or be cut short in
	 * the middle of a character. */
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "error", json_string_lossy(msg));
	return err;
}

static bool reply_failed(json_t *reply)
{
	return json_is_false(json_object_get(reply, "ok"));
}

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

static const struct control_command *server_find(struct control_server *srv,
						 const char *name)
{
	unsigned i;

	for (i = 0; i < srv->nr_commands; i++)
		if (!strcmp(srv->commands[i].name, name))
			return &srv->commands[i];
	return NULL;
}

static unsigned args_count(const char *const *args)
{
	unsigned n = 0;

	while (args && args[n])
		n++;
	return n;
}

int control_server_add_command(struct control_server *srv, const char *cmd,
			       const char *const *args, control_handler_fn fn,
			       void *opaque)
{
	struct control_command *c;

	if (srv->started)
		return -EBUSY;
	if (!cmd[0] || strlen(cmd) > CONTROL_COMMAND_NAME_MAX ||
	    args_count(args) > CONTROL_MAX_ARGS)
		return -EINVAL;
	if (server_find(srv, cmd))
		return -EEXIST;
	if (srv->nr_commands == CONTROL_MAX_COMMANDS)
		return -ENOSPC;
	c = &srv->commands[srv->nr_commands++];
	strcpy(c->name, cmd);
	c->args = args;
	c->fn = fn;
	c->opaque = opaque;
	return 0;
}

static bool member_taken(const struct control_command *cmd, const char *key)
{
	unsigned n;

	if (!strcmp(key, "cmd"))
		return true;
	for (n = 0; cmd->args && cmd->args[n]; n++)
		if (!strcmp(key, cmd->args[n]))
			return true;
	return false;
}

/* The request's members must be "cmd" and the command's arguments (the
 * parser refuses one given twice): a misspelt argument is refused, not
 * silently ignored. */
static int request_check_members(const struct control_command *cmd,
				 json_t *req, json_t *reply)
{
	const char *key;
	json_t *value;

	json_object_foreach(req, key, value)
		if (!member_taken(cmd, key))
			return control_reply_error(reply, -EINVAL,
						   "\"%s\" takes no member "
						   "\"%.64s\"", cmd->name, key);
	return 0;
}

/* reply as the line to send, with its newline; NULL when it cannot be
 * written (out of memory, or a reply jansson cannot write). */
static char *reply_line(json_t *reply, size_t *len)
{
	char *text = json_encode(reply), *line;

	if (!text)
		return NULL;
	*len = strlen(text);
	line = realloc(text, *len + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[(*len)++] = '\n';
	line[*len] = '\0';
	return line;
}

/* Makes reply the line c sends next. Returns -ENOMEM when not even an
 * error reply could be written. */
static int client_reply(struct control_client *c, json_t *reply)
{
	size_t len = 0;
	char *line = reply_line(reply, &len);

	if (!line || len > CONTROL_REPLY_MAX) {
		control_reply_error(reply, -EIO, "cannot send the reply: %s",
				    line ? "too large" :
					   "it cannot be written as JSON");
		free(line);
		line = reply_line(reply, &len);
		if (!line)
			return -ENOMEM;
	}
	free(c->out);
	c->out = line;
	c->out_len = len;
	c->out_pos = 0;
	return 0;
}

/* Answers one request line. Returns -ENOMEM when not even an error reply
 * could be built. */
static int server_handle(struct control_server *srv, struct control_client *c,
			 const char *line, size_t len)
{
	const struct control_command *cmd;
	json_t *req = NULL, *reply;
	struct json_error jerr;
	const char *name;
	int err;

	reply = json_pack("{s:b}", "ok", true);
	if (!reply)
		return -ENOMEM;
	err = json_parse(line, len, &req, &jerr);
	if (err == -EINVAL && jerr.offset == JSON_OFFSET_NONE) {
		control_reply_error(reply, err, "invalid JSON: %s", jerr.msg);
	} else if (err == -EINVAL) {
		control_reply_error(reply, err, "invalid JSON at byte %zu: %s",
				    jerr.offset, jerr.msg);
	} else if (err) {
		control_reply_error(reply, err, "%s", strerror(-err));
	} else if (!json_is_object(req)) {
		control_reply_error(reply, -EINVAL,
				    "a request must be a JSON object");
	} else if (!(name = json_string_value(json_object_get(req, "cmd")))) {
		control_reply_error(reply, -EINVAL,
				    "a request needs \"cmd\" (a string)");
	} else if (!(cmd = server_find(srv, name))) {
		control_reply_error(reply, -EINVAL,
				    "unknown command \"%.64s\"", name);
	} else if (!request_check_members(cmd, req, reply)) {
		err = cmd->fn(cmd->opaque, req, reply);
		if (err < 0 && !reply_failed(reply))
			control_reply_error(reply, err, "%s", strerror(-err));
	}
	json_decref(req);
	err = client_reply(c, reply);
	json_decref(reply);
	return err;
}

static bool client_pending(const struct control_client *c)
{
	return c->out_pos < c->out_len;
}

static void client_close(struct control_client *c)
{
	close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_pos = 0;
}

/* Sends what the socket takes now; POLLOUT brings the rest. */
static void client_flush(struct control_client *c)
{
	while (client_pending(c)) {
		ssize_t n = send(c->fd, c->out + c->out_pos,
				 c->out_len - c->out_pos,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			client_close(c);	/* gone mid-reply */
			return;
		}
		c->out_pos += (size_t)n;
		c->last_active_ms = monotonic_ms();
	}
}

static void client_consume(struct control_client *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

static int client_refuse_long_line(struct control_client *c)
{
	json_t *reply = json_object();
	int err;

	if (!reply)
		return -ENOMEM;
	control_reply_error(reply, -E2BIG, "request line longer than %d bytes",
			    CONTROL_LINE_MAX);
	err = client_reply(c, reply);
	json_decref(reply);
	return err;
}

/* Answers the complete lines buffered, one at a time: the next line waits
 * until the previous reply has gone out, which bounds what a client that
 * does not read can make us buffer. */
static void client_process(struct control_server *srv,
			   struct control_client *c)
{
	while (c->fd >= 0 && !client_pending(c)) {
		char *nl = memchr(c->in, '\n', c->in_len);
		int err = 0;

		if (c->discarding) {
			if (!nl) {
				c->in_len = 0;
				break;
			}
			client_consume(c, (size_t)(nl + 1 - c->in));
			c->discarding = false;
			continue;
		}
		if (nl) {
			err = server_handle(srv, c, c->in, (size_t)(nl - c->in));
			client_consume(c, (size_t)(nl + 1 - c->in));
		} else if (c->in_len > CONTROL_LINE_MAX) {
			err = client_refuse_long_line(c);
			c->discarding = true;
			c->in_len = 0;
		} else if (c->eof && c->in_len) {
			/* A last request without its newline. */
			err = server_handle(srv, c, c->in, c->in_len);
			c->in_len = 0;
		} else {
			break;
		}
		if (err) {
			client_close(c);
			return;
		}
		client_flush(c);
	}
	if (c->fd >= 0 && c->eof && !client_pending(c))
		client_close(c);
}

static void client_read(struct control_client *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len,
			 CONTROL_LINE_MAX + 1 - c->in_len, MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			client_close(c);
		return;
	}
	c->last_active_ms = monotonic_ms();
	if (n == 0)
		c->eof = true;
	c->in_len += (size_t)n;
}

static void client_event(struct control_server *srv, struct control_client *c,
			 short revents)
{
	if (revents & POLLNVAL) {
		client_close(c);
		return;
	}
	if (client_pending(c))
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
		if (c)
			c->in = malloc(CONTROL_LINE_MAX + 1);
		if (!c || !c->in) {
			ssize_t n = send(fd, TOO_MANY_CLIENTS,
					 sizeof(TOO_MANY_CLIENTS) - 1,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			(void)n;	/* best effort */
			close(fd);
			continue;
		}
		c->fd = fd;
		c->in_len = 0;
		c->discarding = false;
		c->eof = false;
		c->out = NULL;
		c->out_len = c->out_pos = 0;
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
				.events = client_pending(c) ? POLLOUT : POLLIN,
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
