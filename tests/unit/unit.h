/* A minimal unit-test harness that prints TAP, which meson understands
 * (protocol: 'tap'). Each TEST is a subtest; CHECKs inside it record
 * failures with file and line and let the test go on. */
#ifndef THPVM_UNIT_H
#define THPVM_UNIT_H

#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/util.h"

struct unit_state {
	unsigned run;
	unsigned failed_tests;
	unsigned current_failures;
	const char *skip_reason;
};
extern struct unit_state unit;

/* How long a test waits for what another thread is to do. Only a
 * failing check waits it out, so it is generous: in CI the unit tests
 * also run under qemu-user and in emulated arm64 and ppc64 hosts, on a
 * 2-CPU machine busy with other suites. */
#define TIMEOUT_MS 30000

/* Polls cond every millisecond until it holds or TIMEOUT_MS pass; what
 * it was last. */
#define WAIT_FOR(cond)                                                     \
	({                                                                 \
		struct timespec t0_;                                       \
		bool ok_;                                                  \
		clock_gettime(CLOCK_MONOTONIC, &t0_);                      \
		while (!(ok_ = (cond)) && time_ms_since(&t0_) < TIMEOUT_MS) \
			poll(NULL, 0, 1);                                  \
		ok_;                                                       \
	})

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("# %s:%d: CHECK(%s) failed\n", __FILE__,    \
			       __LINE__, #cond);                           \
			unit.current_failures++;                           \
		}                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                     \
	do {                                                               \
		unsigned long long a_ = (unsigned long long)(a);           \
		unsigned long long b_ = (unsigned long long)(b);           \
		if (a_ != b_) {                                            \
			printf("# %s:%d: %s == %s failed: 0x%llx != 0x%llx\n", \
			       __FILE__, __LINE__, #a, #b, a_, b_);        \
			unit.current_failures++;                           \
		}                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                    \
	do {                                                               \
		const char *a_ = (a), *b_ = (b);                           \
		if (!a_ || !b_ || strcmp(a_, b_)) {                        \
			printf("# %s:%d: \"%s\" != \"%s\"\n", __FILE__,    \
			       __LINE__, a_ ? a_ : "(null)",               \
			       b_ ? b_ : "(null)");                        \
			unit.current_failures++;                           \
		}                                                          \
	} while (0)

/* Marks the running test as skipped; the test should return after it. */
#define SKIP(reason) (unit.skip_reason = (reason))

struct unit_test {
	const char *name;
	void (*fn)(void);
};
#define UNIT_TEST(fn) { #fn, fn }

/* Announces the TAP plan first, so that a program that dies halfway
 * shows as incomplete, then runs the tests in order; returns the
 * process exit status. */
int unit_main(const struct unit_test *tests, unsigned nr);
#define UNIT_RUN(tests) unit_main(tests, sizeof(tests) / sizeof((tests)[0]))
/* For a program none of whose tests can run here: the TAP plan of no
 * tests, skipped for reason (one skip, not one per test); returns the
 * process exit status. */
int unit_skip_all(const char *reason);

/* Pseudo-random in [0, n): xorshift64 from a fixed seed, so that a
 * failing sequence repeats. */
uint64_t unit_rand(uint64_t n);
/* The same generator's next 64 bits, any value. */
uint64_t unit_rand64(void);

#endif
