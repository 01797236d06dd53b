/* The console's output buffer: bytes come out in order, a reader that
 * stops reading never makes a producer wait, what does not fit is
 * dropped and counted, and close ends promptly either way. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/console_out.h"
#include "lib/util.h"
#include "unit.h"

static struct console_out_stats stats(struct console_out *co)
{
	struct console_out_stats s;

	console_out_stats(co, &s);
	return s;
}

/* Until the writer has written n bytes in all (or TIMEOUT_MS). */
static bool wait_written(struct console_out *co, uint64_t n)
{
	WAIT_FOR(stats(co).written >= n);
	return stats(co).written == n;
}

/* Until n bytes in all were dropped (or TIMEOUT_MS). */
static bool wait_dropped(struct console_out *co, uint64_t n)
{
	WAIT_FOR(stats(co).dropped >= n);
	return stats(co).dropped == n;
}

/* Reads exactly n bytes, waiting for each at most TIMEOUT_MS. */
static bool read_n(int fd, char *buf, size_t n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		if (poll(&pfd, 1, TIMEOUT_MS) != 1)
			return false;
		r = read(fd, buf + got, n - got);
		if (r <= 0)
			return false;
		got += r;
	}
	return true;
}

/* Fills the pipe and makes its write end blocking again: a reader that
 * has stopped reading. Returns the bytes it holds. */
static size_t fill_pipe(int p[2])
{
	static const char chunk[4096];
	size_t held = 0;
	ssize_t n;

	fcntl(p[1], F_SETFL, O_NONBLOCK);
	while ((n = write(p[1], chunk, sizeof(chunk))) > 0)
		held += n;
	while ((n = write(p[1], chunk, 1)) > 0)
		held += n;
	fcntl(p[1], F_SETFL, 0);
	return held;
}

static void drain_pipe(int fd, size_t n)
{
	char buf[4096];

	while (n) {
		ssize_t r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));

		if (r <= 0)
			break;
		n -= r;
	}
}

/* Puts that wrap around the ring come out whole and in order. */
static void test_in_order(void)
{
	struct console_out co;
	char buf[32] = { 0 };
	int p[2];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(console_out_init(&co, p[1], 16, false), 0);
	console_out_put(&co, (const uint8_t *)"0123456789", 10);
	CHECK(wait_written(&co, 10));
	CHECK(read_n(p[0], buf, 10));
	CHECK(!memcmp(buf, "0123456789", 10));
	console_out_put(&co, (const uint8_t *)"abcdef", 6);
	console_out_put(&co, (const uint8_t *)"ghijkl", 6);
	CHECK(wait_written(&co, 22));
	CHECK(read_n(p[0], buf, 12));
	CHECK(!memcmp(buf, "abcdefghijkl", 12));
	CHECK_EQ(stats(&co).dropped, 0);
	CHECK_EQ(stats(&co).pending, 0);
	console_out_close(&co, 1000);
	close(p[0]);
	close(p[1]);
}

/* A reader that stops (a full pipe, a terminal stopped with Ctrl-S):
 * puts return at once, the overflow is dropped and counted, and once
 * it reads again what was kept comes out in order. */
static void test_stalled_reader(void)
{
	char want[40], got[40];
	struct console_out co;
	struct timespec t0;
	size_t held;
	int p[2], i;

	CHECK_EQ(pipe(p), 0);
	held = fill_pipe(p);
	CHECK_EQ(console_out_init(&co, p[1], 32, false), 0);
	for (i = 0; i < 40; i++)
		want[i] = 'A' + i;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	console_out_put(&co, (const uint8_t *)want, 20);
	console_out_put(&co, (const uint8_t *)want + 20, 20);
	/* Returned at all: a put that waited for the reader never would;
	 * the bound leaves room for a stalled (emulated) host. */
	CHECK(time_ms_since(&t0) < 10000);
	CHECK_EQ(stats(&co).pending, 32);
	CHECK_EQ(stats(&co).dropped, 8);
	CHECK_EQ(stats(&co).written, 0);
	drain_pipe(p[0], held);
	CHECK(read_n(p[0], got, 32));
	CHECK(!memcmp(got, want, 32));
	CHECK(wait_written(&co, 32));
	/* Room again: nothing more is dropped. */
	console_out_put(&co, (const uint8_t *)"xy", 2);
	CHECK(read_n(p[0], got, 2));
	CHECK(!memcmp(got, "xy", 2));
	CHECK_EQ(stats(&co).dropped, 8);
	console_out_close(&co, 1000);
	close(p[0]);
	close(p[1]);
}

/* Close with a writer stuck in write(): it gives up after the drain
 * time without progress instead of waiting for the reader. */
static void test_close_with_stuck_reader(void)
{
	struct console_out co;
	struct timespec t0;
	int p[2];

	CHECK_EQ(pipe(p), 0);
	fill_pipe(p);
	CHECK_EQ(console_out_init(&co, p[1], 64, false), 0);
	console_out_put(&co, (const uint8_t *)"stuck", 5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	console_out_close(&co, 50);
	/* Well short of the 5 s a writer still making progress gets. */
	CHECK(time_ms_since(&t0) < 4500);
	CHECK(time_ms_since(&t0) >= 40);
	/* Again, and on a zeroed one: nothing to do. */
	console_out_close(&co, 50);
	memset(&co, 0, sizeof(co));
	console_out_close(&co, 50);
	close(p[0]);
	close(p[1]);
}

/* A reader that went away (EPIPE): everything from then on is dropped,
 * and puts still never wait. */
static void test_reader_gone(void)
{
	struct console_out co;
	int p[2];

	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	CHECK_EQ(console_out_init(&co, p[1], 16, false), 0);
	console_out_put(&co, (const uint8_t *)"lost", 4);
	CHECK(wait_dropped(&co, 4));
	console_out_put(&co, (const uint8_t *)"more", 4);
	CHECK_EQ(stats(&co).dropped, 8);
	CHECK_EQ(stats(&co).pending, 0);
	console_out_close(&co, 1000);
	close(p[1]);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_in_order),
		UNIT_TEST(test_stalled_reader),
		UNIT_TEST(test_close_with_stuck_reader),
		UNIT_TEST(test_reader_gone),
	};

	return UNIT_RUN(tests);
}
