/* Guest RAM: mapping alignment, the bounds checks every guest address
 * goes through, RAM offsets, and giving host memory back. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/guest_ram.h"
#include "lib/host_mem.h"
#include "lib/util.h"
#include "unit.h"

static void test_map_aligned(void)
{
	const struct ram_range r[] = { { 0, 8 << 20 }, { 1ULL << 32, 4 << 20 } };
	struct guest_ram ram;

	struct ram_range got;

	CHECK_EQ(guest_ram_align(), host_thp_size());
	CHECK_EQ(guest_ram_map(&ram, r, 2, RAM_BACKING_THP, NULL), 0);
	CHECK_EQ(ram.total, 12 << 20);
	CHECK_EQ(ram.page_size, host_page_size());
	CHECK_EQ(ram.huge_page_size, host_thp_size());
	CHECK(IS_ALIGNED((uintptr_t)guest_ram_ptr(&ram, 0, 1),
			 ram.huge_page_size));
	CHECK(IS_ALIGNED((uintptr_t)guest_ram_ptr(&ram, 1ULL << 32, 1),
			 ram.huge_page_size));
	CHECK(guest_ram_range(&ram, 0, &got));
	CHECK(got.gpa == 0 && got.size == 8 << 20);
	CHECK(guest_ram_range(&ram, 1, &got));
	CHECK(got.gpa == 1ULL << 32 && got.size == 4 << 20);
	CHECK(!guest_ram_range(&ram, 2, &got));
	guest_ram_unmap(&ram);
}

static void test_map_rejects_unaligned(void)
{
	const struct ram_range r[] = { { 4096, 8 << 20 } };
	const struct ram_range s[] = { { 0, (8 << 20) + 4096 } };
	/* Out of order, overlapping, empty. */
	const struct ram_range t[] = { { 1ULL << 32, 2 << 20 }, { 0, 2 << 20 } };
	const struct ram_range u[] = { { 0, 4 << 20 }, { 2 << 20, 2 << 20 } };
	const struct ram_range v[] = { { 0, 0 } };
	struct guest_ram ram;

	CHECK(guest_ram_map(&ram, r, 1, RAM_BACKING_THP, NULL) < 0);
	CHECK(guest_ram_map(&ram, s, 1, RAM_BACKING_THP, NULL) < 0);
	CHECK(guest_ram_map(&ram, t, 2, RAM_BACKING_THP, NULL) < 0);
	CHECK(guest_ram_map(&ram, u, 2, RAM_BACKING_THP, NULL) < 0);
	CHECK(guest_ram_map(&ram, v, 1, RAM_BACKING_THP, NULL) < 0);
}

static void test_ptr_bounds(void)
{
	const struct ram_range r[] = { { 0, 4 << 20 }, { 1ULL << 32, 2 << 20 } };
	struct guest_ram ram;
	uint8_t *base;

	CHECK_EQ(guest_ram_map(&ram, r, 2, RAM_BACKING_NO_THP, NULL), 0);
	base = guest_ram_ptr(&ram, 0, 4 << 20);
	CHECK(base != NULL);
	CHECK(guest_ram_ptr(&ram, 0, 1) == base);
	CHECK(guest_ram_ptr(&ram, 0x1000, 0x1000) == base + 0x1000);
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 8, 8) == base + (4 << 20) - 8);
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 8, 9) == NULL);
	CHECK(guest_ram_ptr(&ram, 4 << 20, 1) == NULL);
	CHECK(guest_ram_ptr(&ram, 0, (4 << 20) + 1) == NULL);
	/* A range across the gap between two regions is not RAM. */
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 4, 1ULL << 32) == NULL);
	CHECK(guest_ram_ptr(&ram, 1ULL << 32, 2 << 20) != NULL);
	CHECK(guest_ram_ptr(&ram, (1ULL << 32) - 1, 2) == NULL);
	/* Lengths and addresses that overflow 64 bits. */
	CHECK(guest_ram_ptr(&ram, 0x1000, UINT64_MAX) == NULL);
	CHECK(guest_ram_ptr(&ram, UINT64_MAX, 2) == NULL);
	CHECK(guest_ram_ptr(&ram, UINT64_MAX - 0xfff, 0x2000) == NULL);
	CHECK(guest_ram_ptr(&ram, 16, 0) == base + 16);
	/* RAM counted without its holes. */
	CHECK_EQ(guest_ram_offset(&ram, (4 << 20) - 1), (4 << 20) - 1);
	CHECK_EQ(guest_ram_offset(&ram, (1ULL << 32) + 5), (4 << 20) + 5);
	CHECK_EQ(guest_ram_offset(&ram, 4 << 20), UINT64_MAX);
	CHECK_EQ(guest_ram_offset(&ram, UINT64_MAX), UINT64_MAX);
	CHECK_EQ(guest_ram_contig(&ram, 0x1000), (4 << 20) - 0x1000);
	CHECK_EQ(guest_ram_contig(&ram, 5 << 20), 0);
	/* Writes: whole ranges of RAM only; overlapping ones move. */
	CHECK_EQ(guest_ram_write(&ram, 0x100, "abcdef", 6), 0);
	CHECK(!memcmp(base + 0x100, "abcdef", 6));
	CHECK_EQ(guest_ram_write(&ram, 0x102, base + 0x100, 6), 0);
	CHECK(!memcmp(base + 0x100, "ababcdef", 8));
	CHECK_EQ(guest_ram_write(&ram, (4 << 20) - 2, "xyz", 3), -EFAULT);
	CHECK_EQ(base[(4 << 20) - 2], 0);
	guest_ram_unmap(&ram);
}

