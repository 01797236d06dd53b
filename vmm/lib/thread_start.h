/* Threads that leave signals to others: the control server, the console
 * writer and the console socket run with every signal blocked, so that
 * SIGINT, SIGTERM and the vCPUs' kicks reach the main thread and the
 * vCPUs that wait for them. */
#ifndef THPVM_THREAD_START_H
#define THPVM_THREAD_START_H

#include <pthread.h>

/* Starts fn(arg) with every signal blocked and names it (thread_name.h).
 * Returns 0 or -errno; the caller's own mask is unchanged either way. */
int thread_start_unsignalled(pthread_t *thread, void *(*fn)(void *),
			     void *arg, const char *name);

#endif
