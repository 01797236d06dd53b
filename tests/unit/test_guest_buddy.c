/* The test guest's page allocator (guest/buddy.c) on the host: its
 * per-pageblock counts against a full recount after every operation,
 * compaction's migrations keeping page contents and table entries,
 * compaction of pageblocks that hold nothing but movable pages, and
 * hotplugged memory joining and leaving (virtio-mem). The
 * allocator works on guest-physical addresses, which the guest maps
 * one to one, so its RAM is mapped here at the same address. */
#include <stdlib.h>
#include <sys/mman.h>

#include "../../guest/buddy.c"

#include "unit.h"

#define RAM_BASE	0x10000000ULL
#define RAM_SIZE	(64ULL << 20)
#define TABLE_ORDER	7		/* 512 KiB: 65536 entries */
#define WORDS		512

struct boot_info boot;

uint64_t kernel_area_end(void)
{
	return RAM_BASE;
}

static uint64_t *table;

/* RAM at RAM_BASE, [start, end) of it usable, metadata up to
 * hotplug_end; the allocator reset. */
static int ram_setup_hotplug(uint64_t start, uint64_t end,
			     uint64_t hotplug_end)
{
	static void *ram;

	if (!ram) {
		ram = mmap((void *)RAM_BASE, RAM_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			   -1, 0);
		if (ram != (void *)RAM_BASE) {
			ram = NULL;
			return -1;
		}
	}
	memset(&bd, 0, sizeof(bd));
	boot.nmem = 1;
	boot.mem[0] = (struct mem_range){ RAM_BASE + start, end - start,
					  MEM_RAM };
	buddy_init(hotplug_end);
	table = (uint64_t *)buddy_alloc(TABLE_ORDER);
	buddy_set_table(table);
	return table ? 0 : -1;
}

static int ram_setup(uint64_t start, uint64_t end)
{
	return ram_setup_hotplug(start, end, 0);
}

/* pb_free and pb_movable against a count from the free lists' heads
 * and the movable bitmap. */
static int counts_agree(void)
{
	uint64_t *fr = calloc(bd.npb, sizeof(*fr)), *mv = calloc(bd.npb,
								  sizeof(*mv));
	int ok = fr && mv;

	for (uint64_t i = 0; ok && i < bd.npages; i++) {
		uint64_t pb = ((bd.base + i) >> PB_ORDER) - bd.pb_first;

		if (test_bit(bd.movable_map, i))
			mv[pb]++;
		if (is_head(i))
			for (uint64_t j = i; j < i + (1ULL << bd.order[i]); j++)
				fr[((bd.base + j) >> PB_ORDER) - bd.pb_first]++;
	}
	for (uint64_t b = 0; ok && b < bd.npb; b++)
		ok = fr[b] == bd.pb_free[b] && mv[b] == bd.pb_movable[b];
	free(fr);
	free(mv);
	return ok;
}

static uint64_t *fill_entry(uint64_t e)
{
	uint64_t *p = (uint64_t *)buddy_alloc_movable(e);

	for (unsigned w = 0; p && w < WORDS; w++)
		p[w] = e * WORDS + w;
	return p;
}

static int entry_intact(uint64_t e)
{
	const uint64_t *p = (const uint64_t *)table[e];

	for (unsigned w = 0; w < WORDS; w++)
		if (p[w] != e * WORDS + w)
			return 0;
	return 1;
}

/* Random order-9 allocations (compacting when none is free), frees and
 * movable pages coming and going, over RAM whose ends are not
 * pageblock-aligned. */
