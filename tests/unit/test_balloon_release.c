/* Balloon host release: most cases run on guest RAM that is mapped but
 * never touched, with the release call replaced by a recorder, so they
 * check the exact ranges released (and the host's page sizes can be set
 * to another host's); the last ones release a real mapping with madvise
 * and watch its resident size fall. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/balloon_release.h"
#include "core/guest_ram.h"
#include "lib/util.h"
#include "unit.h"

#define PAGE BALLOON_PAGE_SIZE
#define BLOCK (2 * MiB)	/* an x86 host's huge page */
#define PPB (BLOCK / PAGE)
#define MAX_RUNS 64

struct run {
	uint64_t gpa, len;
};

static struct run runs[MAX_RUNS];
static unsigned nr_runs;
static int fail_with;	/* errno for every call, or 0 */

static unsigned record(void *opaque, const struct guest_ram *ram,
		       const struct ram_range *ext, unsigned nr,
		       uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++, nr_runs++)
		if (nr_runs < MAX_RUNS)
			runs[nr_runs] = (struct run){ ext[i].gpa, ext[i].size };
	(*calls)++;
	errno = fail_with;
	return fail_with ? 0 : nr;
}

static struct guest_ram ram;
static struct balloon_release br;

/* Maps ranges (never touched, so it costs nothing) as a host with
 * page_size pages and huge pages of huge bytes would back them. */
static void map_as(const struct ram_range *ranges, unsigned nr,
		   uint64_t page_size, uint64_t huge)
{
	guest_ram_unmap(&ram);
	CHECK_EQ(guest_ram_map(&ram, ranges, nr, RAM_BACKING_NO_THP, NULL), 0);
	ram.page_size = page_size;
	ram.huge_page_size = huge;
	nr_runs = 0;
	fail_with = 0;
}

/* Region 0: [0, 8 MiB); region 1: [16 MiB, 20 MiB). With adjacent set,
 * region 1 starts right at 8 MiB instead. */
static void setup_layout(enum balloon_policy policy, bool adjacent)
{
	const struct ram_range r[] = {
		{ 0, 8 * MiB }, { adjacent ? 8 * MiB : 16 * MiB, 4 * MiB },
	};

	map_as(r, 2, PAGE, BLOCK);
	CHECK_EQ(balloon_release_init(&br, "test", &ram, policy, record, NULL),
		 0);
}

static void setup(enum balloon_policy policy)
{
	setup_layout(policy, false);
}

static bool released(unsigned i, uint64_t gpa, uint64_t len)
{
	return i < nr_runs && runs[i].gpa == gpa && runs[i].len == len;
}

#define R(pfn, n) ((struct balloon_range){ (pfn), (n) })

static void test_eager_sorts_and_merges(void)
{
	struct balloon_range r[] = { R(5, 1), R(3, 1), R(4, 1), R(10, 1),
				     R(11, 1), R(6, 1) };

	setup(BALLOON_EAGER);
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), 6);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, 3 * PAGE, 4 * PAGE));
	CHECK(released(1, 10 * PAGE, 2 * PAGE));
	CHECK_EQ(br.stats.ballooned_pages, 6);
	CHECK_EQ(br.stats.release_calls, 1);	/* one batch */
	CHECK_EQ(br.stats.released_bytes, 6 * PAGE);
	CHECK_EQ(br.stats.partial_blocks, 0);
	CHECK_EQ(br.stats.held_pages, 0);
	CHECK_EQ(br.stats.ignored, 0);
	balloon_release_destroy(&br);
}

/* Ranges that touch become one call; each batch is released on its own. */
static void test_eager_adjacent_ranges(void)
{
	struct balloon_range a[] = { R(2, 3), R(0, 2) };
	struct balloon_range b[] = { R(5, 1) };

	setup(BALLOON_EAGER);
	CHECK_EQ(balloon_inflate(&br, a, ARRAY_SIZE(a)), 5);
	CHECK_EQ(balloon_inflate(&br, b, 1), 1);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, 0, 5 * PAGE));
	CHECK(released(1, 5 * PAGE, PAGE));
	balloon_release_destroy(&br);
}

