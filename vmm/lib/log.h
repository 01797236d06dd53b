/* Messages to stderr, prefixed "thpvm: ". One line per event. */
#ifndef THPVM_LOG_H
#define THPVM_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped; set from -v / THPVM_DEBUG. */
extern enum log_level log_max_level;

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* How many errors have been reported: a caller handed a failure that
 * sees the count unchanged knows that nothing said why. */
unsigned log_error_count(void);

/* For events a guest can trigger at will: at most a few lines per second
 * per call site, so a hostile guest cannot flood the host log. */
struct log_ratelimit {
	long window_start;
	unsigned printed;
	unsigned suppressed;
};
bool log_ratelimit_ok(struct log_ratelimit *rl);

#define pr_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#define pr_warn_ratelimited(...)                                     \
	do {                                                         \
		static struct log_ratelimit rl_;                     \
		if (log_ratelimit_ok(&rl_))                          \
			log_msg(LOG_WARN, __VA_ARGS__);              \
	} while (0)

#endif
