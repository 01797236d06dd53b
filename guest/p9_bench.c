/* p9bench on a share the host prepared (bench/9p.py,
 * tests/integration/test_9p.py): seq.bin read from start to end in
 * reads of msize - 11 bytes; random 4 KiB reads of it at 4 KiB-aligned
 * offsets; then what a stat costs under Linux's v9fs, Twalk, Tgetattr
 * and Tclunk of each of meta/f0 .. meta/f<N-1>, and a create and
 * unlink, Twalk (a clone of new/), Tlcreate, Tclunk, then Tunlinkat,
 * of files in new/. One request at a time (queue depth 1: the client is
 * synchronous), timed with the guest's clock, no data compared; a line
 * of figures for each part. Each part's loop runs in user mode, polling
 * the used ring with the queue's interrupts off, as blkbench does: on
 * PVM hosts user mode is native and kernel mode emulated, and a loop
 * that halted for each reply would time the emulator's interrupt
 * delivery, not the VMM. With p9bench_wait, each part waits for a line
 * from the host first, so that the host can read its own CPU time where
 * the part starts. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "p9.h"

#define FID_ROOT		1
#define FID_FILE		2
#define FID_DIR			3
#define FID_NEW			4

#define RAND_LEN		4096
#define RAND_SEED		0x9e3779b97f4a7c15ULL
#define LCG_MUL			6364136223846793005ULL
#define LCG_ADD			1442695040888963407ULL
#define NAME_LEN		16
#define WAIT_MS			60000

/* One part: its loop, what the loop works on, its requests and when
 * it started. The loop returns P9_OK, an errno or P9_BROKEN. */
struct part {
	int (*loop)(struct p9_dev *p, struct part *t);
	struct p9_dev *p;
	uint64_t size;		/* of seq.bin */
	uint64_t n;		/* reads, files or creates */
	uint64_t reqs;
	uint64_t t0;
	int rc;
};

/* With p9bench_wait, once the host's line came (a failure if none did
 * within WAIT_MS: the part runs all the same). */
static void part_start(struct part *t, const char *name)
{
	char line[8];

	if (params.p9bench_wait) {
		print("tg: p9bench %s ready\n", name);
		if (serial_getline(line, sizeof(line), WAIT_MS) < 0)
			report(false, "p9bench-wait", "part=%s", name);
	}
	t->reqs = 0;
	t->t0 = clock_now();
}

static uint64_t part_ns(const struct part *t)
{
	return clock_to_ns(clock_now() - t->t0);
}

/* User mode. */
static long u_part(long arg)
{
	struct part *t = (struct part *)arg;

	t->rc = t->loop(t->p, t);
	return 0;
}

/* t's loop in user mode (p9_dev.user); a device it left dead is reset
 * here, so that it cannot answer into buffers used again. */
static int part_run(struct p9_dev *p, struct part *t)
{
	vq_disarm(&p->vd.vq[0]);
	p->user = true;
	t->p = p;
	run_user(u_part, (long)t);
	p->user = false;
	if (p->dead)
		virtio_reset(&p->vd);
	return t->rc;
}

/* Per second from count in ns, 0 for no time. */
static uint64_t rate(uint64_t count, uint64_t ns)
{
	return ns ? count * 1000000000 / ns : 0;
}

/* One name walked from fid to newfid; P9_BROKEN with why=not-found if
 * it was not. */
static int walk_name(struct p9_dev *p, uint32_t fid, uint32_t newfid,
		     const char *name)
{
	struct p9_qid qid;
	unsigned nwqid;
	int rc = p9_walk(p, fid, newfid, 1, &name, &nwqid, &qid);

	if (rc == P9_OK && nwqid != 1) {
		p->why = "not-found";
		return P9_BROKEN;
	}
	return rc;
}

/* seq.bin walked to FID_FILE, its size read and opened for reading. */
static int open_seq(struct p9_dev *p, uint64_t *size)
{
	struct p9_attr a;
	int rc = walk_name(p, FID_ROOT, FID_FILE, "seq.bin");

	if (rc == P9_OK)
		rc = p9_getattr(p, FID_FILE, &a);
	if (rc == P9_OK)
		rc = p9_lopen(p, FID_FILE, P9_O_RDONLY);
	*size = rc == P9_OK ? a.size : 0;
	return rc;
}

/* The whole file, as much as the msize allows at a time; a read that
 * returns nothing before the end is a failure. */
static int read_seq(struct p9_dev *p, struct part *t)
{
	uint32_t chunk = p->msize - P9_RREAD_HEADER, got;

	for (uint64_t off = 0; off < t->size; off += got, t->reqs++) {
		int rc = p9_read(p, FID_FILE, off, chunk, &got);

		if (rc != P9_OK)
			return rc;
		if (!got) {
			p->why = "short-file";
			return P9_BROKEN;
		}
	}
	return P9_OK;
}

/* t->n reads of RAND_LEN bytes at aligned offsets drawn from a fixed
 * seed, so that every VMM is asked for the same ones. */
static int read_random(struct p9_dev *p, struct part *t)
{
	uint64_t blocks = t->size / RAND_LEN, x = RAND_SEED;

	if (!blocks) {
		p->why = "file-too-small";
		return P9_BROKEN;
	}
	for (; t->reqs < t->n; t->reqs++) {
		uint64_t off;
		uint32_t got;
		int rc;

		x = x * LCG_MUL + LCG_ADD;
		off = (uint64_t)((unsigned __int128)x * blocks >> 64) *
		      RAND_LEN;
		rc = p9_read(p, FID_FILE, off, RAND_LEN, &got);
		if (rc != P9_OK)
			return rc;
		if (got != RAND_LEN) {
			p->why = "short-read";
			return P9_BROKEN;
		}
	}
	return P9_OK;
}

