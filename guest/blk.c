/* virtio-blk driver: start-up and configuration, requests as descriptor
 * chains (header, data segments, status), completion and waiting.
 * blk_queue and blk_reap are unprivileged so that ring 3 can use them. */
#include "blk.h"
#include "guest.h"
#include "io.h"
#include "lib.h"

/* struct virtio_blk_config */
#define CFG_CAPACITY		0x00
#define CFG_SIZE_MAX		0x08
#define CFG_SEG_MAX		0x0c
#define CFG_NUM_QUEUES		0x22
#define CFG_MAX_DISCARD_SECTORS	0x24
#define CFG_MAX_DISCARD_SEG	0x28
#define CFG_DISCARD_ALIGN	0x2c
#define CFG_MAX_WZ_SECTORS	0x30
#define CFG_MAX_WZ_SEG		0x34

#define ODD_BYTES		100
#define TABLE_ENTRIES		(BLK_MAX_SEGS + 2)

struct blk_req *blk_reqs;
uint64_t blk_buf;
uint8_t *blk_page;

/* Request slots, their indirect tables, the small-payload page and the
 * data buffer (blk_buf stays 0 if no RAM is free for it). */
void blk_alloc(void)
{
	uint64_t tbytes = BLK_SLOTS * TABLE_ENTRIES * sizeof(struct vring_desc);
	uint64_t rbytes = BLK_SLOTS * sizeof(struct blk_req);
	struct vring_desc *t;

	blk_reqs = alloc_pages(ALIGN_UP(rbytes, 4096) / 4096);
	t = alloc_pages(ALIGN_UP(tbytes, 4096) / 4096);
	for (unsigned i = 0; i < BLK_SLOTS; i++)
		blk_reqs[i].table = t + i * TABLE_ENTRIES;
	blk_page = alloc_pages(1);
	blk_buf = free_ram(BLK_BUF_SIZE);
}

static uint32_t cfg32(struct blk_dev *b, unsigned off)
{
	return mmio_read32(b->vd.device + off);
}

/* Resets and starts the device, then reads its configuration, again if
 * the config generation moved meanwhile. */
bool blk_start(struct blk_dev *b, const char **why)
{
	const uint64_t want = 1ULL << VIRTIO_BLK_F_SIZE_MAX |
			      1ULL << VIRTIO_BLK_F_SEG_MAX |
			      1ULL << VIRTIO_BLK_F_RO |
			      1ULL << VIRTIO_BLK_F_FLUSH |
			      1ULL << VIRTIO_BLK_F_DISCARD |
			      1ULL << VIRTIO_BLK_F_WRITE_ZEROES;
	struct virtio_dev *d = &b->vd;
	uint32_t gen;

	b->inflight = 0;
	/* More than one queue only where rings were allocated for them. */
	if (!virtio_negotiate(d, want | (b->queues_max > 1 ?
					 1ULL << VIRTIO_BLK_F_MQ : 0), why))
		return false;
	d->nvq = 1;
	if (virtio_has(d, VIRTIO_BLK_F_MQ))
		d->nvq = MAX(MIN(mmio_read16(d->device + CFG_NUM_QUEUES),
				 b->queues_max), 1);
	b->queues = d->nvq;
	if (!virtio_finish(d, why))
		return false;
	do {
		gen = virtio_cfg_generation(d);
		b->capacity = cfg32(b, CFG_CAPACITY) |
			      (uint64_t)cfg32(b, CFG_CAPACITY + 4) << 32;
		b->size_max = virtio_has(d, VIRTIO_BLK_F_SIZE_MAX) ?
			      cfg32(b, CFG_SIZE_MAX) : 0;
		b->seg_max = virtio_has(d, VIRTIO_BLK_F_SEG_MAX) ?
			     cfg32(b, CFG_SEG_MAX) : 0;
		if (virtio_has(d, VIRTIO_BLK_F_DISCARD)) {
			b->discard_sectors = cfg32(b, CFG_MAX_DISCARD_SECTORS);
			b->discard_segs = cfg32(b, CFG_MAX_DISCARD_SEG);
			b->discard_align = cfg32(b, CFG_DISCARD_ALIGN);
		}
		if (virtio_has(d, VIRTIO_BLK_F_WRITE_ZEROES)) {
			b->wz_sectors = cfg32(b, CFG_MAX_WZ_SECTORS);
			b->wz_segs = cfg32(b, CFG_MAX_WZ_SEG);
		}
	} while (gen != virtio_cfg_generation(d));
	b->ro = virtio_has(d, VIRTIO_BLK_F_RO);
	return true;
}

/* Queues one request on vq without notifying: the header, len bytes at
 * buf in up to segs segments of whole sectors (a first one of 100 bytes
 * with BLK_ODD), within seg_max and size_max, the status byte. Returns 0
 * or BLK_ERR_FULL / BLK_ERR_SEGS. Counts nothing in flight: the caller
 * does, as only it knows which CPU drives vq. */
