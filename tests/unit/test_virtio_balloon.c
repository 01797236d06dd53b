/* virtio-balloon without KVM, as test_virtio_net.c drives virtio-net:
 * guest RAM mapped, rings built by hand, the device on its own thread.
 * The release call is a recorder, so each case checks the exact ranges
 * given back (core/balloon_release.c's own tests cover real madvise). */
#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/guest_ram.h"
#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/balloon.h"

#define BUF_GPA(q, i) (0x100000 + (q) * 0x40000 + (i) * 0x1000)
#define PAGE 4096
#define MAX_RUNS 64

#define F(bit) (1ULL << (bit))
#define BASE (F(VIRTIO_F_VERSION_1) | F(VIRTIO_BALLOON_F_MUST_TELL_HOST))
#define ALL (BASE | F(VIRTIO_BALLOON_F_STATS_VQ) | \
	     F(VIRTIO_BALLOON_F_REPORTING) | F(VIRTIO_BALLOON_F_CONT_PAGES) | \
	     F(VIRTIO_BALLOON_F_PAGE_POISON) | \
	     F(VIRTIO_BALLOON_F_DEFLATE_ON_OOM))

static struct virtio_balloon bln;

struct run {
	uint64_t gpa, len;
};
static struct run runs[MAX_RUNS];
static unsigned nr_runs;

/* Runs on the device thread under vdev.lock; read after used_idx moved
 * (acquire) or under the lock. */
static unsigned record(void *opaque, const struct guest_ram *r,
		       const struct ram_range *ext, unsigned nr,
		       uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++, nr_runs++)
		if (nr_runs < MAX_RUNS)
			runs[nr_runs] = (struct run){ ext[i].gpa, ext[i].size };
	(*calls)++;
	return nr;
}

static bool released(unsigned i, uint64_t gpa, uint64_t len)
{
	return i < nr_runs && runs[i].gpa == gpa && runs[i].len == len;
}

/* What the host side sees once the device's pass is over. A pass pushes
 * its chains to the used ring before it publishes its figures, both
 * under the device lock: a test that waited for the used ring takes the
 * lock once, so that the pass it saw is over. */
static struct virtio_balloon_info info(void)
{
	struct virtio_balloon_info i;

	pthread_mutex_lock(&bln.vdev.lock);
	pthread_mutex_unlock(&bln.vdev.lock);
	virtio_balloon_info(&bln, &i);
	return i;
}

static enum balloon_vq_role role(unsigned q)
{
	enum balloon_vq_role r;

	pthread_mutex_lock(&bln.vdev.lock);
	r = bln.roles[q];
	pthread_mutex_unlock(&bln.vdev.lock);
	return r;
}

static unsigned runs_released(void)
{
	unsigned n;

	pthread_mutex_lock(&bln.vdev.lock);
	n = nr_runs;
	pthread_mutex_unlock(&bln.vdev.lock);
	return n;
}

static unsigned queues_for(uint64_t f)
{
	return 2 + !!(f & F(VIRTIO_BALLOON_F_STATS_VQ)) +
	       !!(f & F(VIRTIO_BALLOON_F_REPORTING)) +
	       2 * !!(f & F(VIRTIO_BALLOON_F_CONT_PAGES));
}

/* Features, the queues those features give, DRIVER_OK. */
/* A buffer made available and the device notified. */
static void submit(unsigned q, uint16_t head)
{
	publish(q, head);
	virtio_queue_kick(&bln.vdev, q);
}

static void balloon_driver_start(uint64_t features)
{
	driver_start(&bln.vdev, features, queues_for(features));
}

static const struct balloon_config all_on = {
	.stats_interval = 1,
	.deflate_on_oom = true,
	.reporting = true,
	.cont_pages = true,
	.policy = BALLOON_EAGER,
};

static bool setup_with(const struct balloon_config *opts, uint64_t features)
{
	nr_runs = 0;
	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	if (virtio_balloon_create(&bln, opts, &ram, record, NULL)) {
		CHECK(!"virtio_balloon_create");
		guest_ram_unmap(&ram);
		return false;
	}
	bln.vdev.notify = count_irq;
	bln.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&bln.vdev), 0);
	balloon_driver_start(features);
	return true;
}

static bool setup(uint64_t features)
{
	return setup_with(&all_on, features);
}

