/* The UART as Linux's 8250 driver uses it. */
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "hw/serial8250.h"
#include "unit.h"

static int irq_level;

static void set_irq(void *opaque, int level)
{
	irq_level = level;
}

static uint8_t rd(struct serial8250 *u, unsigned reg)
{
	uint8_t v;

	serial8250_access(u, reg, &v, 1, false);
	return v;
}

static void wr(struct serial8250 *u, unsigned reg, uint8_t v)
{
	serial8250_access(u, reg, &v, 1, true);
}

static void test_transmit_to_fd(void)
{
	struct console_out out;
	struct serial8250 u;
	struct pollfd pfd;
	int p[2];
	char buf[8] = { 0 };

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(console_out_init(&out, p[1], 64, false), 0);
	serial8250_init(&u, &out, set_irq, NULL);
	CHECK(rd(&u, 5) & 0x20);	/* THRE */
	wr(&u, 0, 'h');
	wr(&u, 0, 'i');
	/* Both bytes come out together once the writer thread ran. */
	console_out_close(&out, 1000);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
	CHECK_STR(buf, "hi");
	serial8250_destroy(&u);
	close(p[0]);
	close(p[1]);
}

/* A reader that does not read: transmitting still returns at once, the
 * UART stays usable, and what does not fit is dropped. */
static void test_transmit_never_waits(void)
{
	struct console_out_stats st;
	struct console_out out;
	struct serial8250 u;
	int p[2], i;

	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	while (write(p[1], "xxxxxxxxxxxxxxxx", 16) > 0)
		;
	while (write(p[1], "x", 1) > 0)
		;
	/* Blocking again: the writer thread now waits in write(). */
	CHECK_EQ(fcntl(p[1], F_SETFL, 0), 0);
	CHECK_EQ(console_out_init(&out, p[1], 32, false), 0);
	serial8250_init(&u, &out, set_irq, NULL);
	for (i = 0; i < 100; i++)
		wr(&u, 0, 'a');
	CHECK(rd(&u, 5) & 0x20);
	console_out_stats(&out, &st);
	CHECK_EQ(st.pending, 32);
	CHECK_EQ(st.dropped, 100 - 32);
	console_out_close(&out, 10);
	serial8250_destroy(&u);
	close(p[0]);
	close(p[1]);
}

static void test_receive_and_rx_interrupt(void)
{
	struct serial8250 u;

	serial8250_init(&u, NULL, set_irq, NULL);
	irq_level = 0;
	CHECK_EQ(rd(&u, 2) & 1, 1);		/* no interrupt pending */
	wr(&u, 1, 0x01);			/* IER: RX data */
	CHECK_EQ(serial8250_receive(&u, (const uint8_t *)"ab", 2), 2);
	CHECK_EQ(irq_level, 1);
	CHECK_EQ(rd(&u, 2) & 0x0f, 0x04);
	CHECK(rd(&u, 5) & 1);			/* DR */
	CHECK_EQ(rd(&u, 0), 'a');
	CHECK_EQ(rd(&u, 0), 'b');
	CHECK_EQ(irq_level, 0);
	CHECK_EQ(rd(&u, 5) & 1, 0);
	serial8250_destroy(&u);
}

static void test_thre_interrupt_acknowledged_by_iir(void)
{
	struct serial8250 u;

	serial8250_init(&u, NULL, set_irq, NULL);
	irq_level = 0;
	wr(&u, 1, 0x02);			/* IER: THRI */
	CHECK_EQ(irq_level, 1);
	CHECK_EQ(rd(&u, 2) & 0x0f, 0x02);	/* reading IIR acks it */
	CHECK_EQ(irq_level, 0);
	CHECK_EQ(rd(&u, 2) & 0x0f, 0x01);
	serial8250_destroy(&u);
}

static void test_loopback_and_divisor(void)
{
	struct serial8250 u;

	serial8250_init(&u, NULL, set_irq, NULL);
	/* Linux's autoconfig: loopback with RTS|OUT2 reads back CTS|DCD. */
	wr(&u, 4, 0x10 | 0x0a);
	CHECK_EQ(rd(&u, 6) & 0xf0, 0x90);
	wr(&u, 0, 'z');
	CHECK_EQ(rd(&u, 0), 'z');
	wr(&u, 4, 0x0b);
	wr(&u, 3, 0x80);			/* DLAB */
	wr(&u, 0, 0x01);
	wr(&u, 1, 0x00);
	CHECK_EQ(rd(&u, 0), 0x01);
	wr(&u, 3, 0x03);
	CHECK_EQ(rd(&u, 3), 0x03);
	wr(&u, 7, 0xa5);
	CHECK_EQ(rd(&u, 7), 0xa5);
	serial8250_destroy(&u);
}

static void test_rx_overflow_bounded(void)
{
	struct serial8250 u;
	uint8_t buf[SERIAL8250_RX_SIZE + 10] = { 0 };

	serial8250_init(&u, NULL, set_irq, NULL);
	CHECK_EQ(serial8250_receive(&u, buf, sizeof(buf)), SERIAL8250_RX_SIZE);
	CHECK_EQ(serial8250_rx_room(&u), 0);
	CHECK_EQ(serial8250_receive(&u, buf, 1), 0);
	serial8250_destroy(&u);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_transmit_to_fd),
		UNIT_TEST(test_transmit_never_waits),
		UNIT_TEST(test_receive_and_rx_interrupt),
		UNIT_TEST(test_thre_interrupt_acknowledged_by_iir),
		UNIT_TEST(test_loopback_and_divisor),
		UNIT_TEST(test_rx_overflow_bounded),
	};

	return UNIT_RUN(tests);
}
