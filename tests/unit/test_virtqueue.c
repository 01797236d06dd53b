/* Split virtqueue, device side: well-formed chains, and every kind of
 * malformed chain a hostile guest can build, each of which must break the
 * queue with a reason instead of touching memory outside guest RAM. */
#include <errno.h>
#include <linux/virtio_ring.h>
#include <stdlib.h>
#include <string.h>

#include "guest_ram.h"
#include "unit.h"
#include "util.h"
#include "virtqueue.h"

#define QSIZE 8
#define DESC_GPA 0x10000
#define AVAIL_GPA 0x11000
#define USED_GPA 0x12000
#define TABLE_GPA 0x13000	/* indirect tables */
#define BUF_GPA 0x20000
#define RAM_SIZE (4ULL << 20)
#define ALL_FEATURES (1ULL << VIRTIO_RING_F_EVENT_IDX | \
		      1ULL << VIRTIO_RING_F_INDIRECT_DESC)

static struct guest_ram ram;
static struct virtq vq;
static struct virtq_chain chain;
static uint16_t avail_idx;

static uint8_t *gpa(uint64_t a)
{
	return guest_ram_ptr(&ram, a, 1);
}

static void set_desc(uint64_t table, unsigned i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint8_t *d = gpa(table + 16 * i);

	put_le64(d, addr);
	put_le32(d + 8, len);
	put_le16(d + 12, flags);
	put_le16(d + 14, next);
}

static void publish(uint16_t head)
{
	put_le16(gpa(AVAIL_GPA + 4 + 2 * (avail_idx % QSIZE)), head);
	put_le16(gpa(AVAIL_GPA + 2), ++avail_idx);
}

static void setup(uint64_t features)
{
	const struct ram_range r[] = { { 0, RAM_SIZE } };

	guest_ram_unmap(&ram);
	if (guest_ram_map(&ram, r, 1, RAM_BACKING_NO_THP, NULL)) {
		CHECK(!"guest_ram_map");
		exit(1);	/* every test writes rings in this RAM */
	}
	avail_idx = 0;
	CHECK_EQ(virtq_map(&vq, &ram, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA,
			   features), 0);
}

/* Publishes desc 0 as the head and expects the pop to fail with why. */
static void expect_broken(const char *why)
{
	publish(0);
	CHECK_EQ(virtq_pop(&vq, &chain), -EIO);
	CHECK_STR(vq.error, why);
	/* A broken queue stays broken. */
	CHECK_EQ(virtq_pop(&vq, &chain), -EIO);
}

static void test_map_checks(void)
{
	setup(0);
	CHECK(virtq_map(&vq, &ram, 6, DESC_GPA, AVAIL_GPA, USED_GPA, 0) < 0);
	CHECK(virtq_map(&vq, &ram, 512, DESC_GPA, AVAIL_GPA, USED_GPA, 0) < 0);
	CHECK(virtq_map(&vq, &ram, 0, DESC_GPA, AVAIL_GPA, USED_GPA, 0) < 0);
	CHECK(virtq_map(&vq, &ram, QSIZE, DESC_GPA + 8, AVAIL_GPA, USED_GPA,
			0) < 0);
	CHECK_STR(vq.error, "misaligned ring");
	CHECK(virtq_map(&vq, &ram, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA + 2,
			0) < 0);
	CHECK(virtq_map(&vq, &ram, QSIZE, RAM_SIZE - 64, AVAIL_GPA, USED_GPA,
			0) < 0);
	CHECK_STR(vq.error, "ring outside guest RAM");
	CHECK(virtq_map(&vq, &ram, QSIZE, DESC_GPA, 0xfec00000, USED_GPA,
			0) < 0);
}