static void teardown(void)
{
	virtio_balloon_destroy(&bln);
	guest_ram_unmap(&ram);
}

/* One buffer in slot i of queue q holding len bytes from data. */
static void send_buf(unsigned q, unsigned i, const void *data, uint32_t len)
{
	memcpy(gpa(BUF_GPA(q, i)), data, len);
	set_desc(q, i, BUF_GPA(q, i), len, 0, 0);
	submit(q, i);
}

static void send_pfns(unsigned q, unsigned i, const uint32_t *pfns,
		      unsigned n)
{
	uint8_t buf[256 * 4];
	unsigned k;

	for (k = 0; k < n; k++)
		put_le32(buf + 4 * k, pfns[k]);
	send_buf(q, i, buf, 4 * n);
}

static void send_cont(unsigned q, unsigned i, const uint32_t *pairs,
		      unsigned n)
{
	uint8_t buf[64 * 8];
	unsigned k;

	for (k = 0; k < 2 * n; k++)
		put_le32(buf + 4 * k, pairs[k]);
	send_buf(q, i, buf, 8 * n);
}

static uint32_t config_read32(uint32_t off)
{
	uint8_t v[4];

	virtio_config_access(&bln.vdev, off, v, 4, false);
	return get_le32(v);
}

static void config_write32(uint32_t off, uint32_t val)
{
	uint8_t v[4];

	put_le32(v, val);
	virtio_config_access(&bln.vdev, off, v, 4, true);
}

static void test_features_and_config(void)
{
	struct virtio_balloon_config c;
	uint64_t f;
	unsigned irq;

	if (!setup(BASE))
		return;
	f = virtio_get_device_features(&bln.vdev, 0) |
	    (uint64_t)virtio_get_device_features(&bln.vdev, 1) << 32;
	CHECK_EQ(bln.vdev.device_id, VIRTIO_ID_BALLOON);
	CHECK_EQ(f, ALL | F(VIRTIO_RING_F_EVENT_IDX) |
		    F(VIRTIO_RING_F_INDIRECT_DESC));
	CHECK_EQ(bln.vdev.nr_queues, BALLOON_NR_QUEUES);
	CHECK_EQ(config_read32(offsetof(struct virtio_balloon_config,
					 num_pages)), 0);
	irq = irq_count(CONFIG_VECTOR);
	CHECK_EQ(virtio_balloon_set_target(&bln, 6 * MiB + 100), 0);
	/* The device thread puts it into num_pages. */
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) == irq + 1));
	/* A wired interrupt is lowered once the ISR reads back empty (PCI)
	 * or the driver acknowledges its bits (MMIO). */
	CHECK_EQ(virtio_read_isr(&bln.vdev), VIRTIO_ISR_CONFIG);
	CHECK_EQ(isr_clear_count(), 1);
	CHECK_EQ(virtio_read_isr(&bln.vdev), 0);
	CHECK_EQ(isr_clear_count(), 1);
	CHECK_EQ(config_read32(0), 6 * MiB / PAGE);
	CHECK_EQ(virtio_balloon_set_target(&bln, RAM_SIZE + PAGE), -ERANGE);
	CHECK_EQ(info().target, 6 * MiB);
	/* The driver writes actual; num_pages is the host's. */
	config_write32(offsetof(struct virtio_balloon_config, actual), 300);
	config_write32(offsetof(struct virtio_balloon_config, num_pages), 7);
	CHECK_EQ(config_read32(0), 6 * MiB / PAGE);
	CHECK_EQ(info().actual, 300 * PAGE);
	virtio_config_access(&bln.vdev, 0, (uint8_t *)&c, sizeof(c), false);
	CHECK_EQ(get_le32(&c.actual), 300);
	CHECK_EQ(virtio_balloon_set_target(&bln, 7 * MiB), 0);
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) == irq + 2));
	virtio_ack_isr(&bln.vdev, VIRTIO_ISR_QUEUE);
	CHECK_EQ(isr_clear_count(), 1);
	virtio_ack_isr(&bln.vdev, VIRTIO_ISR_CONFIG);
	CHECK_EQ(isr_clear_count(), 2);
	teardown();

	/* Options turn features off. */
	{
		struct balloon_config none = { 0 };

		if (!setup_with(&none, BASE))
			return;
		f = virtio_get_device_features(&bln.vdev, 0);
		CHECK_EQ(f & 0xff, F(VIRTIO_BALLOON_F_MUST_TELL_HOST) |
				   F(VIRTIO_BALLOON_F_PAGE_POISON));
		teardown();
	}
}

