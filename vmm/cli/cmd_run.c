/* `thpvm run`: read the images, create the VM, serve its console, control
 * socket and signals until it ends, and clean up on every way out. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "backend/term.h"
#include "cli/commands.h"
#include "cli/run_console.h"
#include "cli/run_control.h"
#include "cli/run_detach.h"
#include "cli/run_options.h"
#include "cli/run_user.h"
#include "cli/run_vm.h"
#include "control/control_server.h"
#include "control/vm_control.h"
#include "core/arch.h"
#include "core/vm.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/util.h"
#include "machine/machine.h"

/* The bundled test guest (guest/, embedded at build time). */
extern const unsigned char embedded_guest_image[];
extern const unsigned long embedded_guest_image_size;

#define CONSOLE_ESCAPE 0x01	/* Ctrl-A */
#define CONSOLE_QUIT 'x'

struct images {
	uint8_t *kernel;
	size_t kernel_size;
	uint8_t *initrd;
	size_t initrd_size;
};

/* What one `thpvm run` holds from set-up to the end. run_teardown()
 * undoes whatever of it was made, wherever set-up stopped, and may run
 * twice. */
struct run_ctx {
	struct run_options *opts;
	bool on_socket;		/* the console is on a socket, not stdin */
	struct timespec t0;	/* for the phase times under -v */
	int ready_fd;		/* --detach: tells the parent; -1: none */
	int sig_fd;		/* SIGINT, SIGTERM, SIGHUP; -1: none */
	struct run_user user;	/* --user */
	struct images img;	/* until they are in guest RAM */
	struct boot_source src;
	struct control_server *srv;	/* NULL: none (yet, or any more) */
	struct run_console rc;	/* --detach, --console-socket */
	struct machine m;
	bool machine_made;	/* machine_create ran, if only halfway */
	int status;		/* the exit status: 1 until the VM ends */
	enum vm_exit_reason reason;
};

/* For the fatal-signal handler: the sockets that must not outlive the
 * process. Set once the control socket is open, cleared at teardown. */
static struct run_ctx *fatal_run;

