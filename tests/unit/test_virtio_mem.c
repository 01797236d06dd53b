/* virtio-mem without KVM, as test_virtio_rng.c drives the rng: boot RAM
 * and a hotplug region mapped, requests built by hand, the device on its
 * own thread. Plug, unplug, unplug-all and state answer as virtio 1.2
 * says; every request a driver may not send gets its error and changes
 * nothing; unplugged blocks lose their memory and nothing else does;
 * plugged blocks outlive a reset; broken chains make the device need a
 * reset. */
#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mem.h>
#include <linux/virtio_ring.h>
#include <stddef.h>
#include <string.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/mem.h"

#define HP_GPA 0x4000000ULL		/* 64 MiB, past the fake RAM */
#define HP_BLOCKS 16
#define BLOCK (2ULL << 20)
#define HP_SIZE (HP_BLOCKS * BLOCK)
#define REQ_GPA 0x100000
#define RESP_GPA 0x101000
#define FEATURES (1ULL << VIRTIO_F_VERSION_1 | \
		  1ULL << VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE)
#define PATTERN 0x5a
#define NO_RESP 0xffff

static struct virtio_mem mem;
static unsigned slot;		/* the next descriptor pair */

static bool setup_block(uint64_t block_size)
{
	if (!fake_driver_map_ram() ||
	    guest_ram_map_hotplug(&ram, HP_GPA, HP_SIZE)) {
		CHECK(!"guest_ram_map");
		guest_ram_unmap(&ram);
		return false;
	}
	memset(gpa(0x200000), PATTERN, RAM_SIZE - 0x200000);
	slot = 0;
	if (virtio_mem_create(&mem, block_size, 0, &ram)) {
		CHECK(!"virtio_mem_create");
		guest_ram_unmap(&ram);
		return false;
	}
	mem.vdev.notify = count_irq;
	mem.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&mem.vdev), 0);
	driver_start(&mem.vdev, FEATURES, 1);
	return true;
}

static bool setup(void)
{
	return setup_block(0);
}

static void teardown(void)
{
	virtio_mem_destroy(&mem);
	guest_ram_unmap(&ram);
}

static struct virtio_mem_info info(void)
{
	struct virtio_mem_info i;

	virtio_mem_info(&mem, &i);
	return i;
}

static uint64_t config64(unsigned offset)
{
	uint8_t b[8];

	virtio_config_access(&mem.vdev, offset, b, 8, false);
	return get_le64(b);
}

/* One request, answered: the response type (NO_RESP if none came), its
 * state in *state where asked. It waits for the request's interrupt as
 * well as its used entry: the device looks for more work once more before
 * it interrupts, so a request sent sooner could share the interrupt. */
static uint16_t send(uint16_t type, uint64_t addr, uint16_t nb,
		     uint16_t *state)
{
	struct virtio_mem_req req = { 0 };
	struct virtio_mem_resp *resp = (void *)gpa(RESP_GPA);
	uint16_t before = used_idx(0), d = slot++ * 2 % QSIZE;
	unsigned irqs = irq_count(0);

	put_le16(&req.type, type);
	put_le64(&req.u.plug.addr, addr);
	put_le16(&req.u.plug.nb_blocks, nb);
	memcpy(gpa(REQ_GPA), &req, sizeof(req));
	memset(resp, 0xff, sizeof(*resp));
	set_desc(0, d, REQ_GPA, sizeof(req), VRING_DESC_F_NEXT, d + 1);
	set_desc(0, d + 1, RESP_GPA, sizeof(*resp), VRING_DESC_F_WRITE, 0);
	publish(0, d);
	virtio_queue_kick(&mem.vdev, 0);
	if (!WAIT_FOR(used_idx(0) == (uint16_t)(before + 1)))
		return NO_RESP;
	CHECK(WAIT_FOR(irq_count(0) == irqs + 1));
	CHECK_EQ(used_len(0, before), sizeof(*resp));
	if (state)
		*state = get_le16(&resp->u.state.state);
	return get_le16(&resp->type);
}