/* Linux numbers only the queues whose feature was negotiated. */
static void test_queue_numbering(void)
{
	static const struct {
		uint64_t features;
		enum balloon_vq_role roles[BALLOON_NR_QUEUES];
	} cases[] = {
		{ BASE, { BVQ_INFLATE, BVQ_DEFLATE, BVQ_NONE, BVQ_NONE,
			  BVQ_NONE, BVQ_NONE } },
		{ BASE | F(VIRTIO_BALLOON_F_STATS_VQ),
		  { BVQ_INFLATE, BVQ_DEFLATE, BVQ_STATS, BVQ_NONE, BVQ_NONE,
		    BVQ_NONE } },
		{ BASE | F(VIRTIO_BALLOON_F_REPORTING),
		  { BVQ_INFLATE, BVQ_DEFLATE, BVQ_REPORTING, BVQ_NONE,
		    BVQ_NONE, BVQ_NONE } },
		{ BASE | F(VIRTIO_BALLOON_F_CONT_PAGES),
		  { BVQ_INFLATE, BVQ_DEFLATE, BVQ_INFLATE_CONT,
		    BVQ_DEFLATE_CONT, BVQ_NONE, BVQ_NONE } },
		{ BASE | F(VIRTIO_BALLOON_F_STATS_VQ) |
			  F(VIRTIO_BALLOON_F_CONT_PAGES),
		  { BVQ_INFLATE, BVQ_DEFLATE, BVQ_STATS, BVQ_INFLATE_CONT,
		    BVQ_DEFLATE_CONT, BVQ_NONE } },
		{ ALL, { BVQ_INFLATE, BVQ_DEFLATE, BVQ_STATS, BVQ_REPORTING,
			 BVQ_INFLATE_CONT, BVQ_DEFLATE_CONT } },
	};
	static const uint32_t run[] = { 0x400, 2 * MiB };
	unsigned i, q;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned qc = queues_for(cases[i].features) - 2;

		if (!setup(cases[i].features))
			return;
		for (q = 0; q < BALLOON_NR_QUEUES; q++)
			CHECK_EQ(role(q), cases[i].roles[q]);
		/* The cont inflate queue works wherever it landed. */
		if (cases[i].features & F(VIRTIO_BALLOON_F_CONT_PAGES)) {
			send_cont(qc, 0, run, 1);
			CHECK(WAIT_FOR(used_idx(qc) == 1));
			CHECK(released(0, 4 * MiB, 2 * MiB));
			CHECK_EQ(info().ballooned, 2 * MiB);
		}
		teardown();
	}
}

static void test_inflate_deflate(void)
{
	static const uint32_t in[] = { 0x205, 0x203, 0x204, 0x300, 0x206 };
	static const uint32_t out[] = { 0x204, 0x300 };
	struct virtio_balloon_info i;

	if (!setup(BASE))
		return;
	send_pfns(0, 0, in, ARRAY_SIZE(in));
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(get_le32(gpa(USED_GPA(0) + 8)), 0);	/* used length */
	CHECK(WAIT_FOR(irq_count(0) >= 1));
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, 0x203 * PAGE, 4 * PAGE));
	CHECK(released(1, 0x300 * PAGE, PAGE));
	send_pfns(1, 0, out, ARRAY_SIZE(out));
	CHECK(WAIT_FOR(used_idx(1) == 1));
	i = info();
	CHECK_EQ(i.ballooned, 3 * PAGE);
	CHECK_EQ(i.released, 5 * PAGE);
	CHECK_EQ(i.release_calls, 1);	/* both runs in one call */
	CHECK_EQ(i.ignored, 0);
	CHECK(i.driver_ok);
	CHECK_EQ(i.policy, BALLOON_EAGER);
	teardown();
}

