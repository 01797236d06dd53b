/* `thpvm sandbox [OPTIONS] -- CMD [ARG...]`: CMD in a throw-away Linux
 * guest whose / is the host's, read-only, and whose current directory
 * is thpvm's, read-write (docs/sandbox.md). thpvm makes a private
 * directory with the guest's script, boots the kernel with the host's /
 * as its 9p root and that script as init, and exits with the command's
 * status, which the guest leaves in the directory. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/run_options.h"
#include "cli/run_vm.h"
#include "cli/sandbox_dir.h"
#include "cli/sandbox_script.h"
#include "cli/share_options.h"
#include "lib/log.h"

/* thpvm's own failure, as env and container tools report theirs: the
 * command's status cannot be told. */
#define EXIT_SANDBOX_FAILED 125

/* Without -k, the host's own kernel, as kvmtool's sandbox takes it:
 * the bundled test guest runs no commands. 0, or -ENOENT after one
 * message. */
static int kernel_default(struct run_options *opts)
{
	static char path[PATH_MAX];
	struct utsname uts;
	struct stat st;

	if (opts->machine.kernel_path)
		return 0;
	if (uname(&uts) < 0) {
		pr_err("sandbox: uname: %s; name a kernel with -k KERNEL",
		       strerror(errno));
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/boot/vmlinuz-%s", uts.release);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		pr_err("sandbox: no -k KERNEL, and the host's own kernel %s "
		       "is not there", path);
		return -ENOENT;
	}
	opts->machine.kernel_path = path;
	return 0;
}

/* What run's options must leave to the sandbox. 0, or -EINVAL after one
 * message. */
static int options_fit(struct run_options *opts)
{
	if (kernel_default(opts))
		return -EINVAL;
	if (opts->detach) {
		pr_err("sandbox: --detach does not go with a sandbox, whose "
		       "command's status thpvm waits for");
		return -EINVAL;
	}
	if (opts->root_share) {
		pr_err("sandbox: -d DIR does not go with a sandbox, whose root "
		       "is the host's /");
		return -EINVAL;
	}
	return 0;
}

_Static_assert(sizeof(SANDBOX_TAG) <= P9_TAG_MAX + 1, "a 9p tag");
_Static_assert(sizeof(SANDBOX_CWD_TAG) <= P9_TAG_MAX + 1, "a 9p tag");

/* The user's --9p and the sandbox's own shares (the host's /, the
 * throw-away directory, and cwd where it is shared) within a VM's
 * limit, checked before anything is made. 0, or -E2BIG after one
 * message. */
static int shares_fit(const struct run_options *opts, const char *cwd)
{
	unsigned own = cwd ? 3 : 2;

	if (opts->machine.nr_shares + own <= MACHINE_MAX_SHARES)
		return 0;
	pr_err("sandbox: at most %u --9p shares, not %u: the sandbox adds %u "
	       "of its own (the host's /, its directory%s) to a VM's %d",
	       MACHINE_MAX_SHARES - own, opts->machine.nr_shares, own,
	       cwd ? ", the current directory" : "", MACHINE_MAX_SHARES);
	return -E2BIG;
}

/* The host's / as the root (the words -d DIR adds), the directory as
 * SANDBOX_TAG, cwd (where not NULL) read-write as SANDBOX_CWD_TAG, and
 * the script as init, before the user's -p. */
static int options_add(struct run_options *opts, const struct sandbox_dir *d,
		       const char *cwd, char *params, size_t len)
{
	struct machine_config *cfg = &opts->machine;
	int n;

	if (share_option_root(cfg, "sandbox", "/", "/", true,
			      VIRTIO_TRANSPORT_DEFAULT) ||
	    share_option_tagged(cfg, "sandbox", d->path, SANDBOX_TAG, false) ||
	    (cwd && share_option_tagged(cfg, "sandbox", cwd, SANDBOX_CWD_TAG,
					false)))
		return -EINVAL;
	opts->root_share = true;
	n = snprintf(params, len, "init=%s/" SANDBOX_SCRIPT " quiet%s%s",
		     d->path, opts->params ? " " : "", opts->params ?: "");
	if (n >= (int)len) {
		pr_err("sandbox: the kernel command line would be too long");
		return -E2BIG;
	}
	opts->params = params;
	return run_options_finish(opts);
}

/* The process that runs the VM; 0 until it does. */
static volatile pid_t vm_pid;

/* A stop signal sent to thpvm alone goes on to the VM, which stops as
 * thpvm run's does; thpvm waits for it and then cleans up. */
static void forward_signal(int sig)
{
	if (vm_pid > 0)
		kill(vm_pid, sig);
}

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };

static void stop_signals_handle(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	unsigned i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaction(stop_sigs[i], &sa, NULL);
}

/* Blocks the stop signals (how = SIG_BLOCK) or lets them in again,
 * those that came meanwhile first. */
static void stop_signals_mask(int how)
{
	sigset_t set;
	unsigned i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaddset(&set, stop_sigs[i]);
	sigprocmask(how, &set, NULL);
}

/* The VM in a child: run_vm confines the process it runs in, and this
 * one has the directory to read and remove after. 0, or -errno after
 * one message. */
