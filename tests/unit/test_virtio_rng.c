/* virtio-rng without KVM, as test_virtio_balloon.c drives the balloon:
 * guest RAM mapped, rings built by hand, the device on its own thread.
 * Random bytes arrive and differ; the rate holds over periods, with
 * waiting requests left to the timer (the device thread idle
 * meanwhile), through a pause and a reset; chains no driver sends make
 * the device need a reset and are not written. */
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/rng.h"

#define BUF_GPA(i) (0x100000 + (i) * 0x2000)
#define GUARD 0xa5
#define FEATURES (1ULL << VIRTIO_F_VERSION_1)

static struct virtio_rng rng;
static unsigned config_irqs;	/* seen by expect_refused */

static bool setup(uint64_t bytes_per_sec, uint64_t features)
{
	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	/* Every buffer starts as guard bytes: what the device did not
	 * write keeps them. */
	memset(gpa(BUF_GPA(0)), GUARD, RAM_SIZE - BUF_GPA(0));
	if (virtio_rng_create(&rng, bytes_per_sec, &ram)) {
		CHECK(!"virtio_rng_create");
		guest_ram_unmap(&ram);
		return false;
	}
	rng.vdev.notify = count_irq;
	rng.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&rng.vdev), 0);
	driver_start(&rng.vdev, features, 1);
	return true;
}

static void teardown(void)
{
	virtio_rng_destroy(&rng);
	guest_ram_unmap(&ram);
}

static struct virtio_rng_info info(void)
{
	struct virtio_rng_info i;

	virtio_rng_info(&rng, &i);
	return i;
}

/* A one-buffer request of len writable bytes in slot i. */
static void request(unsigned i, uint32_t len)
{
	set_desc(0, i, BUF_GPA(i), len, VRING_DESC_F_WRITE, 0);
	publish(0, i);
	virtio_queue_kick(&rng.vdev, 0);
}

/* How many of len bytes at a still hold the guard. */
static uint64_t guarded(uint64_t a, uint64_t len)
{
	const uint8_t *p = gpa(a);
	uint64_t n = 0, i;

	for (i = 0; i < len; i++)
		n += p[i] == GUARD;
	return n;
}

/* Random-looking: not one value, and about 1/256 of each byte value,
 * so no more than a few guard bytes by chance. */
static bool random_bytes(uint64_t a, uint64_t len)
{
	const uint8_t *p = gpa(a);
	uint64_t i;
	bool varies = false;

	for (i = 1; i < len; i++)
		varies |= p[i] != p[0];
	return varies && guarded(a, len) <= len / 64 + 4;
}

