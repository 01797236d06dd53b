/* virtio-balloon driver (virtio spec 5.5, plus the continuous-pages
 * extension of docs/balloon.md), run while the guest serves: it moves the
 * balloon toward the host's num_pages at start and on every config
 * interrupt, taking pages from the buddy allocator and giving them back.
 * One buffer is in flight at a time, as in Linux's driver; pages leave
 * the balloon only after the device has used the deflate buffer
 * (MUST_TELL_HOST). With free page reporting, whole free blocks of
 * 2 MiB or more go to the host whenever pages came back to the
 * allocator, without entering the balloon.
 *
 * Continuous pages come from order-9 allocations, which compact memory
 * (migrate movable pages away from a pageblock) when no 2 MiB block is
 * free, as Linux does, and fall back to smaller runs when that fails
 * too. The per-page work (allocating, filling a buffer, freeing) runs
 * in ring 3, native on PVM hosts as it is in a Linux guest on hardware,
 * so that inflate times measure the device rather than the emulation
 * of guest kernel mode. On OOM, with DEFLATE_ON_OOM, the balloon gives
 * back OOM_PAGES at a time and follows the host's target again only when
 * the host sets it anew, as Linux's driver does. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

#define VIRTIO_ID_BALLOON		5
#define VIRTIO_BALLOON_F_MUST_TELL_HOST	0
#define VIRTIO_BALLOON_F_STATS_VQ	1
#define VIRTIO_BALLOON_F_DEFLATE_ON_OOM	2
#define VIRTIO_BALLOON_F_REPORTING	5
#define VIRTIO_BALLOON_F_CONT_PAGES	6
/* Inflate, deflate, stats, reporting and the two continuous ones. */
#define BALLOON_MAX_QUEUES		6

#define CFG_NUM_PAGES			0
#define CFG_ACTUAL			4

#define STAT_MEMFREE			4
#define STAT_MEMTOT			5
#define STAT_AVAIL			6
#define NSTATS				3

#define PAGE_SHIFT			12
#define BATCH				256	/* elements per buffer, as Linux */
#define CONT_ORDER			9	/* 2 MiB runs */
/* Held-stack entries inflating leaves free for deflate's splits: a block
 * of order k split down to what is left to give leaves at most k pieces
 * of distinct orders where it was (u_give), so k - 1 more entries. */
#define SPLIT_RESERVE			(CONT_ORDER - 1)
/* A held block: pfn << ORDER_BITS | order. */
#define ORDER_BITS			4
/* Free page reporting: blocks of order 9 and up (Linux on x86), 32
 * ranges per chain as Linux's page_reporting, at most a page of blocks
 * (addr | order) per pass. */
#define REPORT_ORDER			9
#define REPORT_CHAIN			32
#define REPORT_MAX			512
#define OOM_PAGES			256	/* VIRTIO_BALLOON_OOM_NR_PAGES */
/* balloon_flood: each chain is a 64 KiB array (16384 pfns, 8192 cont
 * pairs) over the same 2 MiB of pages. */
#define FLOOD_ORDER			4
#define FLOOD_AREA_ORDER		9

struct balloon_stat {
	uint16_t tag;
	uint64_t val;
} __attribute__((packed));

static struct {
	struct virtio_dev vd;
	struct virtq *inflate, *deflate, *stats, *report;
	bool cont, report_due;
	uint64_t *report_list;		/* REPORT_MAX blocks */
	uint32_t *buf;			/* BATCH pfns or BATCH pairs */
	struct balloon_stat *stat;
	uint32_t *held;			/* ballooned blocks, a stack */
	uint64_t nheld, held_cap;
	uint32_t target, actual;	/* pages */
	bool broken;
	bool oom_hold;			/* deflated on OOM since the target
					 * was last set */
	/* The move toward the target: started when, how. */
	bool moving, deflated;
	uint64_t move_start, compactions, migrated;
} bl;

static void stats_post(void)
{
	struct vq_buf b = { (uint64_t)bl.stat, NSTATS * sizeof(*bl.stat),
			    false };

	bl.stat[0] = (struct balloon_stat){ STAT_MEMFREE, buddy_free_bytes() };
	bl.stat[1] = (struct balloon_stat){ STAT_MEMTOT, buddy_total_bytes() };
	bl.stat[2] = (struct balloon_stat){ STAT_AVAIL, buddy_free_bytes() };
	vq_add(bl.stats, &b, 1, 0, bl.stat);
	vq_kick(bl.stats);
}