static uint64_t blk(unsigned i)
{
	return HP_GPA + i * BLOCK;
}

static uint16_t state_of(unsigned first, unsigned nb)
{
	uint16_t state = 0xffff;

	CHECK_EQ(send(VIRTIO_MEM_REQ_STATE, blk(first), nb, &state),
		 VIRTIO_MEM_RESP_ACK);
	return state;
}

/* Whether block i holds only byte b (its first and last byte and one in
 * each 4 KiB page between). */
static bool block_holds(unsigned i, uint8_t b)
{
	const uint8_t *p = gpa(blk(i));
	uint64_t off;

	for (off = 0; off < BLOCK; off += 4096)
		if (p[off] != b || p[off + 4095] != b)
			return false;
	return true;
}

static void fill_block(unsigned i)
{
	memset(gpa(blk(i)), PATTERN, BLOCK);
}

static void test_config(void)
{
	uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	if (!setup())
		return;
	CHECK_EQ(mem.vdev.device_id, VIRTIO_ID_MEM);
	CHECK_EQ(mem.vdev.nr_queues, 1);
	CHECK_EQ(virtio_queue_read(&mem.vdev, 0, VQ_REG_MAX_SIZE),
		 MEM_QUEUE_SIZE);
	CHECK(virtio_get_device_features(&mem.vdev, 0) &
	      1U << VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE);
	CHECK(!(virtio_get_device_features(&mem.vdev, 0) &
		1U << VIRTIO_MEM_F_ACPI_PXM));
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, block_size)),
		 BLOCK);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, addr)), HP_GPA);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, region_size)),
		 HP_SIZE);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   usable_region_size)), HP_SIZE);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, plugged_size)),
		 0);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   requested_size)), 0);
	/* Read-only: a driver's write changes nothing. */
	virtio_config_access(&mem.vdev,
			     offsetof(struct virtio_mem_config, plugged_size),
			     b, 8, true);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, plugged_size)),
		 0);
	/* Past the end: zeros. */
	virtio_config_access(&mem.vdev, sizeof(struct virtio_mem_config), b,
			     8, false);
	CHECK_EQ(get_le64(b), 0);
	teardown();
}

/* The host's request: checked, in the configuration, announced. */
static void test_set_requested(void)
{
	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, HP_SIZE + BLOCK), -ERANGE);
	CHECK_EQ(virtio_mem_set_requested(&mem, BLOCK + 4096), -EINVAL);
	CHECK_EQ(irq_count(CONFIG_VECTOR), 0);
	CHECK_EQ(virtio_mem_set_requested(&mem, 3 * BLOCK), 0);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   requested_size)), 3 * BLOCK);
	CHECK_EQ(irq_count(CONFIG_VECTOR), 1);
	/* The same again: nothing new to announce. */
	CHECK_EQ(virtio_mem_set_requested(&mem, 3 * BLOCK), 0);
	CHECK_EQ(irq_count(CONFIG_VECTOR), 1);
	CHECK_EQ(virtio_mem_set_requested(&mem, HP_SIZE), 0);
	CHECK_EQ(info().requested_size, HP_SIZE);
	teardown();
}

/* Plug, state, unplug: the figures follow, an unplugged block reads
 * zeros (its memory went back), its neighbours keep theirs. */
