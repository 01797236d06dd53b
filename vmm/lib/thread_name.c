/* Naming threads (thread_name.h). */
#include "lib/thread_name.h"

#include <stdarg.h>
#include <stdio.h>

/* TASK_COMM_LEN, the terminator included. */
#define THREAD_NAME_MAX 16

void thread_name_set(pthread_t thread, const char *fmt, ...)
{
	char name[THREAD_NAME_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	pthread_setname_np(thread, name);
}
