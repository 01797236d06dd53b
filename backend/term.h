/* The host terminal as the guest's console: raw input while the VM runs,
 * the original settings restored on every way out. */
#ifndef THPVM_TERM_H
#define THPVM_TERM_H

#include <stdbool.h>

/* Puts stdin in raw mode if it is a terminal; returns whether it is. */
bool term_raw_enable(void);
/* Restores the saved settings; safe to call more than once and from a
 * signal handler. */
void term_restore(void);

#endif