static void test_usage_counts_huge_pages(void)
{
	const struct ram_range r[] = { { 0, 16 << 20 } };
	struct guest_ram_usage u;
	struct guest_ram ram;

	CHECK_EQ(guest_ram_map(&ram, r, 1, RAM_BACKING_THP, NULL), 0);
	memset(guest_ram_ptr(&ram, 0, 16 << 20), 1, 16 << 20);
	CHECK_EQ(guest_ram_usage(&ram, &u), 0);
	CHECK_EQ(u.size, 16 << 20);
	CHECK_EQ(u.resident, 16 << 20);
	/* The host may be short of huge pages, but never reports more. */
	CHECK(u.huge <= u.resident);
	if (!u.huge)
		printf("# no huge pages backed the test mapping\n");
	guest_ram_unmap(&ram);

	CHECK_EQ(guest_ram_map(&ram, r, 1, RAM_BACKING_NO_THP, NULL), 0);
	memset(guest_ram_ptr(&ram, 0, 16 << 20), 1, 16 << 20);
	CHECK_EQ(guest_ram_usage(&ram, &u), 0);
	CHECK_EQ(u.huge, 0);
	CHECK_EQ(u.resident, 16 << 20);
	guest_ram_unmap(&ram);
}

/* Given back: reads zeros, and the host holds less; a region boundary in
 * between does not stop a batch. */
static void test_discard(void)
{
	const struct ram_range r[] = { { 0, 4 << 20 }, { 8 << 20, 2 << 20 } };
	const struct ram_range ext[] = { { 4096, 8192 }, { 8 << 20, 4096 } };
	struct guest_ram_usage before, after;
	struct guest_ram ram;
	uint64_t calls = 0;
	uint8_t *lo, *hi;

	CHECK_EQ(guest_ram_map(&ram, r, 2, RAM_BACKING_NO_THP, NULL), 0);
	lo = guest_ram_ptr(&ram, 0, 4 << 20);
	hi = guest_ram_ptr(&ram, 8 << 20, 2 << 20);
	memset(lo, 7, 4 << 20);
	memset(hi, 7, 2 << 20);
	CHECK_EQ(guest_ram_usage(&ram, &before), 0);
	CHECK_EQ(guest_ram_discard(&ram, ext, 2, &calls), 2);
	CHECK_EQ(calls, ram.pidfd >= 0 ? 1 : 2);
	CHECK_EQ(guest_ram_usage(&ram, &after), 0);
	CHECK_EQ(before.resident - after.resident, 3 * 4096);
	CHECK(lo[4095] == 7 && lo[4096] == 0 && lo[3 * 4096 - 1] == 0 &&
	      lo[3 * 4096] == 7);
	CHECK(hi[0] == 0 && hi[4096] == 7);
	CHECK_EQ(guest_ram_discard(&ram, ext, 0, &calls), 0);
	guest_ram_unmap(&ram);
}