static double thread_cpu_ms(void)
{
	struct timespec t;
	clockid_t cid;

	if (pthread_getcpuclockid(rng.vdev.threads[0].thread, &cid) ||
	    clock_gettime(cid, &t))
		return -1;
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void test_identity(void)
{
	uint8_t b[4] = { 1, 2, 3, 4 };

	if (!setup(RNG_DEFAULT_BYTES_PER_SEC, FEATURES))
		return;
	CHECK_EQ(rng.vdev.device_id, VIRTIO_ID_RNG);
	CHECK_EQ(rng.vdev.nr_queues, 1);
	CHECK_EQ(virtio_queue_read(&rng.vdev, 0, VQ_REG_MAX_SIZE),
		 RNG_QUEUE_SIZE);
	CHECK_EQ(virtio_get_device_features(&rng.vdev, 1), 1);
	/* No configuration space: reads give zeros. */
	virtio_config_access(&rng.vdev, 0, b, 4, false);
	CHECK_EQ(get_le32(b), 0);
	teardown();
}

/* Two buffers in one chain, a zero-length descriptor between them: both
 * filled, not past their ends; a second request gets other bytes. */
static void test_bytes_arrive(void)
{
	if (!setup(RNG_DEFAULT_BYTES_PER_SEC,
		   FEATURES | 1ULL << VIRTIO_RING_F_EVENT_IDX))
		return;
	set_desc(0, 0, BUF_GPA(0), 100, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 1);
	set_desc(0, 1, BUF_GPA(1), 0, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 2);
	set_desc(0, 2, BUF_GPA(2), 3000, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(used_id(0, 0), 0);
	CHECK_EQ(used_len(0, 0), 3100);
	CHECK(random_bytes(BUF_GPA(0), 100));
	CHECK(random_bytes(BUF_GPA(2), 3000));
	CHECK_EQ(guarded(BUF_GPA(0) + 100, BUF_GPA(2) - BUF_GPA(0) - 100),
		 BUF_GPA(2) - BUF_GPA(0) - 100);
	CHECK_EQ(guarded(BUF_GPA(2) + 3000, 0x1000), 0x1000);
	CHECK(WAIT_FOR(irq_count(0) == 1));

	request(3, 3000);
	CHECK(WAIT_FOR(used_idx(0) == 2));
	CHECK_EQ(used_len(0, 1), 3000);
	CHECK(memcmp(gpa(BUF_GPA(2)), gpa(BUF_GPA(3)), 3000));
	CHECK_EQ(info().served, 6100);
	CHECK_EQ(info().requests, 2);
	CHECK_EQ(irq_count(CONFIG_VECTOR), 0);
	teardown();
}

/* 1 KiB a second, five requests of 512 bytes: two in each period, each
 * pair no sooner than a second after the last; the device thread idles
 * while they wait, whatever the driver kicks. A count read before a
 * period can have ended is exact; this thread may be held up past one
 * (emulated hosts), so one read later is only a lower bound. */
static void test_rate_holds_across_periods(void)
{
	struct timespec t0;
	double t4, cpu0, cpu1;
	unsigned i;

	if (!setup(1024, FEATURES))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 5; i++)
		request(i, 512);
	CHECK(WAIT_FOR(used_idx(0) >= 2));
	/* Kicks change nothing before the period ends. */
	for (i = 0; i < 20; i++) {
		virtio_queue_kick(&rng.vdev, 0);
		poll(NULL, 0, 1);
	}
	CHECK(used_idx(0) == 2 || time_ms_since(&t0) >= 1000);
	/* The rest of the period: a busy wait would take (its share of a
	 * loaded host's CPUs in) most of it, an idle thread next to
	 * nothing, even under emulation. */
	cpu0 = thread_cpu_ms();
	CHECK(WAIT_FOR(used_idx(0) >= 4));
	t4 = time_ms_since(&t0);
	cpu1 = thread_cpu_ms();
	CHECK(used_idx(0) == 4 || time_ms_since(&t0) >= 2000);
	CHECK(t4 >= 1000);
	CHECK(cpu0 >= 0 && cpu1 - cpu0 < 50);
	CHECK(WAIT_FOR(used_idx(0) == 5));
	CHECK(time_ms_since(&t0) >= 2000);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(used_len(0, i), 512);
		CHECK(random_bytes(BUF_GPA(used_id(0, i)), 512));
	}
	CHECK_EQ(info().served, 5 * 512);
	CHECK(!needs_reset(&rng.vdev));
	teardown();
}

/* A request larger than the period's bytes gets what is left; small
 * ones count as RNG_MIN_CHARGE each. */
static void test_partial_and_min_charge(void)
{
	struct timespec t0;
	unsigned i, used;

	if (!setup(512, FEATURES))
		return;
	request(0, 4096);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(used_len(0, 0), 512);
	CHECK(random_bytes(BUF_GPA(0), 512));
	CHECK_EQ(guarded(BUF_GPA(0) + 512, 4096 - 512), 4096 - 512);
	teardown();

	if (!setup(512, FEATURES))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 10; i++)
		request(i, 1);
	CHECK(WAIT_FOR(used_idx(0) >= 512 / RNG_MIN_CHARGE));
	poll(NULL, 0, 200);
	/* Read before the clock: the rest waits for the next period,
	 * unless this thread did. */
	used = used_idx(0);
	if (time_ms_since(&t0) < 1000) {
		CHECK_EQ(used, 512 / RNG_MIN_CHARGE);
		CHECK_EQ(info().served, 512 / RNG_MIN_CHARGE);
	}
	CHECK(WAIT_FOR(used_idx(0) == 10));
	teardown();
}

/* A waiting request stays waiting through a pause that outlasts its
 * period, and is served after the resume. */
static void test_pause_while_waiting(void)
{
	struct timespec t0;
	bool in_period;

	if (!setup(512, FEATURES))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	request(0, 512);
	request(1, 512);
	CHECK(WAIT_FOR(used_idx(0) >= 1));
	virtio_device_pause(&rng.vdev);
	/* Paused before the second could be served: it must stay waiting. */
	in_period = time_ms_since(&t0) < 1000;
	poll(NULL, 0, 1200);
	CHECK(used_idx(0) == 1 || !in_period);
	virtio_device_resume(&rng.vdev);
	CHECK(WAIT_FOR(used_idx(0) == 2));
	teardown();
}

