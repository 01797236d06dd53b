/* blk_evil on blk0: malformed requests, one case at a time, each on a
 * freshly started device. The device must complete the request with
 * VIRTIO_BLK_S_IOERR, or set DEVICE_NEEDS_RESET and send a config
 * interrupt, within EVIL_MS; then a reset, a new start and a normal read
 * of sector 0 show that it still works (docs/test-guest.md). */
#include "blk.h"
#include "guest.h"
#include "io.h"
#include "lib.h"

#define EVIL_MS		10000
#define NO_RAM_ADDR	(1ULL << 40)

#define F_NEXT		VRING_DESC_F_NEXT
#define F_WRITE		VRING_DESC_F_WRITE
#define F_INDIRECT	VRING_DESC_F_INDIRECT

/* What a case builds with: a read of sector 0 (header, 512-byte buffer,
 * status) and two spare indirect tables. result is where an IOERR is
 * looked for: the request's last writable byte, as a device that makes
 * no assumption about the descriptor layout sees it. */
struct ctx {
	struct virtq *vq;
	struct vring_desc *d, *t1, *t2;
	uint64_t hdr, data, status, status2, result;
	uint16_t avail;		/* avail idx to publish */
};

static void put(struct vring_desc *d, uint64_t addr, uint32_t len,
		uint16_t flags, uint16_t next)
{
	d->addr = addr;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

/* A well-formed header, data, status chain in d[0..2]. */
static void chain(struct ctx *c, struct vring_desc *d)
{
	put(&d[0], c->hdr, sizeof(struct blk_hdr), F_NEXT, 1);
	put(&d[1], c->data, SECTOR, F_WRITE | F_NEXT, 2);
	put(&d[2], c->status, 1, F_WRITE, 0);
}

static void desc_loop(struct ctx *c)
{
	chain(c, c->d);
	c->d[2].flags |= F_NEXT;
	c->d[2].next = 1;
}

/* Next links in an indirect table that come back round: longer than the
 * table and the queue. */
static void chain_too_long(struct ctx *c)
{
	chain(c, c->t1);
	put(&c->t1[2], c->data, SECTOR, F_WRITE | F_NEXT, 3);
	put(&c->t1[3], c->data, SECTOR, F_WRITE | F_NEXT, 1);
	put(&c->d[0], (uint64_t)c->t1, 4 * sizeof(struct vring_desc),
	    F_INDIRECT, 0);
}

static void addr_outside_ram(struct ctx *c)
{
	chain(c, c->d);
	c->d[1].addr = NO_RAM_ADDR;
}

/* Ends past 2^64, at 0x100: inside RAM once wrapped. */
static void len_wraps(struct ctx *c)
{
	chain(c, c->d);
	c->d[1].addr = -0x100ULL;
}

static void header_writable(struct ctx *c)
{
	chain(c, c->d);
	c->d[0].flags |= F_WRITE;
}

static void status_readonly(struct ctx *c)
{
	chain(c, c->d);
	c->d[2].flags = 0;
}

static void head_out_of_range(struct ctx *c)
{
	chain(c, c->d);
	c->vq->avail->ring[0] = c->vq->size;
}

/* More heads made available than the queue holds. */
static void avail_idx_jump(struct ctx *c)
{
	chain(c, c->d);
	for (unsigned i = 0; i < c->vq->size; i++)
		c->vq->avail->ring[i] = 0;
	c->avail = c->vq->size + 1;
}

static void indirect_with_next(struct ctx *c)
{
	chain(c, c->t1);
	put(&c->d[0], (uint64_t)c->t1, 3 * sizeof(struct vring_desc),
	    F_INDIRECT | F_NEXT, 1);
	put(&c->d[1], c->status2, 1, F_WRITE, 0);
}

static void nested_indirect(struct ctx *c)
{
	put(&c->t1[0], c->hdr, sizeof(struct blk_hdr), F_NEXT, 1);
	put(&c->t1[1], (uint64_t)c->t2, 2 * sizeof(struct vring_desc),
	    F_INDIRECT, 0);
	put(&c->t2[0], c->data, SECTOR, F_WRITE | F_NEXT, 1);
	put(&c->t2[1], c->status, 1, F_WRITE, 0);
	put(&c->d[0], (uint64_t)c->t1, 2 * sizeof(struct vring_desc),
	    F_INDIRECT, 0);
}

static void indirect_bad_len(struct ctx *c)
{
	chain(c, c->t1);
	put(&c->d[0], (uint64_t)c->t1, 3 * sizeof(struct vring_desc) - 8,
	    F_INDIRECT, 0);
}

static void indirect_zero_len(struct ctx *c)
{
	chain(c, c->t1);
	put(&c->d[0], (uint64_t)c->t1, 0, F_INDIRECT, 0);
}

static void buffer_in_mmio_hole(struct ctx *c)
{
	chain(c, c->d);
	c->d[1].addr = MMIO_HOLE_ADDR;
}

/* The last writable byte is then the data buffer's. */
static void zero_status_len(struct ctx *c)
{
	chain(c, c->d);
	c->d[2].len = 0;
	c->result = c->data + SECTOR - 1;
	*(volatile uint8_t *)c->result = 0xff;
}

static const struct {
	const char *name;
	bool indirect;		/* needs VIRTIO_F_INDIRECT_DESC */
	void (*build)(struct ctx *c);
} cases[] = {
	{ "evil-desc-loop", false, desc_loop },
	{ "evil-chain-too-long", true, chain_too_long },
	{ "evil-addr-outside-ram", false, addr_outside_ram },
	{ "evil-len-wraps", false, len_wraps },
	{ "evil-header-writable", false, header_writable },
	{ "evil-status-readonly", false, status_readonly },
	{ "evil-head-out-of-range", false, head_out_of_range },
	{ "evil-avail-idx-jump", false, avail_idx_jump },
	{ "evil-indirect-with-next", true, indirect_with_next },
	{ "evil-nested-indirect", true, nested_indirect },
	{ "evil-indirect-bad-len", true, indirect_bad_len },
	{ "evil-indirect-zero-len", true, indirect_zero_len },
	{ "evil-buffer-in-mmio-hole", false, buffer_in_mmio_hole },
	{ "evil-zero-status-len", false, zero_status_len },
};

enum outcome { IOERR, NEEDS_RESET, SUCCESS, NO_STATUS, OTHER_STATUS,
	       NO_CONFIG_IRQ, HANG };

static const char *const outcome_names[] = {
	[IOERR] = "ioerr", [NEEDS_RESET] = "needs_reset",
	[SUCCESS] = "success", [NO_STATUS] = "no-status",
	[OTHER_STATUS] = "other-status",
	[NO_CONFIG_IRQ] = "needs_reset-without-config-irq", [HANG] = "hang",
};

/* What the device made of the request: a used entry (and the status it
 * wrote) or DEVICE_NEEDS_RESET with its config interrupt. */
static enum outcome wait_outcome(struct blk_dev *b, const struct ctx *c,
				 unsigned cfg_irqs)
{
	uint64_t deadline = clock_deadline(EVIL_MS);
	bool needs_reset = false;

	for (;;) {
		if (!needs_reset && c->vq->used->idx != 0) {
			switch (*(volatile uint8_t *)c->result) {
			case VIRTIO_BLK_S_IOERR: return IOERR;
			case VIRTIO_BLK_S_OK: return SUCCESS;
			case 0xff: return NO_STATUS;
			default: return OTHER_STATUS;
			}
		}
		if (!needs_reset)
			needs_reset = virtio_status(&b->vd) &
				      VIRTIO_S_NEEDS_RESET;
		if (needs_reset && virtio_config_irqs(&b->vd) != cfg_irqs)
			return NEEDS_RESET;
		if (clock_now() > deadline)
			return needs_reset ? NO_CONFIG_IRQ : HANG;
		virtio_idle(&b->vd);
	}
}

/* Starts the device and reads len bytes from sector 0, checked against
 * pattern A: 0, or what went wrong. */
static const char *normal_read(struct blk_dev *b, uint32_t len)
{
	const char *why;
	int rc;

	if (!blk_start(b, &why))
		return why;
	pat_begin(PAT_FILL, PAT_POISON);
	pat_add(blk_buf, len, 0);
	pat_run();
	rc = blk_io(b, VIRTIO_BLK_T_IN, 0, blk_buf, len, 1, 0);
	if (rc)
		return blk_rc_name(rc);
	pat_begin(PAT_CHECK, PATTERN_A);
	pat_add(blk_buf, len, 0);
	return pat_run() ? 0 : "mismatch";
}

static void run_case(struct blk_dev *b, unsigned i)
{
	struct blk_req *r = &blk_reqs[0];
	struct ctx c = {
		.vq = &b->vd.vq[0], .d = b->vd.vq[0].desc,
		.t1 = blk_reqs[0].table, .t2 = blk_reqs[1].table,
		.hdr = (uint64_t)&r->hdr, .data = blk_buf + 64 * 1024,
		.status = (uint64_t)&r->status, .result = (uint64_t)&r->status,
		.status2 = (uint64_t)&blk_reqs[1].status, .avail = 1,
	};
	const char *why;
	enum outcome o;
	unsigned cfg_irqs;

	if (cases[i].indirect &&
	    !virtio_has(&b->vd, VIRTIO_F_INDIRECT_DESC)) {
		print("tg: %s skipped reason=no-indirect\n", cases[i].name);
		return;
	}
	if (!blk_start(b, &why)) {
		report(false, cases[i].name, "reason=start-failed:%s", why);
		return;
	}
	r->hdr = (struct blk_hdr){ VIRTIO_BLK_T_IN, 0, 0 };
	r->status = blk_reqs[1].status = 0xff;
	c.vq->avail->ring[0] = 0;
	cases[i].build(&c);
	cfg_irqs = virtio_config_irqs(&b->vd);
	wmb();
	c.vq->avail->idx = c.avail;
	mb();
	vq_notify(c.vq);
	o = wait_outcome(b, &c, cfg_irqs);
	why = normal_read(b, SECTOR);
	if (why)
		report(false, cases[i].name, "outcome=%s reason=no-recovery "
		       "got=%s", outcome_names[o], why);
	else
		report(o == IOERR || o == NEEDS_RESET, cases[i].name,
		       "outcome=%s", outcome_names[o]);
}

void blk_evil(struct blk_dev *b)
{
	const char *why;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(b, i);
	why = normal_read(b, 64 * 1024);
	report(!why, "evil-survived", "bytes=%u%s%s", 64 * 1024,
	       why ? " got=" : "", why ? why : "");
}