static void test_good_chain(void)
{
	setup(ALL_FEATURES);
	CHECK_EQ(virtq_pop(&vq, &chain), 0);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 3);
	set_desc(DESC_GPA, 3, BUF_GPA + 0x1000, 0, VRING_DESC_F_NEXT, 5);
	set_desc(DESC_GPA, 5, BUF_GPA + 0x2000, 512,
		 VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 6);
	set_desc(DESC_GPA, 6, BUF_GPA + 0x3000, 1, VRING_DESC_F_WRITE, 0);
	publish(0);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(chain.head, 0);
	CHECK_EQ(chain.nr_out, 1);	/* the empty descriptor is skipped */
	CHECK_EQ(chain.nr_in, 2);
	CHECK_EQ(chain.out_bytes, 16);
	CHECK_EQ(chain.in_bytes, 513);
	CHECK(chain.iov[1].iov_base == gpa(BUF_GPA + 0x2000));
	CHECK_EQ(virtq_pop(&vq, &chain), 0);
}

static void test_chain_copy(void)
{
	uint8_t buf[8] = "abcdefg", out[8] = { 0 };

	setup(0);
	set_desc(DESC_GPA, 0, BUF_GPA, 3, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, BUF_GPA + 100, 5, VRING_DESC_F_NEXT, 2);
	set_desc(DESC_GPA, 2, BUF_GPA + 200, 2, VRING_DESC_F_WRITE |
		 VRING_DESC_F_NEXT, 3);
	set_desc(DESC_GPA, 3, BUF_GPA + 300, 4, VRING_DESC_F_WRITE, 0);
	memcpy(gpa(BUF_GPA), "abc", 3);
	memcpy(gpa(BUF_GPA + 100), "defgh", 5);
	publish(0);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(virtq_chain_read(&chain, 2, out, 4), 4);
	CHECK(!memcmp(out, "cdef", 4));
	CHECK_EQ(virtq_chain_read(&chain, 6, out, 8), 2);
	CHECK_EQ(virtq_chain_write(&chain, 1, buf, 8), 5);
	CHECK(!memcmp(gpa(BUF_GPA + 201), "a", 1));
	CHECK(!memcmp(gpa(BUF_GPA + 300), "bcde", 4));
}

static void test_hostile_direct(void)
{
	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, BUF_GPA, 16, VRING_DESC_F_NEXT, 0);
	expect_broken("loop in descriptor chain");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, QSIZE);
	expect_broken("next index out of range");

	setup(ALL_FEATURES);
	put_le16(gpa(AVAIL_GPA + 4), QSIZE + 3);
	put_le16(gpa(AVAIL_GPA + 2), 1);
	CHECK_EQ(virtq_pop(&vq, &chain), -EIO);
	CHECK_STR(vq.error, "head index out of range");

	setup(ALL_FEATURES);
	put_le16(gpa(AVAIL_GPA + 2), QSIZE + 1);
	CHECK_EQ(virtq_pop(&vq, &chain), -EIO);
	CHECK_STR(vq.error, "avail index moved by more than the queue size");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, 1ULL << 40, 16, 0, 0);
	expect_broken("buffer outside guest RAM");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, ~0ULL - 0xfff, 0x2000, 0, 0);
	expect_broken("buffer outside guest RAM");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, RAM_SIZE - 8, 16, 0, 0);
	expect_broken("buffer outside guest RAM");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, 0xfec00000, 16, 0, 0);
	expect_broken("buffer outside guest RAM");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, BUF_GPA, 1, VRING_DESC_F_WRITE |
		 VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, BUF_GPA, 16, 0, 0);
	expect_broken("readable buffer after a writable one");
}

