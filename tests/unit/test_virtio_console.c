/* virtio-console without KVM, as test_virtio_rng.c drives the rng: guest
 * RAM mapped, rings built by hand, the device on its own thread, its
 * output through a console output buffer into a pipe. What the guest
 * transmits comes out of the pipe; typed input reaches receive buffers
 * as they come, split over them, kept while the driver is not there yet
 * (before DRIVER_OK, through a reset and a pause) and bounded; chains no
 * driver sends make the device need a reset and are not touched. */
#include <fcntl.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/console.h"

#define BUF_GPA(i) (0x100000 + (i) * 0x2000)
#define GUARD 0xa5
#define FEATURES (1ULL << VIRTIO_F_VERSION_1)
#define RXQ 0
#define TXQ 1

static struct virtio_console con;
static struct console_out out;
static int pipe_rd = -1;

static bool setup_stopped(void)
{
	int fds[2];

	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	memset(gpa(BUF_GPA(0)), GUARD, RAM_SIZE - BUF_GPA(0));
	if (pipe2(fds, O_CLOEXEC) < 0) {
		CHECK(!"pipe");
		guest_ram_unmap(&ram);
		return false;
	}
	pipe_rd = fds[0];
	fcntl(pipe_rd, F_SETFL, O_NONBLOCK);
	CHECK_EQ(console_out_init(&out, fds[1], CONSOLE_OUT_SIZE, false), 0);
	if (virtio_console_create(&con, &out, &ram)) {
		CHECK(!"virtio_console_create");
		return false;
	}
	con.vdev.notify = count_irq;
	con.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&con.vdev), 0);
	return true;
}

static bool setup(void)
{
	if (!setup_stopped())
		return false;
	driver_start(&con.vdev, FEATURES, 2);
	return true;
}

static void teardown(void)
{
	int wr = out.fd;

	virtio_console_destroy(&con);
	console_out_close(&out, 100);
	close(wr);
	close(pipe_rd);
	guest_ram_unmap(&ram);
}

/* Reads what the pipe has into buf (NUL-terminated) until it holds len
 * bytes or TIMEOUT_MS pass; returns the bytes read. */
static size_t pipe_read(char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	WAIT_FOR(({
		n = read(pipe_rd, buf + got, len - got);
		if (n > 0)
			got += n;
		got == len;
	}));
	buf[got] = '\0';
	return got;
}

/* Whether the pipe stays empty for ms: a check that nothing came out
 * waits a short while, not TIMEOUT_MS. */