static void test_random_operations(void)
{
	uint64_t held[512], nheld = 0, migrated = 0, compactions = 0, n;
	int agreed = 1;

	if (ram_setup(0x3000, RAM_SIZE - 0x5000)) {
		SKIP("cannot map guest RAM at its guest-physical address");
		return;
	}
	CHECK(counts_agree());
	for (n = 0; n < 16384 && fill_entry(n); n++)
		;
	for (uint64_t e = 1; e < n; e += 2) {
		buddy_free_movable(table[e]);
		table[e] = 0;
	}
	CHECK(counts_agree());
	for (int it = 0; it < 3000 && agreed; it++) {
		uint64_t e = unit_rand(n), a;

		switch (unit_rand(3)) {
		case 0:
			if (nheld == 512)
				break;
			a = buddy_alloc(9);
			if (!a && (a = buddy_compact(&migrated)))
				compactions++;
			if (a)
				held[nheld++] = a;
			break;
		case 1:
			if (nheld) {
				uint64_t k = unit_rand(nheld);

				buddy_free(held[k], 9);
				held[k] = held[--nheld];
			}
			break;
		default:
			if (table[e]) {
				buddy_free_movable(table[e]);
				table[e] = 0;
			} else {
				fill_entry(e);
			}
		}
		agreed = counts_agree();
	}
	CHECK(agreed);
	CHECK(compactions > 0);
	CHECK(migrated > 0);
	for (uint64_t e = 0; e < n; e++)
		if (table[e] && !entry_intact(e)) {
			CHECK(!"a page lost its data");
			break;
		}
}

/* Pageblocks full of movable pages are compacted too, as long as there
 * is room elsewhere: here the only free pages are in four pageblocks that
 * also hold an unmovable page each. */
static void test_compact_fully_movable_block(void)
{
	uint64_t n = 0, migrated = 0, a;
	unsigned done = 0;

	if (ram_setup(0, RAM_SIZE)) {
		SKIP("cannot map guest RAM at its guest-physical address");
		return;
	}
	while (fill_entry(n))
		n++;
	for (uint64_t b = 0; b < bd.npb && done < 4; b++) {
		uint64_t first = ((bd.pb_first + b) << PB_ORDER) - bd.base;

		if (bd.pb_movable[b] != PB_PAGES)
			continue;
		/* The block's first page becomes unmovable, the rest free. */
		table[bd.owner[first]] = 0;
		buddy_free_movable((bd.base + first) << PAGE_SHIFT);
		CHECK_EQ(buddy_alloc(0), (bd.base + first) << PAGE_SHIFT);
		for (uint64_t i = first + 1; i < first + PB_PAGES; i++) {
			table[bd.owner[i]] = 0;
			buddy_free_movable((bd.base + i) << PAGE_SHIFT);
		}
		done++;
	}
	CHECK_EQ(done, 4);
	CHECK_EQ(buddy_alloc(9), 0);
	a = buddy_compact(&migrated);
	CHECK(a != 0);
	CHECK_EQ(migrated, PB_PAGES);
	CHECK(counts_agree());
	for (uint64_t e = 0; e < n; e++)
		if (table[e] && !entry_intact(e)) {
			CHECK(!"a migrated page lost its data");
			break;
		}
}

#define HP_BASE (RAM_BASE + (40ULL << 20))	/* 12 blocks of 2 MiB */
#define MIB (1ULL << 20)

/* Boot RAM [0, 32 MiB) with the metadata for a hotplug region at 40-64
 * MiB: plugged blocks join the free pages and merge; only covered ranges
 * join. */
static void test_hotplug_add(void)
{
	uint64_t total, free;

	if (ram_setup_hotplug(0, 32 * MIB, RAM_BASE + RAM_SIZE)) {
		SKIP("cannot map guest RAM at its guest-physical address");
		return;
	}
	total = buddy_total_bytes();
	free = buddy_free_bytes();
	CHECK(buddy_add(HP_BASE, 8 * MIB));
	CHECK_EQ(buddy_total_bytes(), total + 8 * MIB);
	CHECK_EQ(buddy_free_bytes(), free + 8 * MIB);
	/* Merged into two 4 MiB blocks. */
	CHECK(is_head((HP_BASE >> PAGE_SHIFT) - bd.base));
	CHECK_EQ(bd.order[(HP_BASE >> PAGE_SHIFT) - bd.base], BUDDY_MAX_ORDER);
	CHECK(!buddy_add(RAM_BASE + RAM_SIZE, 2 * MIB));
	CHECK(!buddy_add(RAM_BASE + RAM_SIZE - 2 * MIB, 4 * MIB));
	CHECK(counts_agree());
}

