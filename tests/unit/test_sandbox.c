/* seccomp filters per thread kind (lib/sandbox.c): each check runs in a
 * child process whose one extra thread enters a kind's filter and makes
 * calls; a forbidden one must end the child with SANDBOX_EXIT_STATUS and
 * the line naming the call and the kind, an allowed one must work. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/p9_server.h"
#include "lib/sandbox.h"
#include "lib/thread_start.h"
#include "unit.h"

struct child_run {
	enum sandbox_kind kind;
	void (*body)(void);
};

/* run_in_child's thread made as the control and console threads are,
 * with signals blocked. */
static bool start_unsignalled;

static void *child_thread(void *arg)
{
	struct child_run *cr = arg;

	sandbox_enter(cr->kind);
	cr->body();
	return NULL;
}

/* A share the 9p case's child serves (made before the filters, as
 * thpvm makes it), and its scratch directory. */
static struct p9_server *share;
static char share_dir[64];
/* The ids files get: read before the filter, which has no getuid. */
static uid_t uid;
static gid_t gid;

/* Runs body in a thread of kind in a child with filters on (or off);
 * returns the child's wait status, its stderr in err. */
static int run_in_child(bool filters, enum sandbox_kind kind,
			void (*body)(void), char *err, size_t len)
{
	struct child_run cr = { kind, body };
	int pipefd[2], status = -1;
	ssize_t n, got = 0;
	pthread_t t;
	pid_t pid;

	if (pipe(pipefd) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		if (sandbox_configure(filters) ||
		    (start_unsignalled ?
		     thread_start_unsignalled(&t, child_thread, &cr, "child") :
		     pthread_create(&t, NULL, child_thread, &cr)))
			_exit(2);
		pthread_join(t, NULL);
		_exit(0);
	}
	close(pipefd[1]);
	while (got < (ssize_t)len - 1 &&
	       (n = read(pipefd[0], err + got, len - 1 - got)) > 0)
		got += n;
	err[got] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return status;
}

static bool kernel_filters(void)
{
	if (!getenv("THPVM_TEST_QEMU_USER"))
		return false;
	SKIP("system calls emulated by qemu-user, which has no seccomp");
	return true;
}

static void make_socket(void)
{
	socket(AF_UNIX, SOCK_STREAM, 0);
}

static void exec_mapping(void)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	     -1, 0);
}

/* What every device thread does: memory, locks, eventfd-style I/O. */
static void device_work(void)
{
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[16];

	if (p == MAP_FAILED || madvise(p, 1 << 20, MADV_DONTNEED) ||
	    munmap(p, 1 << 20) || getrandom(buf, sizeof(buf), 0) < 0)
		_exit(3);
	free(malloc(1 << 20));
}

static void kill_other_process(void)
{
	/* pid 1 never gets it: the filter stops the call first. */
	syscall(SYS_tgkill, 1, 1, 0);
}

static char allowed_path[] = "/nonexistent/thpvm-sandbox-test";

static void unlink_allowed(void)
{
	if (unlink(allowed_path) == 0 || errno != ENOENT)
		_exit(3);
}

static void unlink_copy(void)
{
	char copy[sizeof(allowed_path)];

	memcpy(copy, allowed_path, sizeof(copy));
	unlink(copy);
}

static bool killed_for(int status, const char *err, const char *line)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != SANDBOX_EXIT_STATUS) {
		printf("# status 0x%x, stderr: %s\n", status, err);
		return false;
	}
	if (!strstr(err, line)) {
		printf("# stderr lacks \"%s\": %s\n", line, err);
		return false;
	}
	return true;
}

