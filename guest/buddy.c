/* A buddy page allocator over the usable RAM above the guest's own area
 * (what touch= walks), so that the balloon takes pages the way Linux's
 * page allocator hands them out: an allocation of order k comes from the
 * smallest free block of order >= k, split in halves down to k, and a
 * freed block merges with its buddy while that is free. Blocks are
 * naturally aligned in guest-physical space.
 *
 * All bookkeeping is out of band (a next/prev index and an order per
 * page, a bitmap of free block heads), like Linux's struct page, so that
 * neither allocating nor freeing writes to the pages themselves: a page
 * the host released stays released until its user touches it. Only free
 * block heads have valid entries, so nothing but the bitmap is cleared.
 *
 * Movable pages (a user's, through its page table) and compaction: a
 * bitmap marks them and an owner index per page says which entry of the
 * page table maps them, as Linux's rmap does; per 2 MiB pageblock the
 * free and movable pages are counted so that compaction can find a block
 * it can empty, then migrates its movable pages into free pages
 * elsewhere (docs/test-guest.md). */
#include "guest.h"
#include "lib.h"

#define PAGE_SHIFT	12
#define PAGE		(1ULL << PAGE_SHIFT)
#define NONE		0xffffffffu
#define PB_ORDER	9	/* a pageblock: 2 MiB, as Linux on x86 */
#define PB_PAGES	(1u << PB_ORDER)

static struct {
	uint64_t base, npages;		/* pfn of index 0, pages covered */
	uint32_t *next, *prev;		/* free lists, by page index */
	uint8_t *order;			/* a free block's order, at its head */
	uint64_t *head_map;		/* bit per page: a free block starts */
	uint64_t *movable_map;		/* bit per page: in a user's table */
	uint32_t *owner;		/* its entry there, if movable */
	uint16_t *pb_free, *pb_movable;	/* per pageblock, from pb_first */
	uint64_t pb_first, npb;		/* pageblock numbers (pfn >> 9) */
	uint64_t *table;		/* the user's page table */
	uint32_t list[BUDDY_MAX_ORDER + 1];
	uint64_t free_pages, total_pages;
} bd;

static bool test_bit(const uint64_t *map, uint64_t i)
{
	return map[i / 64] >> (i % 64) & 1;
}

static bool is_head(uint64_t i)
{
	return test_bit(bd.head_map, i);
}

/* Adds n to the free count of every pageblock [i, i + pages) covers. */
static void pb_account(uint64_t i, unsigned order, int sign)
{
	uint64_t pfn = bd.base + i, pages = 1ULL << order;

	for (uint64_t p = pfn; p < pfn + pages; p += PB_PAGES)
		bd.pb_free[(p >> PB_ORDER) - bd.pb_first] +=
			sign * (int)MIN(pages, PB_PAGES);
}

static void push(uint64_t i, unsigned order)
{
	uint32_t h = bd.list[order];

	bd.next[i] = h;
	bd.prev[i] = NONE;
	if (h != NONE)
		bd.prev[h] = i;
	bd.list[order] = i;
	bd.order[i] = order;
	bd.head_map[i / 64] |= 1ULL << (i % 64);
	bd.free_pages += 1ULL << order;
	pb_account(i, order, 1);
}

static void unlink(uint64_t i)
{
	unsigned order = bd.order[i];

	if (bd.prev[i] != NONE)
		bd.next[bd.prev[i]] = bd.next[i];
	else
		bd.list[order] = bd.next[i];
	if (bd.next[i] != NONE)
		bd.prev[bd.next[i]] = bd.prev[i];
	bd.head_map[i / 64] &= ~(1ULL << (i % 64));
	bd.free_pages -= 1ULL << order;
	pb_account(i, order, -1);
}

/* [s, e) in pfns as the largest aligned blocks that fit. */
static void add_pfns(uint64_t s, uint64_t e)
{
	while (s < e) {
		unsigned k = BUDDY_MAX_ORDER;

		while (k && ((s & ((1ULL << k) - 1)) || s + (1ULL << k) > e))
			k--;
		push(s - bd.base, k);
		s += 1ULL << k;
	}
}

/* The usable RAM above kernel_area_end(), whole pages. */
static bool ram_range(unsigned i, uint64_t *s, uint64_t *e)
{
	const struct mem_range *r = &boot.mem[i];

	if (r->type != MEM_RAM)
		return false;
	*s = ALIGN_UP(MAX(r->addr, kernel_area_end()), PAGE) >> PAGE_SHIFT;
	*e = ALIGN_DOWN(r->addr + r->size, PAGE) >> PAGE_SHIFT;
	return *s < *e;
}

/* The metadata takes the start of the first range that holds it: two
 * bitmaps, then next, prev and owner per page, the pageblock counts and
 * an order per page. It covers hotplugged memory up to hotplug_end too
 * (0: none), whose blocks join later (buddy_add). */