static int run_vm_child(struct run_options *opts)
{
	int status, err;
	pid_t pid;

	fflush(NULL);
	/* Held until the child's pid is known: one that came before would
	 * find none to go to, and be lost. */
	stop_signals_mask(SIG_BLOCK);
	stop_signals_handle(forward_signal);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		stop_signals_mask(SIG_UNBLOCK);
		pr_err("sandbox: fork: %s", strerror(-err));
		return err;
	}
	if (pid == 0) {
		stop_signals_handle(SIG_DFL);
		stop_signals_mask(SIG_UNBLOCK);
		_exit(run_vm(opts));
	}
	vm_pid = pid;
	stop_signals_mask(SIG_UNBLOCK);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			pr_err("sandbox: waitpid: %s", strerror(-err));
			return err;
		}
	}
	vm_pid = 0;
	if (WIFSIGNALED(status))
		pr_err("sandbox: the VM's process died of signal %d",
		       WTERMSIG(status));
	return 0;
}

/* The directory thpvm was started in, in buf, for the guest to share;
 * NULL, said in one line, where the command runs in the read-only /
 * instead. */
static const char *current_dir(char *buf, size_t len)
{
	if (!getcwd(buf, len)) {
		pr_warn("sandbox: the current directory: %s; the command "
			"runs in /", strerror(errno));
		return NULL;
	}
	/* Shared read-write, / would hand the guest the whole host. */
	if (!strcmp(buf, "/")) {
		pr_warn("sandbox: the current directory is /, which the guest "
			"gets read-only, not the whole host read-write");
		return NULL;
	}
	return buf;
}

/* PVM (KVM without VT-x or AMD-V) stops a stock kernel long before
 * user space (docs/linux-guests.md); said before the boot, whose
 * failure is otherwise all there is to see. */
static void pvm_say(void)
{
	if (!access("/sys/module/kvm_pvm", F_OK))
		pr_warn("sandbox: this host's KVM is PVM, which cannot run a "
			"stock Linux kernel to user space; trying anyway");
}

static int sandbox_run(struct run_options *opts, char *const argv[])
{
	static char params[RUN_CMDLINE_MAX];
	char buf[PATH_MAX];
	const char *cwd = current_dir(buf, sizeof(buf));
	struct sandbox_dir d;
	int status = EXIT_SANDBOX_FAILED;
	int err;

	if (shares_fit(opts, cwd))
		return EXIT_USAGE;
	/* A user-mode network is set up in the guest; a tap is the
	 * user's to address, as with thpvm run. */
	err = sandbox_dir_make(&d, cwd, opts->machine.net.mode == NET_USER ?
			       &opts->machine.net.user : NULL, argv);
	if (err)
		return EXIT_SANDBOX_FAILED;
	err = options_add(opts, &d, cwd, params, sizeof(params));
	if (err) {
		status = EXIT_USAGE;
	} else {
		pvm_say();
		if (!run_vm_child(opts) && sandbox_dir_status(&d, &status))
			status = EXIT_SANDBOX_FAILED;
	}
	sandbox_dir_remove(&d);
	return status;
}

static int sandbox_main(int argc, char **argv)
{
	struct run_options opts;
	int first_arg;

	switch (run_options_parse_args(argc, argv, &opts, &first_arg)) {
	case RUN_PARSE_HELP:
		fputs(cmd_sandbox.usage, stdout);
		return 0;
	case RUN_PARSE_ERROR:
		return EXIT_USAGE;
	case RUN_PARSE_OK:
		break;
	}
	if (first_arg == argc) {
		pr_err("sandbox: no command (thpvm sandbox [OPTIONS] -- CMD "
		       "[ARG...])");
		return EXIT_USAGE;
	}
	if (options_fit(&opts))
		return EXIT_USAGE;
	return sandbox_run(&opts, argv + first_arg);
}

const struct command cmd_sandbox = {
	.name = "sandbox",
	.summary = "Run a command in a throw-away Linux guest on the host's "
		   "files",
	.usage =
	"usage: thpvm sandbox [-k KERNEL] [-i INITRD] [OPTIONS] -- CMD "
	"[ARG...]\n"
	"\n"
	"Runs CMD with its ARGs, as given, in a Linux guest whose / is the\n"
	"host's, shared read-only over virtio-9p, in the directory thpvm was\n"
	"started in, shared read-write at the same path (read-only where it\n"
	"is /), and exits with CMD's status. What it writes there stays; its\n"
	"tmpfs on /tmp and /run go with it. Its console is the terminal.\n"
	"KERNEL is the host's own, /boot/vmlinuz-$(uname -r), unless -k\n"
	"names one; it needs virtio-9p, built in or loaded by -i's\n"
	"initramfs (guest/linux/mkinitramfs.py makes one: Debian's kernels\n"
	"have it as modules). A convenience, not a jail:\n"
	"the guest reads whatever the user running thpvm can, and changes\n"
	"what it can below the current directory. See docs/sandbox.md.\n"
	"\n"
	"OPTIONS are thpvm run's (thpvm help run), except --detach and -d\n"
	"DIR; the sandbox's own 9p shares (three, two in /) count against\n"
	"the limit of 8. -p's words come after init= and quiet (-p\n"
	"loglevel=7 shows the kernel's messages).\n"
	"\n"
	"Exit status: CMD's; 2 for a bad command line; 125 when thpvm could\n"
	"not tell CMD's status (the guest never finished it).\n",
	.main = sandbox_main,
};
