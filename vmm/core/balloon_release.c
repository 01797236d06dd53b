/* Host release of ballooned guest memory (see balloon_release.h). */
#include "core/balloon_release.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

#define BITS_PER_WORD 64
/* pfns above this would not fit a 64-bit guest-physical address. */
#define MAX_PFN (UINT64_MAX >> BALLOON_PAGE_SHIFT)

/* What one batch did wrong, for its single log line. */
struct batch_errors {
	uint64_t count;
	const char *first;
	uint64_t first_pfn;
};

static void batch_error(struct balloon_release *br, struct batch_errors *be,
			const char *why, uint64_t pfn, uint64_t n)
{
	if (!be->count) {
		be->first = why;
		be->first_pfn = pfn;
	}
	be->count += n;
	br->stats.ignored += n;
}

static void batch_report(struct balloon_release *br, const char *what,
			 const struct batch_errors *be)
{
	if (be->count && log_ratelimit_ok(&br->rl))
		pr_warn("%s: %s: ignored %llu elements, the first "
			"at pfn 0x%llx: %s", br->name, what,
			(unsigned long long)be->count,
			(unsigned long long)be->first_pfn, be->first);
}

static unsigned default_release(void *opaque, const struct guest_ram *ram,
				const struct ram_range *ext, unsigned nr,
				uint64_t *calls)
{
	return guest_ram_discard(ram, ext, nr, calls);
}

static uint64_t bitmap_words(const struct guest_ram *ram)
{
	return ((ram->total >> BALLOON_PAGE_SHIFT) + BITS_PER_WORD - 1) /
	       BITS_PER_WORD;
}

int balloon_release_init(struct balloon_release *br, const char *name,
			 const struct guest_ram *ram,
			 enum balloon_policy policy, balloon_release_fn release,
			 void *opaque)
{
	uint64_t host_page = MAX(ram->page_size, BALLOON_PAGE_SIZE);

	memset(br, 0, sizeof(*br));
	br->name = name;
	br->ram = ram;
	br->policy = host_page == ram->huge_page_size ? BALLOON_PRESERVE :
							 policy;
	br->block_size = ram->huge_page_size;
	br->pages_per_block = br->block_size >> BALLOON_PAGE_SHIFT;
	br->pages_per_host_page = host_page >> BALLOON_PAGE_SHIFT;
	br->release = release ?: default_release;
	br->opaque = opaque;
	br->bitmap = calloc(bitmap_words(ram), sizeof(*br->bitmap));
	br->block_pages = calloc(ram->total / br->block_size,
				 sizeof(*br->block_pages));
	if (!br->bitmap || !br->block_pages) {
		balloon_release_destroy(br);
		return -ENOMEM;
	}
	return 0;
}

void balloon_release_destroy(struct balloon_release *br)
{
	free(br->bitmap);
	free(br->block_pages);
	/* What reset looks at: a device torn down half made is safe. */
	memset(br, 0, sizeof(*br));
}

void balloon_release_reset(struct balloon_release *br)
{
	if (!br->ram)
		return;
	memset(br->bitmap, 0, bitmap_words(br->ram) * sizeof(*br->bitmap));
	memset(br->block_pages, 0,
	       br->ram->total / br->block_size * sizeof(*br->block_pages));
	br->stats.ballooned_pages = 0;
	br->stats.held_pages = 0;
	br->stats.partial_blocks = 0;
}

const char *balloon_policy_name(enum balloon_policy policy)
{
	return policy == BALLOON_EAGER ? "eager" : "preserve";
}