static void test_forbidden_call_named(void)
{
	char err[512], line[128];
	int status;

	if (kernel_filters())
		return;
	status = run_in_child(true, SANDBOX_DEVICE, make_socket, err,
			      sizeof(err));
	snprintf(line, sizeof(line), "thpvm: seccomp: device thread made "
		 "forbidden system call socket (nr %d)\n", SYS_socket);
	CHECK(killed_for(status, err, line));
	status = run_in_child(true, SANDBOX_VCPU, make_socket, err,
			      sizeof(err));
	CHECK(killed_for(status, err, "vCPU thread made forbidden system "
			 "call socket"));
	/* A thread with signals blocked still gets SIGSYS, so the line. */
	start_unsignalled = true;
	status = run_in_child(true, SANDBOX_CONTROL, make_socket, err,
			      sizeof(err));
	start_unsignalled = false;
	CHECK(killed_for(status, err, "control thread made forbidden system "
			 "call socket"));
}

static void test_allowed_calls_work(void)
{
	char err[512];
	int status;

	if (kernel_filters())
		return;
	status = run_in_child(true, SANDBOX_DEVICE, device_work, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(err, "");
}

static void test_arguments_checked(void)
{
	char err[512];
	int status;

	if (kernel_filters())
		return;
	status = run_in_child(true, SANDBOX_DEVICE, exec_mapping, err,
			      sizeof(err));
	CHECK(killed_for(status, err, "forbidden system call mmap"));
	status = run_in_child(true, SANDBOX_CONTROL, kill_other_process, err,
			      sizeof(err));
	CHECK(killed_for(status, err, "control thread made forbidden system "
			 "call tgkill"));
	/* Only the very buffer given to sandbox_allow_unlink(). */
	CHECK_EQ(sandbox_allow_unlink(allowed_path), 0);
	status = run_in_child(true, SANDBOX_DEVICE, unlink_allowed, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = run_in_child(true, SANDBOX_DEVICE, unlink_copy, err,
			      sizeof(err));
	CHECK(killed_for(status, err, "forbidden system call unlink"));
}

#ifndef THPVM_SANITIZE
/* What glibc's malloc does once per process in some thread. */
static void open_read_only(void)
{
	if (open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC) >= 0
	    || errno != EACCES)
		_exit(3);
}

/* Threads that open nothing get EACCES, not a kill: glibc copes. (The
 * sanitizer runtime's list allows open in every kind.) */
static void test_open_refused_not_killed(void)
{
	char err[512];
	int status;

	if (kernel_filters())
		return;
	status = run_in_child(true, SANDBOX_DEVICE, open_read_only, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(err, "");
}
#endif

/* One 9P message being built for the 9p case. */
struct msg {
	uint8_t b[512];
	size_t n;
	const char *what;
};

static void put(struct msg *m, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		m->b[m->n++] = v >> (8 * i);
}

static void put_s(struct msg *m, const char *s)
{
	put(m, strlen(s), 2);
	memcpy(m->b + m->n, s, strlen(s));
	m->n += strlen(s);
}

static struct msg *begin(struct msg *m, uint8_t type, const char *what)
{
	m->n = 0;
	m->what = what;
	put(m, 0, 4);
	put(m, type, 1);
	put(m, 1, 2);
	return m;
}

/* Has the share answer m; anything but its R-message ends the child
 * with status 3, naming the message. */
static void answer(struct msg *m)
{
	static uint8_t reply[8192];
	struct iovec req = { m->b, m->n }, resp = { reply, sizeof(reply) };
	int64_t n;

	m->b[0] = m->n;
	m->b[1] = m->n >> 8;
	n = p9_server_handle(share, &req, 1, &resp, 1);
	if (n < P9_HEADER_SIZE || reply[4] != m->b[4] + 1) {
		fprintf(stderr, "%s: reply %d, error %d\n", m->what,
			n < 5 ? -1 : reply[4], n < 11 ? 0 :
			reply[7] | reply[8] << 8);
		_exit(3);
	}
}

static void walk(struct msg *m, uint32_t fid, uint32_t newfid,
		 const char *name)
{
	begin(m, P9_TWALK, name ? name : "Twalk");
	put(m, fid, 4);
	put(m, newfid, 4);
	put(m, name ? 1 : 0, 2);
	if (name)
		put_s(m, name);
	answer(m);
}

/* The session, then a file made, written, read and changed. */
static void p9_file_calls(struct msg *m)
{
	begin(m, P9_TVERSION, "Tversion");
	put(m, 8192, 4);
	put_s(m, "9P2000.L");
	answer(m);
	begin(m, P9_TATTACH, "Tattach");
	put(m, 0, 4);
	put(m, P9_NOFID, 4);
	put_s(m, "");
	put_s(m, "");
	put(m, 0, 4);
	answer(m);
	walk(m, 0, 1, NULL);
	begin(m, P9_TLCREATE, "Tlcreate");
	put(m, 1, 4);
	put_s(m, "f");
	put(m, O_RDWR, 4);
	put(m, 0644, 4);
	put(m, gid, 4);
	answer(m);
	begin(m, P9_TWRITE, "Twrite");
	put(m, 1, 4);
	put(m, 0, 8);
	put(m, 5, 4);
	put_s(m, "hel");	/* 2 bytes of length, 3 of text: 5 */
	answer(m);
	begin(m, P9_TREAD, "Tread");
	put(m, 1, 4);
	put(m, 0, 8);
	put(m, 5, 4);
	answer(m);
	begin(m, P9_TFSYNC, "Tfsync");
	put(m, 1, 4);
	put(m, 0, 4);
	answer(m);
	begin(m, P9_TFSYNC, "Tfsync datasync");
	put(m, 1, 4);
	put(m, 1, 4);
	answer(m);
	walk(m, 0, 2, "f");
	/* mode, uid, gid, size, atime and mtime set: of a fid not open. */
	begin(m, P9_TSETATTR, "Tsetattr");
	put(m, 2, 4);
	put(m, 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20 | 0x80 | 0x100, 4);
	put(m, 0600, 4);
	put(m, uid, 4);
	put(m, gid, 4);
	put(m, 3, 8);
	put(m, 1, 8);
	put(m, 0, 8);
	put(m, 2, 8);
	put(m, 0, 8);
	answer(m);
	begin(m, P9_TGETATTR, "Tgetattr");
	put(m, 2, 4);
	put(m, 0x7ff, 8);
	answer(m);
	begin(m, P9_TSTATFS, "Tstatfs");
	put(m, 0, 4);
	answer(m);
}

/* Names made, renamed, read, listed and removed. */
static void p9_dir_calls(struct msg *m)
{
	begin(m, P9_TMKDIR, "Tmkdir");
	put(m, 0, 4);
	put_s(m, "d");
	put(m, 0755, 4);
	put(m, gid, 4);
	answer(m);
	begin(m, P9_TSYMLINK, "Tsymlink");
	put(m, 0, 4);
	put_s(m, "l");
	put_s(m, "f");
	put(m, gid, 4);
	answer(m);
	begin(m, P9_TLINK, "Tlink");
	put(m, 0, 4);
	put(m, 2, 4);
	put_s(m, "h");
	answer(m);
	begin(m, P9_TMKNOD, "Tmknod");
	put(m, 0, 4);
	put_s(m, "p");
	put(m, S_IFIFO | 0644, 4);
	put(m, 0, 4);
	put(m, 0, 4);
	put(m, gid, 4);
	answer(m);
	begin(m, P9_TRENAMEAT, "Trenameat");
	put(m, 0, 4);
	put_s(m, "h");
	put(m, 0, 4);
	put_s(m, "h2");
	answer(m);
	walk(m, 0, 3, "l");
	begin(m, P9_TREADLINK, "Treadlink");
	put(m, 3, 4);
	answer(m);
	begin(m, P9_TRENAME, "Trename");
	put(m, 3, 4);
	put(m, 0, 4);
	put_s(m, "l2");
	answer(m);
	walk(m, 0, 4, "d");
	begin(m, P9_TLOPEN, "Tlopen");
	put(m, 4, 4);
	put(m, 0200000, 4);	/* O_RDONLY | DOTL_DIRECTORY */
	answer(m);
	begin(m, P9_TREADDIR, "Treaddir");
	put(m, 4, 4);
	put(m, 0, 8);
	put(m, 4096, 4);
	answer(m);
	begin(m, P9_TUNLINKAT, "Tunlinkat");
	put(m, 0, 4);
	put_s(m, "p");
	put(m, 0, 4);
	answer(m);
	begin(m, P9_TUNLINKAT, "Tunlinkat dir");
	put(m, 0, 4);
	put_s(m, "d");
	put(m, 0x200, 4);
	answer(m);
	begin(m, P9_TREMOVE, "Tremove");
	put(m, 3, 4);
	answer(m);
	begin(m, P9_TCLUNK, "Tclunk");
	put(m, 1, 4);
	answer(m);
}

static void p9_server_calls(void)
{
	struct msg m;

	p9_file_calls(&m);
	p9_dir_calls(&m);
}

/* Scratch files left by the 9p case. */
static void share_clean(void)
{
	static const char *const names[] = { "f", "h2", "l2", "p", "d" };
	char path[96];
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", share_dir, names[i]);
		if (unlink(path))
			rmdir(path);
	}
	rmdir(share_dir);
}

/* The 9p kind's list holds every call the 9p server makes, as this
 * arch's C library makes them: a share answers each kind of message
 * from a filtered thread. */
static void test_9p_server_calls(void)
{
	char err[512];
	int status;

	if (kernel_filters())
		return;
	uid = getuid();
	gid = getgid();
	snprintf(share_dir, sizeof(share_dir), "/tmp/thpvm-sandbox-XXXXXX");
	CHECK(mkdtemp(share_dir));
	CHECK_EQ(p9_server_create(&share, "test", share_dir, false), 0);
	if (!share)
		return;
	status = run_in_child(true, SANDBOX_9P, p9_server_calls, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(err, "");
	/* And a socket is still refused there. */
	status = run_in_child(true, SANDBOX_9P, make_socket, err,
			      sizeof(err));
	CHECK(killed_for(status, err, "9p thread made forbidden system call "
			 "socket"));
	p9_server_destroy(share);
	share_clean();
}

static void test_off_filters_nothing(void)
{
	char err[512];
	int status;

	status = run_in_child(false, SANDBOX_DEVICE, make_socket, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(err, "");
}

#ifdef THPVM_ASAN
/* Seen by ASan alone: UBSan (which halts first in CI) does not look
 * at freed memory. */
static void use_after_free(void)
{
	volatile char *p = malloc(16);

	free((void *)p);
	p[0] = 1;
}

/* The sanitizer runtime's own calls are allowed: its report comes out
 * whole, symbolized, from a filtered thread, not a seccomp kill. */
static void test_sanitizer_report_whole(void)
{
	char err[16384];
	int status;

	if (kernel_filters())
		return;
	status = run_in_child(true, SANDBOX_DEVICE, use_after_free, err,
			      sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
	      WEXITSTATUS(status) != SANDBOX_EXIT_STATUS);
	CHECK(strstr(err, "AddressSanitizer: heap-use-after-free"));
	CHECK(strstr(err, " in use_after_free "));
	CHECK(strstr(err, "SUMMARY: AddressSanitizer"));
	CHECK(!strstr(err, "forbidden system call"));
	if (unit.current_failures)
		printf("# status 0x%x, stderr:\n# %s\n", status, err);
}
#endif

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_forbidden_call_named),
		UNIT_TEST(test_allowed_calls_work),
		UNIT_TEST(test_arguments_checked),
		UNIT_TEST(test_9p_server_calls),
#ifndef THPVM_SANITIZE
		UNIT_TEST(test_open_refused_not_killed),
#endif
		UNIT_TEST(test_off_filters_nothing),
#ifdef THPVM_ASAN
		UNIT_TEST(test_sanitizer_report_whole),
#endif
	};

	return UNIT_RUN(tests);
}