static void test_repeated_and_overlapping(void)
{
	struct balloon_range a[] = { R(3, 1), R(3, 1), R(4, 1) };
	struct balloon_range b[] = { R(3, 2) };
	struct balloon_range c[] = { R(100, 4), R(102, 4) };
	struct balloon_range d[] = { R(4, 1), R(2, 4) };

	setup(BALLOON_EAGER);
	CHECK_EQ(balloon_inflate(&br, a, ARRAY_SIZE(a)), 2);
	CHECK_EQ(br.stats.ignored, 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 3 * PAGE, 2 * PAGE));
	/* Already ballooned: nothing is released twice. */
	CHECK_EQ(balloon_inflate(&br, b, 1), 0);
	CHECK_EQ(nr_runs, 1);
	/* One count per element refused, however many of its pages. */
	CHECK_EQ(br.stats.ignored, 2);
	CHECK_EQ(balloon_inflate(&br, c, ARRAY_SIZE(c)), 6);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(1, 100 * PAGE, 6 * PAGE));
	CHECK_EQ(br.stats.ignored, 3);
	/* Pages 3 and 4 are ballooned: 2 and 5 around them are released
	 * in two calls. */
	CHECK_EQ(balloon_inflate(&br, d, ARRAY_SIZE(d)), 2);
	CHECK_EQ(nr_runs, 4);
	CHECK(released(2, 2 * PAGE, PAGE));
	CHECK(released(3, 5 * PAGE, PAGE));
	CHECK_EQ(br.stats.ballooned_pages, 10);
	CHECK_EQ(br.stats.released_bytes, 10 * PAGE);
	balloon_release_destroy(&br);
}

static void test_hostile_ranges(void)
{
	static const struct balloon_range bad[] = {
		R(8 * MiB / PAGE, 1),		/* in the hole */
		R(8 * MiB / PAGE - 1, 2),	/* runs past region 0 */
		R(20 * MiB / PAGE, 1),		/* past the end of RAM */
		R(20 * MiB / PAGE - 1, 2),
		R(7, 0),			/* empty */
		R(UINT64_MAX - 1, 5),		/* wraps */
		R(1ULL << 60, 1),		/* no such address */
		R(1, UINT64_MAX),
		R(16 * MiB / PAGE, 1),		/* the one valid range */
	};
	struct balloon_range r[ARRAY_SIZE(bad)];

	setup(BALLOON_EAGER);
	memcpy(r, bad, sizeof(bad));
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), 1);
	CHECK_EQ(br.stats.ignored, ARRAY_SIZE(r) - 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 16 * MiB, PAGE));
	CHECK_EQ(br.stats.ballooned_pages, 1);
	/* The array was compacted and sorted in place: rebuild it. Nothing
	 * was inflated there, so deflating is ignored as well. */
	memcpy(r, bad, sizeof(bad));
	CHECK_EQ(balloon_deflate(&br, r, ARRAY_SIZE(r) - 1), 0);
	CHECK_EQ(br.stats.ballooned_pages, 1);
	balloon_release_destroy(&br);
}

/* Pages of the hotplug region (virtio-mem's, above boot RAM) are not
 * the balloon's: its bitmaps cover boot RAM only, so inflating,
 * deflating or reporting them is ignored, never indexed. */
static void test_hotplug_pages_refused(void)
{
	const uint64_t hp = 64 * MiB;
	struct balloon_range in[] = { R(hp / PAGE, 1), R(hp / PAGE + PPB, PPB) };
	struct balloon_range rep[] = { R(hp / PAGE, 2 * PPB) };

	setup(BALLOON_EAGER);
	CHECK_EQ(guest_ram_map_hotplug(&ram, hp, 8 * MiB), 0);
	CHECK_EQ(balloon_inflate(&br, in, ARRAY_SIZE(in)), 0);
	CHECK_EQ(br.stats.ignored, ARRAY_SIZE(in));
	CHECK_EQ(balloon_deflate(&br, in, ARRAY_SIZE(in)), 0);
	CHECK_EQ(balloon_report(&br, rep, 1), 0);
	CHECK_EQ(nr_runs, 0);
	CHECK_EQ(br.stats.ballooned_pages, 0);
	balloon_release_destroy(&br);
}

/* Regions that touch in guest-physical space are still released one
 * call each: each call must stay inside one host mapping. */
static void test_adjacent_regions(void)
{
	struct balloon_range r[] = { R(8 * MiB / PAGE - 2, 2),
				     R(8 * MiB / PAGE, 2) };

	setup_layout(BALLOON_EAGER, true);
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), 4);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, 8 * MiB - 2 * PAGE, 2 * PAGE));
	CHECK(released(1, 8 * MiB, 2 * PAGE));
	balloon_release_destroy(&br);
}

static void test_preserve_partial_then_complete(void)
{
	struct balloon_range a[] = { R(0, PPB - 1) };
	struct balloon_range b[] = { R(PPB - 1, 1) };

	setup(BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, a, 1), PPB - 1);
	CHECK_EQ(nr_runs, 0);
	CHECK_EQ(br.stats.partial_blocks, 1);
	CHECK_EQ(br.stats.held_pages, PPB - 1);
	/* The block completes in a later batch: one 2 MiB release. */
	CHECK_EQ(balloon_inflate(&br, b, 1), 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 0, BLOCK));
	CHECK_EQ(br.stats.partial_blocks, 0);
	CHECK_EQ(br.stats.held_pages, 0);
	CHECK_EQ(br.stats.ballooned_pages, PPB);
	CHECK_EQ(br.stats.released_bytes, BLOCK);
	balloon_release_destroy(&br);
}