/* The hotplug region: its own aligned mapping above boot RAM, reached by
 * guest_ram_ptr but not listed as boot RAM; counted on its own; a whole
 * block given back costs exactly its huge page. */
static void test_hotplug_region(void)
{
	const struct ram_range r[] = { { 0, 4 << 20 } };
	const struct ram_range block = { (64 << 20) + (2 << 20), 2 << 20 };
	struct guest_ram_usage boot, before, after;
	struct guest_ram ram;
	struct ram_range h;
	uint64_t calls = 0;
	uint8_t *p;

	CHECK_EQ(guest_ram_map(&ram, r, 1, RAM_BACKING_THP, NULL), 0);
	CHECK(!guest_ram_hotplug(&ram, &h));
	CHECK_EQ(guest_ram_map_hotplug(&ram, 2 << 20, 8 << 20), -EINVAL);
	CHECK_EQ(guest_ram_map_hotplug(&ram, (64 << 20) + 4096, 8 << 20),
		 -EINVAL);
	CHECK_EQ(guest_ram_map_hotplug(&ram, 64 << 20, 0), -EINVAL);
	CHECK_EQ(guest_ram_map_hotplug(&ram, 64 << 20, 8 << 20), 0);
	CHECK_EQ(guest_ram_map_hotplug(&ram, 128 << 20, 8 << 20), -EINVAL);
	CHECK(guest_ram_hotplug(&ram, &h));
	CHECK_EQ(h.gpa, 64 << 20);
	CHECK_EQ(h.size, 8 << 20);
	CHECK(!guest_ram_range(&ram, 1, &h));
	CHECK_EQ(ram.total, 4 << 20);
	p = guest_ram_ptr(&ram, 64 << 20, 8 << 20);
	CHECK(p && IS_ALIGNED((uintptr_t)p, guest_ram_align()));
	CHECK(!guest_ram_ptr(&ram, (72 << 20) - 4096, 8192));
	CHECK(!guest_ram_ptr(&ram, 4 << 20, 1));
	CHECK_EQ(guest_ram_offset(&ram, 64 << 20), UINT64_MAX);
	CHECK_EQ(guest_ram_contig(&ram, 70 << 20), 2 << 20);
	if (!p) {
		guest_ram_unmap(&ram);
		return;
	}
	memset(p, 3, 8 << 20);
	CHECK_EQ(guest_ram_hotplug_usage(&ram, &before), 0);
	CHECK_EQ(guest_ram_usage(&ram, &boot), 0);
	CHECK_EQ(before.size, 8 << 20);
	CHECK_EQ(before.resident, 8 << 20);
	CHECK_EQ(boot.size, 4 << 20);
	CHECK(boot.resident <= 4 << 20);
	CHECK_EQ(guest_ram_discard(&ram, &block, 1, &calls), 1);
	CHECK_EQ(guest_ram_hotplug_usage(&ram, &after), 0);
	CHECK_EQ(before.resident - after.resident, 2 << 20);
	/* A whole aligned block: at most its own huge page went, none was
	 * split into the rest. */
	CHECK(before.huge - after.huge <= 2 << 20);
	if (before.huge == 8 << 20)
		CHECK_EQ(after.huge, 6 << 20);
	else
		printf("# no huge pages backed the hotplug region\n");
	CHECK(p[(2 << 20) - 1] == 3 && p[2 << 20] == 0 &&
	      p[(4 << 20) - 1] == 0 && p[4 << 20] == 3);
	guest_ram_unmap(&ram);
	CHECK(!guest_ram_hotplug(&ram, &h));
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_map_aligned),
		UNIT_TEST(test_map_rejects_unaligned),
		UNIT_TEST(test_ptr_bounds),
		UNIT_TEST(test_usage_counts_huge_pages),
		UNIT_TEST(test_discard),
		UNIT_TEST(test_hotplug_region),
	};

	return UNIT_RUN(tests);
}