static bool pipe_quiet(int ms)
{
	struct pollfd p = { .fd = pipe_rd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

static size_t type(const char *s)
{
	return virtio_console_ops.receive(&con, (const uint8_t *)s,
					  strlen(s));
}

static size_t rx_room(void)
{
	return virtio_console_ops.rx_room(&con);
}

/* A one-buffer receive chain of len bytes in slot i. */
static void rx_buffer(unsigned i, uint32_t len)
{
	set_desc(RXQ, i, BUF_GPA(i), len, VRING_DESC_F_WRITE, 0);
	publish(RXQ, i);
	virtio_queue_kick(&con.vdev, RXQ);
}

static void test_identity(void)
{
	uint8_t b[12];

	if (!setup())
		return;
	CHECK_EQ(con.vdev.device_id, VIRTIO_ID_CONSOLE);
	CHECK_EQ(con.vdev.nr_queues, 2);
	CHECK_EQ(virtio_queue_read(&con.vdev, RXQ, VQ_REG_MAX_SIZE),
		 VCONS_QUEUE_SIZE);
	CHECK_EQ(virtio_queue_read(&con.vdev, TXQ, VQ_REG_MAX_SIZE),
		 VCONS_QUEUE_SIZE);
	/* One port, no size, no emergency write: no feature of its own. */
	CHECK_EQ(virtio_get_device_features(&con.vdev, 0) & 0xffffff, 0);
	CHECK_EQ(virtio_get_device_features(&con.vdev, 1), 1);
	memset(b, 0xff, sizeof(b));
	virtio_config_access(&con.vdev, 0, b, sizeof(b), false);
	for (unsigned i = 0; i < sizeof(b); i++)
		CHECK_EQ(b[i], 0);
	teardown();
}

/* Two readable buffers in one chain, a zero-length one between them:
 * their bytes in order on the host, the chain used with 0 written. */
static void test_transmit(void)
{
	char buf[64];

	if (!setup())
		return;
	memcpy(gpa(BUF_GPA(0)), "hello, ", 7);
	memcpy(gpa(BUF_GPA(2)), "host\n", 5);
	set_desc(TXQ, 0, BUF_GPA(0), 7, VRING_DESC_F_NEXT, 1);
	set_desc(TXQ, 1, BUF_GPA(1), 0, VRING_DESC_F_NEXT, 2);
	set_desc(TXQ, 2, BUF_GPA(2), 5, 0, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	CHECK(WAIT_FOR(used_idx(TXQ) == 1));
	CHECK_EQ(used_id(TXQ, 0), 0);
	CHECK_EQ(used_len(TXQ, 0), 0);
	CHECK(WAIT_FOR(irq_count(TXQ) == 1));
	CHECK_EQ(pipe_read(buf, 12), 12);
	CHECK_STR(buf, "hello, host\n");
	CHECK_EQ(con.tx_bytes, 12);
	CHECK(!needs_reset(&con.vdev));
	teardown();
}

/* Input typed before any receive buffer waits; buffers then take it in
 * order, each as much as it holds; room comes back as it goes. */
static void test_receive(void)
{
	if (!setup())
		return;
	CHECK_EQ(rx_room(), VCONS_IN_SIZE);
	CHECK_EQ(type("echo hi\n"), 8);
	CHECK_EQ(rx_room(), VCONS_IN_SIZE - 8);
	poll(NULL, 0, 50);
	CHECK_EQ(used_idx(RXQ), 0);
	rx_buffer(0, 5);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	CHECK_EQ(used_len(RXQ, 0), 5);
	CHECK(!memcmp(gpa(BUF_GPA(0)), "echo ", 5));
	CHECK_EQ(gpa(BUF_GPA(0))[5], GUARD);
	/* The interrupt ends the device's pass: a buffer given before it
	 * may be filled in the same pass, under one interrupt for both. */
	CHECK(WAIT_FOR(irq_count(RXQ) == 1));
	rx_buffer(1, 100);
	CHECK(WAIT_FOR(used_idx(RXQ) == 2));
	CHECK_EQ(used_id(RXQ, 1), 1);
	CHECK_EQ(used_len(RXQ, 1), 3);
	CHECK(!memcmp(gpa(BUF_GPA(1)), "hi\n", 3));
	CHECK_EQ(gpa(BUF_GPA(1))[3], GUARD);
	CHECK(WAIT_FOR(irq_count(RXQ) == 2));
	CHECK_EQ(rx_room(), VCONS_IN_SIZE);
	/* A buffer given with no input waits for the next keystroke. */
	rx_buffer(2, 100);
	poll(NULL, 0, 50);
	CHECK_EQ(used_idx(RXQ), 2);
	CHECK_EQ(type("x"), 1);
	CHECK(WAIT_FOR(used_idx(RXQ) == 3));
	CHECK_EQ(used_len(RXQ, 2), 1);
	CHECK_EQ(con.rx_bytes, 9);
	teardown();
}

/* The input buffer is bounded, and wraps: more than it holds is
 * refused, and what it took arrives whole and in order. */
static void test_receive_bounded(void)
{
	static char big[VCONS_IN_SIZE + 100];
	uint64_t off = 0;
	unsigned i;

	if (!setup())
		return;
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = 'a' + i % 26;
	CHECK_EQ(type("0123456789"), 10);
	rx_buffer(0, 10);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	CHECK_EQ(type(big), VCONS_IN_SIZE);
	CHECK_EQ(rx_room(), 0);
	CHECK_EQ(type("more"), 0);
	for (i = 1; i <= 5; i++) {
		rx_buffer(i, 1000);
		CHECK(WAIT_FOR(used_idx(RXQ) == i + 1));
		CHECK(!memcmp(gpa(BUF_GPA(i)), big + off, used_len(RXQ, i)));
		off += used_len(RXQ, i);
	}
	CHECK_EQ(off, VCONS_IN_SIZE);
	CHECK_EQ(rx_room(), VCONS_IN_SIZE);
	teardown();
}

/* Typed before the driver starts, and again through a reset: the
 * driver that starts gets it. */
static void test_input_waits_for_driver(void)
{
	if (!setup_stopped())
		return;
	CHECK_EQ(type("early"), 5);
	poll(NULL, 0, 20);
	driver_start(&con.vdev, FEATURES, 2);
	rx_buffer(0, 64);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	CHECK(!memcmp(gpa(BUF_GPA(0)), "early", 5));
	CHECK_EQ(type("again"), 5);
	virtio_set_status(&con.vdev, 0);
	poll(NULL, 0, 20);
	driver_start(&con.vdev, FEATURES, 2);
	rx_buffer(1, 64);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	CHECK_EQ(used_id(RXQ, 0), 1);
	CHECK(!memcmp(gpa(BUF_GPA(1)), "again", 5));
	teardown();
}

/* While the VM is paused, input waits; it arrives after the resume. */
static void test_pause(void)
{
	if (!setup())
		return;
	rx_buffer(0, 64);
	virtio_device_pause(&con.vdev);
	CHECK_EQ(type("p"), 1);
	poll(NULL, 0, 50);
	CHECK_EQ(used_idx(RXQ), 0);
	virtio_device_resume(&con.vdev);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	teardown();
}

/* After a chain no driver sends: NEEDS_RESET with a config interrupt,
 * nothing used or written, and after a reset the device works again. */
static void expect_refused(const char *what, unsigned q, uint64_t untouched,
			   uint32_t len)
{
	static unsigned config_irqs;
	char buf[8];

	if (!WAIT_FOR(needs_reset(&con.vdev)))
		printf("# %s: no NEEDS_RESET\n", what);
	CHECK(needs_reset(&con.vdev));
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) > config_irqs));
	config_irqs = irq_count(CONFIG_VECTOR);
	CHECK_EQ(used_idx(q), 0);
	if (len)
		for (uint32_t i = 0; i < len; i++)
			CHECK_EQ(gpa(untouched)[i], GUARD);
	virtio_set_status(&con.vdev, 0);
	driver_start(&con.vdev, FEATURES, 2);
	memcpy(gpa(BUF_GPA(5)), "ok", 2);
	set_desc(TXQ, 5, BUF_GPA(5), 2, 0, 0);
	publish(TXQ, 5);
	virtio_queue_kick(&con.vdev, TXQ);
	CHECK(WAIT_FOR(used_idx(TXQ) == 1));
	CHECK_EQ(pipe_read(buf, 2), 2);
	CHECK_STR(buf, "ok");
	memset(gpa(BUF_GPA(5)), GUARD, 2);
	virtio_set_status(&con.vdev, 0);
	driver_start(&con.vdev, FEATURES, 2);
}