static void test_preserve_merges_blocks(void)
{
	/* Blocks 1 and 2 of region 0, in pieces and out of order; a few
	 * pages of block 3; block 0 of region 1. */
	struct balloon_range r[] = {
		R(2 * PPB, PPB), R(PPB + 10, PPB - 10), R(PPB, 10),
		R(3 * PPB + 5, 3),
		R(16 * MiB / PAGE, PPB),
	};

	setup(BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), 3 * PPB + 3);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(0, BLOCK, 2 * BLOCK));
	CHECK(released(1, 16 * MiB, BLOCK));
	CHECK_EQ(br.stats.partial_blocks, 1);
	CHECK_EQ(br.stats.held_pages, 3);
	CHECK_EQ(br.stats.ballooned_pages, 3 * PPB + 3);
	balloon_release_destroy(&br);
}

static void test_deflate(void)
{
	struct balloon_range in[] = { R(0, 10) };
	struct balloon_range out[] = { R(2, 4), R(50, 1) };
	struct balloon_range block[] = { R(PPB, PPB) };
	struct balloon_range one[] = { R(PPB + 7, 1) };

	setup(BALLOON_EAGER);
	CHECK_EQ(balloon_inflate(&br, in, 1), 10);
	CHECK_EQ(balloon_deflate(&br, out, ARRAY_SIZE(out)), 4);
	CHECK_EQ(nr_runs, 1);		/* deflating releases nothing */
	CHECK_EQ(br.stats.ballooned_pages, 6);
	CHECK_EQ(br.stats.ignored, 1);	/* page 50 was never inflated */
	/* Deflated pages can be ballooned again. */
	CHECK_EQ(balloon_inflate(&br, out, 1), 4);
	CHECK(released(1, 2 * PAGE, 4 * PAGE));
	balloon_release_destroy(&br);

	setup(BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, block, 1), PPB);
	CHECK_EQ(balloon_deflate(&br, one, 1), 1);
	CHECK_EQ(br.stats.partial_blocks, 1);
	CHECK_EQ(br.stats.held_pages, PPB - 1);
	CHECK_EQ(br.stats.ballooned_pages, PPB - 1);
	/* Whole again: released whole again. */
	CHECK_EQ(balloon_inflate(&br, one, 1), 1);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(1, BLOCK, BLOCK));
	CHECK_EQ(br.stats.partial_blocks, 0);
	CHECK_EQ(balloon_deflate(&br, block, 1), PPB);
	CHECK_EQ(br.stats.ballooned_pages, 0);
	CHECK_EQ(br.stats.partial_blocks, 0);
	CHECK_EQ(br.stats.held_pages, 0);
	balloon_release_destroy(&br);
}

static void test_reset(void)
{
	struct balloon_range a[] = { R(0, 5), R(PPB, 3) };

	setup(BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, a, ARRAY_SIZE(a)), 8);
	CHECK_EQ(br.stats.partial_blocks, 2);
	balloon_release_reset(&br);
	CHECK_EQ(br.stats.ballooned_pages, 0);
	CHECK_EQ(br.stats.partial_blocks, 0);
	CHECK_EQ(br.stats.held_pages, 0);
	CHECK_EQ(balloon_deflate(&br, a, ARRAY_SIZE(a)), 0);
	CHECK_EQ(balloon_inflate(&br, a, ARRAY_SIZE(a)), 8);
	CHECK_EQ(br.stats.held_pages, 8);
	balloon_release_destroy(&br);
}

static void test_report(void)
{
	struct balloon_range a[] = { R(1, 3), R(4, 2) };
	/* [1 MiB, 5 MiB): only block [2 MiB, 4 MiB) lies wholly inside. */
	struct balloon_range b[] = { R(MiB / PAGE, 4 * MiB / PAGE) };
	struct balloon_range c[] = { R(5, 100) };

	setup(BALLOON_EAGER);
	CHECK_EQ(balloon_report(&br, a, ARRAY_SIZE(a)), 5 * PAGE);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, PAGE, 5 * PAGE));
	CHECK_EQ(br.stats.ballooned_pages, 0);
	/* Reported pages are not ballooned: deflating them is ignored. */
	CHECK_EQ(balloon_deflate(&br, a, 1), 0);
	balloon_release_destroy(&br);

	setup(BALLOON_PRESERVE);
	CHECK_EQ(balloon_report(&br, b, 1), BLOCK);
	CHECK(released(0, 2 * MiB, BLOCK));
	CHECK_EQ(balloon_report(&br, c, 1), 0);
	CHECK_EQ(nr_runs, 1);
	CHECK_EQ(br.stats.ballooned_pages, 0);
	CHECK_EQ(br.stats.partial_blocks, 0);
	balloon_release_destroy(&br);
}

