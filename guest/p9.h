/* virtio-9p (virtio spec 5.11) and a 9P2000.L client, one request at a
 * time (p9.c); the checks on a share (p9_test.c), the hostile requests
 * (p9_evil.c) and the benchmark (p9_bench.c). */
#ifndef TG_P9_H
#define TG_P9_H

#include "virtio.h"

#define VIRTIO_ID_9P		9
#define VIRTIO_9P_F_MOUNT_TAG	0

#define P9_MAX_DEVS		4
/* What the client asks for: what Linux's virtio transport takes. */
#define P9_MSIZE		(512 * 1024)
/* Each of the request and the reply buffer: an msize and room for a
 * Twrite that overruns it (p9_evil.c). */
#define P9_BUF_SIZE		(1024 * 1024)
#define P9_TIMEOUT_MS		10000

/* Message types (9P2000.L); a reply's type is its request's + 1. */
#define P9_RLERROR		7
#define P9_TSTATFS		8
#define P9_TLOPEN		12
#define P9_TLCREATE		14
#define P9_TSYMLINK		16
#define P9_TREADLINK		22
#define P9_TGETATTR		24
#define P9_TSETATTR		26
#define P9_TREADDIR		40
#define P9_TFSYNC		50
#define P9_TMKDIR		72
#define P9_TRENAMEAT		74
#define P9_TUNLINKAT		76
#define P9_TVERSION		100
#define P9_TATTACH		104
#define P9_TFLUSH		108
#define P9_TWALK		110
#define P9_TREAD		116
#define P9_TWRITE		118
#define P9_TCLUNK		120

#define P9_HEADER		7	/* size[4] type[1] tag[2] */
#define P9_RREAD_HEADER		11	/* and count[4] */
#define P9_TWRITE_HEADER	23	/* and fid[4] offset[8] count[4] */
#define P9_NOTAG		0xffff
#define P9_NOFID		0xffffffffu
#define P9_MAXWELEM		16	/* names in one Twalk */

#define P9_QTDIR		0x80
#define P9_QTSYMLINK		0x02

/* Linux's open flags and modes, as 9P2000.L carries them. */
#define P9_O_RDONLY		0
#define P9_O_WRONLY		1
#define P9_O_RDWR		2
#define P9_O_CREAT		0100
#define P9_O_TRUNC		01000
#define P9_S_IFMT		0170000
#define P9_S_IFREG		0100000
#define P9_AT_REMOVEDIR		0x200
#define P9_GETATTR_BASIC	0x7ff
#define P9_SETATTR_SIZE		0x8

/* The result of an exchange: the expected reply, an Rlerror (its
 * errno, positive), no usable reply (P9_BROKEN, with p9_dev.why), or a
 * device that broke off with DEVICE_NEEDS_RESET (P9_RESET: it has been
 * started again, with a new session of the same msize and root fid). */
#define P9_OK			0
#define P9_BROKEN		(-1)
#define P9_RESET		(-2)
#define P9_ENOENT		2

/* The bytes of the files the checks read and write: byte i of the file
 * with seed s (tests/integration/p9_share.py makes and checks them). */
#define P9_SEED_DATA		0
#define P9_SEED_CREATED		0x5a
#define P9_SEED_EVIL		0x33
#define P9_DATA_BYTES		(1024 * 1024 + 4099)

static inline uint8_t p9_pattern(uint64_t i, uint8_t seed)
{
	return i * 31 + (i >> 9) + seed;
}

struct p9_qid {
	uint8_t type;
	uint32_t version;
	uint64_t path;
};

struct p9_attr {
	struct p9_qid qid;
	uint32_t mode, uid, gid;
	uint64_t size;
};

struct p9_dev {
	unsigned num;			/* in virtio_scan's order */
	struct virtio_dev vd;
	char tag[P9_TAG_MAX + 1];
	uint32_t msize;
	uint16_t next_tag;
	struct p9_qid root;
	uint32_t out;			/* bytes of the request so far */
	uint32_t in, in_len;		/* the reply: next field, its size */
	bool in_bad;			/* a field read past its end */
	const char *why;		/* what broke an exchange */
	bool restarting;		/* after P9_RESET, a new session */
	bool dead;			/* timed out, or not restarted */
	/* Requests from user mode (p9_bench.c): the used ring polled with
	 * the queue's interrupts off, and a device that times out left
	 * dead for the caller to reset, which user mode cannot. */
	bool user;
	uint32_t asked_msize, root_fid;	/* of the session, for a restart */
};

