/* virtio-mem driver (virtio 1.2, 5.15) on the first virtio-mem device,
 * in the shape of Linux's virtio_mem: the region's blocks are plugged a
 * request each up to requested_size and handed to the buddy allocator;
 * when the host asks for less, blocks are unplugged from the top, each
 * taken out of the allocator first, its movable pages migrating as when
 * Linux offlines a memory block (a block holding a page that cannot move
 * is passed over). A driver that finds blocks plugged (after a reset)
 * unplugs them all first. Unplugged blocks are never touched
 * (VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE). With mem_evil it first sends
 * the requests no driver may send and checks each answer, then restarts
 * the device with a block plugged (docs/test-guest.md). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

#define VIRTIO_ID_MEM		24
#define VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE 1

/* Device configuration (struct virtio_mem_config). */
#define CFG_BLOCK_SIZE		0
#define CFG_ADDR		16
#define CFG_REGION_SIZE		24
#define CFG_PLUGGED_SIZE	40
#define CFG_REQUESTED_SIZE	48

#define REQ_PLUG		0
#define REQ_UNPLUG		1
#define REQ_UNPLUG_ALL		2
#define REQ_STATE		3
#define RESP_ACK		0
#define RESP_NACK		1
#define RESP_BUSY		2
#define RESP_ERROR		3
#define STATE_PLUGGED		0
#define STATE_UNPLUGGED		1
#define NO_RESP			0xffff

#define REQ_WAIT_MS		5000
#define PAGE			4096ULL
#define HUGE			(2ULL << 20)

struct mem_req {
	uint16_t type, pad[3];
	uint64_t addr;
	uint16_t nb_blocks, pad2[3];
};

struct mem_resp {
	uint16_t type, pad[3];
	uint16_t state;
};

static struct {
	struct virtio_dev vd;
	const struct virtio_cand *cand;
	uint64_t block, addr, region, nblocks;
	uint64_t requested, plugged;	/* plugged: what this driver holds */
	uint8_t *state;			/* per block: plugged and in the buddy */
	struct mem_req *req;
	struct mem_resp *resp;
	unsigned cfg_seen;		/* config interrupts when last read */
	uint64_t migrated;		/* pages, in this move */
	bool broken;
} mm;

/* A 64-bit configuration field, read whole (the generation unchanged). */
static uint64_t cfg64(unsigned off)
{
	uint32_t gen, lo, hi;

	do {
		gen = virtio_cfg_generation(&mm.vd);
		lo = mmio_read32(mm.vd.device + off);
		hi = mmio_read32(mm.vd.device + off + 4);
	} while (gen != virtio_cfg_generation(&mm.vd));
	return (uint64_t)hi << 32 | lo;
}

/* One request, answered: the response type (NO_RESP when the device did
 * not answer in time or broke the ring), the state in *state. */
static uint16_t request(uint16_t type, uint64_t addr, uint16_t nb,
			uint16_t *state)
{
	struct vq_buf b[2] = {
		{ (uint64_t)mm.req, sizeof(*mm.req), false },
		{ (uint64_t)mm.resp, sizeof(*mm.resp), true },
	};
	struct virtq *vq = &mm.vd.vq[0];
	uint64_t deadline = clock_deadline(REQ_WAIT_MS);
	uint32_t len;
	void *token;
	int rc;

	memset(mm.req, 0, sizeof(*mm.req));
	mm.req->type = type;
	mm.req->addr = addr;
	mm.req->nb_blocks = nb;
	memset(mm.resp, 0xff, sizeof(*mm.resp));
	vq_add(vq, b, 2, 0, mm.req);
	vq_kick(vq);
	while (!(rc = vq_get_used(vq, &token, &len))) {
		if (clock_now() > deadline)
			return NO_RESP;
		virtio_idle(&mm.vd);
	}
	if (rc < 0 || token != mm.req || len < sizeof(*mm.resp))
		return NO_RESP;
	if (state)
		*state = mm.resp->state;
	return mm.resp->type;
}

static uint64_t block_addr(uint64_t i)
{
	return mm.addr + i * mm.block;
}

/* The device answered what no driver should hear: it is left alone. */
static bool broke(const char *what, uint64_t addr, uint16_t resp)
{
	report(false, "mem", "request=%s addr=0x%lx resp=%u", what, addr, resp);
	mm.broken = true;
	return false;
}

