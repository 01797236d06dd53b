/* virtio-blk checks on every virtio-blk device, blk0, blk1... in the
 * order virtio_scan found them (docs/test-guest.md): identity and
 * configuration, reads against pattern A, write and flush (or the
 * refusal on a read-only disk), discard and write-zeroes, requests past
 * the end and of an unknown type, the queue interrupt. Data is filled
 * and verified in ring 3. */
#include "blk.h"
#include "guest.h"
#include "io.h"
#include "lib.h"

#define KIB			1024UL
#define MIB			(1024 * KIB)
#define BATCH			8	/* requests in flight in the checks */
#define MAX_IOS			192
#define RANDOM_BLOCKS		64
#define DZ_BYTES		(128 * KIB)
#define MIN_SECTORS		16
#define BOGUS_TYPE		0x7f00	/* no virtio-blk request type */
#define QUIET_SLEEPS		3	/* watchdog ticks with no interrupt */
#define LCG_MUL			6364136223846793005ULL
#define LCG_ADD			1442695040888963407ULL
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

struct io {
	uint64_t sector, buf;
	uint32_t len;
	uint8_t segs, flags;
};

/* Request shapes, taken in turn: sizes, multi-segment chains, indirect
 * tables, a first segment that is not a whole sector. */
static const struct {
	uint32_t len;
	uint8_t segs, flags;
} shapes[] = {
	{ 512, 1, 0 },
	{ 4096, 1, 0 },
	{ 8192, 2, 0 },
	{ 65536, 16, 0 },
	{ 131072, 32, BLK_INDIRECT },
	{ 4096, 2, BLK_ODD },
	{ 61440, 3, BLK_INDIRECT | BLK_ODD },
	{ 262144, 1, 0 },
	{ 1536, 3, BLK_INDIRECT },
};

__attribute__((section(".noinit"))) static struct io ios[MAX_IOS];
__attribute__((section(".noinit"))) static struct blk_dev devs[BLK_MAX_DEVS];
static unsigned nios;

static void result(struct blk_dev *b, bool ok, const char *check,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void result(struct blk_dev *b, bool ok, const char *check,
		   const char *fmt, ...)
{
	va_list ap;

	print("tg: %s blk%u-%s ", ok ? "ok" : "FAIL", b->num, check);
	va_start(ap, fmt);
	vprint(fmt, ap);
	va_end(ap);
	print("\n");
	count_result(ok);
}

/* A request that ended without a status byte leaves the queue in an
 * unknown state: the next check gets a freshly started device. */
static void recover(struct blk_dev *b, int rc)
{
	const char *why;

	if (rc < 0 && !blk_start(b, &why))
		result(b, false, "restart", "reason=%s", why);
}

static void fill(uint64_t buf, uint64_t len, uint64_t off, uint64_t key)
{
	pat_begin(PAT_FILL, key);
	pat_add(buf, len, off);
	pat_run();
}

/* Adds ios for len bytes from sector into buf, shapes from number first
 * on. */
static void add_shaped(uint64_t sector, uint64_t buf, uint64_t len,
		       unsigned first)
{
	for (uint64_t done = 0, k = first; done < len && nios < MAX_IOS; k++) {
		unsigned s = k % ARRAY_SIZE(shapes);
		uint32_t l = MIN(shapes[s].len, len - done);

		ios[nios++] = (struct io){ sector + done / SECTOR, buf + done,
					   l, shapes[s].segs, shapes[s].flags };
		done += l;
	}
}

static uint64_t ios_bytes(void)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < nios; i++)
		n += ios[i].len;
	return n;
}

/* Runs the ios, BATCH in flight at a time; each must succeed and, for a
 * read, have a used length that covers the data and the status byte.
 * Otherwise *rc is what came instead, *at the io's index. */
static bool run_ios(struct blk_dev *b, uint32_t type, int *rc, unsigned *at)
{
	for (unsigned i = 0; i < nios;) {
		unsigned base = i, k = 0;

		while (i < nios && k < BATCH) {
			const struct io *o = &ios[i];

			*rc = blk_queue(b, &blk_reqs[k], type, o->sector,
					o->buf, o->len, o->segs, o->flags);
			if (*rc == BLK_ERR_FULL && k)
				break;
			*at = i;
			if (*rc)
				return false;
			i++;
			k++;
		}
		*at = base;
		*rc = blk_wait(b, BLK_TIMEOUT_MS);
		if (*rc)
			return false;
		for (unsigned j = 0; j < k; j++) {
			*at = base + j;
			*rc = blk_reqs[j].status;
			if (*rc != VIRTIO_BLK_S_OK)
				return false;
			if (type == VIRTIO_BLK_T_IN &&
			    blk_reqs[j].written < ios[base + j].len + 1) {
				*rc = BLK_ERR_USED_LEN;
				return false;
			}
		}
	}
	return true;
}

