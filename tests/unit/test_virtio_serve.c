/* The queue loop every device serves its queues with (virtio_queue_serve
 * in virtio/virtio.c), on a device of the test's own whose serve hook
 * does what each test asks of a chain, called directly (no device
 * thread, so the queue's own kicks wait in its eventfd to be counted).
 * Chains are used in order with one interrupt a call; past the budget
 * the queue kicks itself and notifications stay off; a chain put back
 * is taken again on the next call and one kept is not used; wants and
 * may_take stop the call with notifications off; a broken chain makes
 * the device need a reset and never reaches serve. */
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"

#define BUF_GPA(i) (0x100000 + (i) * 0x1000)
#define FEATURES (1ULL << VIRTIO_F_VERSION_1)

/* What serve does with the chain whose head is i. */
enum action { USE, KEEP, PUT_BACK, REFUSE };

static struct virtio_device vdev;
static enum action actions[QSIZE];
static unsigned served[64], nr_served;
static bool wanting = true, taking = true;

static bool wants(struct virtio_device *d, unsigned q)
{
	return wanting;
}

static bool may_take(struct virtio_device *d, unsigned q)
{
	return taking;
}

/* Uses a chain with its head as the bytes written. */
static int64_t serve(struct virtio_device *d, unsigned q,
		     const struct virtq_chain *c)
{
	if (nr_served < ARRAY_SIZE(served))
		served[nr_served++] = c->head;
	switch (actions[c->head]) {
	case KEEP:
		return -EINPROGRESS;
	case PUT_BACK:
		return -EAGAIN;
	case REFUSE:
		virtio_device_error(d, "chain %u refused", c->head);
		return -EIO;
	default:
		return c->head;
	}
}

static struct virtio_queue_server server = {
	.wants = wants,
	.may_take = may_take,
	.serve = serve,
};

static void noop_notify(struct virtio_device *d, unsigned q)
{
}

static const struct virtio_device_ops ops = {
	.queue_notify = noop_notify,
};

/* How often the queue was kicked since the last call (the driver's
 * start kicks it once). */
static uint64_t kicks(void)
{
	uint64_t n = 0;

	if (read(vdev.queues[0].kick_fd, &n, sizeof(n)) < 0)
		return 0;
	return n;
}

static bool setup(uint64_t features)
{
	const uint16_t size = QSIZE;

	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	memset(actions, 0, sizeof(actions));
	nr_served = 0;
	wanting = taking = true;
	server.budget = 0;
	if (virtio_device_init(&vdev, "virtio-test0", VIRTIO_ID_RNG, 0, 1,
			       &size, NULL, 0, &ops, NULL, &ram)) {
		CHECK(!"virtio_device_init");
		guest_ram_unmap(&ram);
		return false;
	}
	vdev.notify = count_irq;
	vdev.isr_cleared = count_isr_cleared;
	driver_start(&vdev, features, 1);
	kicks();
	return true;
}

static void teardown(void)
{
	virtio_device_destroy(&vdev);
	guest_ram_unmap(&ram);
}

/* Chains first..first+n-1, one writable buffer each, made available. */
static void chains(unsigned first, unsigned n)
{
	unsigned i;

	for (i = first; i < first + n; i++) {
		set_desc(0, i, BUF_GPA(i), 64, VRING_DESC_F_WRITE, 0);
		publish(0, i);
	}
}

static void run(void)
{
	pthread_mutex_lock(&vdev.lock);
	virtio_queue_serve(&vdev, 0, &server);
	pthread_mutex_unlock(&vdev.lock);
}

/* Whether the driver is asked not to notify (without EVENT_IDX). */
static bool notify_off(void)
{
	return get_le16(gpa(USED_GPA(0))) & VRING_USED_F_NO_NOTIFY;
}

static void test_used_in_order(void)
{
	unsigned i;

	if (!setup(FEATURES))
		return;
	chains(0, 3);
	run();
	CHECK_EQ(used_idx(0), 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(used_id(0, i), i);
		CHECK_EQ(used_len(0, i), i);
	}
	CHECK_EQ(irq_count(0), 1);
	CHECK(!notify_off());
	CHECK_EQ(kicks(), 0);
	/* Nothing to take: no interrupt. */
	run();
	CHECK_EQ(irq_count(0), 1);
	teardown();
}

/* Past the budget: the queue kicks itself for the rest and leaves
 * notifications off; a call that ends with the ring empty at the
 * budget needs no kick. */
