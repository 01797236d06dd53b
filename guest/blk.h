/* virtio-blk (virtio spec 5.2): the driver (blk.c) and what its checks
 * (blk_test.c), the benchmark (blk_bench.c) and the malformed requests
 * (blk_evil.c) share. */
#ifndef TG_BLK_H
#define TG_BLK_H

#include "virtio.h"

#define VIRTIO_ID_BLK			2
#define VIRTIO_BLK_F_SIZE_MAX		1
#define VIRTIO_BLK_F_SEG_MAX		2
#define VIRTIO_BLK_F_RO			5
#define VIRTIO_BLK_F_FLUSH		9
#define VIRTIO_BLK_F_MQ			12
#define VIRTIO_BLK_F_DISCARD		13
#define VIRTIO_BLK_F_WRITE_ZEROES	14

#define VIRTIO_BLK_T_IN			0
#define VIRTIO_BLK_T_OUT		1
#define VIRTIO_BLK_T_FLUSH		4
#define VIRTIO_BLK_T_GET_ID		8
#define VIRTIO_BLK_T_DISCARD		11
#define VIRTIO_BLK_T_WRITE_ZEROES	13

#define VIRTIO_BLK_S_OK			0
#define VIRTIO_BLK_S_IOERR		1
#define VIRTIO_BLK_S_UNSUPP		2

#define SECTOR				512
#define BLK_ID_BYTES			20

/* The word at byte offset o of a disk holds o ^ key: pattern A as the
 * host writes the images, pattern B where the write check writes. */
#define PATTERN_A			0x5448505654455354ULL
#define PATTERN_B			0x5752495445544754ULL

/* Failures other than the device's status byte. */
#define BLK_ERR_FULL			(-1)	/* no room in the queue */
#define BLK_ERR_SEGS			(-2)	/* over seg_max, BLK_MAX_SEGS */
#define BLK_ERR_TIMEOUT			(-3)
#define BLK_ERR_BAD_ID			(-4)	/* used id not in flight */
#define BLK_ERR_NEEDS_RESET		(-5)
#define BLK_ERR_USED_LEN		(-6)	/* less written than read */

#define BLK_MAX_DEVS			VIRTIO_MAX_DEVS
#define BLK_MAX_SEGS			32	/* data segments per request */
#define BLK_SLOTS			BLKBENCH_QD_MAX
#define BLK_BUF_SIZE			(4ULL << 20)
#define BLK_TIMEOUT_MS			5000

/* blk_queue flags: an indirect table (if negotiated); a first segment
 * of 100 bytes. */
#define BLK_INDIRECT			1
#define BLK_ODD				2

struct blk_dev {
	unsigned num;			/* blkN, in virtio_scan's order */
	struct virtio_dev vd;
	uint64_t capacity;		/* 512-byte sectors */
	uint32_t size_max, seg_max;
	uint32_t discard_sectors, discard_segs, discard_align;
	uint32_t wz_sectors, wz_segs;
	bool ro;
	unsigned inflight;		/* on queue 0 */
	unsigned queues_max;		/* rings virtio_probe allocated */
	unsigned queues;		/* in use: more than 1 with F_MQ */
};

struct blk_hdr {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

/* One request slot: header and status for the device, and an indirect
 * table of BLK_MAX_SEGS + 2 entries (header, data, status). */
struct blk_req {
	struct blk_hdr hdr;
	volatile uint8_t status;
	uint32_t written;		/* used length */
	struct vring_desc *table;
};

extern struct blk_req *blk_reqs;	/* BLK_SLOTS */
extern uint64_t blk_buf;		/* BLK_BUF_SIZE bytes of free RAM */
extern uint8_t *blk_page;		/* one page for small payloads */

void blk_alloc(void);
bool blk_start(struct blk_dev *b, const char **why);
int blk_queue(struct blk_dev *b, struct blk_req *r, uint32_t type,
	      uint64_t sector, uint64_t buf, uint32_t len, unsigned segs,
	      unsigned flags);
int blk_queue_on(struct blk_dev *b, struct virtq *vq, struct blk_req *r,
		 uint32_t type, uint64_t sector, uint64_t buf, uint32_t len,
		 unsigned segs, unsigned flags);
int blk_reap(struct blk_dev *b);
int blk_wait(struct blk_dev *b, uint64_t ms);
int blk_io(struct blk_dev *b, uint32_t type, uint64_t sector, uint64_t buf,
	   uint32_t len, unsigned segs, unsigned flags);
const char *blk_rc_name(int rc);

/* Ring-3 pattern work over device buffers (blk_pattern.c). */
/* PAT_CLASSIFY: each 4 KiB block the pattern or all zeros, counted in
 * zero_blocks (jobs of whole blocks). */
enum pat_op { PAT_FILL, PAT_CHECK, PAT_CHECK_ZERO, PAT_CLASSIFY };
#define PAT_BLOCK_WORDS (4096 / 8)
#define PAT_MAX_JOBS 128
#define PAT_POISON 0x504f49534f4e2121ULL	/* neither check expects it */

struct pat_list {
	enum pat_op op;
	uint64_t key;
	unsigned n;
	struct {
		uint64_t buf, len, off;	/* off: disk byte offset of buf */
	} job[PAT_MAX_JOBS];
	uint64_t bad_off, found;	/* first mismatch */
	uint64_t zero_blocks;
};

extern struct pat_list pat;
void pat_begin(enum pat_op op, uint64_t key);
void pat_add(uint64_t buf, uint64_t len, uint64_t off);
bool pat_run(void);

void blk_bench(struct blk_dev *b);
void blk_evil(struct blk_dev *b);
void blk_stream(struct blk_dev *b);
void blk_verify(struct blk_dev *b);

#endif