/* A free 2 MiB block leaves from the middle of a 4 MiB free block, whose
 * other half stays free; a block holding one unmovable page does not
 * leave, and nothing changes. */
static void test_hotplug_remove_free_and_unmovable(void)
{
	static uint64_t pages[16384];
	uint64_t free, total, migrated = 0, n = 0, a, kept = 0;

	if (ram_setup_hotplug(0, 32 * MIB, RAM_BASE + RAM_SIZE)) {
		SKIP("cannot map guest RAM at its guest-physical address");
		return;
	}
	CHECK(buddy_add(HP_BASE, 8 * MIB));
	free = buddy_free_bytes();
	total = buddy_total_bytes();
	CHECK(buddy_remove(HP_BASE + 2 * MIB, 2 * MIB, &migrated));
	CHECK_EQ(migrated, 0);
	CHECK_EQ(buddy_free_bytes(), free - 2 * MIB);
	CHECK_EQ(buddy_total_bytes(), total - 2 * MIB);
	CHECK(counts_agree());
	/* Misaligned or uncovered: refused. */
	CHECK(!buddy_remove(HP_BASE + 4096, 2 * MIB, &migrated));
	CHECK(!buddy_remove(RAM_BASE + RAM_SIZE, 2 * MIB, &migrated));
	/* Everything allocated; every page but one of the last block freed
	 * again. */
	while (n < 16384 && (a = buddy_alloc(0)))
		pages[n++] = a;
	CHECK_EQ(buddy_free_bytes(), 0);
	for (uint64_t i = 0; i < n; i++) {
		CHECK(pages[i] < HP_BASE + 2 * MIB ||
		      pages[i] >= HP_BASE + 4 * MIB);
		if (pages[i] == HP_BASE + 7 * MIB)
			kept++;
		else
			buddy_free(pages[i], 0);
	}
	CHECK_EQ(kept, 1);
	free = buddy_free_bytes();
	CHECK(!buddy_remove(HP_BASE + 6 * MIB, 2 * MIB, &migrated));
	CHECK_EQ(buddy_free_bytes(), free);
	CHECK(buddy_remove(HP_BASE + 4 * MIB, 2 * MIB, &migrated));
	CHECK_EQ(migrated, 0);
	CHECK(counts_agree());
}

/* Movable pages in a leaving block migrate with their data and table
 * entries; none points into the block after, and it gives no page out. */
static void test_hotplug_remove_migrates(void)
{
	uint64_t n = 0, migrated = 0, inside = 0, a;

	if (ram_setup_hotplug(0, 32 * MIB, RAM_BASE + RAM_SIZE)) {
		SKIP("cannot map guest RAM at its guest-physical address");
		return;
	}
	CHECK(buddy_add(HP_BASE, 4 * MIB));
	while (n < 16384 && fill_entry(n))
		n++;
	for (uint64_t e = 1; e < n; e += 2) {
		buddy_free_movable(table[e]);
		table[e] = 0;
	}
	for (uint64_t e = 0; e < n; e++)
		inside += table[e] >= HP_BASE && table[e] < HP_BASE + 2 * MIB;
	CHECK(inside > 0);
	CHECK(buddy_remove(HP_BASE, 2 * MIB, &migrated));
	CHECK_EQ(migrated, inside);
	CHECK(counts_agree());
	for (uint64_t e = 0; e < n; e++) {
		if (!table[e])
			continue;
		CHECK(table[e] < HP_BASE || table[e] >= HP_BASE + 2 * MIB);
		if (!entry_intact(e)) {
			CHECK(!"a migrated page lost its data");
			break;
		}
	}
	while ((a = buddy_alloc(0)))
		if (a >= HP_BASE && a < HP_BASE + 2 * MIB) {
			CHECK(!"a removed page was handed out");
			break;
		}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_random_operations),
		UNIT_TEST(test_compact_fully_movable_block),
		UNIT_TEST(test_hotplug_add),
		UNIT_TEST(test_hotplug_remove_free_and_unmovable),
		UNIT_TEST(test_hotplug_remove_migrates),
	};

	return UNIT_RUN(tests);
}
