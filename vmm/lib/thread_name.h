/* Thread names, as `top -H`, perf and /proc/PID/task/TID/comm show them:
 * "vcpu0", "blk0-io", "control"... (QEMU's debug-threads does the same),
 * so that a busy thread says what it is. */
#ifndef THPVM_THREAD_NAME_H
#define THPVM_THREAD_NAME_H

#include <pthread.h>

/* The kernel keeps 15 characters: a longer name is cut, not refused, and
 * a thread left unnamed only shows as "thpvm", so nothing fails here. */
void thread_name_set(pthread_t thread, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
