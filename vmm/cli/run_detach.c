/* thpvm run --detach (run_detach.h). */
#include "cli/run_detach.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"

/* In the parent: the child's word that the VM is ready, or its end. */
static void __attribute__((noreturn)) parent_wait(int fd, pid_t child)
{
	ssize_t n;
	char c;
	int st;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);
	if (waitpid(child, &st, 0) == child && WIFEXITED(st) &&
	    WEXITSTATUS(st))
		_exit(WEXITSTATUS(st));
	pr_err("the detached VM ended before it was ready");
	_exit(1);
}

/* target onto /dev/null; -errno after one message if that fails. */
static int null_onto(int target)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0 || dup2(fd, target) < 0) {
		err = -errno;
		pr_err("/dev/null: %s", strerror(-err));
	}
	if (fd >= 0)
		close(fd);
	return err;
}

int run_detach_start(void)
{
	int p[2], err;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		pr_err("--detach: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		pr_err("--detach: cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid > 0) {
		close(p[1]);
		parent_wait(p[0], pid);
	}
	close(p[0]);
	/* A child is never a process group leader, so this succeeds. */
	setsid();
	err = null_onto(STDIN_FILENO);
	if (!err)
		err = null_onto(STDOUT_FILENO);
	if (err) {
		close(p[1]);
		return err;
	}
	return p[1];
}

void run_detach_ready(int fd)
{
	struct stat st;

	if (write(fd, "r", 1) != 1)
		pr_warn("--detach: the command that started the VM is gone");
	close(fd);
	/* A caller reading stderr to its end (a pipe, $(...)) would wait
	 * as long as the VM runs, and a terminal is not ours any more. */
	if (fstat(STDERR_FILENO, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* The VM is up and the caller told so: a failure here was
		 * reported, and the VM goes on with stderr as it was. */
		(void)null_onto(STDERR_FILENO);
	}
}
