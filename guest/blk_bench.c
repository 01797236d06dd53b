/* blkbench on blk0: sequential 64 KiB reads over the whole disk, then
 * random 4 KiB reads, qd requests in flight, timed with the TSC, no data
 * checks. The submission loop runs in ring 3, polling the used ring with
 * interrupts suppressed: natively on PVM hosts, where kernel mode would
 * be emulated and the benchmark would measure the emulator. */
#include "blk.h"
#include "guest.h"
#include "io.h"
#include "lib.h"

#define RAND_REQS	20000
#define STALL_MS	5000
#define LCG_MUL		6364136223846793005ULL
#define LCG_ADD		1442695040888963407ULL

struct bench {
	struct blk_dev *b;
	unsigned qd;
	uint32_t len;
	bool random;
	uint64_t reqs;
	uint64_t stall;		/* TSC ticks without a completion: failure */
	int rc;
};

static uint64_t next_sector(const struct bench *j, uint64_t k, uint64_t *x)
{
	uint64_t blocks = j->b->capacity / (j->len / SECTOR);

	if (!j->random)
		return k * (j->len / SECTOR);
	*x = *x * LCG_MUL + LCG_ADD;
	return (uint64_t)((unsigned __int128)*x * blocks >> 64) *
	       (j->len / SECTOR);
}

static int submit(struct bench *j, struct blk_req *r, uint64_t k,
		  uint64_t *x)
{
	return blk_queue(j->b, r, VIRTIO_BLK_T_IN, next_sector(j, k, x),
			 blk_buf + (r - blk_reqs) * j->len, j->len, 1, 0);
}

/* Ring 3: keeps qd requests in flight until reqs are done; one notify
 * check per round of completions. */
static long u_bench(long arg)
{
	struct bench *j = (struct bench *)arg;
	struct virtq *vq = &j->b->vd.vq[0];
	uint64_t issued = 0, done = 0, x = 0x9e3779b97f4a7c15ULL, idle;

	vq_disarm(vq);
	for (; issued < j->qd && issued < j->reqs; issued++)
		if ((j->rc = submit(j, &blk_reqs[issued], issued, &x)))
			return 0;
	vq_kick(vq);
	idle = clock_now();
	while (done < j->reqs) {
		bool queued = false;
		void *token;
		uint32_t len;
		int rc;

		while ((rc = vq_get_used(vq, &token, &len)) > 0) {
			struct blk_req *r = token;

			j->b->inflight--;
			if (r->status != VIRTIO_BLK_S_OK) {
				j->rc = r->status;
				return 0;
			}
			done++;
			if (issued < j->reqs) {
				if ((j->rc = submit(j, r, issued++, &x)))
					return 0;
				queued = true;
			}
		}
		if (rc < 0) {
			j->rc = BLK_ERR_BAD_ID;
			return 0;
		}
		if (queued) {
			vq_kick(vq);
			idle = clock_now();
		} else if (clock_now() - idle > j->stall) {
			j->rc = BLK_ERR_TIMEOUT;
			return 0;
		} else {
			cpu_relax();
		}
	}
	return 1;
}

static bool run(struct bench *j, uint64_t *ns)
{
	uint64_t t0 = clock_now();
	long ok = run_user(u_bench, (long)j);

	*ns = clock_to_ns(clock_now() - t0);
	return ok;
}

void blk_bench(struct blk_dev *b)
{
	struct bench j = { .b = b, .stall = clock_hz / 1000 * STALL_MS };
	const char *why;
	uint64_t ns;

	/* Direct chains of three descriptors, and one 64 KiB buffer each. */
	j.qd = MIN(params.blkbench_qd, b->vd.vq[0].size / 3);
	j.qd = MIN(j.qd, BLK_BUF_SIZE / (64 * 1024));

	j.len = 64 * 1024;
	j.reqs = b->capacity / (j.len / SECTOR);
	if (!run(&j, &ns)) {
		report(false, "blkbench", "seq64k qd=%u got=%s", j.qd,
		       blk_rc_name(j.rc));
		if (!blk_start(b, &why))
			return;
	} else {
		print("tg: blkbench seq64k bytes=%lu ns=%lu MBps=%lu qd=%u\n",
		      j.reqs * j.len, ns, ns ? j.reqs * j.len * 1000 / ns : 0,
		      j.qd);
	}

	j.len = 4096;
	j.random = true;
	j.reqs = RAND_REQS;
	if (!run(&j, &ns)) {
		report(false, "blkbench", "rand4k qd=%u got=%s", j.qd,
		       blk_rc_name(j.rc));
		blk_start(b, &why);
		return;
	}
	print("tg: blkbench rand4k reqs=%lu ns=%lu iops=%lu qd=%u\n", j.reqs,
	      ns, ns ? j.reqs * 1000000000 / ns : 0, j.qd);
}