/* The lowest unplugged block plugged and given to the allocator, its
 * pages touched as a user would. false when the host refuses (NACK:
 * its request went down meanwhile) or none is left. */
static bool plug_one(void)
{
	uint64_t i = 0, a;
	uint16_t r;

	while (i < mm.nblocks && mm.state[i])
		i++;
	if (i == mm.nblocks)
		return false;
	a = block_addr(i);
	r = request(REQ_PLUG, a, 1, 0);
	if (r == RESP_NACK)
		return false;
	if (r != RESP_ACK)
		return broke("plug", a, r);
	for (uint64_t p = 0; p < mm.block; p += PAGE)
		*(volatile uint64_t *)(a + p) = 0;
	buddy_add(a, mm.block);
	mm.state[i] = 1;
	mm.plugged += mm.block;
	return true;
}

/* Ring 3 (native here): block i out of the allocator, its movable pages
 * copied elsewhere. */
static long u_remove(long i)
{
	return buddy_remove(block_addr(i), mm.block, &mm.migrated);
}

/* The highest plugged block the allocator can give up, unplugged. */
static bool unplug_one(void)
{
	uint64_t i = mm.nblocks, a;
	uint16_t r;

	while (i--) {
		a = block_addr(i);
		if (!mm.state[i] || !run_user(u_remove, i))
			continue;
		r = request(REQ_UNPLUG, a, 1, 0);
		if (r != RESP_ACK) {
			buddy_add(a, mm.block);
			return r == RESP_BUSY ? false : broke("unplug", a, r);
		}
		mm.state[i] = 0;
		mm.plugged -= mm.block;
		return true;
	}
	return false;
}

/* Moves to the host's requested size as far as it can; one line, and
 * the device's plugged_size checked against what the driver holds. */
void mem_follow(void)
{
	uint64_t t0 = clock_now(), unplugged = 0, dev;

	mm.migrated = 0;
	mm.cfg_seen = virtio_config_irqs(&mm.vd);
	mm.requested = cfg64(CFG_REQUESTED_SIZE);
	while (!mm.broken && mm.plugged < mm.requested && plug_one())
		;
	while (!mm.broken && mm.plugged > mm.requested && unplug_one())
		unplugged++;
	if (mm.broken)
		return;
	dev = cfg64(CFG_PLUGGED_SIZE);
	if (dev != mm.plugged)
		report(false, "mem-plugged", "device=%lu driver=%lu", dev,
		       mm.plugged);
	print("tg: mem reached requested=%lu plugged=%lu total=%lu free=%lu "
	      "migrated=%lu ns=%lu\n", mm.requested, mm.plugged,
	      buddy_total_bytes(), buddy_free_bytes(), mm.migrated,
	      clock_to_ns(clock_now() - t0));
	if (unplugged)
		usemem_verify();
}

/* The requests no driver may send, each with the answer virtio 1.2
 * gives it; the host's requested size must be at least two blocks and
 * nothing plugged. Ends as it began. */
static void mem_evil(void)
{
	const uint64_t a = mm.addr, b = mm.block, end = a + mm.region;
	const struct {
		uint16_t type;
		uint64_t addr;
		uint16_t nb, resp;
	} seq[] = {
		{ REQ_PLUG, a, 1, RESP_ACK },
		{ REQ_PLUG, a, 1, RESP_ERROR },		/* plugged already */
		{ REQ_PLUG, a - b, 2, RESP_ERROR },	/* starts below */
		{ REQ_PLUG, end, 1, RESP_ERROR },	/* past the end */
		{ REQ_PLUG, end - b, 2, RESP_ERROR },	/* runs past it */
		{ REQ_PLUG, a + PAGE, 1, RESP_ERROR },	/* misaligned */
		{ REQ_PLUG, a + b, 0, RESP_ERROR },	/* no blocks */
		{ REQ_PLUG, ~0ULL - b + 1, 0xffff, RESP_ERROR },  /* wraps */
		{ REQ_PLUG, a + b, (uint16_t)(mm.requested / b), RESP_NACK },
		{ REQ_UNPLUG, a + b, 1, RESP_ERROR },	/* not plugged */
		{ REQ_STATE, a - b, 1, RESP_ERROR },
		{ 9, a, 1, RESP_ERROR },		/* no such type */
		{ REQ_UNPLUG, a, 1, RESP_ACK },
	};
	const unsigned n = sizeof(seq) / sizeof(seq[0]);
	unsigned bad = 0, first = 0;
	uint16_t r;

	for (unsigned i = 0; i < n; i++) {
		r = request(seq[i].type, seq[i].addr, seq[i].nb, 0);
		if (r != seq[i].resp && !bad++)
			first = i;
	}
	if (bad)
		report(false, "mem-evil", "requests=%u bad=%u first=%u", n,
		       bad, first);
	else
		report(true, "mem-evil", "requests=%u refused=%u", n, n - 2);
}

