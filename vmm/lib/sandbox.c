/* seccomp filters per thread kind, built with libseccomp (sandbox.h).
 *
 * A forbidden call traps (SECCOMP_RET_TRAP) rather than killing the
 * process outright, so that the VM ends with a line on its own stderr
 * that names the call and the thread kind, not only a kernel log entry
 * that whoever ran thpvm may not be allowed to read. The SIGSYS handler
 * uses only async-signal-safe calls (write, exit_group), both in every
 * kind's list, and names the call from a table made before any filter,
 * since libseccomp's lookup allocates. */
#include "lib/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/sandbox_rules.h"
#include "lib/util.h"

/* Above every system call number of x86-64, arm64 and ppc64 (about
 * 460). */
#define SANDBOX_MAX_NR 1024
#define SANDBOX_MAX_UNLINK 2

static bool sandbox_enabled;
/* For the SIGSYS handler: the arch whose numbers the table has. */
static uint32_t native_arch;
static const char *syscall_names[SANDBOX_MAX_NR];
static const char *unlink_paths[SANDBOX_MAX_UNLINK];
static unsigned nr_unlink_paths;
static bool setid_allowed;
static uid_t setid_uid;
static gid_t setid_gid;
/* Read by the SIGSYS handler: which kind the trapping thread is. */
static __thread int thread_kind = -1;

static const char *const kind_names[SANDBOX_NR_KINDS] = {
	[SANDBOX_MAIN] = "main",
	[SANDBOX_VCPU] = "vCPU",
	[SANDBOX_DEVICE] = "device",
	[SANDBOX_9P] = "9p",
	[SANDBOX_CONTROL] = "control",
	[SANDBOX_CONSOLE] = "console",
	[SANDBOX_NET_USER] = "net-user",
};

/* Appends s to buf at *at, cut at len - 1. */
static void msg_append(char *buf, size_t len, size_t *at, const char *s)
{
	while (*s && *at < len - 1)
		buf[(*at)++] = *s++;
}

static void msg_append_uint(char *buf, size_t len, size_t *at,
			    unsigned long v)
{
	char digits[24];
	size_t n = sizeof(digits);

	digits[--n] = '\0';
	do {
		digits[--n] = '0' + v % 10;
		v /= 10;
	} while (v);
	msg_append(buf, len, at, &digits[n]);
}

static void sigsys_handler(int sig, siginfo_t *info, void *uc)
{
	char msg[160];
	size_t at = 0;
	int nr = info->si_syscall;
	const char *name = nr >= 0 && nr < SANDBOX_MAX_NR &&
			   info->si_arch == native_arch ?
			   syscall_names[nr] : NULL;

	(void)sig;
	(void)uc;
	msg_append(msg, sizeof(msg), &at, "thpvm: seccomp: ");
	msg_append(msg, sizeof(msg), &at,
		   thread_kind < 0 ? "unfiltered" : kind_names[thread_kind]);
	msg_append(msg, sizeof(msg), &at,
		   " thread made forbidden system call ");
	msg_append(msg, sizeof(msg), &at, name ? name : "(unknown)");
	msg_append(msg, sizeof(msg), &at, " (nr ");
	msg_append_uint(msg, sizeof(msg), &at, (unsigned)nr);
	msg_append(msg, sizeof(msg), &at, ")\n");
	if (write(STDERR_FILENO, msg, at) < 0) {
		/* Nothing else to tell it with. */
	}
	syscall(SYS_exit_group, SANDBOX_EXIT_STATUS);
}

int sandbox_configure(bool enabled)
{
	struct sigaction sa = { .sa_sigaction = sigsys_handler,
				.sa_flags = SA_SIGINFO };
	int nr;

	sandbox_enabled = enabled;
	if (!enabled)
		return 0;
	if (prctl(PR_GET_SECCOMP) < 0) {
		int err = -errno;

		pr_err("seccomp: this kernel has no seccomp filters (use "
		       "--seccomp=off to run without them)");
		return err;
	}
	native_arch = seccomp_arch_native();
	for (nr = 0; nr < SANDBOX_MAX_NR; nr++)
		if (!syscall_names[nr])
			syscall_names[nr] = seccomp_syscall_resolve_num_arch(
				native_arch, nr);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		int err = -errno;

		pr_err("seccomp: cannot handle SIGSYS: %s", strerror(-err));
		return err;
	}
	return 0;
}