static void test_release_error(void)
{
	struct balloon_range a[] = { R(0, 4) };

	setup(BALLOON_EAGER);
	fail_with = EINVAL;
	CHECK_EQ(balloon_inflate(&br, a, 1), 4);
	CHECK_EQ(br.stats.release_calls, 1);
	CHECK_EQ(br.stats.release_errors, 1);
	CHECK_EQ(br.stats.released_bytes, 0);
	CHECK_EQ(br.stats.ballooned_pages, 4);
	balloon_release_destroy(&br);
}

/* hugetlbfs: only whole huge pages go back, whatever the policy asked. */
static void test_hugetlbfs(void)
{
	struct balloon_range a[] = { R(3, 1) };
	struct balloon_range b[] = { R(0, PPB) };
	struct balloon_range gib[] = { R(0, GiB / PAGE - 1) };
	struct balloon_range last[] = { R(GiB / PAGE - 1, 1) };

	const struct ram_range small[] = { { 0, 4 * MiB } };
	const struct ram_range large[] = { { 0, GiB } };

	/* hugetlbfs: the host's page is its huge page. */
	map_as(small, 1, 2 * MiB, 2 * MiB);
	CHECK_EQ(balloon_release_init(&br, "test", &ram, BALLOON_EAGER, record,
				      NULL), 0);
	CHECK_EQ(br.policy, BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, a, 1), 1);
	CHECK_EQ(nr_runs, 0);
	CHECK_EQ(balloon_inflate(&br, b, 1), PPB - 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 0, 2 * MiB));
	balloon_release_destroy(&br);

	/* 1 GiB huge pages: a block is 262144 pages. */
	map_as(large, 1, GiB, GiB);
	CHECK_EQ(balloon_release_init(&br, "test", &ram, BALLOON_PRESERVE,
				      record, NULL), 0);
	CHECK_EQ(balloon_inflate(&br, gib, 1), GiB / PAGE - 1);
	CHECK_EQ(nr_runs, 0);
	CHECK_EQ(br.stats.held_pages, GiB / PAGE - 1);
	CHECK_EQ(balloon_inflate(&br, last, 1), 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 0, GiB));
	balloon_release_destroy(&br);
}

/* A host with 64 KiB pages and 512 MiB huge pages (arm64): eager gives a
 * host page back once all 16 of its balloon pages are in, and a report
 * only the whole host pages inside it. */
static void test_large_host_pages(void)
{
	const struct ram_range gib[] = { { 0, GiB } };
	struct balloon_range first[] = { R(0, 15) };
	struct balloon_range last[] = { R(15, 1) };
	struct balloon_range next[] = { R(16, 32) };
	struct balloon_range report[] = { R(49, 40) };
	struct balloon_range three[] = { R(3, 1) };
	const uint64_t host = 64 * KiB;

	map_as(gib, 1, host, 512 * MiB);
	CHECK_EQ(balloon_release_init(&br, "test", &ram, BALLOON_EAGER, record,
				      NULL), 0);
	CHECK_EQ(br.policy, BALLOON_EAGER);
	CHECK_EQ(balloon_inflate(&br, first, 1), 15);
	CHECK_EQ(nr_runs, 0);
	CHECK_EQ(balloon_inflate(&br, last, 1), 1);
	CHECK_EQ(nr_runs, 1);
	CHECK(released(0, 0, host));
	CHECK_EQ(balloon_inflate(&br, next, 1), 32);
	CHECK_EQ(nr_runs, 2);
	CHECK(released(1, host, 2 * host));
	/* Pages 49 to 88: of its host pages only the one from page 64. */
	CHECK_EQ(balloon_report(&br, report, 1), host);
	CHECK(released(2, 64 * PAGE, host));
	/* Taken back and given again: the host page is whole once more. */
	CHECK_EQ(balloon_deflate(&br, three, 1), 1);
	CHECK_EQ(balloon_inflate(&br, three, 1), 1);
	CHECK_EQ(nr_runs, 4);
	CHECK(released(3, 0, host));
	CHECK_EQ(br.stats.released_bytes, 5 * host);
	balloon_release_destroy(&br);
}

/* More runs than one call takes: the batch goes out full, then the
 * rest. */