/* The device returns the stats buffer to ask for fresh statistics. */
static void stats_service(void)
{
	void *token;
	uint32_t len;

	if (bl.stats && vq_get_used(bl.stats, &token, &len) == 1)
		stats_post();
}

/* Publishes what was added to vq and sleeps until the device has used
 * it (the only buffer in flight there). A config interrupt may also mean
 * DEVICE_NEEDS_RESET, after which nothing would come. */
static bool kick_and_wait(struct virtq *vq)
{
	unsigned cfg = virtio_config_irqs(&bl.vd);
	const char *why = "bad-used-id";
	void *token;
	uint32_t len;
	int rc;

	vq_kick(vq);
	while (!(rc = vq_get_used(vq, &token, &len))) {
		if (cfg != virtio_config_irqs(&bl.vd)) {
			cfg = virtio_config_irqs(&bl.vd);
			if (virtio_status(&bl.vd) & VIRTIO_S_NEEDS_RESET) {
				why = "needs-reset";
				rc = -1;
				break;
			}
		}
		stats_service();
		virtio_idle(&bl.vd);
	}
	if (rc < 0) {
		report(false, "balloon", "reason=%s", why);
		bl.broken = true;
	}
	return rc > 0;
}

/* Sends buf[0..words) on vq and waits until the device has used it. */
static bool send(struct virtq *vq, unsigned words)
{
	struct vq_buf b = { (uint64_t)bl.buf, words * 4, false };

	vq_add(vq, &b, 1, 0, bl.buf);
	return kick_and_wait(vq);
}

/* Takes every free block of 2 MiB or more out of the allocator, hands
 * them to the device as device-writable ranges, REPORT_CHAIN to a
 * chain, and frees them again once it has used each chain. */
static void report_free(void)
{
	uint64_t *list = bl.report_list, bytes = 0;
	unsigned n = 0;

	for (unsigned k = BUDDY_MAX_ORDER; k >= REPORT_ORDER; k--) {
		uint64_t a;

		while (n < REPORT_MAX && (a = buddy_take(k)))
			list[n++] = a | k;
	}
	for (unsigned i = 0; i < n && !bl.broken; i += REPORT_CHAIN) {
		struct vq_buf b[REPORT_CHAIN];
		unsigned m = MIN(REPORT_CHAIN, n - i);

		for (unsigned j = 0; j < m; j++) {
			b[j].addr = list[i + j] & ~0xfffULL;
			b[j].len = 4096u << (list[i + j] & 0xfff);
			b[j].write = true;
			bytes += b[j].len;
		}
		vq_add(bl.report, b, m, 0, list);
		kick_and_wait(bl.report);
	}
	for (unsigned i = 0; i < n; i++)
		buddy_free(list[i] & ~0xfffULL, list[i] & 0xfff);
	print("tg: balloon reported=%lu blocks=%u\n", bytes, n);
}

static unsigned floor_log2(uint32_t x)
{
	return 31 - __builtin_clz(x);
}

/* Element n of the buffer: a pfn, or with cont pages a pfn + size
 * pair. */
static void buf_put(unsigned n, uint32_t pfn, unsigned order)
{
	if (bl.cont) {
		bl.buf[2 * n] = pfn;
		bl.buf[2 * n + 1] = 1u << (order + PAGE_SHIFT);
	} else {
		bl.buf[n] = pfn;
	}
}

/* ---- ring 3: the per-page work, which Linux does at native speed ---- */

/* One buffer's worth of blocks, between the kernel and ring 3. */
static struct {
	uint32_t want;		/* pages still to move */
	uint32_t pages;		/* pages in the buffer */
	unsigned n;		/* elements in the buffer */
	uint64_t bad_pfn;	/* a block the held stack cannot record */
} batch;

/* A run of 2^order pages for the balloon; at order 9 compaction may
 * assemble it. 0 if there is none. */
