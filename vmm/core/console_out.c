/* Console output through a bounded buffer and a writer thread (see
 * console_out.h).
 *
 * Why a thread doing blocking writes rather than O_NONBLOCK writes from
 * the main loop: O_NONBLOCK is a flag of the open file description, which
 * thpvm's stdout shares with the shell that started it and with whatever
 * else writes to the same terminal or pipe. Setting it would make their
 * writes fail with EAGAIN while thpvm runs (and for good if thpvm is
 * killed before it could put the flag back). Reopening the terminal
 * through /proc/self/fd would give a description of our own, but not for
 * a socket, and not with the same offset for a file. A thread that may
 * block in write() leaves the fd exactly as it was given, for every kind
 * of fd; at exit it is cancelled (write() is a cancellation point) if the
 * reader still does not read. */
#include "core/console_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_start.h"
#include "lib/util.h"

/* However fast a trickling reader still makes progress, exit waits no
 * longer than this for it. */
#define DRAIN_MAX_MS 5000
/* Bytes filtered at a time, into a buffer on the stack. */
#define FILTER_PIECE 256

static void *writer_thread(void *arg)
{
	struct console_out *co = arg;

	sandbox_enter(SANDBOX_CONSOLE);
	/* Cancellation only inside write(), where no lock is held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&co->lock);
	for (;;) {
		const uint8_t *p;
		size_t n;
		ssize_t got;
		int err;

		while (!byte_ring_used(&co->ring) && !co->stop)
			pthread_cond_wait(&co->changed, &co->lock);
		if (!byte_ring_used(&co->ring))
			break;
		/* The oldest bytes stay put while the lock is let go:
		 * producers only add after them, and drop when full. */
		p = byte_ring_peek(&co->ring, &n);
		pthread_mutex_unlock(&co->lock);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		got = write(co->fd, p, n);
		err = errno;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		pthread_mutex_lock(&co->lock);
		if (got < 0 && (err == EINTR || err == EAGAIN))
			continue;
		if (got < 0) {
			/* EPIPE, EIO...: the reader is gone for good. */
			co->broken = true;
			co->dropped += byte_ring_used(&co->ring);
			byte_ring_clear(&co->ring);
		} else {
			byte_ring_consume(&co->ring, got);
			co->written += got;
		}
		pthread_cond_broadcast(&co->changed);
	}
	pthread_mutex_unlock(&co->lock);
	return NULL;
}

int console_out_init(struct console_out *co, int fd, size_t size,
		     bool filter)
{
	pthread_condattr_t attr;
	void *buf;
	int err;

	memset(co, 0, sizeof(*co));
	co->fd = fd;
	co->filtering = filter;
	console_filter_init(&co->filter);
	buf = malloc(size);
	if (!buf) {
		pr_err("cannot allocate the console's %zu-byte buffer", size);
		return -ENOMEM;
	}
	byte_ring_init(&co->ring, buf, size);
	pthread_mutex_init(&co->lock, NULL);
	/* The drain at close times its waits on the monotonic clock. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&co->changed, &attr);
	pthread_condattr_destroy(&attr);
	err = thread_start_unsignalled(&co->thread, writer_thread, co,
				       "console");
	if (err) {
		pr_err("cannot start the console output thread: %s",
		       strerror(-err));
		pthread_cond_destroy(&co->changed);
		pthread_mutex_destroy(&co->lock);
		free(buf);
		co->ring.buf = NULL;
		return err;
	}
	co->started = true;
	return 0;
}

/* With co->lock held. */
static void put_locked(struct console_out *co, const uint8_t *data,
		       size_t len)
{
	bool was_empty = !byte_ring_used(&co->ring);
	size_t take;

	/* Full: the newest bytes are dropped, as a UART overruns. */
	take = co->broken ? 0 : byte_ring_put(&co->ring, data, len);
	co->dropped += len - take;
	/* The writer waits only while the buffer is empty. */
	if (was_empty && take)
		pthread_cond_broadcast(&co->changed);
}

void console_out_put(struct console_out *co, const uint8_t *data,
		     size_t len)
{
	uint8_t kept[FILTER_PIECE + CONSOLE_FILTER_SEQ_MAX];

	pthread_mutex_lock(&co->lock);
	if (!co->filtering) {
		put_locked(co, data, len);
	} else {
		for (size_t i = 0; i < len; i += FILTER_PIECE) {
			size_t n = MIN(FILTER_PIECE, len - i);

			put_locked(co, kept, console_filter_run(&co->filter,
						data + i, n, kept));
		}
	}
	pthread_mutex_unlock(&co->lock);
}

void console_out_stats(struct console_out *co, struct console_out_stats *s)
{
	pthread_mutex_lock(&co->lock);
	s->written = co->written;
	s->pending = byte_ring_used(&co->ring);
	s->dropped = co->dropped;
	s->filtered = co->filter.removed;
	pthread_mutex_unlock(&co->lock);
}

static void deadline_in(struct timespec *t, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/* With co->lock held: waits while the writer makes progress. */
static void drain_locked(struct console_out *co, unsigned drain_ms)
{
	struct timespec idle, last;
	uint64_t seen = co->written;

	deadline_in(&last, DRAIN_MAX_MS);
	deadline_in(&idle, drain_ms);
	while (byte_ring_used(&co->ring)) {
		struct timespec *until =
			idle.tv_sec < last.tv_sec ||
			(idle.tv_sec == last.tv_sec &&
			 idle.tv_nsec < last.tv_nsec) ? &idle : &last;

		if (pthread_cond_timedwait(&co->changed, &co->lock, until) ==
		    ETIMEDOUT)
			break;
		if (co->written != seen) {
			seen = co->written;
			deadline_in(&idle, drain_ms);
		}
	}
}

void console_out_close(struct console_out *co, unsigned drain_ms)
{
	uint64_t lost;
	bool broken;

	if (!co->started)
		return;
	pthread_mutex_lock(&co->lock);
	co->stop = true;
	pthread_cond_broadcast(&co->changed);
	drain_locked(co, drain_ms);
	/* What the writer still holds is lost with it. */
	lost = co->dropped + byte_ring_used(&co->ring);
	broken = co->broken;
	pthread_mutex_unlock(&co->lock);
	/* Only a writer stuck in write() gets here with bytes left; one
	 * that emptied the buffer has left its loop, and cancelling a
	 * thread that ended is harmless until it is joined. */
	pthread_cancel(co->thread);
	pthread_join(co->thread, NULL);
	co->started = false;
	if (lost)
		pr_warn("console: %llu bytes of guest output were dropped: %s",
			(unsigned long long)lost,
			broken ? "stdout could not be written" :
				 "stdout was not read fast enough");
	pthread_cond_destroy(&co->changed);
	pthread_mutex_destroy(&co->lock);
	free(co->ring.buf);
	co->ring.buf = NULL;
}