/* The request and reply buffers every device shares: one exchange is
 * in flight at a time. */
extern uint8_t *p9_tx, *p9_rx;

/* Building a request, sending it, reading the reply. */
void p9_begin(struct p9_dev *p, uint8_t type);
void p9_put8(struct p9_dev *p, uint8_t v);
void p9_put16(struct p9_dev *p, uint16_t v);
void p9_put32(struct p9_dev *p, uint32_t v);
void p9_put64(struct p9_dev *p, uint64_t v);
void p9_put_str(struct p9_dev *p, const char *s);
int p9_rpc(struct p9_dev *p, uint8_t type);
uint8_t p9_get8(struct p9_dev *p);
uint16_t p9_get16(struct p9_dev *p);
uint32_t p9_get32(struct p9_dev *p);
uint64_t p9_get64(struct p9_dev *p);
void p9_get_qid(struct p9_dev *p, struct p9_qid *q);

/* One message each; P9_OK, an errno, P9_BROKEN or P9_RESET. */
int p9_version(struct p9_dev *p, uint32_t msize);
int p9_attach(struct p9_dev *p, uint32_t fid);
int p9_walk(struct p9_dev *p, uint32_t fid, uint32_t newfid, unsigned n,
	    const char *const *names, unsigned *nwqid, struct p9_qid *last);
int p9_clunk(struct p9_dev *p, uint32_t fid);
int p9_lopen(struct p9_dev *p, uint32_t fid, uint32_t flags);
int p9_lcreate(struct p9_dev *p, uint32_t dfid, const char *name,
	       uint32_t flags, uint32_t mode);
/* Rread's data is at p9_rx + P9_RREAD_HEADER. */
int p9_read(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	    uint32_t *got);
/* The data is at p9_tx + P9_TWRITE_HEADER already. */
int p9_write(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	     uint32_t *done);
int p9_getattr(struct p9_dev *p, uint32_t fid, struct p9_attr *a);
int p9_truncate(struct p9_dev *p, uint32_t fid, uint64_t size);
int p9_mkdir(struct p9_dev *p, uint32_t dfid, const char *name,
	     struct p9_qid *qid);
int p9_symlink(struct p9_dev *p, uint32_t dfid, const char *name,
	       const char *target);
int p9_readlink(struct p9_dev *p, uint32_t fid, char *buf, unsigned size);
int p9_renameat(struct p9_dev *p, uint32_t olddir, const char *oldname,
		uint32_t newdir, const char *newname);
int p9_unlinkat(struct p9_dev *p, uint32_t dfid, const char *name,
		uint32_t flags);
/* Rreaddir's entries: count bytes from p9_rx + P9_RREAD_HEADER, the
 * reader at the first and limited to them. */
int p9_readdir(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	       uint32_t *got);
int p9_fsync(struct p9_dev *p, uint32_t fid);
int p9_flush(struct p9_dev *p, uint16_t oldtag);

/* Tversion and Tattach of fid on a fresh session, reported as check:
 * false if either failed. */
bool p9_session(struct p9_dev *p, uint32_t msize, uint32_t fid,
		const char *check);
/* A check whose request failed: its errno, or why the exchange broke. */
void p9_report_failed(struct p9_dev *p, const char *check, int rc);
/* A check whose request the server must refuse: passed with the errno
 * of its Rlerror or if the device broke off (P9_RESET); failed if the
 * request was carried out or the exchange broke otherwise. */
void p9_report_refused(struct p9_dev *p, const char *check, int rc);

/* The checks (p9_test.c, p9_evil.c). */
void p9_check_share(struct p9_dev *p);
void p9_check_read_only(struct p9_dev *p);
void p9_check_hostile(struct p9_dev *p);
/* The benchmark (p9_bench.c). */
void p9_bench(struct p9_dev *p);

#endif
