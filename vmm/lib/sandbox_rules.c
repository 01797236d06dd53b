/* The system calls each thread kind may make (sandbox_rules.h). A name
 * an arch lacks is skipped there, so both spellings of a call are
 * listed where the arches differ (open/openat, poll/ppoll, unlink/
 * unlinkat, epoll_wait/epoll_pwait: arm64 has only the second; recv/
 * recvfrom, send/sendto: glibc makes the first on ppc64, which has
 * them, the second where they are missing). */
#include "lib/sandbox_rules.h"

#include "lib/util.h"

#define RULES(array) { array, ARRAY_SIZE(array) }
/* A call allowed whatever its arguments. */
#define ANY(name) { name, SANDBOX_ANY }
/* glibc's malloc opens /proc/sys/vm/overcommit_memory and
 * /sys/devices/system/cpu/online, read-only, once per process, in
 * whichever thread first trims a heap or sizes its arenas, and copes
 * when it cannot: threads that open nothing get EACCES for it. */
#define NO_OPEN { "open", SANDBOX_EACCES }, { "openat", SANDBOX_EACCES }

static const struct sandbox_rule common[] = {
	/* I/O on descriptors the thread was handed, logging to stderr. */
	ANY("read"), ANY("readv"), ANY("write"), ANY("writev"), ANY("close"),
	ANY("ioctl"),
	/* Locks, condition variables, joins, time. */
	ANY("futex"), ANY("clock_gettime"), ANY("clock_nanosleep"),
	ANY("nanosleep"), ANY("gettimeofday"), ANY("sched_yield"),
	ANY("getpid"), ANY("gettid"),
	/* qsort() asks for the host's memory size first. */
	ANY("sysinfo"),
	/* malloc and free, thread stacks; never new executable memory. */
	{ "mmap", SANDBOX_NO_EXEC }, { "mprotect", SANDBOX_NO_EXEC },
	ANY("munmap"), ANY("mremap"), ANY("brk"), ANY("madvise"),
	/* Kicking a vCPU; the fatal-signal handler, which can run in any
	 * thread: it removes the sockets and raises the signal again. */
	{ "tgkill", SANDBOX_OWN_PID }, ANY("rt_sigprocmask"),
	ANY("rt_sigaction"), ANY("rt_sigreturn"), ANY("restart_syscall"),
	{ "unlink", SANDBOX_UNLINK_A0 }, { "unlinkat", SANDBOX_UNLINK_A1 },
	ANY("exit"), ANY("exit_group"),
	/* A disk's io_uring: its device thread submits and reaps, and
	 * whichever thread pauses or resets the device (control, vCPU,
	 * main) waits for it to drain. The ring was set up before the
	 * filters and reaches the disk's own file only (backend/
	 * disk_ring.c); no thread may set up or register another. */
	ANY("io_uring_enter"),
	/* Following the main thread's drop to --user (and no other). */
	{ "setresuid", SANDBOX_TO_UID }, { "setresgid", SANDBOX_TO_GID },
	{ "setgroups", SANDBOX_ONE_GROUP },
};

static const struct sandbox_rule main_thread[] = {
	/* run_loop: stdin, the signalfd, the exit eventfd. */
	ANY("poll"), ANY("ppoll"),
	/* The way out: stopping and joining the threads, closing devices
	 * (a device thread's kick eventfds leave its epoll set, a timer is
	 * disarmed) and guest RAM, removing the sockets. */
	ANY("shutdown"), ANY("fcntl"), ANY("epoll_ctl"),
	ANY("timerfd_settime"),
	ANY("getpgrp"), ANY("getpgid"),
	/* A console writer stuck in write() is cancelled, and glibc's
	 * pthread_cancel() first loads its unwinder, libgcc_s.so.1: the
	 * main thread alone may map a library. */
	{ "open", SANDBOX_READ_ONLY_A1 }, { "openat", SANDBOX_READ_ONLY_A2 },
	ANY("fstat"), ANY("newfstatat"), ANY("pread64"),
	ANY("mmap"), ANY("mprotect"),
	/* A writable qcow2 disk writes its changed tables when it closes
	 * (backend/disk.c), and the clusters they free become holes. */
	ANY("preadv"), ANY("pwritev"), ANY("fdatasync"), ANY("fallocate"),
};

static const struct sandbox_rule vcpu[] = {
	/* Kicks arrive as signals, taken after KVM_RUN. */
	ANY("rt_sigtimedwait"),
	/* A driver's MSI-X set-up makes irqfds; enabling a queue adds its
	 * kick eventfd to the device thread's epoll set. */
	ANY("eventfd2"), ANY("epoll_ctl"),
	/* Device work a register write starts: a balloon's stats timer,
	 * a reset releasing memory. */
	ANY("timerfd_settime"), ANY("fallocate"), ANY("process_madvise"),
	/* powerpc's H_RANDOM hypercall. */
	ANY("getrandom"),
	NO_OPEN,
};

static const struct sandbox_rule device[] = {
	ANY("epoll_wait"), ANY("epoll_pwait"), ANY("epoll_ctl"),
	ANY("poll"), ANY("ppoll"),
	/* virtio-blk on a file or block device (BLKDISCARD, BLKZEROOUT
	 * through ioctl), virtio-net on a tap (read/writev). */
	ANY("pread64"), ANY("pwrite64"), ANY("preadv"), ANY("pwritev"),
	ANY("preadv2"), ANY("pwritev2"), ANY("lseek"),
	ANY("fdatasync"), ANY("fsync"), ANY("fallocate"),
	/* The balloon's release of guest memory, its stats timer. */
	ANY("process_madvise"), ANY("timerfd_settime"), ANY("timerfd_gettime"),
	/* virtio-rng. */
	ANY("getrandom"),
	NO_OPEN,
};