static void test_full_batch(void)
{
	static struct balloon_range r[GUEST_RAM_DISCARD_BATCH + 1];
	unsigned i;

	setup(BALLOON_EAGER);
	for (i = 0; i < GUEST_RAM_DISCARD_BATCH; i++)
		r[i] = R(2 * i, 1);		/* every other page */
	r[i] = R(16 * MiB / PAGE, 1);		/* region 1 */
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), ARRAY_SIZE(r));
	CHECK_EQ(nr_runs, GUEST_RAM_DISCARD_BATCH + 1);
	CHECK_EQ(br.stats.release_calls, 2);
	CHECK(released(0, 0, PAGE));
	CHECK(released(1, 2 * PAGE, PAGE));
	CHECK_EQ(br.stats.released_bytes, ARRAY_SIZE(r) * PAGE);
	balloon_release_destroy(&br);
}

/* The random batches below, against a model: a page is ballooned once
 * any valid range of an inflate covers it, and what a call gives back is
 * recorded page by page. */
#define MODEL_PAGES (20 * MiB / PAGE)	/* both layouts lie below */
#define MODEL_BLOCKS (MODEL_PAGES / PPB)

enum batch_kind { INFLATE, DEFLATE, REPORT };

static bool model_ballooned[MODEL_PAGES];
static bool model_covered[MODEL_PAGES];	/* by a valid range of the call */
static bool model_whole[MODEL_BLOCKS];	/* inside one valid range */
static bool model_released[MODEL_PAGES];	/* by the call */
static bool model_changed[MODEL_PAGES];		/* by the call */
static unsigned model_before[MODEL_BLOCKS];	/* ballooned pages */
static unsigned model_after[MODEL_BLOCKS];
static bool model_twice;	/* a page given back twice in one call */
static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd_below(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static unsigned mark(void *opaque, const struct guest_ram *r,
		     const struct ram_range *ext, unsigned nr,
		     uint64_t *calls)
{
	uint64_t pfn;
	unsigned i;

	CHECK(nr >= 1 && nr <= GUEST_RAM_DISCARD_BATCH);
	for (i = 0; i < nr; i++) {
		CHECK(ext[i].size && ext[i].size % PAGE == 0 &&
		      ext[i].gpa % PAGE == 0 &&
		      ext[i].size <= guest_ram_contig(r, ext[i].gpa));
		CHECK(!i || ext[i].gpa > ext[i - 1].gpa);
		for (pfn = ext[i].gpa / PAGE;
		     pfn < (ext[i].gpa + ext[i].size) / PAGE &&
		     pfn < MODEL_PAGES; pfn++) {
			model_twice |= model_released[pfn];
			model_released[pfn] = true;
		}
	}
	(*calls)++;
	return nr;
}

static unsigned model_block_pages(uint64_t block)
{
	unsigned i, n = 0;

	for (i = 0; i < PPB; i++)
		n += model_ballooned[block * PPB + i];
	return n;
}

/* Fills r with nr random ranges (short runs, whole blocks, wild ones)
 * and marks the pages of those the host must take (inside one region),
 * and the blocks one of them covers whole. */
static void model_random_ranges(struct balloon_range *r, unsigned nr)
{
	uint64_t b;
	unsigned i;

	memset(model_covered, 0, sizeof(model_covered));
	memset(model_whole, 0, sizeof(model_whole));
	for (i = 0; i < nr; i++) {
		uint64_t n = rnd_below(4) ? 1 + rnd_below(8) :
			     rnd_below(2) ? PPB : rnd_below(1ULL << 40);
		uint64_t pfn = rnd_below(8) ? rnd_below(MODEL_PAGES + 64) :
			       rnd_below(2) ? UINT64_MAX - rnd_below(4) :
			       rnd_below(MODEL_BLOCKS) * PPB;

		r[i] = R(pfn, n);
		if (!n || pfn >= MODEL_PAGES || n > MODEL_PAGES - pfn ||
		    guest_ram_contig(&ram, pfn * PAGE) < n * PAGE)
			continue;
		/* Regions start on block boundaries in both layouts. */
		for (b = ALIGN_UP(pfn, PPB); b + PPB <= pfn + n; b += PPB)
			model_whole[b / PPB] = true;
		for (; n; n--, pfn++)
			model_covered[pfn] = true;
	}
}

/* Applies the call to the model; returns the pages whose state changed
 * (for a report: none). */
static uint64_t model_apply(enum batch_kind kind)
{
	uint64_t pfn, changed = 0;

	for (pfn = 0; pfn < MODEL_BLOCKS; pfn++)
		model_before[pfn] = model_block_pages(pfn);
	for (pfn = 0; pfn < MODEL_PAGES; pfn++) {
		model_changed[pfn] = model_covered[pfn] && kind != REPORT &&
				     model_ballooned[pfn] != (kind == INFLATE);
		if (model_changed[pfn])
			model_ballooned[pfn] = kind == INFLATE;
		changed += model_changed[pfn];
	}
	for (pfn = 0; pfn < MODEL_BLOCKS; pfn++)
		model_after[pfn] = model_block_pages(pfn);
	return changed;
}

/* Whether the call had to give the page back. */
static bool model_must_release(enum balloon_policy policy,
			       enum batch_kind kind, uint64_t pfn)
{
	uint64_t b = pfn / PPB;

	if (kind == DEFLATE)
		return false;
	if (policy == BALLOON_PRESERVE)
		return kind == REPORT ? model_whole[b] :
		       model_before[b] < PPB && model_after[b] == PPB;
	/* Eager: newly ballooned pages, and every reported one. */
	return kind == REPORT ? model_covered[pfn] : model_changed[pfn];
}

/* Random inflates, deflates and reports, valid and not, under both
 * policies and both layouts: counts, partial blocks and what is given
 * back must match the model after every call. */
static void test_random_batches(void)
{
	static struct balloon_range r[64];
	unsigned round, call, wrong = 0;

	for (round = 0; round < 40 && !wrong; round++) {
		enum balloon_policy policy = round % 2 ? BALLOON_PRESERVE :
							 BALLOON_EAGER;

		setup_layout(policy, round % 4 >= 2);
		balloon_release_destroy(&br);
		CHECK_EQ(balloon_release_init(&br, "test", &ram, policy, mark,
					      NULL), 0);
		memset(model_ballooned, 0, sizeof(model_ballooned));
		for (call = 0; call < 300 && !wrong; call++) {
			enum batch_kind kind = rnd_below(3);
			unsigned nr = 1 + rnd_below(ARRAY_SIZE(r));
			uint64_t got, changed, given = 0, pfn, b;
			uint64_t total = 0, partial = 0, held = 0;

			model_random_ranges(r, nr);
			memset(model_released, 0, sizeof(model_released));
			model_twice = false;
			if (kind == INFLATE)
				got = balloon_inflate(&br, r, nr);
			else if (kind == DEFLATE)
				got = balloon_deflate(&br, r, nr);
			else
				got = balloon_report(&br, r, nr) / PAGE;
			changed = model_apply(kind);
			for (pfn = 0; pfn < MODEL_PAGES; pfn++) {
				given += model_released[pfn];
				wrong += model_released[pfn] !=
					 model_must_release(policy, kind, pfn);
			}
			CHECK_EQ(wrong, 0);
			CHECK(!model_twice);
			CHECK_EQ(got, kind == REPORT ? given : changed);
			for (b = 0; b < MODEL_BLOCKS; b++) {
				unsigned n = model_after[b];

				total += n;
				partial += n && n < PPB;
				held += n < PPB ? n : 0;
			}
			CHECK_EQ(br.stats.ballooned_pages, total);
			if (policy == BALLOON_EAGER)
				partial = held = 0;
			CHECK_EQ(br.stats.partial_blocks, partial);
			CHECK_EQ(br.stats.held_pages, held);
		}
		balloon_release_destroy(&br);
	}
}

/* Under qemu-user (a cross build's `meson test`) the kernel calls below
 * reach qemu's emulation of them, which differs (no process_madvise,
 * munmap keeps the range reserved): these checks are for a real kernel,
 * and tests/hosts/arm64_host.py runs them on one. */
static bool syscalls_emulated(void)
{
	if (!getenv("THPVM_TEST_QEMU_USER"))
		return false;
	SKIP("system calls emulated by qemu-user");
	return true;
}

/* Linux 6.13 and later take MADV_DONTNEED for one's own process through
 * process_madvise(). */
static bool host_batches_madvise(void)
{
	struct utsname u;
	unsigned major, minor;

	return !uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 13));
}