static void test_hostile_chains(void)
{
	if (!setup())
		return;
	/* Transmit: a writable buffer, alone or after a readable one. */
	set_desc(TXQ, 0, BUF_GPA(0), 64, VRING_DESC_F_WRITE, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	expect_refused("tx writable", TXQ, BUF_GPA(0), 64);
	memcpy(gpa(BUF_GPA(0)), "no", 2);
	set_desc(TXQ, 0, BUF_GPA(0), 2, VRING_DESC_F_NEXT, 1);
	set_desc(TXQ, 1, BUF_GPA(1), 64, VRING_DESC_F_WRITE, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	expect_refused("tx readable then writable", TXQ, BUF_GPA(1), 64);
	memset(gpa(BUF_GPA(0)), GUARD, 2);
	/* Transmit past the end of guest RAM, and a loop. */
	set_desc(TXQ, 0, RAM_SIZE - 16, 64, 0, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	expect_refused("tx past RAM", TXQ, 0, 0);
	set_desc(TXQ, 0, BUF_GPA(0), 4, VRING_DESC_F_NEXT, 1);
	set_desc(TXQ, 1, BUF_GPA(1), 4, VRING_DESC_F_NEXT, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	expect_refused("tx loop", TXQ, 0, 0);
	/* None of the refused bytes came out. */
	CHECK(pipe_quiet(200));

	/* Receive: readable, zero-length, past RAM, a huge length. */
	CHECK_EQ(type("secret"), 6);
	set_desc(RXQ, 0, BUF_GPA(0), 64, 0, 0);
	publish(RXQ, 0);
	virtio_queue_kick(&con.vdev, RXQ);
	expect_refused("rx readable", RXQ, BUF_GPA(0), 64);
	set_desc(RXQ, 0, BUF_GPA(0), 0, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 1);
	set_desc(RXQ, 1, BUF_GPA(1), 0, VRING_DESC_F_WRITE, 0);
	publish(RXQ, 0);
	virtio_queue_kick(&con.vdev, RXQ);
	expect_refused("rx zero-length", RXQ, 0, 0);
	set_desc(RXQ, 0, RAM_SIZE - 2, 64, VRING_DESC_F_WRITE, 0);
	publish(RXQ, 0);
	virtio_queue_kick(&con.vdev, RXQ);
	expect_refused("rx past RAM", RXQ, RAM_SIZE - 2, 2);
	set_desc(RXQ, 0, BUF_GPA(0), 0xffffffff, VRING_DESC_F_WRITE, 0);
	publish(RXQ, 0);
	virtio_queue_kick(&con.vdev, RXQ);
	expect_refused("rx huge length", RXQ, BUF_GPA(0), 64);
	/* The input is still there for a sound buffer. */
	rx_buffer(0, 64);
	CHECK(WAIT_FOR(used_idx(RXQ) == 1));
	CHECK_EQ(used_len(RXQ, 0), 6);
	CHECK(!memcmp(gpa(BUF_GPA(0)), "secret", 6));
	teardown();
}

/* A guest transmitting more than the output buffer holds is not held
 * up: the chains are used at once, and the excess dropped and counted. */
static void test_transmit_never_waits(void)
{
	const uint64_t len = 4 * CONSOLE_OUT_SIZE;
	struct console_out_stats st;

	if (!setup())
		return;
	memset(gpa(BUF_GPA(0)), 'z', len);
	set_desc(TXQ, 0, BUF_GPA(0), len, 0, 0);
	publish(TXQ, 0);
	virtio_queue_kick(&con.vdev, TXQ);
	CHECK(WAIT_FOR(used_idx(TXQ) == 1));
	console_out_stats(&out, &st);
	CHECK(st.dropped > 0);
	CHECK_EQ(st.written + st.pending + st.dropped, len);
	CHECK(!needs_reset(&con.vdev));
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_identity),
		UNIT_TEST(test_transmit),
		UNIT_TEST(test_receive),
		UNIT_TEST(test_receive_bounded),
		UNIT_TEST(test_input_waits_for_driver),
		UNIT_TEST(test_pause),
		UNIT_TEST(test_hostile_chains),
		UNIT_TEST(test_transmit_never_waits),
	};

	return UNIT_RUN(tests);
}
