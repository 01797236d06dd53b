/* Guest RAM: mapping alignment and the bounds checks every guest address
 * goes through. */
#include <stdint.h>
#include <string.h>

#include "core/guest_ram.h"
#include "lib/util.h"
#include "unit.h"

static void test_map_aligned(void)
{
	const struct ram_range r[] = { { 0, 8 << 20 }, { 1ULL << 32, 4 << 20 } };
	struct guest_ram ram;

	CHECK_EQ(guest_ram_map(&ram, r, 2, RAM_BACKING_THP, NULL), 0);
	CHECK_EQ(ram.nr_regions, 2);
	CHECK_EQ(ram.total, 12 << 20);
	CHECK(IS_ALIGNED((uintptr_t)ram.regions[0].host, GUEST_RAM_ALIGN));
	CHECK(IS_ALIGNED((uintptr_t)ram.regions[1].host, GUEST_RAM_ALIGN));
	guest_ram_unmap(&ram);
}

static void test_map_rejects_unaligned(void)
{
	const struct ram_range r[] = { { 4096, 8 << 20 } };
	const struct ram_range s[] = { { 0, (8 << 20) + 4096 } };
	struct guest_ram ram;

	CHECK(guest_ram_map(&ram, r, 1, RAM_BACKING_THP, NULL) < 0);
	CHECK(guest_ram_map(&ram, s, 1, RAM_BACKING_THP, NULL) < 0);
}

static void test_ptr_bounds(void)
{
	const struct ram_range r[] = { { 0, 4 << 20 }, { 1ULL << 32, 2 << 20 } };
	struct guest_ram ram;
	uint8_t *base;

	CHECK_EQ(guest_ram_map(&ram, r, 2, RAM_BACKING_NO_THP, NULL), 0);
	base = ram.regions[0].host;
	CHECK(guest_ram_ptr(&ram, 0, 1) == base);
	CHECK(guest_ram_ptr(&ram, 0x1000, 0x1000) == base + 0x1000);
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 8, 8) == base + (4 << 20) - 8);
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 8, 9) == NULL);
	CHECK(guest_ram_ptr(&ram, 4 << 20, 1) == NULL);
	CHECK(guest_ram_ptr(&ram, 0, (4 << 20) + 1) == NULL);
	/* A range across the gap between two regions is not RAM. */
	CHECK(guest_ram_ptr(&ram, (4 << 20) - 4, 1ULL << 32) == NULL);
	CHECK(guest_ram_ptr(&ram, 1ULL << 32, 2 << 20) == ram.regions[1].host);
	CHECK(guest_ram_ptr(&ram, (1ULL << 32) - 1, 2) == NULL);
	/* Lengths and addresses that overflow 64 bits. */
	CHECK(guest_ram_ptr(&ram, 0x1000, UINT64_MAX) == NULL);
	CHECK(guest_ram_ptr(&ram, UINT64_MAX, 2) == NULL);
	CHECK(guest_ram_ptr(&ram, UINT64_MAX - 0xfff, 0x2000) == NULL);
	CHECK(guest_ram_ptr(&ram, 16, 0) == base + 16);
	CHECK(guest_ram_region(&ram, (4 << 20) - 1) == &ram.regions[0]);
	CHECK(guest_ram_region(&ram, (1ULL << 32) + 5) == &ram.regions[1]);
	CHECK(guest_ram_region(&ram, 4 << 20) == NULL);
	CHECK(guest_ram_region(&ram, UINT64_MAX) == NULL);
	CHECK_EQ(guest_ram_contig(&ram, 0x1000), (4 << 20) - 0x1000);
	CHECK_EQ(guest_ram_contig(&ram, 5 << 20), 0);
	guest_ram_unmap(&ram);
}

static void test_usage_counts_huge_pages(void)
{
	const struct ram_range r[] = { { 0, 16 << 20 } };
	struct guest_ram_usage u;
	struct guest_ram ram;

	CHECK_EQ(guest_ram_map(&ram, r, 1, RAM_BACKING_THP, NULL), 0);
	memset(ram.regions[0].host, 1, 16 << 20);
	CHECK_EQ(guest_ram_usage(&ram, &u), 0);
	CHECK_EQ(u.size, 16 << 20);
	CHECK_EQ(u.resident, 16 << 20);
	/* The host may be short of huge pages, but never reports more. */
	CHECK(u.huge <= u.resident);
	if (!u.huge)
		printf("# no huge pages backed the test mapping\n");
	guest_ram_unmap(&ram);

	CHECK_EQ(guest_ram_map(&ram, r, 1, RAM_BACKING_NO_THP, NULL), 0);
	memset(ram.regions[0].host, 1, 16 << 20);
	CHECK_EQ(guest_ram_usage(&ram, &u), 0);
	CHECK_EQ(u.huge, 0);
	CHECK_EQ(u.resident, 16 << 20);
	guest_ram_unmap(&ram);
}

int main(void)
{
	RUN_TEST(test_map_aligned);
	RUN_TEST(test_map_rejects_unaligned);
	RUN_TEST(test_ptr_bounds);
	RUN_TEST(test_usage_counts_huge_pages);
	return unit_finish();
}