/* 8 MiB of real guest RAM, every byte 0x5a; NULL if it cannot be had. */
static uint8_t *map_filled(struct guest_ram *real, enum ram_backing backing)
{
	const struct ram_range rr[] = { { 0, 8 * MiB } };
	uint8_t *p;

	if (guest_ram_map(real, rr, 1, backing, NULL)) {
		CHECK(!"guest_ram_map");
		return NULL;
	}
	p = guest_ram_ptr(real, 0, 8 * MiB);
	memset(p, 0x5a, 8 * MiB);
	return p;
}

/* The real calls on anonymous RAM, batched where the host can and one
 * per run as on older hosts: the host's resident size falls by what was
 * released, and the pages read back as zeros. */
static void check_real_madvise(bool batched)
{
	struct balloon_range r[] = { R(PPB, PPB), R(3 * PPB, 16) };
	struct guest_ram_usage before, after;
	struct guest_ram real;
	uint8_t *p = map_filled(&real, RAM_BACKING_NO_THP);

	if (!p)
		return;
	CHECK_EQ(guest_ram_usage(&real, &before), 0);
	CHECK_EQ(balloon_release_init(&br, "test", &real, BALLOON_EAGER, NULL,
				      NULL), 0);
	CHECK_EQ(real.pidfd >= 0, host_batches_madvise());
	if (!batched && real.pidfd >= 0) {
		close(real.pidfd);
		real.pidfd = -1;
	}
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), PPB + 16);
	CHECK_EQ(br.stats.release_calls, real.pidfd >= 0 ? 1 : 2);
	CHECK_EQ(br.stats.release_errors, 0);
	CHECK_EQ(guest_ram_usage(&real, &after), 0);
	CHECK_EQ(before.resident - after.resident, BLOCK + 16 * PAGE);
	CHECK_EQ(p[BLOCK], 0);
	CHECK_EQ(p[3 * BLOCK + 16 * PAGE - 1], 0);
	CHECK_EQ(p[3 * BLOCK + 16 * PAGE], 0x5a);
	balloon_release_destroy(&br);
	guest_ram_unmap(&real);
}