static void test_budget(void)
{
	if (!setup(FEATURES))
		return;
	server.budget = 2;
	chains(0, 5);
	run();
	CHECK_EQ(used_idx(0), 2);
	CHECK_EQ(irq_count(0), 1);
	CHECK_EQ(kicks(), 1);
	CHECK(notify_off());
	run();
	CHECK_EQ(used_idx(0), 4);
	CHECK_EQ(kicks(), 1);
	run();
	CHECK_EQ(used_idx(0), 5);
	CHECK_EQ(irq_count(0), 3);
	CHECK_EQ(kicks(), 0);
	CHECK(!notify_off());
	chains(5, 2);
	run();
	CHECK_EQ(used_idx(0), 7);
	CHECK_EQ(kicks(), 0);
	CHECK(!notify_off());
	teardown();
}

/* A chain put back is not used and stops the call; the next call takes
 * it again, read anew, and goes on behind it. */
static void test_put_back(void)
{
	if (!setup(FEATURES))
		return;
	actions[1] = PUT_BACK;
	chains(0, 3);
	run();
	CHECK_EQ(used_idx(0), 1);
	CHECK_EQ(nr_served, 2);
	CHECK(notify_off());
	CHECK_EQ(kicks(), 0);
	actions[1] = USE;
	run();
	CHECK_EQ(used_idx(0), 3);
	CHECK_EQ(nr_served, 4);
	CHECK_EQ(served[2], 1);
	CHECK_EQ(used_id(0, 1), 1);
	CHECK_EQ(used_id(0, 2), 2);
	CHECK(!notify_off());
	teardown();
}

/* A chain the device keeps is taken, not used: no interrupt for it,
 * and the loop goes on behind it. */
static void test_kept(void)
{
	if (!setup(FEATURES))
		return;
	actions[0] = KEEP;
	chains(0, 1);
	run();
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(irq_count(0), 0);
	CHECK(!notify_off());
	chains(1, 1);
	run();
	CHECK_EQ(used_idx(0), 1);
	CHECK_EQ(used_id(0, 0), 1);
	CHECK_EQ(nr_served, 2);
	teardown();
}

/* wants is asked before the ring is looked at: without it nothing is
 * taken and notifications stay off, even with the ring empty; may_take
 * leaves a waiting chain where it is. */
static void test_wants_and_may_take(void)
{
	if (!setup(FEATURES))
		return;
	wanting = false;
	run();
	CHECK(notify_off());
	chains(0, 1);
	run();
	CHECK_EQ(nr_served, 0);
	wanting = true;
	taking = false;
	run();
	CHECK_EQ(nr_served, 0);
	CHECK(notify_off());
	taking = true;
	run();
	CHECK_EQ(used_idx(0), 1);
	CHECK(!notify_off());
	teardown();
}

/* With EVENT_IDX: avail_event follows what was taken once the ring is
 * empty; while the device drains, it stays one behind, asking for no
 * notification (the budget's stop kicks the queue itself); interrupts
 * follow used_event. */
static void test_event_idx(void)
{
	uint8_t *avail_event;

	if (!setup(FEATURES | 1ULL << VIRTIO_RING_F_EVENT_IDX))
		return;
	avail_event = gpa(USED_GPA(0) + 4 + 8 * QSIZE);
	server.budget = 1;
	chains(0, 2);
	run();
	CHECK_EQ(used_idx(0), 1);
	CHECK_EQ(get_le16(avail_event), 0xffff);
	/* used_event: the driver wants to hear of the second. */
	put_le16(gpa(AVAIL_GPA(0) + 4 + 2 * QSIZE), 1);
	run();
	CHECK_EQ(used_idx(0), 2);
	CHECK_EQ(get_le16(avail_event), 2);
	CHECK_EQ(irq_count(0), 2);
	teardown();
}

/* A broken chain (a loop) never reaches serve: NEEDS_RESET and a
 * configuration interrupt; one serve refuses ends the call the same
 * way, unused. */
static void test_broken_chains(void)
{
	if (!setup(FEATURES))
		return;
	set_desc(0, 0, BUF_GPA(0), 64, VRING_DESC_F_NEXT, 0);
	publish(0, 0);
	run();
	CHECK_EQ(nr_served, 0);
	CHECK(virtio_get_status(&vdev) & VIRTIO_CONFIG_S_NEEDS_RESET);
	CHECK_EQ(irq_count(CONFIG_VECTOR), 1);
	CHECK_EQ(used_idx(0), 0);
	teardown();

	if (!setup(FEATURES))
		return;
	actions[1] = REFUSE;
	chains(0, 3);
	run();
	CHECK_EQ(nr_served, 2);
	CHECK_EQ(used_idx(0), 1);
	CHECK(virtio_get_status(&vdev) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* The queue stops until the driver resets the device. */
	run();
	CHECK_EQ(nr_served, 2);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_used_in_order),
		UNIT_TEST(test_budget),
		UNIT_TEST(test_put_back),
		UNIT_TEST(test_kept),
		UNIT_TEST(test_wants_and_may_take),
		UNIT_TEST(test_event_idx),
		UNIT_TEST(test_broken_chains),
	};

	return UNIT_RUN(tests);
}
