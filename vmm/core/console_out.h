/* The guest's console output on its way to a host fd (thpvm's stdout).
 * Devices put bytes into a bounded buffer and never wait: a thread of
 * its own writes them out, so a reader that stops reading (a full pipe,
 * a terminal stopped with Ctrl-S) stalls that thread only, never a vCPU
 * or the main loop. When the buffer is full, new bytes are dropped and
 * counted, as a UART overruns. */
#ifndef THPVM_CORE_CONSOLE_OUT_H
#define THPVM_CORE_CONSOLE_OUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/console_filter.h"
#include "lib/byte_ring.h"

/* Enough for a Linux boot log's burst while the reader is slow. */
#define CONSOLE_OUT_SIZE (64 * 1024)

struct console_out {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* bytes came in, went out, or stop */
	struct byte_ring ring;		/* over size bytes, malloc'd */
	uint64_t written, dropped;	/* bytes, since init */
	bool broken;			/* the fd failed: drop everything */
	bool filtering;			/* --console-filter */
	struct console_filter filter;
	bool stop;
	pthread_t thread;
	bool started;
};

struct console_out_stats {
	uint64_t written;	/* bytes the fd took */
	uint64_t pending;	/* bytes waiting for it */
	uint64_t dropped;	/* bytes lost: buffer full or fd failed */
	uint64_t filtered;	/* bytes the filter removed */
};

/* A buffer of size bytes for fd, and its writer thread; with filter,
 * bytes pass through console_filter_run on their way in. */
int console_out_init(struct console_out *co, int fd, size_t size,
		     bool filter);
/* Takes what fits of data (filtered) and drops the rest; never waits for
 * the fd. */
void console_out_put(struct console_out *co, const uint8_t *data,
		     size_t len);
void console_out_stats(struct console_out *co, struct console_out_stats *s);
/* Writes out what is buffered while the fd keeps taking it (giving up
 * after drain_ms without progress), stops the thread, frees the buffer
 * and says in one line how much was dropped, if any. Safe on a zeroed
 * co and more than once. */
void console_out_close(struct console_out *co, unsigned drain_ms);

#endif
