/* Split virtqueue, device side: well-formed chains, and every kind of
 * malformed chain a hostile guest can build, each of which must break the
 * queue with a reason instead of touching memory outside guest RAM. */
#include <errno.h>
#include <linux/virtio_ring.h>
#include <stdlib.h>
#include <string.h>

#include "core/guest_ram.h"
#include "fake_virtio.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/virtqueue.h"

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
	fake_virtio_desc(&ram, table, i, addr, len, flags, next);
}

static void publish(uint16_t head)
{
	fake_virtio_publish(&ram, AVAIL_GPA, QSIZE, &avail_idx, head);
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

/* A chain put back is taken again, read anew from the ring, and the
 * ones behind it stay behind it. */
static void test_unpop(void)
{
	setup(ALL_FEATURES);
	set_desc(DESC_GPA, 2, BUF_GPA, 16, 0, 0);
	set_desc(DESC_GPA, 4, BUF_GPA + 0x1000, 8, VRING_DESC_F_WRITE, 0);
	publish(2);
	publish(4);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(chain.head, 2);
	virtq_unpop(&vq);
	CHECK(virtq_has_avail(&vq));
	set_desc(DESC_GPA, 2, BUF_GPA, 32, 0, 0);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(chain.head, 2);
	CHECK_EQ(chain.out_bytes, 32);
	CHECK_EQ(virtq_pop(&vq, &chain), 1);
	CHECK_EQ(chain.head, 4);
	CHECK_EQ(chain.in_bytes, 8);
	CHECK(!virtq_has_avail(&vq));
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

	/* Direct buffers, then a table: together longer than the queue. */
	setup(ALL_FEATURES);
	for (i = 0; i < QSIZE; i++)
		set_desc(TABLE_GPA, i, BUF_GPA, 16,
			 i + 1 < QSIZE ? VRING_DESC_F_NEXT : 0, i + 1);
	set_desc(DESC_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, TABLE_GPA, 16 * QSIZE, VRING_DESC_F_INDIRECT, 0);
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
	/* disable_notify puts it one behind what was taken (3), which a
	 * driver's next addition does not cross; from 0 it wraps. */
	virtq_disable_notify(&vq);
	CHECK_EQ(get_le16(gpa(USED_GPA + 4 + 8 * QSIZE)), 2);
	setup(ALL_FEATURES);
	virtq_disable_notify(&vq);
	CHECK_EQ(get_le16(gpa(USED_GPA + 4 + 8 * QSIZE)), 0xffff);
}

/* A buffer address as a guest might write one: mostly inside RAM, else
 * across its end, at the indirect tables, or anywhere at all. */
static uint64_t rnd_addr(void)
{
	switch (unit_rand(6)) {
	case 0:
		return RAM_SIZE - unit_rand(64);
	case 1:
		return TABLE_GPA + 16 * unit_rand(8);
	case 2:
		return unit_rand64();
	default:
		return BUF_GPA + unit_rand(RAM_SIZE - BUF_GPA);
	}
}

static uint32_t rnd_len(void)
{
	switch (unit_rand(5)) {
	case 0:
		return 0;
	case 1:
		return (uint32_t)unit_rand64();
	case 2:		/* indirect tables, up to a full one */
		return 16 * (unit_rand(2) ? 1 + unit_rand(16) : 256);
	default:
		return 1 + unit_rand(8192);
	}
}

/* Random descriptors; plausible ones link each to the next, readable
 * before writable, with an occasional bad field, so that long chains
 * (up to the 256 buffers a chain holds) come through too; the last of a
 * plausible ring may point to an indirect table of more. */
static void rnd_descs(uint64_t table, unsigned n, unsigned size,
		      bool plausible)
{
	static const uint16_t flags[] = {
		0, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE,
		VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, VRING_DESC_F_INDIRECT,
	};
	unsigned i, first_in = unit_rand(n + 1);
	bool early_ends = unit_rand(2);	/* or one chain through all */

	/* Each draw in a statement of its own: the order in which C
	 * evaluates arguments differs between compilers and arches, and
	 * the sequence must be the same everywhere. */
	for (i = 0; i < n; i++) {
		uint64_t addr;
		uint32_t len;
		uint16_t f, next;

		if (plausible && i + 1 == n && table == DESC_GPA &&
		    unit_rand(2)) {
			/* Buffers, then a table of more. */
			len = 16 * (1 + unit_rand(256));
			set_desc(table, i, TABLE_GPA, len,
				 VRING_DESC_F_INDIRECT, 0);
			continue;
		}
		if (plausible && unit_rand(256)) {
			addr = BUF_GPA + unit_rand(RAM_SIZE / 2);
			len = 1 + unit_rand(4096);
			f = i + 1 < n && (!early_ends || unit_rand(32)) ?
				    VRING_DESC_F_NEXT : 0;
			f |= i >= first_in ? VRING_DESC_F_WRITE : 0;
			set_desc(table, i, addr, len, f, (i + 1) % size);
			continue;
		}
		addr = rnd_addr();
		len = rnd_len();
		f = unit_rand(8) ? flags[unit_rand(ARRAY_SIZE(flags))] :
				   (uint16_t)unit_rand64();
		next = unit_rand(8) ? unit_rand(size) : (uint16_t)unit_rand64();
		set_desc(table, i, addr, len, f, next);
	}
}

/* What every chain handed to a device must satisfy, however the rings
 * were written. */
static void check_chain(unsigned size)
{
	const uint8_t *lo = ram.regions[0].host, *hi = lo + RAM_SIZE;
	uint64_t bytes = 0;
	unsigned i;

	CHECK(chain.head < size);
	CHECK(chain.nr_out + chain.nr_in <= size);
	for (i = 0; i < chain.nr_out + chain.nr_in; i++) {
		const uint8_t *b = chain.iov[i].iov_base;

		CHECK(chain.iov[i].iov_len > 0);
		CHECK(b >= lo && b < hi &&
		      chain.iov[i].iov_len <= (uint64_t)(hi - b));
		bytes += chain.iov[i].iov_len;
	}
	CHECK_EQ(bytes, chain.out_bytes + chain.in_bytes);
}

/* Rings full of random, mostly malformed, guest writes: every pop ends,
 * returns a chain inside guest RAM or breaks the queue for good, and the
 * copy helpers stay inside the chain. Under ASan+UBSan in CI this also
 * catches what the checks cannot see. */
static void test_random_rings(void)
{
	static const uint16_t sizes[] = { 1, 2, QSIZE, VIRTQ_MAX_SIZE };
	static uint8_t data[2 * 8192];
	unsigned round, chains = 0, broken = 0, longest = 0;

	for (round = 0; round < 3000; round++) {
		uint16_t size = sizes[unit_rand(ARRAY_SIZE(sizes))];
		uint16_t idx = 0;
		unsigned pop;
		int ret = 0;

		setup(unit_rand(4) ? ALL_FEATURES : 0);
		virtq_unmap(&vq);
		CHECK_EQ(virtq_map(&vq, &ram, size, DESC_GPA, AVAIL_GPA,
				   USED_GPA, unit_rand(4) ? ALL_FEATURES : 0),
			 0);
		rnd_descs(DESC_GPA, size, size, unit_rand(2));
		rnd_descs(TABLE_GPA, 256, 256, unit_rand(2));
		for (pop = 0; pop < 2u * size + 2 && ret >= 0; pop++) {
			unsigned i, more = unit_rand(4) ? 1 :
						  unit_rand(size + 2);
			uint64_t off, len;

			/* Heads: often 0, where a plausible ring's one
			 * long chain starts; else any. */
			for (i = 0; i < more; i++, idx++)
				put_le16(gpa(AVAIL_GPA + 4 + 2 * (idx % size)),
					 !unit_rand(4) ? 0 :
					 unit_rand(8) ? unit_rand(size) :
						(uint16_t)unit_rand64());
			put_le16(gpa(AVAIL_GPA + 2), idx);
			ret = virtq_pop(&vq, &chain);
			if (ret == 1) {
				chains++;
				longest = MAX(longest, chain.nr_out +
							       chain.nr_in);
				check_chain(size);
				off = unit_rand(8192);
				len = unit_rand(sizeof(data));
				virtq_chain_read(&chain, off, data, len);
				off = unit_rand(8192);
				len = unit_rand(sizeof(data));
				virtq_chain_write(&chain, off, data, len);
				virtq_push(&vq, chain.head,
					   (uint32_t)unit_rand64());
				virtq_need_interrupt(&vq);
			} else if (ret < 0) {
				CHECK_EQ(ret, -EIO);
				CHECK(vq.error != NULL);
				CHECK_EQ(virtq_pop(&vq, &chain), -EIO);
				broken++;
			} else {
				CHECK_EQ(ret, 0);
			}
		}
	}
	/* The generator reaches both outcomes often, and full chains. */
	CHECK(chains > 1000);
	CHECK(broken > 1000);
	CHECK_EQ(longest, VIRTQ_MAX_SIZE);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_map_checks),
		UNIT_TEST(test_good_chain),
		UNIT_TEST(test_unpop),
		UNIT_TEST(test_chain_copy),
		UNIT_TEST(test_hostile_direct),
		UNIT_TEST(test_hostile_indirect),
		UNIT_TEST(test_used_and_interrupts),
		UNIT_TEST(test_random_rings),
	};
	int rc;

	guest_ram_init(&ram);
	rc = UNIT_RUN(tests);
	guest_ram_unmap(&ram);
	return rc;
}