/* The 9p server's calls (backend/p9_*.c) on the share: every path is
 * resolved with openat2 below the share's directory, opened before the
 * filters, and the *at calls act on directories opened that way. Where
 * arches or glibc versions spell a call differently, both are listed:
 * fstat as newfstatat, chmod as fchmodat and renameat as renameat2 on
 * arm64. */
static const struct sandbox_rule p9[] = {
	ANY("openat2"), ANY("fstat"), ANY("newfstatat"), ANY("fstatfs"),
	ANY("getdents64"), ANY("lseek"), ANY("preadv"), ANY("pwritev"),
	ANY("ftruncate"), ANY("fsync"), ANY("fdatasync"),
	ANY("mkdirat"), ANY("mknodat"), ANY("symlinkat"), ANY("linkat"),
	ANY("renameat"), ANY("renameat2"), ANY("unlinkat"),
	ANY("readlinkat"), ANY("fchownat"), ANY("utimensat"),
	/* A mode is set through /proc/self/fd/N, the file's O_PATH fd. */
	ANY("chmod"), ANY("fchmodat"),
	NO_OPEN,
};

static const struct sandbox_rule control[] = {
	ANY("poll"), ANY("ppoll"),
	/* Clients on the listening socket it was handed: no new sockets. */
	ANY("accept"), ANY("accept4"), ANY("recv"), ANY("recvfrom"),
	ANY("send"), ANY("sendto"),
	ANY("recvmsg"), ANY("sendmsg"), ANY("getsockopt"), ANY("shutdown"),
	ANY("fcntl"),
	/* Stats read /proc/self files, read-only. */
	{ "open", SANDBOX_READ_ONLY_A1 }, { "openat", SANDBOX_READ_ONLY_A2 },
	ANY("fstat"), ANY("newfstatat"), ANY("lseek"),
	/* Balloon requests: the stats timer, releases. */
	ANY("timerfd_settime"), ANY("fallocate"), ANY("process_madvise"),
	/* The user-mode network's connection table names each
	 * forward's bound address. */
	ANY("getsockname"),
};

static const struct sandbox_rule console[] = {
	ANY("poll"), ANY("ppoll"),
	ANY("accept"), ANY("accept4"), ANY("recv"), ANY("recvfrom"),
	ANY("send"), ANY("sendto"),
	/* Peer credentials, as control reads them (lib/listener.h). */
	ANY("getsockopt"), ANY("shutdown"), ANY("fcntl"),
	NO_OPEN,
};

/* libslirp makes a host socket for each guest connection, UDP flow and
 * ping, and accepts on the forwards' listeners; its DNS forwarding
 * reads /etc/resolv.conf for the host's servers. No exec, no files
 * written. */
static const struct sandbox_rule net_user[] = {
	ANY("poll"), ANY("ppoll"),
	ANY("socket"), ANY("connect"), ANY("bind"), ANY("listen"),
	ANY("accept"), ANY("accept4"), ANY("shutdown"),
	ANY("recv"), ANY("recvfrom"), ANY("recvmsg"),
	ANY("send"), ANY("sendto"), ANY("sendmsg"),
	ANY("getsockopt"), ANY("setsockopt"), ANY("getsockname"),
	ANY("getpeername"), ANY("fcntl"),
	{ "open", SANDBOX_READ_ONLY_A1 }, { "openat", SANDBOX_READ_ONLY_A2 },
	ANY("fstat"), ANY("newfstatat"), ANY("stat"), ANY("lseek"),
};

const struct sandbox_rules sandbox_common_rules = RULES(common);

const struct sandbox_rules sandbox_kind_rules[SANDBOX_NR_KINDS] = {
	[SANDBOX_MAIN] = RULES(main_thread),
	[SANDBOX_VCPU] = RULES(vcpu),
	[SANDBOX_DEVICE] = RULES(device),
	[SANDBOX_9P] = RULES(p9),
	[SANDBOX_CONTROL] = RULES(control),
	[SANDBOX_CONSOLE] = RULES(console),
	[SANDBOX_NET_USER] = RULES(net_user),
};

#ifdef THPVM_SANITIZE
/* The sanitizer runtime, in any thread: a report reads /proc/self/maps
 * and the binary for symbols and may start a symbolizer; the leak check
 * at exit stops the threads with ptrace from a thread it clones. */
static const struct sandbox_rule sanitizer[] = {
	ANY("open"), ANY("openat"), ANY("readlink"), ANY("readlinkat"),
	ANY("stat"), ANY("lstat"), ANY("fstat"), ANY("newfstatat"),
	ANY("statx"), ANY("access"), ANY("faccessat"), ANY("faccessat2"),
	ANY("lseek"), ANY("pread64"), ANY("fcntl"),
	/* The leak check lists /proc/self/task with getdents on x86. */
	ANY("getdents"), ANY("getdents64"),
	ANY("sigaltstack"), ANY("prctl"), ANY("prlimit64"), ANY("getrlimit"),
	ANY("setrlimit"), ANY("uname"), ANY("getppid"), ANY("getuid"),
	ANY("sched_getaffinity"),
	ANY("clone"), ANY("clone3"), ANY("fork"), ANY("vfork"), ANY("execve"),
	ANY("wait4"), ANY("waitid"), ANY("ptrace"), ANY("kill"), ANY("tkill"),
	ANY("pipe"), ANY("pipe2"), ANY("dup"), ANY("dup2"), ANY("dup3"),
	ANY("process_vm_readv"),
};

const struct sandbox_rules sandbox_sanitizer_rules = RULES(sanitizer);
#else
const struct sandbox_rules sandbox_sanitizer_rules;
#endif