int blk_queue_on(struct blk_dev *b, struct virtq *vq, struct blk_req *r,
		 uint32_t type, uint64_t sector, uint64_t buf, uint32_t len,
		 unsigned segs, unsigned flags)
{
	bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
	bool indirect = flags & BLK_INDIRECT &&
			virtio_has(&b->vd, VIRTIO_F_INDIRECT_DESC);
	unsigned n = 0, limit = BLK_MAX_SEGS;
	bool odd;
	struct vq_buf v[TABLE_ENTRIES];
	uint32_t seg;

	if (b->seg_max)
		limit = MIN(limit, b->seg_max);
	odd = flags & BLK_ODD && limit > 1 && len > ODD_BYTES;
	segs = MAX(MIN(segs, odd ? limit - 1 : limit), 1);
	seg = ALIGN_UP(((odd ? len - ODD_BYTES : len) + segs - 1) / segs,
		       SECTOR);
	if (b->size_max && seg > b->size_max)
		seg = b->size_max >= SECTOR ? ALIGN_DOWN(b->size_max, SECTOR)
					    : b->size_max;
	r->hdr.type = type;
	r->hdr.reserved = 0;
	r->hdr.sector = sector;
	r->status = 0xff;
	v[n++] = (struct vq_buf){ (uint64_t)&r->hdr, sizeof(r->hdr), false };
	while (len) {
		uint32_t l = odd && n == 1 ? ODD_BYTES : MIN(seg, len);

		if (n > limit)
			return BLK_ERR_SEGS;
		v[n++] = (struct vq_buf){ buf, l, in };
		buf += l;
		len -= l;
	}
	v[n++] = (struct vq_buf){ (uint64_t)&r->status, 1, true };
	if (vq_add(vq, v, n, indirect ? r->table : 0, r) < 0)
		return BLK_ERR_FULL;
	return 0;
}

/* The same on queue 0, counted in b->inflight. */
int blk_queue(struct blk_dev *b, struct blk_req *r, uint32_t type,
	      uint64_t sector, uint64_t buf, uint32_t len, unsigned segs,
	      unsigned flags)
{
	int rc = blk_queue_on(b, &b->vd.vq[0], r, type, sector, buf, len,
			      segs, flags);

	if (!rc)
		b->inflight++;
	return rc;
}

/* Completes what the device has used: the count, or BLK_ERR_BAD_ID. */
int blk_reap(struct blk_dev *b)
{
	void *token;
	uint32_t len;
	int rc, n = 0;

	while ((rc = vq_get_used(&b->vd.vq[0], &token, &len)) > 0) {
		struct blk_req *r = token;

		r->written = len;
		b->inflight--;
		n++;
	}
	return rc < 0 ? BLK_ERR_BAD_ID : n;
}

/* Publishes what is queued and sleeps until nothing is in flight.
 * Returns 0 or a BLK_ERR_*; the status the device reported for a config
 * interrupt or at the timeout decides between TIMEOUT and NEEDS_RESET. */
int blk_wait(struct blk_dev *b, uint64_t ms)
{
	uint64_t deadline = clock_deadline(ms);
	unsigned cfg_irqs = virtio_config_irqs(&b->vd);
	int rc;

	vq_kick(&b->vd.vq[0]);
	for (;;) {
		rc = blk_reap(b);
		if (rc < 0)
			return rc;
		if (!b->inflight)
			return 0;
		if (cfg_irqs != virtio_config_irqs(&b->vd) ||
		    clock_now() > deadline) {
			cfg_irqs = virtio_config_irqs(&b->vd);
			if (virtio_status(&b->vd) & VIRTIO_S_NEEDS_RESET)
				return BLK_ERR_NEEDS_RESET;
			if (clock_now() > deadline)
				return BLK_ERR_TIMEOUT;
		}
		virtio_idle(&b->vd);
	}
}

/* One request, waited for: its status byte or a BLK_ERR_*. */
int blk_io(struct blk_dev *b, uint32_t type, uint64_t sector, uint64_t buf,
	   uint32_t len, unsigned segs, unsigned flags)
{
	struct blk_req *r = &blk_reqs[0];
	int rc = blk_queue(b, r, type, sector, buf, len, segs, flags);

	if (!rc)
		rc = blk_wait(b, BLK_TIMEOUT_MS);
	return rc ? rc : r->status;
}

const char *blk_rc_name(int rc)
{
	switch (rc) {
	case VIRTIO_BLK_S_OK: return "ok";
	case VIRTIO_BLK_S_IOERR: return "ioerr";
	case VIRTIO_BLK_S_UNSUPP: return "unsupp";
	case 0xff: return "status-not-written";
	case BLK_ERR_FULL: return "queue-full";
	case BLK_ERR_SEGS: return "too-many-segments";
	case BLK_ERR_TIMEOUT: return "timeout";
	case BLK_ERR_BAD_ID: return "bad-used-id";
	case BLK_ERR_NEEDS_RESET: return "needs-reset";
	case BLK_ERR_USED_LEN: return "short-used-len";
	default: return "bad-status";
	}
}