static void print_info(struct blk_dev *b)
{
	int rc = blk_io(b, VIRTIO_BLK_T_GET_ID, 0, (uint64_t)blk_page,
			BLK_ID_BYTES, 1, 0);
	char id[BLK_ID_BYTES + 1];
	unsigned n = 0;

	/* Not NUL-terminated when all 20 bytes are used; spaces would
	 * split the key. */
	for (; rc == VIRTIO_BLK_S_OK && n < BLK_ID_BYTES && blk_page[n]; n++)
		id[n] = blk_page[n] > ' ' && blk_page[n] < 0x7f ? blk_page[n]
								: '_';
	id[n] = 0;
	print("tg: blk dev=%u %s capacity=%lu ro=%u features=0x%lx "
	      "seg_max=%u size_max=%u queue_size=%u queues=%u serial=%s\n",
	      b->num, b->vd.cand->where, b->capacity, b->ro, b->vd.features,
	      b->seg_max, b->size_max, b->vd.vq[0].size, b->queues, id);
	if (rc != VIRTIO_BLK_S_OK && rc != VIRTIO_BLK_S_UNSUPP)
		result(b, false, "id", "got=%s", blk_rc_name(rc));
	recover(b, rc);
}

/* The first and the last MiB in varied shapes, and 64 random 4 KiB
 * blocks (8 in flight), against pattern A. */
static void check_read(struct blk_dev *b)
{
	uint64_t bytes = b->capacity * SECTOR, n = MIN(MIB, bytes);
	uint64_t blocks = bytes / 4096, x = 0x2545f4914f6cdd1dULL;
	uint64_t rbuf = blk_buf + 2 * MIB;
	unsigned at;
	int rc;

	fill(blk_buf, 2 * MIB + RANDOM_BLOCKS * 4096, 0, PAT_POISON);
	nios = 0;
	add_shaped(0, blk_buf, n, 0);
	add_shaped((bytes - n) / SECTOR, blk_buf + MIB, n, 4);
	pat_begin(PAT_CHECK, PATTERN_A);
	pat_add(blk_buf, n, 0);
	pat_add(blk_buf + MIB, n, bytes - n);
	for (unsigned i = 0; i < RANDOM_BLOCKS && blocks; i++) {
		uint64_t blk;

		x = x * LCG_MUL + LCG_ADD;
		blk = (unsigned __int128)x * blocks >> 64;
		ios[nios++] = (struct io){ blk * 8, rbuf + i * 4096, 4096,
					   i % 3 + 1,
					   i & 1 ? BLK_INDIRECT : 0 };
		pat_add(rbuf + i * 4096, 4096, blk * 4096);
	}
	if (!run_ios(b, VIRTIO_BLK_T_IN, &rc, &at)) {
		result(b, false, "read", "bytes=%lu requests=%u got=%s "
		       "sector=%lu", ios_bytes(), nios, blk_rc_name(rc),
		       ios[at].sector);
		recover(b, rc);
	} else if (!pat_run()) {
		result(b, false, "read", "bytes=%lu requests=%u "
		       "reason=mismatch offset=0x%lx found=0x%lx", ios_bytes(),
		       nios, pat.bad_off, pat.found);
	} else {
		result(b, true, "read", "bytes=%lu requests=%u", ios_bytes(),
		       nios);
	}
}

/* Pattern B over len bytes from sector, read back, then a flush. */
static void check_write(struct blk_dev *b, uint64_t sector, uint64_t len)
{
	uint64_t off = sector * SECTOR, rbuf = blk_buf + 2 * MIB;
	unsigned at;
	int rc;

	fill(blk_buf, len, off, PATTERN_B);
	fill(rbuf, len, 0, PAT_POISON);
	nios = 0;
	add_shaped(sector, blk_buf, len, 2);
	if (!run_ios(b, VIRTIO_BLK_T_OUT, &rc, &at)) {
		result(b, false, "write", "bytes=%lu got=%s sector=%lu", len,
		       blk_rc_name(rc), ios[at].sector);
		recover(b, rc);
		return;
	}
	nios = 0;
	add_shaped(sector, rbuf, len, 6);
	pat_begin(PAT_CHECK, PATTERN_B);
	pat_add(rbuf, len, off);
	if (!run_ios(b, VIRTIO_BLK_T_IN, &rc, &at)) {
		result(b, false, "write", "bytes=%lu reason=read-back got=%s "
		       "sector=%lu", len, blk_rc_name(rc), ios[at].sector);
		recover(b, rc);
		return;
	}
	if (!pat_run()) {
		result(b, false, "write", "bytes=%lu reason=mismatch "
		       "offset=0x%lx found=0x%lx", len, pat.bad_off, pat.found);
		return;
	}
	result(b, true, "write", "bytes=%lu", len);
	if (!virtio_has(&b->vd, VIRTIO_BLK_F_FLUSH)) {
		print("tg: blk%u-flush skipped reason=not-offered\n", b->num);
		return;
	}
	rc = blk_io(b, VIRTIO_BLK_T_FLUSH, 0, 0, 0, 1, 0);
	result(b, rc == VIRTIO_BLK_S_OK, "flush", "got=%s", blk_rc_name(rc));
	recover(b, rc);
}