static void test_preserve_policy(void)
{
	struct balloon_config opts = all_on;
	uint32_t pfns[256];
	unsigned k, b;
	struct virtio_balloon_info i;

	opts.policy = BALLOON_PRESERVE;
	if (!setup_with(&opts, BASE))
		return;
	/* Block 2 (4 MiB) in two buffers of 256 pfns, as Linux sends. */
	for (b = 0; b < 2; b++) {
		for (k = 0; k < 256; k++)
			pfns[k] = 0x400 + 256 * b + k;
		send_pfns(0, b, pfns, 256);
		CHECK(WAIT_FOR(used_idx(0) == b + 1));
		CHECK_EQ(runs_released(), b);
	}
	CHECK(released(0, 4 * MiB, 2 * MiB));
	pfns[0] = 0x600;
	send_pfns(0, 2, pfns, 1);
	CHECK(WAIT_FOR(used_idx(0) == 3));
	i = info();
	CHECK_EQ(i.partial_blocks, 1);
	CHECK_EQ(i.held, PAGE);
	CHECK_EQ(i.ballooned, 2 * MiB + PAGE);
	CHECK_EQ(i.released, 2 * MiB);
	CHECK_EQ(i.policy, BALLOON_PRESERVE);
	teardown();
}

static void test_cont_pages(void)
{
	/* Two touching 2 MiB runs, and a 16 KiB one. */
	static const uint32_t in[] = { 0x600, 2 * MiB, 0x400, 2 * MiB,
				       0x100, 4 * PAGE };
	static const uint32_t out[] = { 0x400, 1 * MiB };
	static const uint32_t odd[] = { 0x200, PAGE + PAGE / 2 };
	const unsigned qi = 4, qd = 5;	/* after stats and reporting */

	if (!setup(ALL))
		return;
	send_cont(qi, 0, in, 3);
	CHECK(WAIT_FOR(used_idx(qi) == 1));
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, 0x100 * PAGE, 4 * PAGE));
	CHECK(released(1, 4 * MiB, 4 * MiB));
	send_cont(qd, 0, out, 1);
	CHECK(WAIT_FOR(used_idx(qd) == 1));
	CHECK_EQ(info().ballooned, 3 * MiB + 4 * PAGE);
	CHECK_EQ(info().ignored, 0);
	/* A run whose size is no whole number of pages is refused, not
	 * rounded: nothing of it is ballooned or released. */
	send_cont(qi, 1, odd, 1);
	CHECK(WAIT_FOR(used_idx(qi) == 2));
	CHECK_EQ(info().ignored, 1);
	CHECK_EQ(info().ballooned, 3 * MiB + 4 * PAGE);
	CHECK_EQ(nr_runs, 2);
	teardown();
}

/* A reporting chain: writable buffers, each a free range. */
static void send_report(unsigned q, uint64_t a, uint32_t alen, uint64_t b,
			uint32_t blen)
{
	set_desc(q, 0, a, alen, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(q, 1, b, blen, VRING_DESC_F_WRITE, 0);
	submit(q, 0);
}

static void test_reporting(void)
{
	const unsigned q = 2;	/* reporting without stats */
	const uint64_t f = BASE | F(VIRTIO_BALLOON_F_REPORTING) |
			   F(VIRTIO_BALLOON_F_PAGE_POISON);

	if (!setup(f))
		return;
	send_report(q, 6 * MiB, 2 * MiB, 4 * MiB, 2 * MiB);
	CHECK(WAIT_FOR(used_idx(q) == 1));
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 4 * MiB, 4 * MiB));
	CHECK_EQ(info().ballooned, 0);
	CHECK_EQ(info().released, 4 * MiB);
	/* Poisoned free pages must keep their value: nothing released. */
	config_write32(offsetof(struct virtio_balloon_config, poison_val),
		       0xaaaaaaaa);
	send_report(q, 4 * MiB, 2 * MiB, 2 * MiB, 2 * MiB);
	CHECK(WAIT_FOR(used_idx(q) == 2));
	CHECK_EQ(runs_released(), 1);
	/* Poison 0 reads back as zeros, as released pages do. */
	config_write32(offsetof(struct virtio_balloon_config, poison_val), 0);
	send_report(q, 2 * MiB, 2 * MiB, 2 * MiB + 100, 5000);
	CHECK(WAIT_FOR(used_idx(q) == 3));
	CHECK_EQ(runs_released(), 2);
	CHECK(released(1, 2 * MiB, 2 * MiB));
	teardown();
}

