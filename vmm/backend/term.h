/* The host terminal as the guest's console: raw input while the VM runs
 * in the foreground, the original settings restored on every way out.
 * A process in the background of a job-control shell must neither change
 * the terminal's modes nor read from it (the terminal would stop it with
 * SIGTTOU or SIGTTIN), so both wait until it is in the foreground. */
#ifndef THPVM_TERM_H
#define THPVM_TERM_H

#include <stdbool.h>

/* Whether stdin is a terminal. */
bool term_is_tty(void);
/* Whether this process may use the terminal on stdin now: it is in the
 * terminal's foreground process group, or the terminal is not its
 * controlling terminal (job control does not apply then). False when
 * stdin is no terminal. Async-signal-safe. */
bool term_foreground(void);
/* Puts stdin in raw mode if it is a terminal and this process is in the
 * foreground; returns whether it did. */
bool term_raw_enable(void);
/* Restores the saved settings if this process is still in the
 * foreground (a shell that took the terminal back has its own); safe to
 * call more than once and from a signal handler. */
void term_restore(void);
/* Has the terminal neither stop this process for background reads or
 * mode changes nor for output (TOSTOP): term_foreground() guards each
 * of them instead. */
void term_ignore_job_signals(void);

#endif
