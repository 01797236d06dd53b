/* The console the device tree's stdout-path names (dt.c): an 8250 with
 * its register stride and access width (thpvm's ns16550a), or a PL011
 * (QEMU's virt). serial.c drives it through these. Without one every
 * call does nothing, so early failures cannot fault. */
#include "guest.h"
#include "io.h"

/* 8250 registers (in strides) and bits. */
#define U8250_DATA	0
#define U8250_IER	1
#define U8250_FCR	2
#define U8250_LCR	3
#define U8250_LSR	5
#define LSR_DR		0x01
#define LSR_THRE	0x20

/* PL011 registers (bytes) and bits. */
#define PL011_DR	0x000
#define PL011_FR	0x018
#define PL011_LCR_H	0x02c
#define PL011_CR	0x030
#define FR_RXFE		(1u << 4)
#define FR_TXFF		(1u << 5)

static uint8_t in8250(unsigned reg)
{
	uint64_t a = plat.uart + ((uint64_t)reg << plat.uart_shift);

	return plat.uart_width == 4 ? mmio_read32(a) : mmio_read8(a);
}

static void out8250(unsigned reg, uint8_t v)
{
	uint64_t a = plat.uart + ((uint64_t)reg << plat.uart_shift);

	if (plat.uart_width == 4)
		mmio_write32(a, v);
	else
		mmio_write8(a, v);
}

void uart_init(void)
{
	if (plat.uart_kind == UART_PL011) {
		mmio_write32(plat.uart + PL011_LCR_H, 0x70);	/* 8N1, FIFOs */
		mmio_write32(plat.uart + PL011_CR, 0x301);	/* on, rx, tx */
	} else if (plat.uart_kind == UART_8250) {
		out8250(U8250_IER, 0x00);	/* no interrupts */
		out8250(U8250_LCR, 0x80);	/* DLAB */
		out8250(U8250_DATA, 0x01);	/* 115200 baud */
		out8250(U8250_IER, 0x00);
		out8250(U8250_LCR, 0x03);	/* 8N1 */
		out8250(U8250_FCR, 0x07);	/* FIFOs on and cleared */
	}
}

bool uart_rx_ready(void)
{
	if (plat.uart_kind == UART_PL011)
		return !(mmio_read32(plat.uart + PL011_FR) & FR_RXFE);
	return plat.uart_kind == UART_8250 && in8250(U8250_LSR) & LSR_DR;
}

char uart_rx(void)
{
	if (plat.uart_kind == UART_PL011)
		return mmio_read32(plat.uart + PL011_DR);
	return plat.uart_kind == UART_8250 ? in8250(U8250_DATA) : 0;
}

bool uart_tx_ready(void)
{
	if (plat.uart_kind == UART_PL011)
		return !(mmio_read32(plat.uart + PL011_FR) & FR_TXFF);
	return plat.uart_kind != UART_8250 || in8250(U8250_LSR) & LSR_THRE;
}

void uart_tx(char c)
{
	if (plat.uart_kind == UART_PL011)
		mmio_write32(plat.uart + PL011_DR, (uint8_t)c);
	else if (plat.uart_kind == UART_8250)
		out8250(U8250_DATA, c);
}