int sandbox_allow_unlink(const char *path)
{
	if (nr_unlink_paths == SANDBOX_MAX_UNLINK) {
		pr_err("seccomp: more than %d sockets to remove",
		       SANDBOX_MAX_UNLINK);
		return -ENOSPC;
	}
	unlink_paths[nr_unlink_paths++] = path;
	return 0;
}

void sandbox_allow_setid(uid_t uid, gid_t gid)
{
	setid_allowed = true;
	setid_uid = uid;
	setid_gid = gid;
}

/* The native number of the call named name, or -1 where this arch has
 * none. From the table sandbox_configure made: libseccomp's own lookup
 * gives a pseudo-number for calls it also knows multiplexed (ppc64's
 * socket calls, reached through socketcall on old kernels), while glibc
 * makes them directly. */
static int syscall_nr(const char *name)
{
	int nr;

	for (nr = 0; nr < SANDBOX_MAX_NR; nr++)
		if (syscall_names[nr] && !strcmp(syscall_names[nr], name))
			return nr;
	return -1;
}

/* The argument checks of one rule, as libseccomp comparisons; a path
 * check is one rule per allowed path. */
static int rule_add(scmp_filter_ctx ctx, int nr, enum sandbox_arg arg)
{
	const unsigned ro_mask = O_ACCMODE | O_CREAT;
	struct scmp_arg_cmp cmp;
	unsigned i;
	int err;

	switch (arg) {
	case SANDBOX_ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case SANDBOX_EACCES:
		/* The sanitizer runtime opens files in any thread: its list
		 * allows the call outright. */
		if (sandbox_sanitizer_rules.nr)
			return 0;
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 0);
	case SANDBOX_NO_EXEC:
		cmp = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
		break;
	case SANDBOX_OWN_PID:
		cmp = SCMP_A0(SCMP_CMP_EQ, getpid());
		break;
	case SANDBOX_READ_ONLY_A1:
		cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, ro_mask, O_RDONLY);
		break;
	case SANDBOX_READ_ONLY_A2:
		cmp = SCMP_A2(SCMP_CMP_MASKED_EQ, ro_mask, O_RDONLY);
		break;
	case SANDBOX_TO_UID:
	case SANDBOX_TO_GID: {
		unsigned long id = arg == SANDBOX_TO_UID ? setid_uid :
							   setid_gid;

		if (!setid_allowed)
			return 0;
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 3,
					SCMP_A0(SCMP_CMP_EQ, id),
					SCMP_A1(SCMP_CMP_EQ, id),
					SCMP_A2(SCMP_CMP_EQ, id));
	}
	case SANDBOX_ONE_GROUP:
		if (!setid_allowed)
			return 0;
		cmp = SCMP_A0(SCMP_CMP_EQ, 1);
		break;
	case SANDBOX_UNLINK_A0:
	case SANDBOX_UNLINK_A1:
		for (i = 0; i < nr_unlink_paths; i++) {
			uintptr_t p = (uintptr_t)unlink_paths[i];

			cmp = arg == SANDBOX_UNLINK_A0 ?
			      SCMP_A0(SCMP_CMP_EQ, p) : SCMP_A1(SCMP_CMP_EQ, p);
			err = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr,
						     1, &cmp);
			if (err)
				return err;
		}
		return 0;
	default:
		return -EINVAL;
	}
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp);
}

static int rules_add(scmp_filter_ctx ctx, const struct sandbox_rules *list)
{
	unsigned i;

	for (i = 0; i < list->nr; i++) {
		const struct sandbox_rule *r = &list->rules[i];
		int nr = syscall_nr(r->name);
		int err;

		/* Not a call of this arch. */
		if (nr < 0)
			continue;
		err = rule_add(ctx, nr, r->arg);
		if (err)
			return err;
	}
	return 0;
}

static int filter_load(enum sandbox_kind kind)
{
	scmp_filter_ctx ctx;
	int err;

	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx)
		return -ENOMEM;
	/* A call through another ABI (x32, int 0x80) traps too. */
	err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP);
	if (!err)
		err = rules_add(ctx, &sandbox_common_rules);
	if (!err)
		err = rules_add(ctx, &sandbox_kind_rules[kind]);
	if (!err)
		err = rules_add(ctx, &sandbox_sanitizer_rules);
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

void sandbox_enter(enum sandbox_kind kind)
{
	int err;

	if (!sandbox_enabled)
		return;
	err = filter_load(kind);
	if (err) {
		pr_err("seccomp: cannot filter the %s thread: %s",
		       kind_names[kind], strerror(-err));
		_exit(1);
	}
	thread_kind = kind;
}