static void bench_reads(struct p9_dev *p)
{
	uint64_t size, ns;
	struct part t;
	int rc = open_seq(p, &size);

	if (rc != P9_OK) {
		p9_report_failed(p, "p9bench-open", rc);
		p9_clunk(p, FID_FILE);
		return;
	}
	t = (struct part){ .loop = read_seq, .size = size };
	part_start(&t, "seq");
	rc = part_run(p, &t);
	ns = part_ns(&t);
	if (rc != P9_OK)
		p9_report_failed(p, "p9bench-seq", rc);
	else
		print("tg: p9bench seq bytes=%lu reqs=%lu ns=%lu MBps=%lu "
		      "msize=%u\n", size, t.reqs, ns,
		      ns ? size * 1000 / ns : 0, p->msize);

	t = (struct part){ .loop = read_random, .size = size,
			   .n = params.p9bench_reads };
	part_start(&t, "rand4k");
	rc = part_run(p, &t);
	ns = part_ns(&t);
	if (rc != P9_OK)
		p9_report_failed(p, "p9bench-rand4k", rc);
	else
		print("tg: p9bench rand4k reqs=%lu ns=%lu iops=%lu qd=1\n",
		      t.reqs, ns, rate(t.reqs, ns));
	p9_clunk(p, FID_FILE);
}

/* Walk, getattr and clunk of each of FID_DIR's files f0 .. f<n-1>. */
static int stat_files(struct p9_dev *p, struct part *t)
{
	char name[NAME_LEN];
	struct p9_attr a;

	for (uint64_t i = 0; i < t->n; i++) {
		int rc;

		sprint(name, sizeof(name), "f%lu", i);
		rc = walk_name(p, FID_DIR, FID_NEW, name);
		t->reqs++;
		if (rc == P9_OK) {
			rc = p9_getattr(p, FID_NEW, &a);
			t->reqs++;
		}
		if (rc == P9_OK && (a.mode & P9_S_IFMT) != P9_S_IFREG) {
			p->why = "not-a-file";
			rc = P9_BROKEN;
		}
		if (rc != P9_OK)
			return rc;
		rc = p9_clunk(p, FID_NEW);
		t->reqs++;
		if (rc != P9_OK)
			return rc;
	}
	return P9_OK;
}

/* n new files c0 .. c<n-1> in FID_DIR, each made as Linux's v9fs makes
 * one: a clone of the directory's fid that Tlcreate turns into the
 * open file's, clunked when it is closed. */
static int create_files(struct p9_dev *p, struct part *t)
{
	char name[NAME_LEN];
	struct p9_qid qid;
	unsigned nwqid;

	for (uint64_t i = 0; i < t->n; i++) {
		int rc;

		sprint(name, sizeof(name), "c%lu", i);
		rc = p9_walk(p, FID_DIR, FID_NEW, 0, 0, &nwqid, &qid);
		t->reqs++;
		if (rc == P9_OK) {
			rc = p9_lcreate(p, FID_NEW, name,
					P9_O_RDWR | P9_O_CREAT, 0644);
			t->reqs++;
		}
		if (rc != P9_OK)
			return rc;
		rc = p9_clunk(p, FID_NEW);
		t->reqs++;
		if (rc != P9_OK)
			return rc;
	}
	return P9_OK;
}

static int unlink_files(struct p9_dev *p, struct part *t)
{
	char name[NAME_LEN];

	for (uint64_t i = 0; i < t->n; i++) {
		int rc;

		sprint(name, sizeof(name), "c%lu", i);
		rc = p9_unlinkat(p, FID_DIR, name, 0);
		t->reqs++;
		if (rc != P9_OK)
			return rc;
	}
	return P9_OK;
}

static void bench_stat(struct p9_dev *p)
{
	uint64_t n = params.p9bench_files, ns;
	struct part t;
	int rc = walk_name(p, FID_ROOT, FID_DIR, "meta");

	if (rc == P9_OK) {
		t = (struct part){ .loop = stat_files, .n = n };
		part_start(&t, "stat");
		rc = part_run(p, &t);
		ns = part_ns(&t);
	}
	if (rc != P9_OK) {
		p9_report_failed(p, "p9bench-stat", rc);
		p9_clunk(p, FID_NEW);
	} else {
		print("tg: p9bench stat files=%lu reqs=%lu ns=%lu per_s=%lu\n",
		      n, t.reqs, ns, rate(n, ns));
	}
	p9_clunk(p, FID_DIR);
}

static void bench_create(struct p9_dev *p)
{
	uint64_t n = params.p9bench_creates, create_ns, ns;
	struct part t;
	int rc = walk_name(p, FID_ROOT, FID_DIR, "new");

	if (rc == P9_OK) {
		t = (struct part){ .loop = create_files, .n = n };
		part_start(&t, "create");
		rc = part_run(p, &t);
		create_ns = part_ns(&t);
	}
	if (rc == P9_OK) {
		t.loop = unlink_files;
		rc = part_run(p, &t);
		ns = part_ns(&t);
	}
	if (rc != P9_OK) {
		p9_report_failed(p, "p9bench-create", rc);
		p9_clunk(p, FID_NEW);
	} else {
		print("tg: p9bench create files=%lu reqs=%lu ns=%lu "
		      "create_ns=%lu unlink_ns=%lu per_s=%lu\n", n, t.reqs, ns,
		      create_ns, ns - create_ns, rate(n, ns));
	}
	p9_clunk(p, FID_DIR);
}

void p9_bench(struct p9_dev *p)
{
	if (!p9_session(p, P9_MSIZE, FID_ROOT, "p9bench-session"))
		return;
	bench_reads(p);
	bench_stat(p);
	bench_create(p);
	p9_clunk(p, FID_ROOT);
}
