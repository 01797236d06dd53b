/* Logging to stderr with a per-call-site rate limit for guest-triggered
 * messages. */
#include "lib/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

enum log_level log_max_level = LOG_INFO;
static unsigned error_count;

static const char *const level_prefix[] = {
	[LOG_ERR] = "error: ",
	[LOG_WARN] = "warning: ",
	[LOG_INFO] = "",
	[LOG_DEBUG] = "debug: ",
};

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (level > log_max_level)
		return;
	if (level == LOG_ERR)
		__atomic_add_fetch(&error_count, 1, __ATOMIC_RELAXED);
	n = snprintf(line, sizeof(line), "thpvm: %s", level_prefix[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* One fputs of a whole line, so lines from vCPU threads don't mix. */
	fprintf(stderr, "%s\n", line);
}

unsigned log_error_count(void)
{
	return __atomic_load_n(&error_count, __ATOMIC_RELAXED);
}

#define RATELIMIT_WINDOW_S 5
#define RATELIMIT_BURST 10

static pthread_mutex_t ratelimit_lock = PTHREAD_MUTEX_INITIALIZER;

bool log_ratelimit_ok(struct log_ratelimit *rl)
{
	struct timespec now;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&ratelimit_lock);
	if (now.tv_sec - rl->window_start >= RATELIMIT_WINDOW_S) {
		if (rl->suppressed)
			log_msg(LOG_WARN, "%u similar messages suppressed",
				rl->suppressed);
		rl->window_start = now.tv_sec;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	ok = rl->printed < RATELIMIT_BURST;
	if (ok)
		rl->printed++;
	else
		rl->suppressed++;
	pthread_mutex_unlock(&ratelimit_lock);
	return ok;
}
