/* The console, polled: its registers are the arch's (uart_* in arch.h:
 * x86's COM1, arm64's UART from the device tree). Each register access
 * is a VM exit, so transmit waits only when the UART is busy. */
#include "guest.h"
#include "io.h"

void serial_init(void)
{
	uart_init();
}

/* One line of input (the newline dropped, at most size - 1 bytes kept),
 * each byte awaited for at most timeout_ms; its length, or -1 when input
 * stopped first. */
int serial_getline(char *buf, unsigned size, uint64_t timeout_ms)
{
	unsigned n = 0;

	for (;;) {
		uint64_t deadline = clock_deadline(timeout_ms);
		char c;

		while (!uart_rx_ready()) {
			if (clock_now() > deadline) {
				buf[n] = 0;
				return -1;
			}
			cpu_relax();
		}
		c = uart_rx();
		if (c == '\n' || c == '\r') {
			buf[n] = 0;
			return n;
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
}

void serial_putc(char c)
{
	/* Bounded, so a missing UART cannot hang the guest. */
	for (int i = 0; i < 100000 && !uart_tx_ready(); i++)
		cpu_relax();
	uart_tx(c);
}