static void test_real_madvise(void)
{
	if (syscalls_emulated())
		return;
	check_real_madvise(true);
	check_real_madvise(false);
}

/* A batch the kernel stops in the middle of (here: host memory that is
 * no longer mapped): the runs before it are released, the error is the
 * failing run's, and the runs after it are left alone. */
static void test_real_failure_mid_batch(void)
{
	struct balloon_range r[] = { R(1 * PPB, 1), R(2 * PPB, 1),
				     R(3 * PPB, 1) };
	struct guest_ram real;
	uint8_t *p;

	if (syscalls_emulated())
		return;
	p = map_filled(&real, RAM_BACKING_NO_THP);
	if (!p)
		return;
	CHECK_EQ(munmap(p + 4 * MiB, 2 * MiB), 0);
	CHECK_EQ(balloon_release_init(&br, "test", &real, BALLOON_EAGER, NULL,
				      NULL), 0);
	CHECK_EQ(balloon_inflate(&br, r, ARRAY_SIZE(r)), 3);
	CHECK_EQ(br.stats.release_errors, 1);
	/* Batched: the batch, then the failing run alone; one by one:
	 * the first run, then the failing one. */
	CHECK_EQ(br.stats.release_calls, 2);
	CHECK_EQ(br.stats.released_bytes, PAGE);
	CHECK_EQ(p[BLOCK], 0);
	CHECK_EQ(p[3 * BLOCK], 0x5a);
	balloon_release_destroy(&br);
	guest_ram_unmap(&real);
}

/* THP-backed RAM: eager splits a huge page for one 4 KiB page; preserve
 * keeps it until its block is whole, then frees it without a split.
 * Skipped when the host gives the mapping no huge pages. */
static void test_real_thp(void)
{
	struct balloon_range one[] = { R(5, 1) };
	struct balloon_range rest[] = { R(PPB + 6, PPB - 6), R(PPB, 6) };
	struct balloon_range first[] = { R(PPB + 1, 1) };
	struct guest_ram_usage u0, u1, u2;
	struct guest_ram real;

	if (syscalls_emulated() || !map_filled(&real, RAM_BACKING_THP))
		return;
	CHECK_EQ(guest_ram_usage(&real, &u0), 0);
	if (u0.huge < 4 * MiB) {
		SKIP("no transparent huge pages for the mapping");
		guest_ram_unmap(&real);
		return;
	}
	CHECK_EQ(balloon_release_init(&br, "test", &real, BALLOON_EAGER, NULL,
				      NULL), 0);
	CHECK_EQ(balloon_inflate(&br, one, 1), 1);
	CHECK_EQ(guest_ram_usage(&real, &u1), 0);
	CHECK_EQ(u0.resident - u1.resident, PAGE);
	CHECK_EQ(u0.huge - u1.huge, BLOCK);	/* split */
	balloon_release_destroy(&br);

	CHECK_EQ(balloon_release_init(&br, "test", &real, BALLOON_PRESERVE,
				      NULL, NULL), 0);
	CHECK_EQ(balloon_inflate(&br, first, 1), 1);
	CHECK_EQ(guest_ram_usage(&real, &u2), 0);
	CHECK_EQ(u2.huge, u1.huge);		/* held, not split */
	CHECK_EQ(balloon_inflate(&br, rest, ARRAY_SIZE(rest)), PPB - 1);
	CHECK_EQ(br.stats.release_calls, 1);
	CHECK_EQ(guest_ram_usage(&real, &u2), 0);
	CHECK_EQ(u1.huge - u2.huge, BLOCK);
	CHECK_EQ(u1.resident - u2.resident, BLOCK);
	balloon_release_destroy(&br);
	guest_ram_unmap(&real);
}

/* A hugetlbfs mount of its own with two more huge pages reserved, for
 * the real punch-hole path; NULL (and the test skipped) where it cannot
 * be had. */