void buddy_init(uint64_t hotplug_end)
{
	uint64_t lo = ~0ULL, hi = 0, s, e, meta = 0, meta_end = 0, bytes;
	uint64_t map_words;

	for (unsigned i = 0; i < boot.nmem; i++) {
		if (!ram_range(i, &s, &e))
			continue;
		lo = MIN(lo, s);
		hi = MAX(hi, e);
	}
	for (unsigned k = 0; k <= BUDDY_MAX_ORDER; k++)
		bd.list[k] = NONE;
	if (lo >= hi)
		return;
	hi = MAX(hi, hotplug_end >> PAGE_SHIFT);
	bd.base = lo;
	bd.npages = hi - lo;
	bd.pb_first = lo >> PB_ORDER;
	bd.npb = ALIGN_UP(hi, PB_PAGES) / PB_PAGES - bd.pb_first;
	map_words = ALIGN_UP(bd.npages, 64) / 64;
	bytes = 2 * map_words * 8 + bd.npages * 13 + bd.npb * 4;
	for (unsigned i = 0; i < boot.nmem && !meta; i++)
		if (ram_range(i, &s, &e) && (e - s) << PAGE_SHIFT >= bytes) {
			meta = s;
			meta_end = s + (ALIGN_UP(bytes, PAGE) >> PAGE_SHIFT);
		}
	if (!meta)
		return;
	bd.head_map = (uint64_t *)(meta << PAGE_SHIFT);
	bd.movable_map = bd.head_map + map_words;
	bd.next = (uint32_t *)(bd.movable_map + map_words);
	bd.prev = bd.next + bd.npages;
	bd.owner = bd.prev + bd.npages;
	bd.pb_free = (uint16_t *)(bd.owner + bd.npages);
	bd.pb_movable = bd.pb_free + bd.npb;
	bd.order = (uint8_t *)(bd.pb_movable + bd.npb);
	memset(bd.head_map, 0, 2 * map_words * 8);
	memset(bd.pb_free, 0, bd.npb * 4);
	for (unsigned i = 0; i < boot.nmem; i++) {
		if (!ram_range(i, &s, &e))
			continue;
		if (s == meta)
			s = meta_end;
		add_pfns(s, e);
	}
	bd.total_pages = bd.free_pages;
}

/* A block of 2^order pages: its address, 0 if none is free. */
uint64_t buddy_alloc(unsigned order)
{
	unsigned k = order;
	uint64_t i;

	while (k <= BUDDY_MAX_ORDER && bd.list[k] == NONE)
		k++;
	if (k > BUDDY_MAX_ORDER)
		return 0;
	i = bd.list[k];
	unlink(i);
	/* Keep the lower half, free the upper one, down to order. */
	while (k > order) {
		k--;
		push(i + (1ULL << k), k);
	}
	return (bd.base + i) << PAGE_SHIFT;
}

/* A free block of exactly this order, never split from a larger one
 * (free page reporting hands whole blocks to the host); 0 if none. */
uint64_t buddy_take(unsigned order)
{
	uint64_t i = bd.list[order];

	if (i == NONE)
		return 0;
	unlink(i);
	return (bd.base + i) << PAGE_SHIFT;
}

void buddy_free(uint64_t addr, unsigned order)
{
	uint64_t pfn = addr >> PAGE_SHIFT;

	while (order < BUDDY_MAX_ORDER) {
		uint64_t b = pfn ^ (1ULL << order);

		if (b < bd.base || b - bd.base >= bd.npages ||
		    !is_head(b - bd.base) || bd.order[b - bd.base] != order)
			break;
		unlink(b - bd.base);
		pfn = MIN(pfn, b);
		order++;
	}
	push(pfn - bd.base, order);
}

uint64_t buddy_free_bytes(void)
{
	return bd.free_pages << PAGE_SHIFT;
}

uint64_t buddy_total_bytes(void)
{
	return bd.total_pages << PAGE_SHIFT;
}

/* The page table whose entries movable pages are: migration rewrites
 * them. */
void buddy_set_table(uint64_t *table)
{
	bd.table = table;
}

static void set_movable(uint64_t i, uint32_t entry)
{
	bd.movable_map[i / 64] |= 1ULL << (i % 64);
	bd.owner[i] = entry;
	bd.pb_movable[((bd.base + i) >> PB_ORDER) - bd.pb_first]++;
	bd.table[entry] = (bd.base + i) << PAGE_SHIFT;
}

static void clear_movable(uint64_t i)
{
	bd.movable_map[i / 64] &= ~(1ULL << (i % 64));
	bd.pb_movable[((bd.base + i) >> PB_ORDER) - bd.pb_first]--;
}

/* A page for entry of the user's table: allocated, recorded there and
 * marked movable. 0 if none is free. */
uint64_t buddy_alloc_movable(uint32_t entry)
{
	uint64_t a = buddy_alloc(0);

	if (a)
		set_movable((a >> PAGE_SHIFT) - bd.base, entry);
	return a;
}

void buddy_free_movable(uint64_t addr)
{
	clear_movable((addr >> PAGE_SHIFT) - bd.base);
	buddy_free(addr, 0);
}

