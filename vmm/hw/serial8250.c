/* 8250/16550A UART emulation: enough for Linux's 8250 driver (autoconfig
 * with the loopback test, FIFO, THRE and RX interrupts) and for polled
 * early consoles. Transmission is instant: THR is always empty. */
#include "hw/serial8250.h"

#include <string.h>


#define REG_RBR_THR 0	/* DLL when DLAB */
#define REG_IER 1	/* DLM when DLAB */
#define REG_IIR_FCR 2
#define REG_LCR 3
#define REG_MCR 4
#define REG_LSR 5
#define REG_MSR 6
#define REG_SCR 7

#define IER_RDI 0x01	/* received data available */
#define IER_THRI 0x02	/* transmitter holding register empty */
#define IER_RLSI 0x04	/* receiver line status */

#define IIR_NO_INT 0x01
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_RLSI 0x06
#define IIR_FIFO_ENABLED 0xc0

#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02

#define LCR_DLAB 0x80

#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10

#define LSR_DR 0x01
#define LSR_OE 0x02
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80

void serial8250_init(struct serial8250 *uart, struct console_out *out,
		     serial8250_irq_fn set_irq, void *irq_opaque)
{
	memset(uart, 0, sizeof(*uart));
	pthread_mutex_init(&uart->lock, NULL);
	uart->out = out;
	uart->set_irq = set_irq;
	uart->irq_opaque = irq_opaque;
	byte_ring_init(&uart->rx, uart->rx_buf, sizeof(uart->rx_buf));
	/* A terminal is connected and ready. */
	uart->msr = MSR_DCD | MSR_DSR | MSR_CTS;
	uart->mcr = MCR_OUT2;
}

void serial8250_destroy(struct serial8250 *uart)
{
	pthread_mutex_destroy(&uart->lock);
}

static uint8_t iir_locked(const struct serial8250 *uart)
{
	uint8_t fifo = uart->fcr & FCR_ENABLE ? IIR_FIFO_ENABLED : 0;

	if ((uart->ier & IER_RLSI) && uart->overrun)
		return IIR_RLSI | fifo;
	if ((uart->ier & IER_RDI) && byte_ring_used(&uart->rx))
		return IIR_RDI | fifo;
	if ((uart->ier & IER_THRI) && uart->thr_empty_pending)
		return IIR_THRI | fifo;
	return IIR_NO_INT | fifo;
}

static void update_irq_locked(struct serial8250 *uart)
{
	int level = !(iir_locked(uart) & IIR_NO_INT);

	if (level != uart->irq_level) {
		uart->irq_level = level;
		uart->set_irq(uart->irq_opaque, level);
	}
}

/* A full FIFO drops the new byte and says so in LSR, as a 16550's
 * does. */
static void rx_push_locked(struct serial8250 *uart, uint8_t byte)
{
	if (!byte_ring_put(&uart->rx, &byte, 1))
		uart->overrun = true;
}

/* 0 from an empty FIFO. */
static uint8_t rx_pop_locked(struct serial8250 *uart)
{
	uint8_t byte = 0;

	byte_ring_get(&uart->rx, &byte, 1);
	return byte;
}

static void transmit_locked(struct serial8250 *uart, uint8_t byte)
{
	if (uart->mcr & MCR_LOOP) {
		rx_push_locked(uart, byte);
	} else if (uart->out) {
		/* Never waits on the host's stdout (console_out.h), so the
		 * lock is never held across a write that could block. */
		console_out_put(uart->out, &byte, 1);
	}
	uart->thr_empty_pending = true;
}

/* In loopback mode the modem inputs reflect the modem outputs. */
static uint8_t msr_locked(const struct serial8250 *uart)
{
	uint8_t mcr = uart->mcr;

	if (!(mcr & MCR_LOOP))
		return uart->msr;
	return (mcr & MCR_RTS ? MSR_CTS : 0) | (mcr & MCR_DTR ? MSR_DSR : 0) |
	       (mcr & MCR_OUT1 ? MSR_RI : 0) | (mcr & MCR_OUT2 ? MSR_DCD : 0);
}

static void write_reg_locked(struct serial8250 *uart, unsigned reg,
			     uint8_t v)
{
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case REG_RBR_THR:
		if (dlab)
			uart->dll = v;
		else
			transmit_locked(uart, v);
		break;
	case REG_IER:
		if (dlab) {
			uart->dlm = v;
		} else {
			/* Enabling THRI while THR is empty raises it. */
			if (!(uart->ier & IER_THRI) && (v & IER_THRI))
				uart->thr_empty_pending = true;
			uart->ier = v & 0x0f;
		}
		break;
	case REG_IIR_FCR:
		uart->fcr = v & (FCR_ENABLE | 0xc0);
		if (v & FCR_CLEAR_RX)
			byte_ring_clear(&uart->rx);
		break;
	case REG_LCR:
		uart->lcr = v;
		break;
	case REG_MCR:
		uart->mcr = v & 0x1f;
		break;
	case REG_SCR:
		uart->scr = v;
		break;
	}
}

static uint8_t read_reg_locked(struct serial8250 *uart, unsigned reg)
{
	bool dlab = uart->lcr & LCR_DLAB;
	uint8_t v = 0;

	switch (reg) {
	case REG_RBR_THR:
		v = dlab ? uart->dll : rx_pop_locked(uart);
		break;
	case REG_IER:
		v = dlab ? uart->dlm : uart->ier;
		break;
	case REG_IIR_FCR:
		v = iir_locked(uart);
		/* Reading IIR acknowledges a THRE interrupt. */
		if ((v & 0x0f) == IIR_THRI)
			uart->thr_empty_pending = false;
		break;
	case REG_LCR:
		v = uart->lcr;
		break;
	case REG_MCR:
		v = uart->mcr;
		break;
	case REG_LSR:
		v = LSR_THRE | LSR_TEMT |
		    (byte_ring_used(&uart->rx) ? LSR_DR : 0) |
		    (uart->overrun ? LSR_OE : 0);
		uart->overrun = false;
		break;
	case REG_MSR:
		v = msr_locked(uart);
		break;
	case REG_SCR:
		v = uart->scr;
		break;
	}
	return v;
}

void serial8250_access(void *opaque, uint64_t offset, uint8_t *data,
		       uint32_t len, bool is_write)
{
	struct serial8250 *uart = opaque;

	/* The registers are bytes; wider accesses touch the first one. */
	pthread_mutex_lock(&uart->lock);
	if (is_write) {
		write_reg_locked(uart, offset, data[0]);
	} else {
		memset(data, 0, len);
		data[0] = read_reg_locked(uart, offset);
	}
	update_irq_locked(uart);
	pthread_mutex_unlock(&uart->lock);
}

size_t serial8250_receive(struct serial8250 *uart, const uint8_t *buf,
			  size_t len)
{
	size_t n;

	pthread_mutex_lock(&uart->lock);
	n = byte_ring_put(&uart->rx, buf, len);
	update_irq_locked(uart);
	pthread_mutex_unlock(&uart->lock);
	return n;
}

size_t serial8250_rx_room(struct serial8250 *uart)
{
	size_t room;

	pthread_mutex_lock(&uart->lock);
	room = byte_ring_room(&uart->rx);
	pthread_mutex_unlock(&uart->lock);
	return room;
}

static size_t console_receive(void *uart, const uint8_t *buf, size_t len)
{
	return serial8250_receive(uart, buf, len);
}

static size_t console_rx_room(void *uart)
{
	return serial8250_rx_room(uart);
}

const struct vm_console_ops serial8250_console_ops = {
	.receive = console_receive,
	.rx_room = console_rx_room,
};