static uint64_t alloc_run(unsigned order)
{
	uint64_t pa = buddy_alloc(order);

	if (!pa && order == CONT_ORDER && (pa = buddy_compact(&bl.migrated)))
		bl.compactions++;
	return pa;
}

/* Up to BATCH blocks toward batch.want pages into the buffer and onto
 * the held stack: 4 KiB pages, or with cont pages 2 MiB runs first and
 * smaller ones only when none can be had. */
static long u_take(long arg)
{
	unsigned top = CONT_ORDER;

	(void)arg;
	batch.n = batch.pages = 0;
	while (batch.n < BATCH && batch.pages < batch.want &&
	       bl.nheld < bl.held_cap - SPLIT_RESERVE) {
		unsigned order = 0;
		uint64_t pa, pfn;

		if (bl.cont) {
			/* Nothing is freed meanwhile: an order that failed
			 * (compaction too) stays empty for the rest of the
			 * batch. */
			top = MIN(top, floor_log2(batch.want - batch.pages));
			for (order = top; !(pa = alloc_run(order)) && order;)
				top = --order;
		} else {
			pa = buddy_alloc(0);
		}
		if (!pa)
			break;
		pfn = pa >> PAGE_SHIFT;
		/* A held entry keeps 28 bits of pfn: RAM below 1 TiB. */
		if (pfn >> (32 - ORDER_BITS)) {
			buddy_free(pa, order);
			batch.bad_pfn = pfn;
			break;
		}
		bl.held[bl.nheld++] = pfn << ORDER_BITS | order;
		buf_put(batch.n++, pfn, order);
		batch.pages += 1u << order;
	}
	return 0;
}

/* Up to BATCH blocks off the top of the held stack toward batch.want
 * pages into the buffer; a block larger than what is left is split, its
 * upper half staying in the balloon. A split takes a free entry;
 * inflating leaves SPLIT_RESERVE of them, so the bound check on it only
 * guards memory. */
static long u_give(long arg)
{
	(void)arg;
	batch.n = batch.pages = 0;
	while (batch.n < BATCH && batch.pages < batch.want && bl.nheld) {
		uint32_t e = bl.held[bl.nheld - 1];
		unsigned order = e & ((1u << ORDER_BITS) - 1);
		uint32_t pfn = e >> ORDER_BITS;

		if (1u << order > batch.want - batch.pages &&
		    bl.nheld < bl.held_cap) {
			order--;
			bl.held[bl.nheld - 1] = (pfn + (1u << order)) <<
						ORDER_BITS | order;
			bl.held[bl.nheld++] = pfn << ORDER_BITS | order;
			continue;
		}
		bl.nheld--;
		buf_put(batch.n++, pfn, order);
		batch.pages += 1u << order;
	}
	return 0;
}

/* The buffer's blocks back to the allocator. */
static long u_free_given(long arg)
{
	(void)arg;
	for (unsigned i = 0; i < batch.n; i++) {
		if (bl.cont)
			buddy_free((uint64_t)bl.buf[2 * i] << PAGE_SHIFT,
				   floor_log2(bl.buf[2 * i + 1]) - PAGE_SHIFT);
		else
			buddy_free((uint64_t)bl.buf[i] << PAGE_SHIFT, 0);
	}
	return 0;
}

/* ---- ring 0 ---- */

/* One buffer toward want pages; returns the pages ballooned. */
static uint32_t inflate(uint32_t want)
{
	batch.want = want;
	run_user(u_take, 0);
	if (batch.bad_pfn) {
		report(false, "balloon", "pfn=0x%lx reason=pfn-too-high",
		       batch.bad_pfn);
		bl.broken = true;
	}
	if (!batch.n || !send(bl.inflate, bl.cont ? 2 * batch.n : batch.n))
		return 0;
	return batch.pages;
}

/* One buffer toward want pages; the pages go back to the allocator once
 * the device has used it (MUST_TELL_HOST). Returns the pages freed. */
static uint32_t deflate(uint32_t want)
{
	batch.want = want;
	run_user(u_give, 0);
	if (!batch.n || !send(bl.deflate, bl.cont ? 2 * batch.n : batch.n))
		return 0;
	run_user(u_free_given, 0);
	return batch.pages;
}