/* Probes the device, reads its geometry and maps the region (not
 * touched until plugged). */
static bool mem_probe(const char **why)
{
	mm.vd.may_poll = true;
	if (!virtio_probe(&mm.vd, mm.cand, 1, why) ||
	    !virtio_start(&mm.vd, 1ULL << VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE,
			  why))
		return false;
	mm.block = cfg64(CFG_BLOCK_SIZE);
	mm.addr = cfg64(CFG_ADDR);
	mm.region = cfg64(CFG_REGION_SIZE);
	if (!mm.block || mm.block % HUGE || mm.addr % mm.block ||
	    !mm.region || mm.region % mm.block) {
		*why = "bad-geometry";
		return false;
	}
	return true;
}

/* A restarted driver finds what the last one plugged, reported in
 * plugged_size and STATE, and clears it with UNPLUG_ALL. */
static void mem_restart(void)
{
	const char *why = "no-ack";
	uint16_t state = 0xffff;
	uint64_t seen;
	bool ok;

	if (request(REQ_PLUG, mm.addr, 1, 0) != RESP_ACK ||
	    !virtio_reset(&mm.vd) || !mem_probe(&why)) {
		report(false, "mem-restart", "reason=%s", why);
		return;
	}
	seen = cfg64(CFG_PLUGGED_SIZE);
	ok = seen == mm.block &&
	     request(REQ_STATE, mm.addr, 1, &state) == RESP_ACK &&
	     state == STATE_PLUGGED &&
	     request(REQ_UNPLUG_ALL, 0, 0, 0) == RESP_ACK &&
	     cfg64(CFG_PLUGGED_SIZE) == 0 &&
	     request(REQ_STATE, mm.addr, mm.region / mm.block, &state) ==
		     RESP_ACK && state == STATE_UNPLUGGED;
	report(ok, "mem-restart", "plugged=%lu state=%u", seen, state);
}

bool run_mem(void)
{
	const char *why = 0;

	for (unsigned i = 0; i < virtio_ncands && !mm.cand; i++)
		if (virtio_cands[i].id == VIRTIO_ID_MEM)
			mm.cand = &virtio_cands[i];
	if (!mm.cand) {
		report(false, "mem", "reason=no-device");
		return false;
	}
	mm.req = alloc_pages(1);
	mm.resp = (struct mem_resp *)(mm.req + 1);
	irq_cpu_enable();
	watchdog_start();
	if (!mem_probe(&why)) {
		report(false, "mem-init", "%s reason=%s", mm.cand->where, why);
		return false;
	}
	mm.nblocks = mm.region / mm.block;
	mm.state = alloc_pages(ALIGN_UP(mm.nblocks, PAGE) / PAGE);
	memset(mm.state, 0, mm.nblocks);
	map_ram(mm.addr, mm.region);
	print("tg: mem-dev %s features=0x%lx irq=%s addr=0x%lx region=%lu "
	      "block=%lu plugged=%lu\n", mm.cand->where, mm.vd.features,
	      virtio_irq_mode(&mm.vd), mm.addr, mm.region, mm.block,
	      cfg64(CFG_PLUGGED_SIZE));
	if (cfg64(CFG_PLUGGED_SIZE) &&
	    request(REQ_UNPLUG_ALL, 0, 0, 0) != RESP_ACK)
		return broke("unplug-all", 0, 0);
	if (params.mem_evil) {
		mm.requested = cfg64(CFG_REQUESTED_SIZE);
		mem_evil();
		mem_restart();
	}
	return !mm.broken;
}

uint64_t mem_region_end(void)
{
	return mm.cand && mm.region ? mm.addr + mm.region : 0;
}

/* Follows the host's requested size for ever, sleeping in between. */
void mem_serve(void)
{
	while (!mm.broken) {
		if (mm.cfg_seen != virtio_config_irqs(&mm.vd)) {
			mem_follow();
			continue;
		}
		virtio_idle(&mm.vd);
	}
	for (;;)
		wait_irq();
}
