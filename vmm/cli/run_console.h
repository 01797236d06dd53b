/* The console of `thpvm run` on a Unix socket (--detach, --console-socket
 * PATH) instead of the terminal: the guest's console output comes in
 * through a pipe (the VM's console_out writes it), is kept in a bounded
 * scrollback and sent to each attached client (`thpvm console`), which
 * gets the scrollback first; what clients send is the guest's input. A
 * thread of its own serves it, never waiting on a client: one that does
 * not read loses what the scrollback no longer holds. */
#ifndef THPVM_RUN_CONSOLE_H
#define THPVM_RUN_CONSOLE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "control/control_path.h"
#include "core/console.h"
#include "lib/byte_ring.h"
#include "lib/listener.h"

#define RUN_CONSOLE_SCROLLBACK (64 * 1024)
#define RUN_CONSOLE_MAX_CLIENTS 4
#define RUN_CONSOLE_SUFFIX ".console"

struct run_console_client {
	int fd;			/* -1: free */
	uint64_t sent;		/* bytes of the output stream it has */
};

struct run_console {
	char path[CONTROL_PATH_MAX];
	volatile sig_atomic_t linked;	/* the socket file at path is ours */
	struct listener listener;	/* fd -1: not listening */
	int out_rd, out_wr;	/* the pipe the VM's console output takes */
	int stop_fd;		/* eventfd: the thread ends */
	pthread_mutex_t lock;		/* guards guest */
	const struct vm_console *guest;	/* NULL: input is not taken */
	struct run_console_client clients[RUN_CONSOLE_MAX_CLIENTS];
	/* The output so far, its last RUN_CONSOLE_SCROLLBACK bytes held;
	 * clients' positions are in this stream. */
	struct byte_ring scrollback;
	uint8_t scrollback_buf[RUN_CONSOLE_SCROLLBACK];
	pthread_t thread;
	bool started;
};

/* The console socket next to a control socket: its path with ".sock"
 * replaced by RUN_CONSOLE_SUFFIX. -ENAMETOOLONG when it does not fit. */
int run_console_path_beside(const char *control_path, char *buf, size_t len);
/* No socket, no fds: what run_console_close takes when open was not
 * called or failed. */
void run_console_init(struct run_console *rc);
/* Listens at path and makes the output pipe (rc->out_wr is for the VM);
 * returns 0, or -errno after one message naming the path. */
int run_console_open(struct run_console *rc, const char *path);
/* Serves clients, their input going to guest (which must outlive it). */
int run_console_start(struct run_console *rc, const struct vm_console *guest);
/* Before the guest's console devices go: clients' input is no longer
 * taken (output still is). */
void run_console_stop_input(struct run_console *rc);
/* After the VM's console output is closed: sends clients what is left,
 * stops the thread, closes everything and removes the socket. Safe
 * after run_console_init alone, and more than once. */
void run_console_close(struct run_console *rc);
/* Removes the socket file (clients attached stay), once: no later call
 * removes a socket a new VM of the same name made there. */
void run_console_remove(struct run_console *rc);
/* For a fatal signal handler: removes the socket file only. */
void run_console_unlink_path(const struct run_console *rc);

#endif
