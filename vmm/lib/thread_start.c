/* Threads with every signal blocked (thread_start.h). */
#include "lib/thread_start.h"

#include <signal.h>

#include "lib/thread_name.h"

int thread_start_unsignalled(pthread_t *thread, void *(*fn)(void *),
			     void *arg, const char *name)
{
	sigset_t all, old;
	int err;

	/* A new thread takes its creator's mask. All but SIGSYS: blocked,
	 * a seccomp trap kills the process without the handler's line
	 * naming the call (lib/sandbox.c). */
	sigfillset(&all);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	thread_name_set(*thread, "%s", name);
	return 0;
}