static void fatal_signal_handler(int sig)
{
	struct run_ctx *run = fatal_run;

	term_restore();
	if (run && run->srv)
		control_server_unlink_path(run->srv);
	if (run)
		run_console_unlink_path(&run->rc);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fatal_handlers(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction sa = { .sa_handler = fatal_signal_handler };
	unsigned i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static int read_image(const char *what, const char *path, size_t max,
		      uint8_t **data, size_t *size)
{
	int err = file_read_all(path, max, data, size);

	if (err == -EFBIG)
		pr_err("%s %s: larger than guest RAM", what, path);
	else if (err == -EINVAL)
		pr_err("%s %s: not a regular file or a block device", what,
		       path);
	else if (err)
		pr_err("%s %s: %s", what, path, strerror(-err));
	if (err)
		return err;
	if (!*size) {
		/* *data is freed with the other images. */
		pr_err("%s %s: the file is empty", what, path);
		return -EINVAL;
	}
	return 0;
}

static int load_images(const struct machine_config *cfg, struct images *img,
		       struct boot_source *src)
{
	int err;

	memset(src, 0, sizeof(*src));
	src->cmdline = cfg->cmdline;
	src->entry = cfg->boot_entry;
	src->dump_dtb = cfg->dump_dtb;
	src->no_acpi = cfg->no_acpi;
	if (cfg->kernel_path) {
		err = read_image("kernel", cfg->kernel_path, cfg->vm.ram_size,
				 &img->kernel, &img->kernel_size);
		if (err)
			return err;
		src->kernel_name = cfg->kernel_path;
		src->kernel = img->kernel;
		src->kernel_size = img->kernel_size;
	} else {
		src->kernel_name = "the bundled test guest";
		src->kernel = embedded_guest_image;
		src->kernel_size = embedded_guest_image_size;
	}
	if (cfg->initrd_path) {
		err = read_image("initrd", cfg->initrd_path, cfg->vm.ram_size,
				 &img->initrd, &img->initrd_size);
		if (err)
			return err;
		src->initrd = img->initrd;
		src->initrd_size = img->initrd_size;
	}
	return 0;
}

static void images_free(struct images *img)
{
	free(img->kernel);
	free(img->initrd);
	*img = (struct images){ 0 };
}

struct console {
	struct vm *vm;
	bool tty;		/* stdin is a terminal ... */
	bool raw;		/* ... in raw mode: we are in the foreground */
	bool escape;		/* Ctrl-A seen */
	bool open;		/* stdin not at EOF */
};

static void console_feed(struct console *con, const uint8_t *buf, size_t n)
{
	const struct vm_console *guest = &con->vm->console;
	size_t i;

	if (!con->tty) {
		vm_console_receive(guest, buf, n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (con->escape) {
			con->escape = false;
			if (buf[i] == CONSOLE_QUIT) {
				term_restore();
				pr_info("stopping the VM (Ctrl-A x)");
				vm_request_exit(con->vm, 0, VM_EXIT_STOP);
				return;
			}
			if (buf[i] != CONSOLE_ESCAPE)
				vm_console_receive(guest,
						   &(uint8_t){ CONSOLE_ESCAPE }, 1);
		} else if (buf[i] == CONSOLE_ESCAPE) {
			con->escape = true;
			continue;
		}
		vm_console_receive(guest, &buf[i], 1);
	}
}

static void console_read(struct console *con)
{
	uint8_t buf[256];
	size_t room = vm_console_rx_room(&con->vm->console);
	ssize_t n;

	n = read(STDIN_FILENO, buf, MIN(room, sizeof(buf)));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	/* Put in the background meanwhile (SIGTTIN is ignored): wait to
	 * be in the foreground again. */
	if (n < 0 && errno == EIO && con->tty && !term_foreground()) {
		con->raw = false;
		return;
	}
	if (n <= 0) {
		con->open = false;
		return;
	}
	console_feed(con, buf, n);
}

/* How often a VM started in the background looks whether it has been
 * brought to the foreground (fg), to take the terminal then. */
#define FOREGROUND_CHECK_MS 500

/* Until the VM asks to end: console input from stdin (unless the console
 * is on a socket), and SIGINT/SIGTERM/SIGHUP, which stop the VM as
 * `thpvm stop` does. A terminal on stdin is read (in raw mode) only while
 * thpvm is in its foreground. */
static void run_loop(struct vm *vm, int sig_fd, bool use_stdin)
{
	struct console con = { .vm = vm, .tty = use_stdin && term_is_tty(),
			       .open = use_stdin };

	for (;;) {
		bool room = vm_console_rx_room(&vm->console) > 0;
		struct pollfd fds[] = {
			{ .fd = vm->exit_eventfd, .events = POLLIN },
			{ .fd = sig_fd, .events = POLLIN },
			{ .fd = -1, .events = POLLIN },
		};
		int timeout = room ? -1 : 20;

		if (con.tty && !con.raw)
			con.raw = term_raw_enable();
		if (con.tty && !con.raw)
			timeout = FOREGROUND_CHECK_MS;
		else if (con.open && room)
			fds[2].fd = STDIN_FILENO;
		/* With the guest's input buffer full, look again soon. */
		if (poll(fds, ARRAY_SIZE(fds), timeout) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("poll: %s", strerror(errno));
			vm_request_exit(vm, 1, VM_EXIT_FAILURE);
			return;
		}
		if (fds[0].revents)
			return;
		if (fds[1].revents) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				term_restore();
				pr_info("terminating on signal %u",
					si.ssi_signo);
				vm_request_exit(vm, 0, VM_EXIT_SIGNAL);
			}
		}
		if (fds[2].revents & (POLLIN | POLLHUP | POLLERR))
			console_read(&con);
	}
}

/* SIGINT, SIGTERM and SIGHUP go to a signalfd; blocked before any thread
 * starts so that no vCPU or control thread takes them. */
static int block_stop_signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		pr_err("signalfd: %s", strerror(-fd));
	}
	return fd;
}

/* thpvm run --json: how the VM ended, for scripts. */
static void report_exit_json(const char *name, int status,
			     enum vm_exit_reason reason)
{
	json_t *doc = json_pack("{s:o, s:i, s:s}",
				"name", json_string_lossy(name),
				"exit_status", status,
				"reason", vm_exit_reason_name(reason));
	char *text = doc ? json_encode(doc) : NULL;

	if (text)
		fprintf(stderr, "%s\n", text);
	else
		pr_err("cannot write the exit report: %s", strerror(ENOMEM));
	free(text);
	json_decref(doc);
}

/* The console socket's path: --console-socket, or beside the control
 * socket. 0 or -errno after a message. */