static void test_hostile_indirect(void)
{
	unsigned i;

	setup(ALL_FEATURES);
	set_desc(TABLE_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(TABLE_GPA, 1, BUF_GPA + 16, 1, VRING_DESC_F_WRITE, 0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	publish(0);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(chain.nr_out, 1);
	CHECK_EQ(chain.nr_in, 1);

	setup(0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	expect_broken("indirect descriptor not negotiated");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32,
		 VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	expect_broken("indirect descriptor with NEXT");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, TABLE_GPA, 24, VRING_DESC_F_INDIRECT, 0);
	expect_broken("indirect table length not a multiple of 16");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, TABLE_GPA, 0, VRING_DESC_F_INDIRECT, 0);
	expect_broken("indirect table length not a multiple of 16");

	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, RAM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0);
	expect_broken("indirect table outside guest RAM");

	setup(ALL_FEATURES);
	set_desc(TABLE_GPA, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	expect_broken("nested indirect table");

	setup(ALL_FEATURES);
	set_desc(TABLE_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(TABLE_GPA, 1, BUF_GPA, 16, VRING_DESC_F_NEXT, 0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	expect_broken("loop in indirect table");

	setup(ALL_FEATURES);
	set_desc(TABLE_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 2);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	expect_broken("indirect next index out of range");

	/* A straight indirect chain with more buffers than the queue. */
	setup(ALL_FEATURES);
	for (i = 0; i <= QSIZE; i++)
		set_desc(TABLE_GPA, i, BUF_GPA, 16,
			 i < QSIZE ? VRING_DESC_F_NEXT : 0, i + 1);
	set_desc(DESC_GPA, 0, TABLE_GPA, 16 * (QSIZE + 1),
		 VRING_DESC_F_INDIRECT, 0);
	expect_broken("chain longer than the queue");

	/* Zero-length entries add no buffer but still count. */
	setup(ALL_FEATURES);
	for (i = 0; i <= QSIZE; i++)
		set_desc(TABLE_GPA, i, BUF_GPA, 0,
			 i < QSIZE ? VRING_DESC_F_NEXT : 0, i + 1);
	set_desc(DESC_GPA, 0, TABLE_GPA, 16 * (QSIZE + 1),
		 VRING_DESC_F_INDIRECT, 0);
	expect_broken("chain longer than the queue");
}

static void test_used_and_interrupts(void)
{
	unsigned i;

	/* Without EVENT_IDX: the driver's NO_INTERRUPT flag. */
	setup(0);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, 0, 0);
	publish(0);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	virtq_push(&vq, chain.head, 7);
	CHECK_EQ(get_le16(gpa(USED_GPA + 2)), 1);
	CHECK_EQ(get_le32(gpa(USED_GPA + 4)), 0);
	CHECK_EQ(get_le32(gpa(USED_GPA + 8)), 7);
	CHECK(virtq_need_interrupt(&vq));
	put_le16(gpa(AVAIL_GPA), VRING_AVAIL_F_NO_INTERRUPT);
	CHECK(!virtq_need_interrupt(&vq));
	virtq_disable_notify(&vq);
	CHECK_EQ(get_le16(gpa(USED_GPA)), VRING_USED_F_NO_NOTIFY);
	CHECK(!virtq_enable_notify(&vq));
	CHECK_EQ(get_le16(gpa(USED_GPA)), 0);

	/* With EVENT_IDX: interrupt only when used crosses used_event. */
	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, 0, 0);
	put_le16(gpa(AVAIL_GPA + 4 + 2 * QSIZE), 2);	/* used_event */
	for (i = 0; i < 3; i++) {
		publish(0);
		CHECK_EQ(virtq_pop(&vq, &chain), 1);
		virtq_push(&vq, chain.head, 0);
		/* The first always signals; then only the third push
		 * (used idx 2 -> 3) crosses used_event 2. */
		CHECK_EQ(virtq_need_interrupt(&vq), i != 1);
	}
	/* enable_notify publishes avail_event and sees late buffers. */
	CHECK(!virtq_enable_notify(&vq));
	CHECK_EQ(get_le16(gpa(USED_GPA + 4 + 8 * QSIZE)), 3);
	publish(0);
	CHECK(virtq_enable_notify(&vq));
}

int main(void)
{
	RUN_TEST(test_map_checks);
	RUN_TEST(test_good_chain);
	RUN_TEST(test_chain_copy);
	RUN_TEST(test_hostile_direct);
	RUN_TEST(test_hostile_indirect);
	RUN_TEST(test_used_and_interrupts);
	guest_ram_unmap(&ram);
	return unit_finish();
}