static void test_plug_unplug_state(void)
{
	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, 4 * BLOCK), 0);
	CHECK_EQ(state_of(0, HP_BLOCKS), VIRTIO_MEM_STATE_UNPLUGGED);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(2), 3, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().plugged_size, 3 * BLOCK);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, plugged_size)),
		 3 * BLOCK);
	CHECK_EQ(state_of(2, 3), VIRTIO_MEM_STATE_PLUGGED);
	CHECK_EQ(state_of(1, 2), VIRTIO_MEM_STATE_MIXED);
	CHECK_EQ(state_of(4, 2), VIRTIO_MEM_STATE_MIXED);
	CHECK_EQ(state_of(5, HP_BLOCKS - 5), VIRTIO_MEM_STATE_UNPLUGGED);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(HP_BLOCKS - 1), 1, NULL),
		 VIRTIO_MEM_RESP_ACK);
	fill_block(2);
	fill_block(3);
	fill_block(4);
	CHECK_EQ(send(VIRTIO_MEM_REQ_UNPLUG, blk(3), 1, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK(block_holds(3, 0));
	CHECK(block_holds(2, PATTERN));
	CHECK(block_holds(4, PATTERN));
	CHECK_EQ(info().plugged_size, 3 * BLOCK);
	CHECK_EQ(info().released, BLOCK);
	CHECK_EQ(info().release_calls, 1);
	CHECK_EQ(info().plugs, 2);
	CHECK_EQ(info().unplugs, 1);
	CHECK_EQ(info().refused, 0);
	CHECK_EQ(state_of(2, 3), VIRTIO_MEM_STATE_MIXED);
	CHECK_EQ(state_of(3, 1), VIRTIO_MEM_STATE_UNPLUGGED);
	/* One interrupt for each request. */
	CHECK_EQ(irq_count(0), 10);
	CHECK(!needs_reset(&mem.vdev));
	teardown();
}

/* Requests no driver may send: each answered with its error, one
 * refusal counted, and nothing plugged, unplugged or given back. */
static void test_hostile_requests(void)
{
	static const struct {
		uint16_t type;
		uint64_t addr;
		uint16_t nb;
		uint16_t resp;
	} bad[] = {
		/* Outside the region: below, at its end, far above. */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA - BLOCK, 1, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_PLUG, 0, 1, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + HP_SIZE, 1,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA + HP_SIZE, 1,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_STATE, HP_GPA - BLOCK, 1,
		  VIRTIO_MEM_RESP_ERROR },
		/* Starts inside, runs past the end. */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + (HP_BLOCKS - 1) * BLOCK, 2,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_STATE, HP_GPA, HP_BLOCKS + 1,
		  VIRTIO_MEM_RESP_ERROR },
		/* Wraps: the end computed in 64 bits would be small. */
		{ VIRTIO_MEM_REQ_PLUG, UINT64_MAX - BLOCK + 1, 0xffff,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA + BLOCK, 0xffff,
		  VIRTIO_MEM_RESP_ERROR },
		/* Misaligned. */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + 4096, 1, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA + 1, 1, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_STATE, HP_GPA + BLOCK / 2, 1,
		  VIRTIO_MEM_RESP_ERROR },
		/* No blocks. */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + 4 * BLOCK, 0,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA, 0, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_STATE, HP_GPA, 0, VIRTIO_MEM_RESP_ERROR },
		/* Overlapping what is plugged (blocks 0 and 1). */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + BLOCK, 2, VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA, 1, VIRTIO_MEM_RESP_ERROR },
		/* Unplugging what is not plugged, wholly or partly. */
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA + 2 * BLOCK, 1,
		  VIRTIO_MEM_RESP_ERROR },
		{ VIRTIO_MEM_REQ_UNPLUG, HP_GPA + BLOCK, 2,
		  VIRTIO_MEM_RESP_ERROR },
		/* Beyond the requested size (3 blocks, 2 plugged). */
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + 4 * BLOCK, 2,
		  VIRTIO_MEM_RESP_NACK },
		{ VIRTIO_MEM_REQ_PLUG, HP_GPA + 2 * BLOCK, HP_BLOCKS - 2,
		  VIRTIO_MEM_RESP_NACK },
		/* A type the spec does not have. */
		{ 4, HP_GPA + 4 * BLOCK, 1, VIRTIO_MEM_RESP_ERROR },
		{ 0xffff, HP_GPA, 1, VIRTIO_MEM_RESP_ERROR },
	};
	unsigned i;

	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, 3 * BLOCK), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(0), 2, NULL),
		 VIRTIO_MEM_RESP_ACK);
	fill_block(0);
	fill_block(1);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint16_t got = send(bad[i].type, bad[i].addr, bad[i].nb,
				    NULL);

		if (got != bad[i].resp)
			printf("# request %u: response %u, expected %u\n", i,
			       got, bad[i].resp);
		CHECK_EQ(got, bad[i].resp);
	}
	CHECK_EQ(info().refused, ARRAY_SIZE(bad));
	CHECK_EQ(info().plugged_size, 2 * BLOCK);
	CHECK_EQ(info().released, 0);
	CHECK_EQ(info().release_calls, 0);
	CHECK_EQ(state_of(0, 2), VIRTIO_MEM_STATE_PLUGGED);
	CHECK_EQ(state_of(2, HP_BLOCKS - 2), VIRTIO_MEM_STATE_UNPLUGGED);
	CHECK(block_holds(0, PATTERN));
	CHECK(block_holds(1, PATTERN));
	/* Boot RAM below the region untouched. */
	CHECK_EQ(gpa(RAM_SIZE - 1)[0], PATTERN);
	CHECK_EQ(gpa(0x200000)[0], PATTERN);
	/* Refused requests are answers, not protocol errors. */
	CHECK(!needs_reset(&mem.vdev));
	/* And the device still works: the third block. */
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(2), 1, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().plugged_size, 3 * BLOCK);
	teardown();
}

