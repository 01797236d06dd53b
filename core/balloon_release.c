/* Host release of ballooned guest memory (see balloon_release.h). */
#include "core/balloon_release.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/uio.h>
#include <unistd.h>

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

/* Host address of an extent: it lies inside one region. */
static void *extent_host(const struct guest_ram *ram,
			 const struct balloon_extent *e)
{
	const struct ram_region *r = guest_ram_region(ram, e->gpa);

	return r->host + (e->gpa - r->gpa);
}

/* A shared hugetlbfs mapping keeps its pages in the file: only punching
 * the file gives them back. */
static unsigned release_hugetlbfs(const struct guest_ram *ram,
				  const struct balloon_extent *ext,
				  unsigned nr, uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		const struct ram_region *r = guest_ram_region(ram, ext[i].gpa);

		(*calls)++;
		if (fallocate(ram->hugetlb_fd,
			      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      r->file_offset + (ext[i].gpa - r->gpa),
			      ext[i].len) < 0)
			break;
	}
	return i;
}

static unsigned release_each(const struct guest_ram *ram,
			     const struct balloon_extent *ext, unsigned nr,
			     uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		(*calls)++;
		if (madvise(extent_host(ram, &ext[i]), ext[i].len,
			    MADV_DONTNEED) < 0)
			break;
	}
	return i;
}

/* One call for the whole batch. A short count means the kernel stopped
 * in an extent: from that one on they go one by one, which says why. */
static unsigned release_batched(struct balloon_release *br,
				const struct balloon_extent *ext, unsigned nr,
				uint64_t *calls)
{
	ssize_t done;
	unsigned i;

	for (i = 0; i < nr; i++)
		br->iov[i] = (struct iovec){ extent_host(br->ram, &ext[i]),
					     ext[i].len };
	(*calls)++;
	done = process_madvise(br->pidfd, br->iov, nr, MADV_DONTNEED, 0);
	if (done < 0)
		return 0;
	for (i = 0; i < nr && (uint64_t)done >= ext[i].len; i++)
		done -= ext[i].len;
	return i + release_each(br->ram, ext + i, nr - i, calls);
}

static unsigned default_release(void *opaque, const struct guest_ram *ram,
				const struct balloon_extent *ext, unsigned nr,
				uint64_t *calls)
{
	struct balloon_release *br = opaque;

	if (ram->hugetlb_fd >= 0)
		return release_hugetlbfs(ram, ext, nr, calls);
	if (br->pidfd >= 0)
		return release_batched(br, ext, nr, calls);
	return release_each(ram, ext, nr, calls);
}

/* This process's pidfd if process_madvise() takes MADV_DONTNEED for it
 * (Linux 6.13 and later; before, only advice for other processes that
 * drops nothing), tried on a page of its own; otherwise -1. */