/* Finds and starts the first virtio-balloon device, with the queues
 * numbered as Linux's driver numbers them: inflate, deflate, stats
 * (STATS_VQ), reporting (REPORTING), then inflate_cont and deflate_cont
 * (CONT_PAGES). */
bool run_balloon(void)
{
	uint64_t want = 1ULL << VIRTIO_BALLOON_F_MUST_TELL_HOST |
			1ULL << VIRTIO_BALLOON_F_STATS_VQ |
			1ULL << VIRTIO_BALLOON_F_DEFLATE_ON_OOM |
			1ULL << VIRTIO_BALLOON_F_REPORTING;
	const struct virtio_cand *c = 0;
	struct virtio_dev *d = &bl.vd;
	const char *why;
	unsigned q = 2, order = 0;

	for (unsigned i = 0; i < virtio_ncands && !c; i++)
		if (virtio_cands[i].id == VIRTIO_ID_BALLOON)
			c = &virtio_cands[i];
	if (!c) {
		report(false, "balloon", "reason=no-device");
		return false;
	}
	/* One entry per page at most; 4 MiB of them cover 4 GiB. */
	while (order < BUDDY_MAX_ORDER &&
	       (4096ULL << order) < buddy_total_bytes() / 1024)
		order++;
	bl.held = (uint32_t *)buddy_alloc(order);
	bl.held_cap = (4096ULL << order) / 4;
	bl.buf = (uint32_t *)buddy_alloc(0);
	bl.stat = (struct balloon_stat *)buddy_alloc(0);
	bl.report_list = (uint64_t *)buddy_alloc(0);
	if (!bl.held || !bl.buf || !bl.stat || !bl.report_list) {
		report(false, "balloon", "reason=no-free-ram");
		return false;
	}
	if (!(params.vfeat_off & VFEAT_NOCONT))
		want |= 1ULL << VIRTIO_BALLOON_F_CONT_PAGES;
	d->may_poll = true;
	if (!virtio_probe(d, c, BALLOON_MAX_QUEUES, &why) ||
	    !virtio_negotiate(d, want, &why))
		goto fail;
	bl.cont = virtio_has(d, VIRTIO_BALLOON_F_CONT_PAGES);
	bl.stats = virtio_has(d, VIRTIO_BALLOON_F_STATS_VQ) ? &d->vq[q++] : 0;
	bl.report = virtio_has(d, VIRTIO_BALLOON_F_REPORTING) ? &d->vq[q++] : 0;
	bl.report_due = bl.report != 0;
	bl.inflate = &d->vq[bl.cont ? q : 0];
	bl.deflate = &d->vq[bl.cont ? q + 1 : 1];
	d->nvq = bl.cont ? q + 2 : q;
	if (!virtio_finish(d, &why))
		goto fail;
	irq_cpu_enable();
	if (bl.stats)
		stats_post();
	print("tg: balloon-dev %s features=0x%lx mode=%s queues=%u irq=%s "
	      "free=%lu\n", c->where, d->features, bl.cont ? "cont" : "std",
	      d->nvq, virtio_irq_mode(d), buddy_free_bytes());
	return true;
fail:
	report(false, "balloon-init", "%s reason=%s", c->where, why);
	return false;
}

static void publish_actual(void)
{
	mmio_write32(bl.vd.device + CFG_ACTUAL, bl.actual);
	print("tg: balloon target=%u actual=%u mode=%s\n", bl.target,
	      bl.actual, bl.cont ? "cont" : "std");
}

/* Linux's OOM notifier: with DEFLATE_ON_OOM, up to OOM_PAGES leave the
 * balloon (telling the host first) and the target is not followed again
 * until the host sets it. Returns the pages freed. */
uint32_t balloon_deflate_on_oom(void)
{
	uint32_t got;

	if (!bl.inflate || bl.broken ||
	    !virtio_has(&bl.vd, VIRTIO_BALLOON_F_DEFLATE_ON_OOM) ||
	    !(got = deflate(MIN(OOM_PAGES, bl.actual))))
		return 0;
	bl.actual -= got;
	bl.oom_hold = true;
	publish_actual();
	return got;
}

/* Reads num_pages after each config interrupt; a new target starts a
 * move, timed until actual reaches it. */