/* The pageblock compaction empties with the least copying: every page
 * free or movable, the fewest movable ones, and room for them outside.
 * -1 if there is none. */
static int64_t pick_pageblock(void)
{
	int64_t best = -1;
	unsigned least = PB_PAGES + 1;

	for (uint64_t b = 0; b < bd.npb; b++) {
		uint64_t pfn = (bd.pb_first + b) << PB_ORDER;
		unsigned mov = bd.pb_movable[b], fr = bd.pb_free[b];

		if (pfn < bd.base || pfn + PB_PAGES > bd.base + bd.npages ||
		    mov + fr != PB_PAGES || !mov || mov >= least ||
		    bd.free_pages - fr < mov)
			continue;
		best = b;
		least = mov;
	}
	return best;
}

/* Takes the pages [first, first + n) (indexes, whole pageblocks) away
 * from the allocator: their free blocks off the free lists, with the
 * parts of a free block that reach past either end put back, so that no
 * page migrates into the range; then each movable page copied into a
 * free page elsewhere, its table entry pointed there. The caller made
 * sure the movable pages fit. */
static void isolate(uint64_t first, uint64_t n, uint64_t *migrated)
{
	uint64_t end = first + n, i;

	/* A free block larger than a pageblock may start before first. */
	for (unsigned k = PB_ORDER + 1; k <= BUDDY_MAX_ORDER; k++) {
		uint64_t h = ALIGN_DOWN(bd.base + first, 1ULL << k);

		if (h >= bd.base && h - bd.base < first &&
		    is_head(h - bd.base) && bd.order[h - bd.base] == k) {
			unlink(h - bd.base);
			add_pfns(h, bd.base + first);
			add_pfns(bd.base + end, MAX(h + (1ULL << k),
						    bd.base + end));
			break;
		}
	}
	for (i = first; i < end;) {
		if (is_head(i)) {
			uint64_t next = i + (1ULL << bd.order[i]);

			unlink(i);
			add_pfns(bd.base + end, bd.base + MAX(next, end));
			i = next;
		} else {
			i++;
		}
	}
	for (i = first; i < end; i++) {
		uint64_t to;

		if (!test_bit(bd.movable_map, i))
			continue;
		to = buddy_alloc(0);
		memcpy((void *)to, (void *)((bd.base + i) << PAGE_SHIFT), PAGE);
		clear_movable(i);
		set_movable((to >> PAGE_SHIFT) - bd.base, bd.owner[i]);
		++*migrated;
	}
}

/* Assembles a free 2 MiB block as Linux compacts for an order-9
 * allocation: isolates the pageblock that needs the least copying.
 * Returns the block, allocated, or 0; adds the pages migrated to
 * *migrated. It copies memory, so it is run in ring 3. */
uint64_t buddy_compact(uint64_t *migrated)
{
	int64_t b = pick_pageblock();
	uint64_t first;

	if (b < 0)
		return 0;
	first = ((bd.pb_first + b) << PB_ORDER) - bd.base;
	isolate(first, PB_PAGES, migrated);
	return (bd.base + first) << PAGE_SHIFT;
}

/* Whether [addr, addr + size) lies inside what the metadata covers. */
static bool covered(uint64_t addr, uint64_t size)
{
	uint64_t pfn = addr >> PAGE_SHIFT;

	return pfn >= bd.base && pfn - bd.base <= bd.npages &&
	       size >> PAGE_SHIFT <= bd.npages - (pfn - bd.base);
}

bool buddy_add(uint64_t addr, uint64_t size)
{
	uint64_t s = addr >> PAGE_SHIFT, e = (addr + size) >> PAGE_SHIFT;

	if (!covered(addr, size))
		return false;
	/* As freed pages, so that they merge with free neighbours. */
	while (s < e) {
		unsigned k = BUDDY_MAX_ORDER;

		while (k && ((s & ((1ULL << k) - 1)) || s + (1ULL << k) > e))
			k--;
		buddy_free(s << PAGE_SHIFT, k);
		s += 1ULL << k;
	}
	bd.total_pages += size >> PAGE_SHIFT;
	return true;
}

bool buddy_remove(uint64_t addr, uint64_t size, uint64_t *migrated)
{
	uint64_t first = (addr >> PAGE_SHIFT) - bd.base, n = size >> PAGE_SHIFT;
	uint64_t fr = 0, mov = 0;

	if (!covered(addr, size) || (addr >> PAGE_SHIFT) % PB_PAGES ||
	    n % PB_PAGES)
		return false;
	for (uint64_t b = 0; b < n / PB_PAGES; b++) {
		uint64_t pb = ((addr >> PAGE_SHIFT) >> PB_ORDER) + b -
			      bd.pb_first;

		fr += bd.pb_free[pb];
		mov += bd.pb_movable[pb];
	}
	if (fr + mov != n || bd.free_pages - fr < mov)
		return false;
	isolate(first, n, migrated);
	bd.total_pages -= n;
	return true;
}
