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

void serial_putc(char c)
{
	/* Bounded, so a missing UART cannot hang the guest. */
	for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
		cpu_relax();
	outb(COM1, c);
}