static char huge_dir[] = "/tmp/thpvm-huge-XXXXXX";
static char saved_nr[32];

static const char *hugetlbfs_mount(void)
{
	char cmd[128];
	FILE *f;
	long nr;

	if (geteuid() != 0)
		return NULL;
	f = fopen("/proc/sys/vm/nr_hugepages", "r");
	if (!f)
		return NULL;
	if (!fgets(saved_nr, sizeof(saved_nr), f) ||
	    sscanf(saved_nr, "%ld", &nr) != 1) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	f = fopen("/proc/sys/vm/nr_hugepages", "w");
	if (!f)
		return NULL;
	fprintf(f, "%ld\n", nr + 2);
	fclose(f);
	if (!mkdtemp(huge_dir))
		return NULL;
	snprintf(cmd, sizeof(cmd), "mount -t hugetlbfs -o pagesize=2M none %s",
		 huge_dir);
	if (system(cmd)) {
		rmdir(huge_dir);
		return NULL;
	}
	return huge_dir;
}

static void hugetlbfs_unmount(void)
{
	char cmd[128];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "umount %s", huge_dir);
	CHECK_EQ(system(cmd), 0);
	rmdir(huge_dir);
	f = fopen("/proc/sys/vm/nr_hugepages", "w");
	if (f) {
		fputs(saved_nr, f);
		fclose(f);
	}
}

/* hugetlbfs-backed RAM: a complete block is punched out of the file
 * (the host holds one huge page less, the block reads zeros), a partial
 * one is held whatever the policy asked. */
static void test_real_hugetlbfs(void)
{
	const struct ram_range rr[] = { { 0, 4 * MiB } };
	struct balloon_range part[] = { R(PPB + 3, 1) };
	struct balloon_range whole[] = { R(0, PPB) };
	struct guest_ram_usage u0, u1;
	struct guest_ram real;
	const char *dir;
	uint8_t *p;

	if (syscalls_emulated())
		return;
	dir = hugetlbfs_mount();
	if (!dir) {
		SKIP("needs root to mount hugetlbfs and reserve huge pages");
		return;
	}
	if (guest_ram_map(&real, rr, 1, RAM_BACKING_HUGETLBFS, dir)) {
		CHECK(!"guest_ram_map on hugetlbfs");
		hugetlbfs_unmount();
		return;
	}
	p = guest_ram_ptr(&real, 0, 4 * MiB);
	memset(p, 0x5a, 4 * MiB);
	CHECK_EQ(guest_ram_usage(&real, &u0), 0);
	CHECK_EQ(u0.huge, 4 * MiB);
	CHECK_EQ(balloon_release_init(&br, "test", &real, BALLOON_EAGER, NULL,
				      NULL), 0);
	CHECK_EQ(br.policy, BALLOON_PRESERVE);
	CHECK_EQ(balloon_inflate(&br, part, 1), 1);
	CHECK_EQ(balloon_inflate(&br, whole, 1), PPB);
	CHECK_EQ(br.stats.release_calls, 1);
	CHECK_EQ(br.stats.release_errors, 0);
	CHECK_EQ(br.stats.released_bytes, 2 * MiB);
	CHECK_EQ(br.stats.held_pages, 1);
	CHECK_EQ(guest_ram_usage(&real, &u1), 0);
	CHECK_EQ(u1.huge, 2 * MiB);
	CHECK_EQ(p[0], 0);
	CHECK_EQ(p[2 * MiB - 1], 0);
	CHECK_EQ(p[2 * MiB], 0x5a);
	balloon_release_destroy(&br);
	guest_ram_unmap(&real);
	hugetlbfs_unmount();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_eager_sorts_and_merges),
		UNIT_TEST(test_eager_adjacent_ranges),
		UNIT_TEST(test_repeated_and_overlapping),
		UNIT_TEST(test_hostile_ranges),
		UNIT_TEST(test_hotplug_pages_refused),
		UNIT_TEST(test_adjacent_regions),
		UNIT_TEST(test_preserve_partial_then_complete),
		UNIT_TEST(test_preserve_merges_blocks),
		UNIT_TEST(test_deflate),
		UNIT_TEST(test_reset),
		UNIT_TEST(test_report),
		UNIT_TEST(test_release_error),
		UNIT_TEST(test_hugetlbfs),
		UNIT_TEST(test_large_host_pages),
		UNIT_TEST(test_full_batch),
		UNIT_TEST(test_random_batches),
		UNIT_TEST(test_real_madvise),
		UNIT_TEST(test_real_failure_mid_batch),
		UNIT_TEST(test_real_thp),
		UNIT_TEST(test_real_hugetlbfs),
	};
	int rc;

	guest_ram_init(&ram);
	rc = UNIT_RUN(tests);
	guest_ram_unmap(&ram);
	return rc;
}