static void send_stats(unsigned q, unsigned slot, uint64_t memfree)
{
	uint8_t s[3 * 10];

	put_le16(s, VIRTIO_BALLOON_S_MEMFREE);
	put_le64(s + 2, memfree);
	put_le16(s + 10, VIRTIO_BALLOON_S_MEMTOT);
	put_le64(s + 12, RAM_SIZE);
	put_le16(s + 20, 999);		/* unknown tag: skipped */
	put_le64(s + 22, 1);
	send_buf(q, slot, s, sizeof(s));
}

static bool have_memfree(uint64_t v)
{
	struct virtio_balloon_info i = info();

	return (i.stats_mask & 1U << VIRTIO_BALLOON_S_MEMFREE) &&
	       i.stats[VIRTIO_BALLOON_S_MEMFREE] == v;
}

/* The statistics a driver posts are recorded and the buffer is held
 * until the host's timer asks for new ones. Two devices, so that no
 * check depends on how fast a loaded machine gets to it: with a timer of
 * an hour the buffer must still be held; with one of a second the
 * request must come (within WAIT_FOR's TIMEOUT_MS). */
static void test_stats(void)
{
	const unsigned q = 2;
	struct balloon_config hourly = all_on;
	struct virtio_balloon_info i;
	struct timespec t0;

	hourly.stats_interval = BALLOON_MAX_STATS_INTERVAL;
	if (!setup_with(&hourly, BASE | F(VIRTIO_BALLOON_F_STATS_VQ)))
		return;
	CHECK(info().stats_age < 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_stats(q, 0, 5 * MiB);
	CHECK(WAIT_FOR(have_memfree(5 * MiB)));
	i = info();
	CHECK_EQ(i.stats[VIRTIO_BALLOON_S_MEMTOT], RAM_SIZE);
	CHECK_EQ(i.stats_mask, 1U << VIRTIO_BALLOON_S_MEMFREE |
			       1U << VIRTIO_BALLOON_S_MEMTOT);
	/* Their age counts from their arrival, after the send. */
	CHECK(i.stats_age >= 0 && i.stats_age * 1e3 <= time_ms_since(&t0) + 1);
	poll(NULL, 0, 200);
	CHECK_EQ(used_idx(q), 0);
	teardown();

	if (!setup(BASE | F(VIRTIO_BALLOON_F_STATS_VQ)))	/* 1 s */
		return;
	send_stats(q, 0, 5 * MiB);
	CHECK(WAIT_FOR(have_memfree(5 * MiB)));
	CHECK(WAIT_FOR(used_idx(q) == 1));
	CHECK(WAIT_FOR(irq_count(q) >= 1));
	send_stats(q, 1, 3 * MiB);
	CHECK(WAIT_FOR(have_memfree(3 * MiB)));
	teardown();
}

static void test_hostile(void)
{
	static const uint32_t outside[] = { 0x800, 0xffffffff, 0x10 };
	static const uint32_t never[] = { 0x500 };
	static const uint32_t bad_cont[] = { 0x200, 100, 0x201, 0,
					     0x7ff, 2 * PAGE, 0x300, PAGE };
	uint8_t odd[10];

	if (!setup(ALL))
		return;
	/* Two pfns and two stray bytes. */
	put_le32(odd, 0x20);
	put_le32(odd + 4, 0x21);
	send_buf(0, 0, odd, sizeof(odd));
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(info().ballooned, 2 * PAGE);
	send_pfns(0, 1, outside, ARRAY_SIZE(outside));
	CHECK(WAIT_FOR(used_idx(0) == 2));
	CHECK_EQ(info().ballooned, 3 * PAGE);
	CHECK_EQ(info().ignored, 2);
	send_pfns(1, 0, never, 1);
	CHECK(WAIT_FOR(used_idx(1) == 1));
	CHECK_EQ(info().ignored, 3);
	/* Not a page multiple, empty, past the end of RAM; one good. */
	send_cont(4, 0, bad_cont, 4);
	CHECK(WAIT_FOR(used_idx(4) == 1));
	CHECK_EQ(info().ignored, 6);
	CHECK_EQ(info().ballooned, 4 * PAGE);
	/* An empty buffer. */
	send_buf(0, 2, odd, 0);
	CHECK(WAIT_FOR(used_idx(0) == 3));
	CHECK(!needs_reset(&bln.vdev));
	CHECK_EQ(info().ballooned, 4 * PAGE);
	teardown();
}

/* Three descriptors on the same 512 KiB of pfns: only the first 1 MiB of
 * the array is looked at. */
static void test_oversized_buffer(void)
{
	const uint64_t area = 4 * MiB, len = 512 * 1024;
	const uint64_t n = len / 4, pages = RAM_SIZE / PAGE;
	uint64_t k;

	if (!setup(BASE))
		return;
	for (k = 0; k < n; k++)
		put_le32(gpa(area + 4 * k), k % pages);
	set_desc(0, 0, area, len, VRING_DESC_F_NEXT, 1);
	set_desc(0, 1, area, len, VRING_DESC_F_NEXT, 2);
	set_desc(0, 2, area, len, 0, 0);
	submit(0, 0);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(info().ballooned, RAM_SIZE);
	CHECK_EQ(info().ignored, 2 * n - pages);
	CHECK(!needs_reset(&bln.vdev));
	teardown();
}

/* Elements that repeat all of RAM: the chain stops once it covered as
 * many pages as RAM has, instead of walking RAM once per element. */
static void test_repeated_ranges_bounded(void)
{
	const unsigned qi = 4, n = 64;
	uint32_t pairs[2 * 64];
	unsigned k;

	if (!setup(ALL))
		return;
	for (k = 0; k < n; k++) {
		pairs[2 * k] = 0;
		pairs[2 * k + 1] = RAM_SIZE;
	}
	send_cont(qi, 0, pairs, n);
	CHECK(WAIT_FOR(used_idx(qi) == 1));
	CHECK_EQ(info().ballooned, RAM_SIZE);
	CHECK_EQ(info().ignored, n - 1);
	CHECK(!needs_reset(&bln.vdev));
	teardown();
}

static void test_reset(void)
{
	static const uint32_t in[] = { 0x200, 0x201 };

	if (!setup(ALL))
		return;
	send_pfns(0, 0, in, 2);
	send_stats(2, 0, MiB);
	CHECK(WAIT_FOR(used_idx(0) == 1 && have_memfree(MiB)));
	config_write32(offsetof(struct virtio_balloon_config, actual), 2);
	CHECK_EQ(virtio_balloon_set_target(&bln, 2 * PAGE), 0);
	virtio_set_status(&bln.vdev, 0);
	CHECK_EQ(info().ballooned, 0);
	CHECK_EQ(info().actual, 0);
	CHECK_EQ(info().stats_mask, 0);
	CHECK(!info().driver_ok);
	CHECK_EQ(role(2), BVQ_NONE);
	/* The host's target stays; the driver starts over. */
	CHECK_EQ(info().target, 2 * PAGE);
	balloon_driver_start(BASE);
	send_pfns(0, 0, in, 2);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(info().ballooned, 2 * PAGE);
	CHECK_EQ(info().ignored, 0);
	teardown();
}

/* A device with more RAM than RAM_SIZE and no device thread: the test
 * runs each pass itself, as the thread would on a notification. */
static bool setup_passes(uint64_t ram_size, uint64_t features)
{
	nr_runs = 0;
	if (!fake_driver_map_ram_size(ram_size)) {
		CHECK(!"guest_ram_map");
		return false;
	}
	if (virtio_balloon_create(&bln, &all_on, &ram, record, NULL)) {
		CHECK(!"virtio_balloon_create");
		guest_ram_unmap(&ram);
		return false;
	}
	bln.vdev.notify = count_irq;
	bln.vdev.isr_cleared = count_isr_cleared;
	balloon_driver_start(features);
	return true;
}

/* Whether queue q's notification is pending (and takes it). */
static bool kicked(unsigned q)
{
	uint64_t n;

	return read(bln.vdev.queues[q].kick_fd, &n, sizeof(n)) == sizeof(n);
}

static void pass(unsigned q)
{
	bln.vdev.ops->queue_notify(&bln.vdev, q);
}

/* A guest that keeps a queue fed gets a budget's worth of work per
 * pass, and the rest waits for a later pass, which the device asks for
 * with the queue's own notification (so the thread's other events come
 * first). Here one inflate chain of more pfns than a budget. */
static void test_pass_budget_pfns(void)
{
	const uint64_t n = BALLOON_PASS_BUDGET + 1000, area = 64 * MiB;
	uint64_t k;

	if (!setup_passes(512 * MiB, BASE))
		return;
	for (k = 0; k < n; k++)
		put_le32(gpa(area + 4 * k), 0x8000 + k);
	set_desc(0, 0, area, 4 * n, 0, 0);
	publish(0, 0);
	kicked(0);
	pass(0);
	/* The chain itself counts one. */
	CHECK_EQ(info().ballooned, (BALLOON_PASS_BUDGET - 1) * PAGE);
	CHECK_EQ(used_idx(0), 0);
	CHECK(kicked(0));
	pass(0);
	CHECK_EQ(info().ballooned, n * PAGE);
	CHECK_EQ(used_idx(0), 1);
	CHECK(!kicked(0));
	CHECK_EQ(info().ignored, 0);
	CHECK(!needs_reset(&bln.vdev));
	teardown();
}

/* A continuous range larger than a budget is cut where the budget ends
 * and goes on in the next pass; the chains after it wait their turn. */
static void test_pass_budget_cont(void)
{
	const unsigned qi = 4;
	const uint64_t pages = 2 * BALLOON_PASS_BUDGET;
	const uint32_t big[] = { 0x10000, pages * PAGE };
	const uint32_t small[] = { 0x1000, 4 * PAGE };

	if (!setup_passes(1024 * MiB, ALL))
		return;
	send_cont(qi, 0, big, 1);
	send_cont(qi, 1, small, 1);
	kicked(qi);
	pass(qi);
	CHECK_EQ(info().ballooned, (BALLOON_PASS_BUDGET - 1) * PAGE);
	CHECK_EQ(used_idx(qi), 0);
	CHECK(kicked(qi));
	pass(qi);
	CHECK_EQ(info().ballooned, (2 * BALLOON_PASS_BUDGET - 1) * PAGE);
	CHECK_EQ(used_idx(qi), 0);
	CHECK(kicked(qi));
	pass(qi);
	CHECK_EQ(info().ballooned, (pages + 4) * PAGE);
	CHECK_EQ(used_idx(qi), 2);
	CHECK(!kicked(qi));
	/* One range, released as one run however it was cut. */
	CHECK_EQ(info().released, (pages + 4) * PAGE);
	CHECK_EQ(info().ignored, 0);
	teardown();
}

struct host_call {
	bool done;
	uint64_t target;
};

static void *host_side(void *arg)
{
	struct host_call *h = arg;
	struct virtio_balloon_info i;

	/* As the control socket asks: without the device lock. */
	CHECK_EQ(virtio_balloon_set_target(&bln, 3 * MiB), 0);
	virtio_balloon_info(&bln, &i);
	h->target = i.target;
	__atomic_store_n(&h->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The control socket's calls answer while the device is inside queue
 * work (here: its lock held, as a long pass holds it); the target then
 * reaches the driver from the device thread. */
static void test_host_side_never_waits(void)
{
	struct host_call h = { false, 0 };
	unsigned irq;
	pthread_t t;

	if (!setup(BASE))
		return;
	irq = irq_count(CONFIG_VECTOR);
	pthread_mutex_lock(&bln.vdev.lock);
	CHECK_EQ(pthread_create(&t, NULL, host_side, &h), 0);
	CHECK(WAIT_FOR(__atomic_load_n(&h.done, __ATOMIC_ACQUIRE)));
	CHECK_EQ(irq_count(CONFIG_VECTOR), irq);
	pthread_mutex_unlock(&bln.vdev.lock);
	pthread_join(t, NULL);
	CHECK_EQ(h.target, 3 * MiB);
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) == irq + 1));
	CHECK_EQ(config_read32(0), 3 * MiB / PAGE);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_features_and_config),
		UNIT_TEST(test_queue_numbering),
		UNIT_TEST(test_inflate_deflate),
		UNIT_TEST(test_preserve_policy),
		UNIT_TEST(test_cont_pages),
		UNIT_TEST(test_reporting),
		UNIT_TEST(test_stats),
		UNIT_TEST(test_hostile),
		UNIT_TEST(test_oversized_buffer),
		UNIT_TEST(test_repeated_ranges_bounded),
		UNIT_TEST(test_reset),
		UNIT_TEST(test_pass_budget_pfns),
		UNIT_TEST(test_pass_budget_cont),
		UNIT_TEST(test_host_side_never_waits),
	};

	return UNIT_RUN(tests);
}
