/* 8250 UART at 0x3f8, polled. Each port access is a VM exit, so the init
 * sequence is the minimum and transmit waits only when THR is busy. */
#include "guest.h"
#include "io.h"

#define COM1 0x3f8

void serial_init(void)
{
	outb(COM1 + 1, 0x00);	/* no interrupts */
	outb(COM1 + 3, 0x80);	/* DLAB */
	outb(COM1 + 0, 0x01);	/* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1 */
	outb(COM1 + 2, 0x07);	/* FIFOs on and cleared */
}

/* One line of input (the newline dropped, at most size - 1 bytes kept),
 * each byte awaited for at most timeout_ms; its length, or -1 when input
 * stopped first. */
int serial_getline(char *buf, unsigned size, uint64_t timeout_ms)
{
	unsigned n = 0;

	for (;;) {
		uint64_t deadline = tsc_deadline(timeout_ms);
		char c;

		while (!(inb(COM1 + 5) & 0x01)) {	/* data ready */
			if (rdtsc() > deadline) {
				buf[n] = 0;
				return -1;
			}
			cpu_relax();
		}
		c = inb(COM1);
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
	for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
		cpu_relax();
	outb(COM1, c);
}