/* A smaller request: the driver unplugs down to it; plugging more than
 * the new size is refused though blocks are free. */
static void test_shrink_request(void)
{
	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, 4 * BLOCK), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(0), 4, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(virtio_mem_set_requested(&mem, BLOCK), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(4), 1, NULL),
		 VIRTIO_MEM_RESP_NACK);
	CHECK_EQ(send(VIRTIO_MEM_REQ_UNPLUG, blk(1), 3, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().plugged_size, BLOCK);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(4), 1, NULL),
		 VIRTIO_MEM_RESP_NACK);
	teardown();
}

/* UNPLUG_ALL: every plugged run given back, one call each; the usable
 * region stays whole. */
static void test_unplug_all(void)
{
	unsigned i;

	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, HP_SIZE), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(0), 2, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(5), 1, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(HP_BLOCKS - 3), 3, NULL),
		 VIRTIO_MEM_RESP_ACK);
	for (i = 0; i < HP_BLOCKS; i++)
		fill_block(i);
	CHECK_EQ(send(VIRTIO_MEM_REQ_UNPLUG_ALL, 0, 0, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().plugged_size, 0);
	CHECK_EQ(info().released, 6 * BLOCK);
	CHECK_EQ(info().release_calls, 3);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   usable_region_size)), HP_SIZE);
	CHECK_EQ(state_of(0, HP_BLOCKS), VIRTIO_MEM_STATE_UNPLUGGED);
	for (i = 0; i < HP_BLOCKS; i++)
		if (i < 2 || i == 5 || i >= HP_BLOCKS - 3)
			CHECK(block_holds(i, 0));
	/* Nothing plugged: still an ACK, and nothing to give back. */
	CHECK_EQ(send(VIRTIO_MEM_REQ_UNPLUG_ALL, 0, 0, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().release_calls, 3);
	teardown();
}

/* A reset keeps plugged blocks and their contents; the driver that
 * starts next reads them from plugged_size and STATE. */