static int open_self_pidfd(void)
{
	int pidfd = pidfd_open(getpid(), 0);
	void *page;
	bool ok;

	if (pidfd < 0)
		return -1;
	page = mmap(NULL, BALLOON_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = page != MAP_FAILED &&
	     process_madvise(pidfd, &(struct iovec){ page, BALLOON_PAGE_SIZE },
			     1, MADV_DONTNEED, 0) == BALLOON_PAGE_SIZE;
	if (page != MAP_FAILED)
		munmap(page, BALLOON_PAGE_SIZE);
	if (ok)
		return pidfd;
	close(pidfd);
	return -1;
}

int balloon_release_init(struct balloon_release *br, const char *name,
			 const struct guest_ram *ram,
			 enum balloon_policy policy, balloon_release_fn release,
			 void *opaque)
{
	unsigned i;

	memset(br, 0, sizeof(*br));
	br->pidfd = -1;
	br->name = name;
	br->ram = ram;
	br->policy = policy;
	br->block_size = BALLOON_BLOCK_SIZE;
	if (ram->backing == RAM_BACKING_HUGETLBFS) {
		br->policy = BALLOON_PRESERVE;
		br->block_size = ram->hugetlb_page_size;
	}
	br->pages_per_block = br->block_size >> BALLOON_PAGE_SHIFT;
	br->release = release ?: default_release;
	br->opaque = release ? opaque : br;
	if (!release && ram->hugetlb_fd < 0)
		br->pidfd = open_self_pidfd();
	for (i = 0; i < ram->nr_regions; i++) {
		uint64_t pages = ram->regions[i].size >> BALLOON_PAGE_SHIFT;
		struct balloon_region_track *t = &br->track[i];

		t->bitmap = calloc((pages + BITS_PER_WORD - 1) / BITS_PER_WORD,
				   sizeof(*t->bitmap));
		t->block_pages = calloc(ram->regions[i].size / br->block_size,
					sizeof(*t->block_pages));
		if (!t->bitmap || !t->block_pages) {
			balloon_release_destroy(br);
			return -ENOMEM;
		}
	}
	return 0;
}

void balloon_release_destroy(struct balloon_release *br)
{
	unsigned i;

	/* A zeroed br (ram NULL) owns no pidfd: fd 0 is not its. */
	if (br->ram && br->pidfd >= 0)
		close(br->pidfd);
	for (i = 0; i < GUEST_RAM_MAX_REGIONS; i++) {
		free(br->track[i].bitmap);
		free(br->track[i].block_pages);
	}
	/* What reset looks at: a device torn down half made is safe. */
	memset(br, 0, sizeof(*br));
}

void balloon_release_reset(struct balloon_release *br)
{
	unsigned i;

	if (!br->ram)
		return;
	for (i = 0; i < br->ram->nr_regions; i++) {
		uint64_t size = br->ram->regions[i].size;
		uint64_t pages = size >> BALLOON_PAGE_SHIFT;

		memset(br->track[i].bitmap, 0,
		       (pages + BITS_PER_WORD - 1) / BITS_PER_WORD *
			       sizeof(uint64_t));
		memset(br->track[i].block_pages, 0,
		       size / br->block_size * sizeof(uint32_t));
	}
	br->stats.ballooned_pages = 0;
	br->stats.held_pages = 0;
	br->stats.partial_blocks = 0;
}

const char *balloon_policy_name(enum balloon_policy policy)
{
	return policy == BALLOON_EAGER ? "eager" : "preserve";
}

/* The index of the region holding gpa (for its tracking), or -1. */
static int region_of(const struct guest_ram *ram, uint64_t gpa)
{
	const struct ram_region *r = guest_ram_region(ram, gpa);

	return r ? (int)(r - ram->regions) : -1;
}

static int range_cmp(const void *a, const void *b)
{
	const struct balloon_range *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/* Drops the ranges that are not wholly inside one RAM region, moves the
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
		else if (guest_ram_contig(br->ram, gpa) <
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
	const struct balloon_extent *failed;
	unsigned i, done;
	int err;

	if (!br->nr_pending)
		return;
	done = br->release(br->opaque, br->ram, br->pending, br->nr_pending,
			   &br->stats.release_calls);
	err = errno;
	for (i = 0; i < done; i++)
		br->stats.released_bytes += br->pending[i].len;
	if (done < br->nr_pending) {
		failed = &br->pending[done];
		br->stats.release_errors++;
		if (log_ratelimit_ok(&br->rl))
			pr_warn("%s: cannot release %llu KiB at 0x%llx (and "
				"%u runs after it): %s", br->name,
				(unsigned long long)(failed->len >> 10),
				(unsigned long long)failed->gpa,
				br->nr_pending - done - 1, strerror(err));
	}
	br->nr_pending = 0;
}

/* Adds a range to the release being built: it extends the last run when
 * it touches or overlaps it in the same region, else starts a new one
 * (sending the batch first when it is full). */
static void release_add(struct balloon_release *br, uint64_t gpa,
			uint64_t len)
{
	if (br->nr_pending) {
		struct balloon_extent *last = &br->pending[br->nr_pending - 1];
		uint64_t end = last->gpa + last->len;

		if (gpa >= last->gpa && gpa <= end &&
		    region_of(br->ram, gpa) == region_of(br->ram, last->gpa)) {
			last->len = MAX(end, gpa + len) - last->gpa;
			return;
		}
	}
	if (br->nr_pending == BALLOON_RELEASE_BATCH)
		flush(br);
	br->pending[br->nr_pending++] = (struct balloon_extent){ gpa, len };
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

/* Sets (inflate) or clears one page's bit; false if it already was so. */
static bool page_flip(struct balloon_region_track *t, uint64_t page,
		      bool set)
{
	uint64_t mask = 1ULL << (page % BITS_PER_WORD);
	uint64_t *w = &t->bitmap[page / BITS_PER_WORD];

	if (!!(*w & mask) == set)
		return false;
	*w ^= mask;
	return true;
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
		int ri = region_of(br->ram, gpa);
		const struct ram_region *r = &br->ram->regions[ri];
		struct balloon_region_track *t = &br->track[ri];
		uint64_t first = (gpa - r->gpa) >> BALLOON_PAGE_SHIFT;
		uint64_t p, refused = 0;

		for (p = first; p < first + ranges[i].nr_pages; p++) {
			uint64_t b = p / br->pages_per_block;
			uint32_t old = t->block_pages[b];
			uint64_t page_gpa = r->gpa + (p << BALLOON_PAGE_SHIFT);

			if (!page_flip(t, p, inflate)) {
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
			t->block_pages[b] = inflate ? old + 1 : old - 1;
			block_changed(br, old, t->block_pages[b]);
			if (!inflate)
				continue;
			if (br->policy == BALLOON_EAGER)
				release_add(br, page_gpa, BALLOON_PAGE_SIZE);
			else if (t->block_pages[b] == br->pages_per_block)
				release_add(br, r->gpa + b * br->block_size,
					    br->block_size);
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
 * was released (EAGER, or its block was complete) and faults in fresh
 * memory when the guest touches it, or it was never released. */
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
	unsigned i;

	nr = batch_prepare(br, ranges, nr, &be);
	for (i = 0; i < nr; i++) {
		uint64_t gpa = ranges[i].pfn << BALLOON_PAGE_SHIFT;
		uint64_t end = gpa + (ranges[i].nr_pages << BALLOON_PAGE_SHIFT);
		const struct ram_region *r =
			&br->ram->regions[region_of(br->ram, gpa)];

		/* Under PRESERVE, only the whole blocks inside: a report
		 * must not split a huge page either. */
		if (br->policy == BALLOON_PRESERVE) {
			gpa = r->gpa + ALIGN_UP(gpa - r->gpa, br->block_size);
			end = r->gpa + ALIGN_DOWN(end - r->gpa, br->block_size);
		}
		if (gpa < end)
			release_add(br, gpa, end - gpa);
	}
	flush(br);
	batch_report(br, "report", &be);
	return br->stats.released_bytes - before;
}
