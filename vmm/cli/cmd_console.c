/* thpvm console: the terminal attached to a VM's console socket (thpvm
 * run --detach or --console-socket): the guest's output to stdout, keys
 * to the guest, until Ctrl-] detaches (the VM goes on) or the VM ends. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/term.h"
#include "cli/cmd_util.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "control/control_socket.h"
#include "lib/log.h"
#include "lib/util.h"

#define ESCAPE 0x1d	/* Ctrl-], as telnet and virsh console */

/* A terminal left in raw mode is the one thing not to leave behind. */
static void end_signal_handler(int sig)
{
	term_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The console socket, waiting at most as long as a control request. */
static int socket_connect(const char *name, const char *path)
{
	int fd = control_socket_connect(path, CONTROL_TIMEOUT_MS);

	if (fd == -ETIMEDOUT)
		pr_err("VM \"%s\": its console %s is not responding", name,
		       path);
	else if (fd < 0)
		pr_err("VM \"%s\": cannot connect to its console %s: %s", name,
		       path, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= w;
	}
	return true;
}

enum attach_end { DETACHED, VM_GONE, FAILED };

/* Keys to the socket, up to the escape key when raw; false when it or
 * the end of stdin says to detach. */
static bool keys_send(int sock, bool raw, enum attach_end *end)
{
	uint8_t buf[256];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
	uint8_t *esc;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	/* Without a terminal, the end of the input ends the session. */
	if (n <= 0) {
		*end = DETACHED;
		return false;
	}
	esc = raw ? memchr(buf, ESCAPE, n) : NULL;
	if (!write_all(sock, buf, esc ? (size_t)(esc - buf) : (size_t)n)) {
		*end = VM_GONE;
		return false;
	}
	if (esc)
		*end = DETACHED;
	return !esc;
}

static enum attach_end relay(int sock, bool raw)
{
	enum attach_end end = FAILED;
	uint8_t buf[4096];

	for (;;) {
		struct pollfd fds[] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = sock, .events = POLLIN },
		};
		ssize_t n;

		if (poll(fds, ARRAY_SIZE(fds), -1) < 0) {
			if (errno == EINTR)
				continue;
			return FAILED;
		}
		if (fds[1].revents) {
			n = read(sock, buf, sizeof(buf));
			if (n <= 0)
				return VM_GONE;
			if (!write_all(STDOUT_FILENO, buf, n))
				return FAILED;
		}
		if (fds[0].revents && !keys_send(sock, raw, &end))
			return end;
	}
}

static int console_one(void *ctx, const char *name, json_t *info)
{
	struct control_result res;
	const char *path;
	enum attach_end end;
	bool raw = false;
	int sock;

	(void)ctx;
	(void)info;
	if (control_client_command(name, "info", 0, &res)) {
		pr_err("%s", res.error);
		control_result_free(&res);
		return 1;
	}
	path = json_string_value(json_object_get(res.reply, "console_socket"));
	if (!path) {
		pr_err("VM \"%s\" has its console on the terminal it was "
		       "started on (start it with --detach or --console-socket "
		       "to attach to it)", name);
		control_result_free(&res);
		return 1;
	}
	sock = socket_connect(name, path);
	control_result_free(&res);
	if (sock < 0)
		return 1;
	if (term_is_tty()) {
		raw = term_raw_enable();
		if (!raw) {
			pr_err("cannot take the terminal (is thpvm console in "
			       "the background?)");
			close(sock);
			return 1;
		}
		signal(SIGTERM, end_signal_handler);
		signal(SIGHUP, end_signal_handler);
		fprintf(stderr, "Connected to the console of VM \"%s\"; Ctrl-] "
			"detaches.\r\n", name);
	}
	end = relay(sock, raw);
	close(sock);
	term_restore();
	if (end == DETACHED && raw)
		fprintf(stderr, "\nDetached from VM \"%s\" (it goes on).\n",
			name);
	else if (end == VM_GONE)
		fprintf(stderr, "\nThe console of VM \"%s\" closed: the VM "
			"ended.\n", name);
	else if (end == FAILED)
		pr_err("console of VM \"%s\": %s", name, strerror(errno));
	return end == FAILED;
}

static int console_take(void *ctx, int opt, const char *arg)
{
	return vm_select_take(ctx, &cmd_console, opt, arg);
}

static int console_main(int argc, char **argv)
{
	static const struct option options[] = {
		VM_SELECT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct vm_select sel = { 0 };
	const struct cmd_options own = {
		.options = options, .take = console_take, .ctx = &sel,
	};
	struct cmd_args args;
	int rc;

	rc = vm_select_parse(&sel, &cmd_console, argc, argv, &own, &args);
	if (rc >= 0)
		return rc;
	return vm_select_each(&sel, console_one, NULL);
}

const struct command cmd_console = {
	.name = "console",
	.summary = "Attach the terminal to a VM's console",
	.usage = "usage: thpvm console NAME|-n NAME|-p PID\n"
		 "\n"
		 "Attaches the terminal to the console of a VM started with "
		 "--detach or\n--console-socket: the last 64 KiB of its output "
		 "first, then what it prints;\nwhat is typed goes to the guest. "
		 "Ctrl-] detaches (the VM goes on); so\ndoes the end of stdin "
		 "when it is not a terminal.\n"
		 "\n"
		 "  NAME, -n, --name NAME\n"
		 "                 the VM called NAME\n"
		 "  -p, --pid PID  the VM that process PID (its thpvm run) runs\n"
		 "  -h, --help     print this help\n",
	.main = console_main,
};
