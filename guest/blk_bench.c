/* blkbench on blk0: sequential 64 KiB reads over the whole disk, then
 * random 4 KiB reads, qd requests in flight, timed with the TSC, no data
 * checks. The submission loop runs in ring 3, polling the used ring with
 * interrupts suppressed: natively on PVM hosts, where kernel mode would
 * be emulated and the benchmark would measure the emulator. With
 * blkbench_queues=N (virtio-blk multiqueue), N CPUs run a loop each at
 * once, each on its own queue with qd requests in flight. */
#include "blk.h"
#include "guest.h"
#include "io.h"
#include "lib.h"

#define RAND_REQS	20000
#define STALL_MS	20000
#define LCG_MUL		6364136223846793005ULL
#define LCG_ADD		1442695040888963407ULL

/* One CPU's share of a run: its queue, request slots and buffers, the
 * requests first .. first + reqs - 1 of the run's sequence. */
struct bench {
	struct blk_dev *b;
	struct virtq *vq;
	struct blk_req *slots;		/* qd of them */
	uint64_t buf;			/* qd * len bytes */
	unsigned qd;
	uint32_t len;
	bool random;
	uint64_t first, reqs;
	uint64_t seed;
	uint64_t stall;		/* TSC ticks without a completion: failure */
	int rc;
};

static uint64_t next_sector(const struct bench *j, uint64_t k, uint64_t *x)
{
	uint64_t blocks = j->b->capacity / (j->len / SECTOR);

	if (!j->random)
		return (j->first + k) * (j->len / SECTOR);
	*x = *x * LCG_MUL + LCG_ADD;
	return (uint64_t)((unsigned __int128)*x * blocks >> 64) *
	       (j->len / SECTOR);
}

static int submit(struct bench *j, struct blk_req *r, uint64_t k,
		  uint64_t *x)
{
	return blk_queue_on(j->b, j->vq, r, VIRTIO_BLK_T_IN,
			    next_sector(j, k, x),
			    j->buf + (r - j->slots) * j->len, j->len, 1, 0);
}

/* Ring 3: keeps qd requests in flight until reqs are done; one notify
 * check per round of completions. */
static long u_bench(long arg)
{
	struct bench *j = (struct bench *)arg;
	struct virtq *vq = j->vq;
	uint64_t issued = 0, done = 0, x = j->seed, idle;

	vq_disarm(vq);
	for (; issued < j->qd && issued < j->reqs; issued++)
		if ((j->rc = submit(j, &j->slots[issued], issued, &x)))
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

/* reqs requests of len bytes over n queues, CPU i driving queue i with
 * its share of the slots and of the sequence. False with the first
 * failure's code in *rc. */
static bool run(struct blk_dev *b, unsigned n, unsigned qd, uint32_t len,
		bool random, uint64_t reqs, uint64_t *ns, int *rc)
{
	static struct bench jobs[VIRTIO_MAX_QUEUES];
	long args[VIRTIO_MAX_QUEUES], ok[VIRTIO_MAX_QUEUES];
	uint64_t t0;
	bool all = true;

	for (unsigned i = 0; i < n; i++) {
		jobs[i] = (struct bench){
			.b = b, .vq = &b->vd.vq[i], .slots = blk_reqs + i * qd,
			.buf = blk_buf + (uint64_t)i * qd * len, .qd = qd,
			.len = len, .random = random,
			.first = reqs * i / n,
			.reqs = reqs * (i + 1) / n - reqs * i / n,
			.seed = 0x9e3779b97f4a7c15ULL + i,
			.stall = clock_hz / 1000 * STALL_MS,
		};
		args[i] = (long)&jobs[i];
		ok[i] = 0;
	}
	t0 = clock_now();
	if (!run_user_cpus(n, u_bench, args, ok, 2 * STALL_MS)) {
		*rc = BLK_ERR_TIMEOUT;
		return false;
	}
	*ns = clock_to_ns(clock_now() - t0);
	for (unsigned i = 0; i < n; i++) {
		if (!ok[i] && all)
			*rc = jobs[i].rc;
		all &= ok[i] != 0;
	}
	return all;
}

void blk_bench(struct blk_dev *b)
{
	unsigned n = params.blkbench_queues, qd;
	const char *why;
	uint64_t ns, reqs;
	int rc;

	if (n > b->queues || n > user_cpu_count()) {
		report(false, "blkbench", "queues=%u device_queues=%u cpus=%u",
		       n, b->queues, user_cpu_count());
		return;
	}
	/* Direct chains of three descriptors, and one 64 KiB buffer each;
	 * the slots and buffers are shared out between the queues, and each
	 * queue may be smaller than queue 0. */
	qd = MIN(params.blkbench_qd, BLK_SLOTS / n);
	qd = MIN(qd, BLK_BUF_SIZE / (64 * 1024) / n);
	for (unsigned i = 0; i < n; i++)
		qd = MIN(qd, b->vd.vq[i].size / 3u);

	reqs = b->capacity / (64 * 1024 / SECTOR);
	if (!run(b, n, qd, 64 * 1024, false, reqs, &ns, &rc)) {
		report(false, "blkbench", "seq64k qd=%u queues=%u got=%s", qd,
		       n, blk_rc_name(rc));
		if (!blk_start(b, &why))
			return;
	} else {
		print("tg: blkbench seq64k bytes=%lu ns=%lu MBps=%lu qd=%u "
		      "queues=%u\n", reqs * 64 * 1024, ns,
		      ns ? reqs * 64 * 1024 * 1000 / ns : 0, qd, n);
	}

	if (!run(b, n, qd, 4096, true, RAND_REQS, &ns, &rc)) {
		report(false, "blkbench", "rand4k qd=%u queues=%u got=%s", qd,
		       n, blk_rc_name(rc));
		blk_start(b, &why);
		return;
	}
	print("tg: blkbench rand4k reqs=%u ns=%lu iops=%lu qd=%u queues=%u\n",
	      RAND_REQS, ns, ns ? (uint64_t)RAND_REQS * 1000000000 / ns : 0, qd, n);
}