static void test_reset_keeps_blocks(void)
{
	if (!setup())
		return;
	CHECK_EQ(virtio_mem_set_requested(&mem, 2 * BLOCK), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(6), 2, NULL),
		 VIRTIO_MEM_RESP_ACK);
	fill_block(6);
	virtio_set_status(&mem.vdev, 0);
	CHECK_EQ(virtio_get_status(&mem.vdev), 0);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, plugged_size)),
		 2 * BLOCK);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   requested_size)), 2 * BLOCK);
	CHECK(block_holds(6, PATTERN));
	CHECK_EQ(info().released, 0);
	driver_start(&mem.vdev, FEATURES, 1);
	slot = 0;
	CHECK_EQ(state_of(6, 2), VIRTIO_MEM_STATE_PLUGGED);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(0), 1, NULL),
		 VIRTIO_MEM_RESP_NACK);
	CHECK_EQ(send(VIRTIO_MEM_REQ_UNPLUG_ALL, 0, 0, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK(block_holds(6, 0));
	teardown();
}

/* Chains no driver sends: the device needs a reset and writes nothing. */
static void test_broken_chains(void)
{
	uint8_t *resp;

	if (!setup())
		return;
	resp = gpa(RESP_GPA);
	/* A request one byte short. */
	set_desc(0, 0, REQ_GPA, sizeof(struct virtio_mem_req) - 1,
		 VRING_DESC_F_NEXT, 1);
	set_desc(0, 1, RESP_GPA, sizeof(struct virtio_mem_resp),
		 VRING_DESC_F_WRITE, 0);
	memset(resp, 0xee, 16);
	publish(0, 0);
	virtio_queue_kick(&mem.vdev, 0);
	CHECK(WAIT_FOR(needs_reset(&mem.vdev)));
	CHECK_EQ(resp[0], 0xee);
	CHECK_EQ(used_idx(0), 0);

	/* After a reset: a request without room for the response. */
	virtio_set_status(&mem.vdev, 0);
	driver_start(&mem.vdev, FEATURES, 1);
	set_desc(0, 0, REQ_GPA, sizeof(struct virtio_mem_req), 0, 0);
	publish(0, 0);
	virtio_queue_kick(&mem.vdev, 0);
	CHECK(WAIT_FOR(needs_reset(&mem.vdev)));
	CHECK_EQ(used_idx(0), 0);
	CHECK_EQ(info().plugged_size, 0);
	teardown();
}

/* Block sizes: larger powers of two of the huge page are taken; others
 * are refused at creation, as is a first request that does not fit. */
static void test_block_sizes(void)
{
	if (!setup_block(4 * BLOCK))
		return;
	CHECK_EQ(config64(offsetof(struct virtio_mem_config, block_size)),
		 4 * BLOCK);
	CHECK_EQ(virtio_mem_set_requested(&mem, 2 * BLOCK), -EINVAL);
	CHECK_EQ(virtio_mem_set_requested(&mem, 4 * BLOCK), 0);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(2), 1, NULL),
		 VIRTIO_MEM_RESP_ERROR);
	CHECK_EQ(send(VIRTIO_MEM_REQ_PLUG, blk(4), 1, NULL),
		 VIRTIO_MEM_RESP_ACK);
	CHECK_EQ(info().plugged_size, 4 * BLOCK);
	teardown();

	CHECK(fake_driver_map_ram());
	CHECK_EQ(guest_ram_map_hotplug(&ram, HP_GPA, HP_SIZE), 0);
	CHECK_EQ(virtio_mem_create(&mem, BLOCK / 2, 0, &ram), -EINVAL);
	CHECK_EQ(virtio_mem_create(&mem, 3 * BLOCK, 0, &ram), -EINVAL);
	/* Does not divide the 32 MiB region. */
	CHECK_EQ(virtio_mem_create(&mem, 64 * BLOCK, 0, &ram), -EINVAL);
	/* A first request past the region, or not in whole blocks. */
	CHECK_EQ(virtio_mem_create(&mem, 0, HP_SIZE + BLOCK, &ram), -EINVAL);
	CHECK_EQ(virtio_mem_create(&mem, 0, BLOCK + 4096, &ram), -EINVAL);
	/* One that fits is in the configuration from the start. */
	CHECK_EQ(virtio_mem_create(&mem, 0, HP_SIZE, &ram), 0);
	CHECK_EQ(config64(offsetof(struct virtio_mem_config,
				   requested_size)), HP_SIZE);
	virtio_mem_destroy(&mem);
	guest_ram_unmap(&ram);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_config),
		UNIT_TEST(test_set_requested),
		UNIT_TEST(test_plug_unplug_state),
		UNIT_TEST(test_hostile_requests),
		UNIT_TEST(test_shrink_request),
		UNIT_TEST(test_unplug_all),
		UNIT_TEST(test_reset_keeps_blocks),
		UNIT_TEST(test_broken_chains),
		UNIT_TEST(test_block_sizes),
	};

	return UNIT_RUN(tests);
}