static void read_target(void)
{
	uint32_t t = mmio_read32(bl.vd.device + CFG_NUM_PAGES);

	bl.oom_hold = false;
	if (t == bl.target)
		return;
	bl.target = t;
	bl.moving = true;
	bl.deflated = false;
	bl.move_start = clock_now();
	bl.compactions = bl.migrated = 0;
}

/* Prints how the move went; after a deflate, lets usemem run again. */
static void move_done(void)
{
	bl.moving = false;
	print("tg: balloon reached target=%u actual=%u ns=%lu mode=%s "
	      "compactions=%lu migrated=%lu\n", bl.target, bl.actual,
	      clock_to_ns(clock_now() - bl.move_start), bl.cont ? "cont" : "std",
	      bl.compactions, bl.migrated);
	if (bl.deflated)
		usemem_reuse();
}

/* A hostile driver for the device's pass budget: the inflate queue is
 * kept full of chains that give up the same 2 MiB again and again, each
 * put back as soon as the device has used it, for ever. The device
 * refuses all but the first time as already ballooned, yet looks at
 * every element; the host's control socket must keep answering. */
static void __attribute__((noreturn)) balloon_flood(void)
{
	uint64_t area = buddy_alloc(FLOOD_AREA_ORDER);
	uint32_t *list = (uint32_t *)buddy_alloc(FLOOD_ORDER);
	unsigned esize = bl.cont ? 8 : 4;
	unsigned n = (4096u << FLOOD_ORDER) / esize, chains = 0;
	struct vq_buf b = { (uint64_t)list, n * esize, false };
	void *token;
	uint32_t len;
	int rc;

	if (!area || !list) {
		report(false, "balloon-flood", "reason=no-free-ram");
		for (;;)
			wait_irq();
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t pfn = (area >> PAGE_SHIFT) +
			       i % (1u << FLOOD_AREA_ORDER);

		if (bl.cont) {
			list[2 * i] = pfn;
			list[2 * i + 1] = 1u << PAGE_SHIFT;
		} else {
			list[i] = pfn;
		}
	}
	/* Polled: the loop below never sleeps. */
	vq_disarm(bl.inflate);
	while (vq_add(bl.inflate, &b, 1, 0, list) >= 0)
		chains++;
	vq_kick(bl.inflate);
	print("tg: balloon flooding chains=%u elements=%u mode=%s\n", chains,
	      n, bl.cont ? "cont" : "std");
	for (;;) {
		while ((rc = vq_get_used(bl.inflate, &token, &len)) == 1)
			vq_add(bl.inflate, &b, 1, 0, list);
		if (rc < 0)
			break;
		vq_kick(bl.inflate);
	}
	report(false, "balloon-flood", "reason=bad-used-id");
	for (;;)
		wait_irq();
}

/* Moves toward the target a buffer at a time, reports free memory once
 * it is reached if pages came back since the last report, and otherwise
 * sleeps in `sti; hlt`, the only place interrupts are taken on PVM
 * hosts. With balloon_flood, floods the device instead. */
void balloon_serve(void)
{
	unsigned cfg = virtio_config_irqs(&bl.vd) - 1;

	if (params.balloon_flood)
		balloon_flood();
	while (!bl.broken) {
		uint32_t done = 0;

		stats_service();
		if (cfg != virtio_config_irqs(&bl.vd)) {
			cfg = virtio_config_irqs(&bl.vd);
			read_target();
		}
		if (bl.target > bl.actual && !bl.oom_hold) {
			done = inflate(bl.target - bl.actual);
			bl.actual += done;
		} else if (bl.target < bl.actual) {
			done = deflate(bl.actual - bl.target);
			bl.actual -= done;
			bl.deflated |= done != 0;
			if (done && bl.report)
				bl.report_due = true;
		}
		if (done) {
			publish_actual();
			continue;
		}
		if (bl.moving && bl.actual == bl.target) {
			move_done();
			continue;
		}
		if (bl.report_due) {
			bl.report_due = false;
			report_free();
			continue;
		}
		virtio_idle(&bl.vd);
	}
	/* A device that broke the protocol is left alone. */
	for (;;)
		wait_irq();
}