/* A reset while a request waits: the new driver's requests wait for
 * the same period (a reset gives no new bytes), then are served. */
static void test_reset_while_waiting(void)
{
	struct timespec t0;

	if (!setup(512, FEATURES))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	request(0, 512);
	request(1, 512);
	CHECK(WAIT_FOR(used_idx(0) >= 1));
	virtio_set_status(&rng.vdev, 0);
	driver_start(&rng.vdev, FEATURES, 1);
	request(2, 512);
	poll(NULL, 0, 100);
	CHECK(used_idx(0) == 0 || time_ms_since(&t0) >= 1000);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK(time_ms_since(&t0) >= 1000);
	CHECK_EQ(used_id(0, 0), 2);
	CHECK_EQ(guarded(BUF_GPA(1), 512), 512);
	teardown();
}

/* After a chain no driver sends: NEEDS_RESET with a config interrupt,
 * nothing used, and (after a reset) the device serves again. */
static void expect_refused(const char *what, uint64_t untouched,
			   uint32_t len)
{
	if (!WAIT_FOR(needs_reset(&rng.vdev)))
		printf("# %s: no NEEDS_RESET\n", what);
	CHECK(needs_reset(&rng.vdev));
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) > config_irqs));
	config_irqs = irq_count(CONFIG_VECTOR);
	CHECK_EQ(used_idx(0), 0);
	if (len)
		CHECK_EQ(guarded(untouched, len), len);
	virtio_set_status(&rng.vdev, 0);
	driver_start(&rng.vdev, FEATURES, 1);
	request(5, 64);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK(random_bytes(BUF_GPA(5), 64));
	memset(gpa(BUF_GPA(5)), GUARD, 64);
	virtio_set_status(&rng.vdev, 0);
	driver_start(&rng.vdev, FEATURES, 1);
}

static void test_hostile_chains(void)
{
	if (!setup(RNG_DEFAULT_BYTES_PER_SEC, FEATURES))
		return;
	config_irqs = 0;
	/* Device-readable, where the device must write. */
	set_desc(0, 0, BUF_GPA(0), 64, 0, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("readable", BUF_GPA(0), 64);

	/* A readable buffer before a writable one. */
	set_desc(0, 0, BUF_GPA(0), 16, VRING_DESC_F_NEXT, 1);
	set_desc(0, 1, BUF_GPA(1), 64, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("readable first", BUF_GPA(1), 64);

	/* Nothing but zero-length descriptors. */
	set_desc(0, 0, BUF_GPA(0), 0, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 1);
	set_desc(0, 1, BUF_GPA(1), 0, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("zero-length", 0, 0);

	/* Past the end of guest RAM, by a little and by a lot; then a
	 * length no RAM holds. */
	set_desc(0, 0, RAM_SIZE - 16, 64, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("past RAM", RAM_SIZE - 16, 16);
	set_desc(0, 0, RAM_SIZE + 4096, 64, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("beyond RAM", 0, 0);
	set_desc(0, 0, BUF_GPA(0), 0xffffffff, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("huge length", BUF_GPA(0), 4096);

	/* A chain that loops. */
	set_desc(0, 0, BUF_GPA(0), 64, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 1);
	set_desc(0, 1, BUF_GPA(1), 64, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		 0);
	publish(0, 0);
	virtio_queue_kick(&rng.vdev, 0);
	expect_refused("loop", BUF_GPA(0), 64);
	teardown();
}

/* Most of guest RAM in one buffer: served up to the period's bytes, and
 * the rest of it left alone. */
static void test_huge_buffer_in_ram(void)
{
	const uint64_t len = RAM_SIZE - BUF_GPA(0);

	if (!setup(4096, FEATURES))
		return;
	request(0, len);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(used_len(0, 0), 4096);
	CHECK(random_bytes(BUF_GPA(0), 4096));
	CHECK_EQ(guarded(BUF_GPA(0) + 4096, len - 4096), len - 4096);
	CHECK(!needs_reset(&rng.vdev));
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_identity),
		UNIT_TEST(test_bytes_arrive),
		UNIT_TEST(test_rate_holds_across_periods),
		UNIT_TEST(test_partial_and_min_charge),
		UNIT_TEST(test_pause_while_waiting),
		UNIT_TEST(test_reset_while_waiting),
		UNIT_TEST(test_hostile_chains),
		UNIT_TEST(test_huge_buffer_in_ram),
	};

	return UNIT_RUN(tests);
}