static int range_cmp(const void *a, const void *b)
{
	const struct balloon_range *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/* Drops the ranges that are not wholly inside one boot RAM region (the
 * hotplug region is virtio-mem's, outside the bitmaps), moves the
 * others to the front and sorts them. Returns how many are left. */
static unsigned batch_prepare(struct balloon_release *br,
			      struct balloon_range *ranges, unsigned nr,
			      struct batch_errors *be)
{
	unsigned i, n = 0;

	for (i = 0; i < nr; i++) {
		const struct balloon_range *r = &ranges[i];
		uint64_t gpa = r->pfn << BALLOON_PAGE_SHIFT;

		if (!r->nr_pages)
			batch_error(br, be, "empty range", r->pfn, 1);
		else if (r->pfn > MAX_PFN || r->nr_pages > MAX_PFN - r->pfn)
			batch_error(br, be, "range wraps", r->pfn, 1);
		else if (guest_ram_boot_contig(br->ram, gpa) <
			 r->nr_pages << BALLOON_PAGE_SHIFT)
			batch_error(br, be, "outside guest RAM", r->pfn, 1);
		else
			ranges[n++] = *r;
	}
	qsort(ranges, n, sizeof(*ranges), range_cmp);
	return n;
}

static void flush(struct balloon_release *br)
{
	const struct ram_range *failed;
	unsigned i, done;
	int err;

	if (!br->nr_pending)
		return;
	done = br->release(br->opaque, br->ram, br->pending, br->nr_pending,
			   &br->stats.release_calls);
	err = errno;
	for (i = 0; i < done; i++)
		br->stats.released_bytes += br->pending[i].size;
	if (done < br->nr_pending) {
		failed = &br->pending[done];
		br->stats.release_errors++;
		if (log_ratelimit_ok(&br->rl))
			pr_warn("%s: cannot release %llu KiB at 0x%llx (and "
				"%u runs after it): %s", br->name,
				(unsigned long long)(failed->size >> 10),
				(unsigned long long)failed->gpa,
				br->nr_pending - done - 1, strerror(err));
	}
	br->nr_pending = 0;
}

/* Adds a range to the release being built: it extends the last run when
 * it touches or overlaps it and the two stay inside one region (one host
 * mapping), else starts a new one (sending the batch first when it is
 * full). */
static void release_add(struct balloon_release *br, uint64_t gpa,
			uint64_t size)
{
	if (br->nr_pending) {
		struct ram_range *last = &br->pending[br->nr_pending - 1];
		uint64_t end = MAX(last->gpa + last->size, gpa + size);

		if (gpa >= last->gpa && gpa <= last->gpa + last->size &&
		    guest_ram_boot_contig(br->ram, last->gpa) >=
			    end - last->gpa) {
			last->size = end - last->gpa;
			return;
		}
	}
	if (br->nr_pending == GUEST_RAM_DISCARD_BATCH)
		flush(br);
	br->pending[br->nr_pending++] = (struct ram_range){ gpa, size };
}

/* Partial-block accounting when a block goes from old to new pages. */
static void block_changed(struct balloon_release *br, uint64_t old,
			  uint64_t new)
{
	bool was = old && old < br->pages_per_block;
	bool is = new && new < br->pages_per_block;

	if (br->policy != BALLOON_PRESERVE)
		return;
	br->stats.partial_blocks += is - was;
	br->stats.held_pages += (is ? new : 0) - (was ? old : 0);
}

static bool page_ballooned(const struct balloon_release *br, uint64_t page)
{
	return br->bitmap[page / BITS_PER_WORD] >> (page % BITS_PER_WORD) & 1;
}

/* Sets (inflate) or clears one page's bit; false if it already was so. */
static bool page_flip(struct balloon_release *br, uint64_t page, bool set)
{
	if (page_ballooned(br, page) == set)
		return false;
	br->bitmap[page / BITS_PER_WORD] ^= 1ULL << (page % BITS_PER_WORD);
	return true;
}

/* Whether every balloon page of the host page holding page (a RAM page
 * index) is ballooned. */
static bool host_page_ballooned(const struct balloon_release *br,
				uint64_t page)
{
	uint64_t first = ALIGN_DOWN(page, br->pages_per_host_page), p;

	for (p = first; p < first + br->pages_per_host_page; p++)
		if (!page_ballooned(br, p))
			return false;
	return true;
}

/* What a page newly ballooned lets go: under EAGER its host page once
 * whole, under PRESERVE its block once whole. page_gpa and page (its RAM
 * index) name the same page; a host page and a block start at the same
 * multiple in both numberings, as regions do. */
static void release_after_inflate(struct balloon_release *br,
				  uint64_t page_gpa, uint64_t page,
				  uint32_t block_pages)
{
	uint64_t unit = br->policy == BALLOON_EAGER ? br->pages_per_host_page :
						      br->pages_per_block;
	uint64_t first = ALIGN_DOWN(page, unit);

	if (br->policy == BALLOON_EAGER ? !host_page_ballooned(br, page) :
					  block_pages < br->pages_per_block)
		return;
	release_add(br, page_gpa - ((page - first) << BALLOON_PAGE_SHIFT),
		    unit << BALLOON_PAGE_SHIFT);
}

static uint64_t update(struct balloon_release *br, struct balloon_range *ranges,
		       unsigned nr, bool inflate)
{
	struct batch_errors be = { 0 };
	uint64_t changed = 0;
	unsigned i;

	nr = batch_prepare(br, ranges, nr, &be);
	for (i = 0; i < nr; i++) {
		uint64_t gpa = ranges[i].pfn << BALLOON_PAGE_SHIFT;
		uint64_t first = guest_ram_offset(br->ram, gpa) >>
				 BALLOON_PAGE_SHIFT;
		uint64_t k, refused = 0;

		for (k = 0; k < ranges[i].nr_pages; k++) {
			uint64_t p = first + k;
			uint32_t *count = &br->block_pages[p / br->pages_per_block];
			uint32_t old = *count;
			uint64_t page_gpa = gpa + (k << BALLOON_PAGE_SHIFT);

			if (!page_flip(br, p, inflate)) {
				/* One count per element, as for the
				 * elements refused whole. */
				if (!refused++)
					batch_error(br, &be, inflate ?
						    "page already ballooned" :
						    "page not ballooned",
						    page_gpa >> BALLOON_PAGE_SHIFT,
						    1);
				continue;
			}
			changed++;
			*count = inflate ? old + 1 : old - 1;
			block_changed(br, old, *count);
			if (inflate)
				release_after_inflate(br, page_gpa, p, *count);
		}
	}
	flush(br);
	if (inflate)
		br->stats.ballooned_pages += changed;
	else
		br->stats.ballooned_pages -= changed;
	batch_report(br, inflate ? "inflate" : "deflate", &be);
	return changed;
}

uint64_t balloon_inflate(struct balloon_release *br,
			 struct balloon_range *ranges, unsigned nr)
{
	return update(br, ranges, nr, true);
}

/* Under both policies a deflated page needs nothing from the host: it
 * was released (with its host page or block) and faults in fresh memory
 * when the guest touches it, or it was never released. */
uint64_t balloon_deflate(struct balloon_release *br,
			 struct balloon_range *ranges, unsigned nr)
{
	return update(br, ranges, nr, false);
}

uint64_t balloon_report(struct balloon_release *br,
			struct balloon_range *ranges, unsigned nr)
{
	struct batch_errors be = { 0 };
	uint64_t before = br->stats.released_bytes;
	/* Only whole host pages can go; under PRESERVE, only whole blocks
	 * (a report must not split a huge page either). */
	uint64_t unit = (br->policy == BALLOON_PRESERVE ? br->pages_per_block :
				br->pages_per_host_page) << BALLOON_PAGE_SHIFT;
	unsigned i;

	nr = batch_prepare(br, ranges, nr, &be);
	for (i = 0; i < nr; i++) {
		uint64_t gpa = ranges[i].pfn << BALLOON_PAGE_SHIFT;
		uint64_t off = guest_ram_offset(br->ram, gpa);
		uint64_t end = off + (ranges[i].nr_pages << BALLOON_PAGE_SHIFT);
		uint64_t start = ALIGN_UP(off, unit);

		end = ALIGN_DOWN(end, unit);
		if (start < end)
			release_add(br, gpa + (start - off), end - start);
	}
	flush(br);
	batch_report(br, "report", &be);
	return br->stats.released_bytes - before;
}
