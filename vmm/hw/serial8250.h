/* An 8250/16550A UART: the guest's console. Output goes to a console
 * output buffer (core/console_out.h), input comes from
 * serial8250_receive(); the interrupt is a level on one guest interrupt
 * line. */
#ifndef THPVM_SERIAL8250_H
#define THPVM_SERIAL8250_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/console.h"
#include "core/console_out.h"
#include "lib/byte_ring.h"

#define SERIAL8250_REGS 8
#define SERIAL8250_RX_SIZE 1024

/* Raises or lowers the UART's interrupt line. */
typedef void (*serial8250_irq_fn)(void *opaque, int level);

struct serial8250 {
	pthread_mutex_t lock;
	struct console_out *out;	/* NULL: output is discarded */
	serial8250_irq_fn set_irq;
	void *irq_opaque;
	int irq_level;

	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr, msr;
	bool thr_empty_pending;	/* THRE interrupt not yet acknowledged */
	bool overrun;
	struct byte_ring rx;
	uint8_t rx_buf[SERIAL8250_RX_SIZE];
};

void serial8250_init(struct serial8250 *uart, struct console_out *out,
		     serial8250_irq_fn set_irq, void *irq_opaque);
void serial8250_destroy(struct serial8250 *uart);
/* Register access; offset 0..7 from the UART's base. */
void serial8250_access(void *uart, uint64_t offset, uint8_t *data,
		       uint32_t len, bool is_write);
/* Queues input bytes for the guest; returns how many fit. */
size_t serial8250_receive(struct serial8250 *uart, const uint8_t *buf,
			  size_t len);
/* Room left in the receive buffer (the input loop reads no more). */
size_t serial8250_rx_room(struct serial8250 *uart);

/* The UART as the VM's console (dev: the struct serial8250). */
extern const struct vm_console_ops serial8250_console_ops;

#endif
