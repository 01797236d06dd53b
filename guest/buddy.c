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
 * block heads have valid entries, so nothing but the bitmap is cleared. */
#include "guest.h"
#include "lib.h"

#define PAGE_SHIFT	12
#define PAGE		(1ULL << PAGE_SHIFT)
#define NONE		0xffffffffu

static struct {
	uint64_t base, npages;		/* pfn of index 0, pages covered */
	uint32_t *next, *prev;		/* free lists, by page index */
	uint8_t *order;			/* a free block's order, at its head */
	uint64_t *head_map;		/* bit per page: a free block starts */
	uint32_t list[BUDDY_MAX_ORDER + 1];
	uint64_t free_pages, total_pages;
} bd;

static bool is_head(uint64_t i)
{
	return bd.head_map[i / 64] >> (i % 64) & 1;
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
	const struct e820_entry *r = &boot.e820[i];

	if (r->type != E820_RAM)
		return false;
	*s = ALIGN_UP(MAX(r->addr, kernel_area_end()), PAGE) >> PAGE_SHIFT;
	*e = ALIGN_DOWN(r->addr + r->size, PAGE) >> PAGE_SHIFT;
	return *s < *e;
}

/* The metadata takes the start of the first range that holds it. */
void buddy_init(void)
{
	uint64_t lo = ~0ULL, hi = 0, s, e, meta = 0, meta_end = 0, bytes;

	for (unsigned i = 0; i < boot.e820_count; i++) {
		if (!ram_range(i, &s, &e))
			continue;
		lo = MIN(lo, s);
		hi = MAX(hi, e);
	}
	for (unsigned k = 0; k <= BUDDY_MAX_ORDER; k++)
		bd.list[k] = NONE;
	if (lo >= hi)
		return;
	bd.base = lo;
	bd.npages = hi - lo;
	bytes = bd.npages * 9 + ALIGN_UP(bd.npages, 64) / 8;
	for (unsigned i = 0; i < boot.e820_count && !meta; i++)
		if (ram_range(i, &s, &e) && (e - s) << PAGE_SHIFT >= bytes) {
			meta = s;
			meta_end = s + (ALIGN_UP(bytes, PAGE) >> PAGE_SHIFT);
		}
	if (!meta)
		return;
	bd.head_map = (uint64_t *)(meta << PAGE_SHIFT);
	bd.next = (uint32_t *)(bd.head_map + ALIGN_UP(bd.npages, 64) / 64);
	bd.prev = bd.next + bd.npages;
	bd.order = (uint8_t *)(bd.prev + bd.npages);
	memset(bd.head_map, 0, ALIGN_UP(bd.npages, 64) / 8);
	for (unsigned i = 0; i < boot.e820_count; i++) {
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