static int console_socket_path(const struct run_options *opts,
			       const struct control_server *srv, char *buf,
			       size_t len)
{
	if (opts->console_socket) {
		snprintf(buf, len, "%s", opts->console_socket);
		return 0;
	}
	if (run_console_path_beside(control_server_path(srv), buf, len)) {
		pr_err("the console socket beside %s would be longer than %zu "
		       "bytes (use --console-socket PATH)",
		       control_server_path(srv), CONTROL_PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* The steps of set-up, in order (run_steps); each returns 0 or -errno. */

static int step_detach(struct run_ctx *run)
{
	int fd;

	/* Before anything: the VM runs in the child. */
	if (run->opts->detach) {
		fd = run_detach_start();
		if (fd < 0)
			return fd;
		run->ready_fd = fd;
	}
	/* Phase times under -v: where start-up and shut-down time goes. */
	clock_gettime(CLOCK_MONOTONIC, &run->t0);
	return 0;
}

/* Nothing thpvm runs or becomes may gain privileges (set-user-ID files,
 * file capabilities), filters or not; the filters are set up before any
 * thread starts, allowing the change to --user's ids. */
static int step_confine(struct run_ctx *run)
{
	const struct run_options *opts = run->opts;
	int err;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		err = -errno;
		pr_err("PR_SET_NO_NEW_PRIVS: %s", strerror(-err));
		return err;
	}
	if (opts->user) {
		err = run_user_lookup(opts->user, &run->user);
		if (err)
			return err;
		sandbox_allow_setid(run->user.uid, run->user.gid);
	}
	return sandbox_configure(!opts->no_seccomp);
}

static int step_signals(struct run_ctx *run)
{
	int fd;

	signal(SIGPIPE, SIG_IGN);
	term_ignore_job_signals();
	fd = block_stop_signals();
	if (fd < 0)
		return fd;
	run->sig_fd = fd;
	return 0;
}

static int step_images(struct run_ctx *run)
{
	return load_images(&run->opts->machine, &run->img, &run->src);
}

/* The control socket; from here on a fatal signal removes it. */
static int step_control(struct run_ctx *run)
{
	int err = run_control_open(run->opts, &run->srv);

	if (!err && run->srv)
		err = sandbox_allow_unlink(control_server_path(run->srv));
	if (err)
		return err;
	fatal_run = run;
	install_fatal_handlers();
	return 0;
}

/* With --detach or --console-socket: the console's socket, which the
 * VM's console output goes to. */
static int step_console_socket(struct run_ctx *run)
{
	struct machine_config *cfg = &run->opts->machine;
	char path[CONTROL_PATH_MAX];
	int err;

	if (!run->on_socket)
		return 0;
	err = console_socket_path(run->opts, run->srv, path, sizeof(path)) ?:
	      run_console_open(&run->rc, path) ?:
	      sandbox_allow_unlink(run->rc.path);
	if (err)
		return err;
	cfg->vm.console_fd = run->rc.out_wr;
	cfg->console_socket = run->rc.path;
	return 0;
}

static int step_machine(struct run_ctx *run)
{
	int err;

	/* machine_destroy undoes a machine_create that failed halfway. */
	run->machine_made = true;
	err = machine_create(&run->m, &run->opts->machine);
	if (!err)
		pr_debug("%.2f ms: VM created", time_ms_since(&run->t0));
	return err;
}

/* The images go into guest RAM, and need not be kept after. */
static int step_boot(struct run_ctx *run)
{
	int err = arch_boot_load(&run->m.vm, &run->src);

	images_free(&run->img);
	return err;
}

static int step_control_start(struct run_ctx *run)
{
	if (!run->srv)
		return 0;
	return vm_control_register(run->srv, &run->m) ?:
	       control_server_start(run->srv);
}

static int step_console_start(struct run_ctx *run)
{
	if (!run->on_socket)
		return 0;
	return run_console_start(&run->rc, &run->m.vm.console);
}

/* All that needs root is open; the threads that run are named (which
 * takes writing /proc/self/task/TID/comm, root's once root is gone). */
static int step_drop_user(struct run_ctx *run)
{
	return run->opts->user ? run_user_drop(&run->user) : 0;
}

static const struct run_step {
	const char *what;	/* "cannot WHAT", where the step said nothing */
	int (*run)(struct run_ctx *run);
} run_steps[] = {
	{ "start in the background", step_detach },
	{ "confine thpvm", step_confine },
	{ "take SIGINT, SIGTERM and SIGHUP", step_signals },
	{ "read the kernel and initrd", step_images },
	{ "open the control socket", step_control },
	{ "open the console socket", step_console_socket },
	{ "create the VM", step_machine },
	{ "load the kernel", step_boot },
	{ "start the control socket", step_control_start },
	{ "start the console socket", step_console_start },
	{ "change to --user", step_drop_user },
};

/* Every step in turn, up to the first that fails, whose failure is said
 * in one line: by the step, or here, where it said nothing. */
static int run_setup(struct run_ctx *run)
{
	const struct run_step *step;
	unsigned errors;
	int err;

	for (step = run_steps; step < run_steps + ARRAY_SIZE(run_steps);
	     step++) {
		errors = log_error_count();
		err = step->run(run);
		if (!err)
			continue;
		if (log_error_count() == errors)
			pr_err("cannot %s: %s", step->what, strerror(-err));
		return err;
	}
	return 0;
}

/* Runs the VM until it ends, which sets the exit status and reason. */
static void run_guest(struct run_ctx *run)
{
	const char *name = run->opts->machine.vm.name;
	struct vm *vm = &run->m.vm;

	pr_debug("%.2f ms: booting %s: %u vCPU(s), %llu MiB",
		 time_ms_since(&run->t0), run->src.kernel_name, vm->nr_vcpus,
		 (unsigned long long)(vm->ram.total >> 20));
	if (vm_start(vm) == 0) {
		if (run->ready_fd >= 0) {
			pr_info("VM \"%s\" runs in the background; its console: "
				"thpvm console %s", name, name);
			run_detach_ready(run->ready_fd);
			run->ready_fd = -1;
		}
		/* Every other thread runs, each under its own filter; the
		 * detached VM's stderr has moved to /dev/null. */
		sandbox_enter(SANDBOX_MAIN);
		run_loop(vm, run->sig_fd, !run->on_socket);
	}
	run->status = vm_stop(vm);
	run->reason = vm->exit_reason;
	pr_debug("%.2f ms: VM ended (%s, status %d)", time_ms_since(&run->t0),
		 vm_exit_reason_name(run->reason), run->status);
}

static void run_init(struct run_ctx *run, struct run_options *opts)
{
	memset(run, 0, sizeof(*run));
	run->opts = opts;
	run->on_socket = opts->detach || opts->console_socket;
	run->ready_fd = run->sig_fd = -1;
	run->status = 1;
	run->reason = VM_EXIT_FAILURE;
	run_console_init(&run->rc);
	clock_gettime(CLOCK_MONOTONIC, &run->t0);
}

/* Undoes what set-up made, in the order the end needs. */
static void run_teardown(struct run_ctx *run)
{
	struct control_server *srv = run->srv;

	term_restore();
	/* Gone before the control socket closes its connections, after
	 * which thpvm stop returns. */
	run_console_remove(&run->rc);
	run->srv = NULL;	/* before it is freed: fatal_run reads it */
	control_server_close(srv);
	/* Clients' keys must not reach devices being destroyed; the last
	 * output still reaches them. */
	run_console_stop_input(&run->rc);
	if (run->machine_made) {
		machine_destroy(&run->m);
		run->machine_made = false;
		pr_debug("%.2f ms: VM closed", time_ms_since(&run->t0));
	}
	fatal_run = NULL;
	run_console_close(&run->rc);
	images_free(&run->img);
	if (run->sig_fd >= 0)
		close(run->sig_fd);
	if (run->ready_fd >= 0)
		close(run->ready_fd);
	run->sig_fd = run->ready_fd = -1;
}

int run_vm(struct run_options *opts)
{
	struct run_ctx run;

	run_init(&run, opts);
	if (run_setup(&run) == 0)
		run_guest(&run);
	run_teardown(&run);
	if (opts->json)
		report_exit_json(opts->machine.vm.name, run.status, run.reason);
	return run.status;
}

static int run_main(int argc, char **argv)
{
	struct run_options opts;

	switch (run_options_parse(argc, argv, &opts)) {
	case RUN_PARSE_HELP:
		fputs(run_usage(), stdout);
		return 0;
	case RUN_PARSE_ERROR:
		return EXIT_USAGE;
	case RUN_PARSE_OK:
		break;
	}
	return run_vm(&opts);
}

const struct command cmd_run = {
	.name = "run",
	.summary = "boot a guest (the bundled test guest by default)",
	.usage_make = run_usage,
	.main = run_main,
};