struct dz_seg {
	uint64_t sector;
	uint32_t num_sectors;
	uint32_t flags;
};

/* Discard or write-zeroes of nsect sectors from sector within the
 * device's limits: segments of at most max_sectors, at most max_segs
 * of them per request. Segments are half the range or less, so that
 * requests carry several when the device allows. */
static int dz_run(struct blk_dev *b, uint32_t type, uint64_t sector,
		  uint32_t nsect, uint32_t max_sectors, uint32_t max_segs,
		  uint32_t align)
{
	struct dz_seg *seg = (struct dz_seg *)blk_page;
	uint32_t chunk = nsect / 2;
	int rc;

	if (max_sectors && chunk > max_sectors)
		chunk = max_sectors;
	if (align > 1)
		chunk = MAX(chunk - chunk % align, align);
	max_segs = MIN(MAX(max_segs, 1), 4096 / sizeof(*seg));
	while (nsect) {
		unsigned n = 0;

		for (; n < max_segs && nsect; n++) {
			uint32_t l = MIN(chunk, nsect);

			seg[n].sector = sector;
			seg[n].num_sectors = l;
			seg[n].flags = 0;	/* no unmap */
			sector += l;
			nsect -= l;
		}
		rc = blk_io(b, type, 0, (uint64_t)seg, n * sizeof(*seg), 1, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* Reads DZ_BYTES from sector: the request's outcome; *zero tells
 * whether it read as zeros. */
static int read_zeros(struct blk_dev *b, uint64_t sector, bool *zero)
{
	int rc;

	fill(blk_buf, DZ_BYTES, 0, PAT_POISON);
	rc = blk_io(b, VIRTIO_BLK_T_IN, sector, blk_buf, DZ_BYTES, 4, 0);
	pat_begin(PAT_CHECK_ZERO, 0);
	pat_add(blk_buf, DZ_BYTES, sector * SECTOR);
	*zero = !rc && pat_run();
	return rc;
}

/* Discard of DZ_BYTES from sector (zeros afterwards are reported, not
 * required), write-zeroes of the DZ_BYTES after it. */
static void check_discard_wz(struct blk_dev *b, uint64_t sector)
{
	uint32_t align = MAX(b->discard_align, 1), n = DZ_BYTES / SECTOR;
	uint64_t s = (sector + align - 1) / align * align;
	bool zero;
	int rc;

	if (sector + 2 * n > b->capacity)
		return;
	if (virtio_has(&b->vd, VIRTIO_BLK_F_DISCARD)) {
		rc = dz_run(b, VIRTIO_BLK_T_DISCARD, s, n - (s - sector),
			    b->discard_sectors, b->discard_segs, align);
		if (!rc)
			rc = read_zeros(b, sector, &zero);
		if (rc)
			result(b, false, "discard", "bytes=%lu got=%s",
			       DZ_BYTES, blk_rc_name(rc));
		else
			result(b, true, "discard", "bytes=%lu zeroed=%u",
			       DZ_BYTES, zero);
		recover(b, rc);
	}
	if (virtio_has(&b->vd, VIRTIO_BLK_F_WRITE_ZEROES)) {
		rc = dz_run(b, VIRTIO_BLK_T_WRITE_ZEROES, sector + n, n,
			    b->wz_sectors, b->wz_segs, 1);
		if (!rc)
			rc = read_zeros(b, sector + n, &zero);
		if (rc)
			result(b, false, "write-zeroes", "bytes=%lu got=%s",
			       DZ_BYTES, blk_rc_name(rc));
		else if (!zero)
			result(b, false, "write-zeroes", "bytes=%lu "
			       "reason=not-zero offset=0x%lx found=0x%lx",
			       DZ_BYTES, pat.bad_off, pat.found);
		else
			result(b, true, "write-zeroes", "bytes=%lu", DZ_BYTES);
		recover(b, rc);
	}
}

/* A write to a read-only disk must fail with IOERR and change nothing. */
static void check_ro(struct blk_dev *b)
{
	uint64_t sector = b->capacity / 2, rbuf = blk_buf + MIB;
	int rc;

	fill(blk_buf, 4096, sector * SECTOR, PATTERN_B);
	rc = blk_io(b, VIRTIO_BLK_T_OUT, sector, blk_buf, 4096, 1, 0);
	if (rc != VIRTIO_BLK_S_IOERR) {
		result(b, false, "ro", "got=%s", blk_rc_name(rc));
		recover(b, rc);
		return;
	}
	fill(rbuf, 4096, 0, PAT_POISON);
	rc = blk_io(b, VIRTIO_BLK_T_IN, sector, rbuf, 4096, 1, 0);
	pat_begin(PAT_CHECK, PATTERN_A);
	pat_add(rbuf, 4096, sector * SECTOR);
	if (rc)
		result(b, false, "ro", "reason=read-back got=%s",
		       blk_rc_name(rc));
	else if (!pat_run())
		result(b, false, "ro", "reason=changed offset=0x%lx "
		       "found=0x%lx", pat.bad_off, pat.found);
	else
		result(b, true, "ro", "sector=%lu", sector);
	recover(b, rc);
}

/* Reads at and across the end and, on a writable disk, a write across
 * it with pattern B, all IOERR; then the last sector must still hold
 * pattern A (nothing of the write landed). */
static void check_beyond_end(struct blk_dev *b)
{
	static const struct {
		uint32_t type;
		uint64_t back;		/* sectors before the end */
		uint32_t len;
	} reqs[] = {
		{ VIRTIO_BLK_T_IN, 0, SECTOR },
		{ VIRTIO_BLK_T_IN, 1, 2 * SECTOR },
		{ VIRTIO_BLK_T_OUT, 1, 2 * SECTOR },
	};
	uint64_t last = b->capacity - 1, rbuf = blk_buf + MIB;
	unsigned n = b->ro ? 2 : 3;
	int rc;

	fill(blk_buf, 2 * SECTOR, last * SECTOR, PATTERN_B);
	for (unsigned i = 0; i < n; i++) {
		uint64_t sector = b->capacity - reqs[i].back;

		rc = blk_io(b, reqs[i].type, sector,
			    reqs[i].type == VIRTIO_BLK_T_IN ? rbuf : blk_buf,
			    reqs[i].len, 1, 0);
		if (rc != VIRTIO_BLK_S_IOERR) {
			result(b, false, "beyond-end", "sector=%lu len=%u "
			       "write=%u got=%s", sector, reqs[i].len,
			       reqs[i].type, blk_rc_name(rc));
			recover(b, rc);
			return;
		}
	}
	fill(rbuf, SECTOR, 0, PAT_POISON);
	rc = blk_io(b, VIRTIO_BLK_T_IN, last, rbuf, SECTOR, 1, 0);
	pat_begin(PAT_CHECK, PATTERN_A);
	pat_add(rbuf, SECTOR, last * SECTOR);
	if (rc)
		result(b, false, "beyond-end", "reason=last-sector got=%s",
		       blk_rc_name(rc));
	else if (!pat_run())
		result(b, false, "beyond-end", "reason=last-sector-changed "
		       "offset=0x%lx found=0x%lx", pat.bad_off, pat.found);
	else
		result(b, true, "beyond-end", "requests=%u", n);
	recover(b, rc);
}

static void check_unsupp(struct blk_dev *b)
{
	int rc = blk_io(b, BOGUS_TYPE, 0, 0, 0, 1, 0);

	result(b, rc == VIRTIO_BLK_S_UNSUPP, "unsupp", "type=0x%x got=%s",
	       BOGUS_TYPE, blk_rc_name(rc));
	recover(b, rc);
}

/* A completion raises the queue's interrupt (its MSI-X vector, or on
 * virtio-mmio the device's line, whose status says "used buffer"), and
 * the device is not asking for a reset. The other checks may find their
 * completions before they sleep, with interrupts still off; this one
 * takes what is pending first (hlt delivers a pending interrupt, or the
 * watchdog tick ends it), asks for an interrupt before the request and
 * sleeps until it comes or the timeout. Once taken (and on a wired
 * line acknowledged), the interrupt must not come again: a line left
 * high would wake the next sleeps at once, each counted (later=),
 * where only the watchdog tick should end them. Reported as blkN-msix
 * or, for a wired line, blkN-irq. */
static void check_irq(struct blk_dev *b)
{
	const char *check = b->vd.wired ? "irq" : "msix";
	unsigned before, q, later, vec = VEC_VIRTIO_BASE + 2 * b->vd.slot;
	char where[VIRTIO_WHERE_LEN];
	uint64_t deadline;
	uint8_t st;
	int rc;

	wait_irq();
	before = virtio_queue_irqs(&b->vd);
	vq_arm(&b->vd.vq[0]);
	rc = blk_queue(b, &blk_reqs[0], VIRTIO_BLK_T_IN, 0, blk_buf, SECTOR,
		       1, 0);
	if (!rc)
		rc = blk_wait(b, BLK_TIMEOUT_MS);
	deadline = clock_deadline(BLK_TIMEOUT_MS);
	while (!rc && virtio_queue_irqs(&b->vd) == before &&
	       clock_now() < deadline)
		wait_irq();
	q = virtio_queue_irqs(&b->vd);
	for (unsigned i = 0; i < QUIET_SLEEPS && q != before; i++)
		wait_irq();
	later = virtio_queue_irqs(&b->vd) - q;
	st = virtio_status(&b->vd);
	if (b->vd.wired)
		sprint(where, sizeof(where), "gsi=%u vector=0x%x",
		       b->vd.cand->gsi, vec + 1);
	else
		sprint(where, sizeof(where), "vectors=0x%x,0x%x", vec,
		       vec + 1);
	if (rc)
		result(b, false, check, "got=%s", blk_rc_name(rc));
	else
		result(b, q != before && !later &&
		       !(st & VIRTIO_S_NEEDS_RESET), check,
		       "%s queue_irqs=%u later=%u config_irqs=%u status=0x%x%s",
		       where, q, later, virtio_config_irqs(&b->vd), st,
		       q == before ? " reason=no-interrupt" :
		       later ? " reason=not-lowered" :
		       st & VIRTIO_S_NEEDS_RESET ? " reason=needs-reset" : "");
	recover(b, rc);
}

static void blk_checks(struct blk_dev *b)
{
	uint64_t wsec = b->capacity / 2;
	uint64_t wlen = MIN(MIB, (b->capacity - wsec) * SECTOR);

	if (b->capacity < MIN_SECTORS) {
		result(b, false, "size", "capacity=%lu reason=too-small",
		       b->capacity);
		return;
	}
	check_read(b);
	/* Before anything is written, so the last sector is pattern A. */
	check_beyond_end(b);
	if (b->ro) {
		check_ro(b);
	} else {
		check_write(b, wsec, wlen);
		check_discard_wz(b, wsec + wlen / SECTOR);
	}
	check_unsupp(b);
	check_irq(b);
}

void run_blk(void)
{
	unsigned n = 0, usable = 0;

	blk_alloc();
	if (!blk_buf) {
		report(false, "blk", "reason=no-free-ram");
		return;
	}
	watchdog_start();
	for (unsigned i = 0; i < virtio_ncands; i++) {
		const struct virtio_cand *c = &virtio_cands[i];
		struct blk_dev *b = &devs[n];
		const char *why;

		if (c->id != VIRTIO_ID_BLK)
			continue;
		if (n == BLK_MAX_DEVS) {
			print("tg: blk %s skipped reason=too-many\n",
			      c->where);
			continue;
		}
		memset(b, 0, sizeof(*b));
		b->num = n++;
		/* blkbench_queues=N: blk0's other rings too. */
		b->queues_max = b->num ? 1 : MIN(params.blkbench_queues,
						 VIRTIO_MAX_QUEUES);
		if (!virtio_probe(&b->vd, c, b->queues_max, &why) ||
		    !blk_start(b, &why)) {
			result(b, false, "init", "%s reason=%s", c->where,
			       why);
			continue;
		}
		usable |= 1u << b->num;
		print_info(b);
		if (params.blk)
			blk_checks(b);
		if (params.blk_verify)
			blk_verify(b);
	}
	if (!n)
		report(false, "blk", "reason=no-device");
	if (params.blkbench && usable & 1)
		blk_bench(&devs[0]);
	if (params.blk_evil && usable & 1)
		blk_evil(&devs[0]);
	if (params.blk_stream && usable & 1)
		blk_stream(&devs[0]);
	/* Quiet devices for whatever runs next. */
	for (unsigned i = 0; i < n; i++)
		if (usable >> i & 1)
			virtio_reset(&devs[i].vd);
	watchdog_stop();
}
