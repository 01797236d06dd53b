/* A usemem-like workload (after usemem of the vm-scalability suite): one
 * process that takes N bytes of movable 4 KiB pages from the buddy
 * allocator and writes every word, optionally frees every other page and
 * keeps the rest (usemem --punch-holes), and later, once the balloon has
 * deflated, exits and runs again (reuse=). Its page table is an array of
 * page addresses that compaction rewrites when it migrates a page.
 *
 * Allocating, writing and freeing run in ring 3 (native here). Out of
 * memory, ring 3 returns to the kernel, which takes pages back from the
 * balloon when DEFLATE_ON_OOM allows, as Linux's OOM notifier does, and
 * carries on. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define PAGE_SHIFT	12
#define WORDS		512	/* 8-byte words per page */

static struct {
	uint64_t *table;	/* page addresses, 0 for a punched hole */
	uint64_t n;		/* entries filled */
	uint64_t want;		/* entries to fill */
	bool started;
} um;

/* What word w of the page of entry e holds: a page copied anywhere but
 * whole and to its own entry reads back right. */
static uint64_t pattern(uint64_t e, unsigned w)
{
	return (e * WORDS + w) ^ 0x9e3779b97f4a7c15ULL;
}

/* ---- ring 3 ---- */

/* Fills entries up to um.want; -1 when the allocator runs dry. */
static long u_fill(long arg)
{
	(void)arg;
	for (; um.n < um.want; um.n++) {
		uint64_t *p = (uint64_t *)buddy_alloc_movable(um.n);

		if (!p)
			return -1;
		for (unsigned w = 0; w < WORDS; w++)
			p[w] = pattern(um.n, w);
	}
	return 0;
}

static long u_punch(long arg)
{
	uint64_t kept = 0;

	(void)arg;
	for (uint64_t e = 0; e < um.n; e++) {
		if (e & 1) {
			buddy_free_movable(um.table[e]);
			um.table[e] = 0;
		} else {
			kept++;
		}
	}
	return kept;
}

/* Pages whose words are not what u_fill wrote; counts the pages in
 * *checked. */
static long u_verify(long arg)
{
	uint64_t *checked = (uint64_t *)arg;
	long bad = 0;

	for (uint64_t e = 0; e < um.n; e++) {
		const uint64_t *p = (const uint64_t *)um.table[e];

		if (!p)
			continue;
		++*checked;
		for (unsigned w = 0; w < WORDS; w++) {
			if (p[w] != pattern(e, w)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

static long u_free_all(long arg)
{
	(void)arg;
	for (uint64_t e = 0; e < um.n; e++)
		if (um.table[e])
			buddy_free_movable(um.table[e]);
	um.n = 0;
	return 0;
}

/* ---- ring 0 ---- */

/* Fills bytes of pages, deflating the balloon whenever memory runs out.
 * Prints the phase's line; false when out of memory. */
static bool fill(const char *phase, uint64_t bytes)
{
	uint64_t t0 = clock_now(), ns;
	uint32_t oom = 0, got;

	um.want = bytes >> PAGE_SHIFT;
	while (run_user(u_fill, 0) < 0) {
		got = balloon_deflate_on_oom();
		if (!got) {
			report(false, "usemem", "phase=%s bytes=%lu got=%lu "
			       "oom_deflated=%u reason=out-of-memory", phase,
			       bytes, um.n << PAGE_SHIFT, oom);
			return false;
		}
		oom += got;
	}
	ns = MAX(clock_to_ns(clock_now() - t0), 1);
	print("tg: usemem phase=%s bytes=%lu ns=%lu mb_per_s=%lu "
	      "oom_deflated=%u\n", phase, bytes, ns, bytes * 1000 / ns, oom);
	return true;
}

void run_usemem(void)
{
	uint64_t entries = MAX(params.usemem, params.reuse) >> PAGE_SHIFT;
	unsigned order = 0;

	while (order < BUDDY_MAX_ORDER && (4096ULL << order) < entries * 8)
		order++;
	if ((4096ULL << order) < entries * 8 ||
	    !(um.table = (uint64_t *)buddy_alloc(order))) {
		report(false, "usemem", "bytes=%lu reason=no-room-for-table",
		       entries << PAGE_SHIFT);
		return;
	}
	um.started = true;
	buddy_set_table(um.table);
	if (!fill("first", params.usemem))
		return;
	if (params.punch_holes) {
		uint64_t kept = run_user(u_punch, 0);

		print("tg: usemem punched=%lu kept=%lu free=%lu\n",
		      (um.n - kept) << PAGE_SHIFT, kept << PAGE_SHIFT,
		      buddy_free_bytes());
	}
}

void usemem_verify(void)
{
	uint64_t checked = 0;
	long bad;

	if (!um.started)
		return;
	bad = run_user(u_verify, (long)&checked);
	report(!bad, "usemem-verify", "pages=%lu bad=%ld", checked, bad);
}

/* Once, after the balloon's first completed deflate: checks that the
 * pages kept (some migrated by compaction) still hold their data, frees
 * them and fills reuse= bytes anew. */
void usemem_reuse(void)
{
	if (!um.started || !params.reuse)
		return;
	usemem_verify();
	um.started = false;
	run_user(u_free_all, 0);
	fill("reuse", params.reuse);
}
