/* seccomp filters per thread kind (docs/security.md): each thread of a
 * running VM installs the filter of its kind as it starts, before it
 * handles guest input, and a system call outside its kind's list ends
 * the VM with one line that names the call and the kind. */
#ifndef THPVM_SANDBOX_H
#define THPVM_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

/* The kinds of thread; each has its own list (lib/sandbox_rules.c). */
enum sandbox_kind {
	SANDBOX_MAIN,		/* the thread that waits for the VM's end */
	SANDBOX_VCPU,		/* KVM_RUN and the exits it returns */
	SANDBOX_DEVICE,		/* virtio device threads, disk workers */
	SANDBOX_9P,		/* a 9p share's workers: its file calls */
	SANDBOX_CONTROL,	/* the control socket's server */
	SANDBOX_CONSOLE,	/* console output writer, console socket */
	SANDBOX_NET_USER,	/* the user-mode network's stack (libslirp) */
	SANDBOX_NR_KINDS,
};

/* The exit status of a VM ended by a forbidden call: 128 + SIGSYS, as a
 * shell reports a process that SIGSYS killed. */
#define SANDBOX_EXIT_STATUS 159

/* Once, in the main thread, before any other thread starts: with
 * enabled, later sandbox_enter() calls install filters and a forbidden
 * call is reported; without, they do nothing. 0 or -errno after a
 * message (the kernel has no seccomp filters). */
int sandbox_configure(bool enabled);

/* A thread may unlink path (a pointer compared, not a string: the VM's
 * own sockets, removed on the way out and by the fatal-signal handler
 * whatever thread it runs in). At most two; before the threads start.
 * 0, or -ENOSPC after a message. */
int sandbox_allow_unlink(const char *path);

/* Every thread may change to uid and gid (setresuid and setresgid with
 * those ids, setgroups to one group), which glibc has each thread do
 * when one of them drops root (--user): a thread started before the drop
 * must follow it. Before the threads start. */
void sandbox_allow_setid(uid_t uid, gid_t gid);

/* Installs the calling thread's filter for kind (nothing when filters
 * are off); later threads it creates inherit it. A thread that cannot be
 * confined must not serve the VM, and its creator has moved on: on
 * failure (no memory; a kernel without seccomp is refused earlier, by
 * sandbox_configure) the process ends with status 1 after a message. */
void sandbox_enter(enum sandbox_kind kind);

#endif
