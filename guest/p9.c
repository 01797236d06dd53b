/* virtio-9p driver and 9P2000.L client (virtio spec 5.11): every
 * virtio-9p device is started and its mount tag read from the device
 * configuration; requests go one at a time, each a chain of the request
 * buffer and a reply buffer of the negotiated msize, and the reply is
 * checked (size, tag, type) before a field is read. Which checks run on
 * which share is the command line's (docs/test-guest.md). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "p9.h"

#define CFG_TAG_LEN		0
#define CFG_TAG			2
#define VERSION			"9P2000.L"

static struct p9_dev devs[P9_MAX_DEVS];
static unsigned ndevs;
uint8_t *p9_tx, *p9_rx;

void p9_begin(struct p9_dev *p, uint8_t type)
{
	p->out = 4;	/* the size, known at p9_rpc */
	p9_put8(p, type);
	p->next_tag = p->next_tag + 1 == P9_NOTAG ? 1 : p->next_tag + 1;
	p9_put16(p, type == P9_TVERSION ? P9_NOTAG : p->next_tag);
}

/* Fields past the buffer are dropped; p9_rpc refuses the message. */
static void put(struct p9_dev *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++, p->out++)
		if (p->out < P9_BUF_SIZE)
			p9_tx[p->out] = v >> 8 * i;
}

void p9_put8(struct p9_dev *p, uint8_t v)
{
	put(p, v, 1);
}

void p9_put16(struct p9_dev *p, uint16_t v)
{
	put(p, v, 2);
}

void p9_put32(struct p9_dev *p, uint32_t v)
{
	put(p, v, 4);
}

void p9_put64(struct p9_dev *p, uint64_t v)
{
	put(p, v, 8);
}

void p9_put_str(struct p9_dev *p, const char *s)
{
	size_t n = strlen(s);

	p9_put16(p, n);
	for (size_t i = 0; i < n; i++)
		p9_put8(p, s[i]);
}

static uint64_t get(struct p9_dev *p, unsigned bytes)
{
	uint64_t v = 0;

	if (p->in + bytes > p->in_len) {
		p->in_bad = true;
		return 0;
	}
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p9_rx[p->in++] << 8 * i;
	return v;
}

uint8_t p9_get8(struct p9_dev *p)
{
	return get(p, 1);
}

uint16_t p9_get16(struct p9_dev *p)
{
	return get(p, 2);
}

uint32_t p9_get32(struct p9_dev *p)
{
	return get(p, 4);
}

uint64_t p9_get64(struct p9_dev *p)
{
	return get(p, 8);
}

void p9_get_qid(struct p9_dev *p, struct p9_qid *q)
{
	q->type = p9_get8(p);
	q->version = p9_get32(p);
	q->path = p9_get64(p);
}

/* exchange() found the device asking for a reset. */
#define EXCHANGE_RESET		(-2)

/* Queues the request and a reply buffer of reply_room bytes and sleeps
 * (polls, from user mode) until the device returns them: the bytes it
 * wrote, -1 with why, or EXCHANGE_RESET. */
static int64_t exchange(struct p9_dev *p, uint32_t reply_room)
{
	struct vq_buf b[2] = {
		{ (uint64_t)p9_tx, p->out, false },
		{ (uint64_t)p9_rx, reply_room, true },
	};
	struct virtq *vq = &p->vd.vq[0];
	uint64_t deadline = clock_deadline(P9_TIMEOUT_MS);
	unsigned cfg = virtio_config_irqs(&p->vd);
	uint32_t used;
	void *token;
	int rc;

	if (vq_add(vq, b, 2, 0, p9_tx) < 0) {
		p->why = "queue-full";
		return -1;
	}
	vq_kick(vq);
	while (!(rc = vq_get_used(vq, &token, &used))) {
		if (p->user) {
			if (clock_now() > deadline) {
				p->why = "timeout";
				p->dead = true;
				return -1;
			}
			cpu_relax();
			continue;
		}
		if (cfg != virtio_config_irqs(&p->vd) &&
		    virtio_status(&p->vd) & VIRTIO_S_NEEDS_RESET)
			return EXCHANGE_RESET;
		/* Reset, so that it cannot answer into the buffers the
		 * other devices' requests use, and not used again. */
		if (clock_now() > deadline) {
			p->why = "timeout";
			p->dead = true;
			virtio_reset(&p->vd);
			return -1;
		}
		virtio_idle(&p->vd);
	}
	if (rc < 0 || token != p9_tx) {
		p->why = "bad-used-id";
		return -1;
	}
	return used;
}

/* Why a reply's header is unusable, or 0: reads it, and limits the
 * reader to the size it gives. */
static const char *read_header(struct p9_dev *p, uint32_t used,
			       uint16_t tag, uint8_t *rtype)
{
	uint32_t size;

	p->in = 0;
	p->in_len = used;
	p->in_bad = false;
	size = p9_get32(p);
	*rtype = p9_get8(p);
	if (p9_get16(p) != tag && !p->in_bad)
		return "bad-tag";
	if (p->in_bad || size < P9_HEADER || size > used)
		return "short-reply";
	p->in_len = size;
	return 0;
}

static int restart(struct p9_dev *p);

/* Sends what p9_begin and the puts built as a request of type type and
 * reads the reply's header: P9_OK with the reader at the reply's first
 * field, the errno of an Rlerror, P9_BROKEN or P9_RESET. The reply may
 * fill up to the msize (before Tversion, P9_MSIZE). */
int p9_rpc(struct p9_dev *p, uint8_t type)
{
	uint32_t room = p->msize ? p->msize : P9_MSIZE;
	uint16_t tag = p9_tx[5] | p9_tx[6] << 8;
	uint32_t ecode;
	int64_t used;
	uint8_t rtype;

	if (p->dead) {
		p->why = "device-dead";
		return P9_BROKEN;
	}
	p->why = 0;
	if (p->out > P9_BUF_SIZE) {
		p->why = "request-too-big";
		return P9_BROKEN;
	}
	for (unsigned i = 0; i < 4; i++)
		p9_tx[i] = p->out >> 8 * i;
	used = exchange(p, room);
	if (used == EXCHANGE_RESET)
		return restart(p);
	if (used < 0)
		return P9_BROKEN;
	if (used > room)
		p->why = "bad-used-len";
	else
		p->why = read_header(p, used, tag, &rtype);
	if (p->why)
		return P9_BROKEN;
	if (rtype == P9_RLERROR) {
		ecode = p9_get32(p);
		/* An errno, as Linux's: 1 to 4095. */
		if (!p->in_bad && ecode && ecode < 4096)
			return ecode;
		p->why = "bad-rlerror";
	} else if (rtype != type + 1) {
		p->why = "bad-type";
	}
	return p->why ? P9_BROKEN : P9_OK;
}

/* The reply of a P9_OK exchange held all the fields read from it. */
static int fields_read(struct p9_dev *p, int rc)
{
	if (rc == P9_OK && p->in_bad) {
		p->why = "short-reply";
		return P9_BROKEN;
	}
	return rc;
}

int p9_version(struct p9_dev *p, uint32_t msize)
{
	char version[sizeof(VERSION)];
	uint32_t got;
	uint16_t len;
	int rc;

	p->msize = 0;
	p9_begin(p, P9_TVERSION);
	p9_put32(p, msize);
	p9_put_str(p, VERSION);
	rc = p9_rpc(p, P9_TVERSION);
	if (rc != P9_OK)
		return rc;
	got = p9_get32(p);
	len = p9_get16(p);
	for (unsigned i = 0; i < len; i++) {
		uint8_t c = p9_get8(p);

		if (i < sizeof(version))
			version[i] = c;
	}
	if (p->in_bad) {
		p->why = "short-reply";
		return P9_BROKEN;
	}
	/* The server may lower the msize, never raise it. */
	if (len != strlen(VERSION) || memcmp(version, VERSION, len)) {
		p->why = "bad-version";
		return P9_BROKEN;
	}
	if (got > msize || got < 4096) {
		p->why = "bad-msize";
		return P9_BROKEN;
	}
	p->msize = got;
	return P9_OK;
}

int p9_attach(struct p9_dev *p, uint32_t fid)
{
	int rc;

	p9_begin(p, P9_TATTACH);
	p9_put32(p, fid);
	p9_put32(p, P9_NOFID);		/* no authentication */
	p9_put_str(p, "tg");
	p9_put_str(p, "");
	p9_put32(p, P9_NOFID);		/* n_uname: the server's choice */
	rc = p9_rpc(p, P9_TATTACH);
	if (rc == P9_OK)
		p9_get_qid(p, &p->root);
	return fields_read(p, rc);
}

/* Walks n names from fid to newfid: *nwqid the names walked (fewer than
 * n: newfid was not made), *last the qid of the last (when any). */
int p9_walk(struct p9_dev *p, uint32_t fid, uint32_t newfid, unsigned n,
	    const char *const *names, unsigned *nwqid, struct p9_qid *last)
{
	int rc;

	p9_begin(p, P9_TWALK);
	p9_put32(p, fid);
	p9_put32(p, newfid);
	p9_put16(p, n);
	for (unsigned i = 0; i < n; i++)
		p9_put_str(p, names[i]);
	rc = p9_rpc(p, P9_TWALK);
	*nwqid = 0;
	if (rc != P9_OK)
		return rc;
	*nwqid = p9_get16(p);
	if (*nwqid > n || (n && !*nwqid)) {
		p->why = "bad-nwqid";
		return P9_BROKEN;
	}
	for (unsigned i = 0; i < *nwqid; i++)
		p9_get_qid(p, last);
	return fields_read(p, rc);
}

/* A request of a fid and nothing else whose reply has no fields. */
static int fid_only(struct p9_dev *p, uint8_t type, uint32_t fid)
{
	p9_begin(p, type);
	p9_put32(p, fid);
	return p9_rpc(p, type);
}

int p9_clunk(struct p9_dev *p, uint32_t fid)
{
	return fid_only(p, P9_TCLUNK, fid);
}

int p9_lopen(struct p9_dev *p, uint32_t fid, uint32_t flags)
{
	p9_begin(p, P9_TLOPEN);
	p9_put32(p, fid);
	p9_put32(p, flags);
	return p9_rpc(p, P9_TLOPEN);
}

int p9_lcreate(struct p9_dev *p, uint32_t dfid, const char *name,
	       uint32_t flags, uint32_t mode)
{
	p9_begin(p, P9_TLCREATE);
	p9_put32(p, dfid);
	p9_put_str(p, name);
	p9_put32(p, flags);
	p9_put32(p, mode);
	p9_put32(p, P9_NOFID);		/* gid: unchanged */
	return p9_rpc(p, P9_TLCREATE);
}

/* Tread and Treaddir: the reply's count of data bytes, which must be
 * in the reply; the reader is limited to them. */
static int read_request(struct p9_dev *p, uint8_t type, uint32_t fid,
			uint64_t off, uint32_t count, uint32_t *got)
{
	int rc;

	p9_begin(p, type);
	p9_put32(p, fid);
	p9_put64(p, off);
	p9_put32(p, count);
	rc = p9_rpc(p, type);
	if (rc != P9_OK)
		return rc;
	*got = p9_get32(p);
	if (p->in_bad || *got > p->in_len - P9_RREAD_HEADER) {
		p->why = "bad-data-count";
		return P9_BROKEN;
	}
	p->in_len = P9_RREAD_HEADER + *got;
	return P9_OK;
}

int p9_read(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	    uint32_t *got)
{
	return read_request(p, P9_TREAD, fid, off, count, got);
}

int p9_readdir(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	       uint32_t *got)
{
	return read_request(p, P9_TREADDIR, fid, off, count, got);
}

int p9_write(struct p9_dev *p, uint32_t fid, uint64_t off, uint32_t count,
	     uint32_t *done)
{
	int rc;

	p9_begin(p, P9_TWRITE);
	p9_put32(p, fid);
	p9_put64(p, off);
	p9_put32(p, count);
	p->out += count;
	rc = p9_rpc(p, P9_TWRITE);
	if (rc == P9_OK)
		*done = p9_get32(p);
	return fields_read(p, rc);
}

int p9_getattr(struct p9_dev *p, uint32_t fid, struct p9_attr *a)
{
	int rc;

	p9_begin(p, P9_TGETATTR);
	p9_put32(p, fid);
	p9_put64(p, P9_GETATTR_BASIC);
	rc = p9_rpc(p, P9_TGETATTR);
	if (rc != P9_OK)
		return rc;
	p9_get64(p);			/* valid */
	p9_get_qid(p, &a->qid);
	a->mode = p9_get32(p);
	a->uid = p9_get32(p);
	a->gid = p9_get32(p);
	p9_get64(p);			/* nlink */
	p9_get64(p);			/* rdev */
	a->size = p9_get64(p);
	return fields_read(p, rc);
}

int p9_truncate(struct p9_dev *p, uint32_t fid, uint64_t size)
{
	p9_begin(p, P9_TSETATTR);
	p9_put32(p, fid);
	p9_put32(p, P9_SETATTR_SIZE);
	p9_put32(p, 0);			/* mode */
	p9_put32(p, 0);			/* uid */
	p9_put32(p, 0);			/* gid */
	p9_put64(p, size);
	for (unsigned i = 0; i < 4; i++)
		p9_put64(p, 0);		/* atime, mtime */
	return p9_rpc(p, P9_TSETATTR);
}

int p9_mkdir(struct p9_dev *p, uint32_t dfid, const char *name,
	     struct p9_qid *qid)
{
	int rc;

	p9_begin(p, P9_TMKDIR);
	p9_put32(p, dfid);
	p9_put_str(p, name);
	p9_put32(p, 0755);
	p9_put32(p, P9_NOFID);
	rc = p9_rpc(p, P9_TMKDIR);
	if (rc == P9_OK)
		p9_get_qid(p, qid);
	return fields_read(p, rc);
}

int p9_symlink(struct p9_dev *p, uint32_t dfid, const char *name,
	       const char *target)
{
	p9_begin(p, P9_TSYMLINK);
	p9_put32(p, dfid);
	p9_put_str(p, name);
	p9_put_str(p, target);
	p9_put32(p, P9_NOFID);
	return p9_rpc(p, P9_TSYMLINK);
}

/* The target, NUL-terminated, into buf (size bytes; a longer one is
 * cut). */
int p9_readlink(struct p9_dev *p, uint32_t fid, char *buf, unsigned size)
{
	unsigned len;
	int rc;

	rc = fid_only(p, P9_TREADLINK, fid);
	if (rc != P9_OK)
		return rc;
	len = p9_get16(p);
	for (unsigned i = 0; i < len; i++) {
		char c = p9_get8(p);

		if (i + 1 < size)
			buf[i] = c;
	}
	buf[MIN(len, size - 1)] = 0;
	return fields_read(p, rc);
}

int p9_renameat(struct p9_dev *p, uint32_t olddir, const char *oldname,
		uint32_t newdir, const char *newname)
{
	p9_begin(p, P9_TRENAMEAT);
	p9_put32(p, olddir);
	p9_put_str(p, oldname);
	p9_put32(p, newdir);
	p9_put_str(p, newname);
	return p9_rpc(p, P9_TRENAMEAT);
}

int p9_unlinkat(struct p9_dev *p, uint32_t dfid, const char *name,
		uint32_t flags)
{
	p9_begin(p, P9_TUNLINKAT);
	p9_put32(p, dfid);
	p9_put_str(p, name);
	p9_put32(p, flags);
	return p9_rpc(p, P9_TUNLINKAT);
}

int p9_fsync(struct p9_dev *p, uint32_t fid)
{
	p9_begin(p, P9_TFSYNC);
	p9_put32(p, fid);
	p9_put32(p, 0);			/* all of it, not only the data */
	return p9_rpc(p, P9_TFSYNC);
}

int p9_flush(struct p9_dev *p, uint16_t oldtag)
{
	p9_begin(p, P9_TFLUSH);
	p9_put16(p, oldtag);
	return p9_rpc(p, P9_TFLUSH);
}

void p9_report_failed(struct p9_dev *p, const char *check, int rc)
{
	if (rc == P9_RESET)
		report(false, check, "dev=%u reason=needs-reset", p->num);
	else if (rc == P9_BROKEN)
		report(false, check, "dev=%u reason=%s", p->num, p->why);
	else
		report(false, check, "dev=%u ecode=%d", p->num, rc);
}

/* The mount tag: tag_len bytes, not NUL-terminated (spec 5.11.4). */
static bool read_tag(struct p9_dev *p, const char **why)
{
	uint64_t cfg = p->vd.device;
	uint32_t gen;
	uint16_t len;

	do {
		gen = virtio_cfg_generation(&p->vd);
		len = mmio_read16(cfg + CFG_TAG_LEN);
		if (!len || len > P9_TAG_MAX) {
			*why = "bad-tag-len";
			return false;
		}
		for (unsigned i = 0; i < len; i++)
			p->tag[i] = mmio_read8(cfg + CFG_TAG + i);
		p->tag[len] = 0;
	} while (gen != virtio_cfg_generation(&p->vd));
	return true;
}

/* From reset to DRIVER_OK, the mount tag required. */
static bool start_device(struct p9_dev *p, const char **why)
{
	if (!virtio_start(&p->vd, 1ULL << VIRTIO_9P_F_MOUNT_TAG, why))
		return false;
	if (!virtio_has(&p->vd, VIRTIO_9P_F_MOUNT_TAG)) {
		*why = "no-mount-tag";
		return false;
	}
	return read_tag(p, why);
}

/* After DEVICE_NEEDS_RESET: the device started again and the session
 * opened again as it was: P9_RESET; else P9_BROKEN, reported, and the
 * device left alone from then on. A device that breaks off again while
 * this runs is not restarted twice. */
static int restart(struct p9_dev *p)
{
	const char *why = 0;
	int rc = P9_BROKEN;

	if (p->restarting) {
		p->why = "needs-reset";
		return P9_BROKEN;
	}
	p->restarting = true;
	if (virtio_reset(&p->vd) && start_device(p, &why)) {
		rc = p9_version(p, p->asked_msize);
		if (rc == P9_OK)
			rc = p9_attach(p, p->root_fid);
	} else {
		p->why = why ? why : "reset-timeout";
	}
	p->restarting = false;
	if (rc != P9_OK) {
		p9_report_failed(p, "9p-restart", rc);
		p->dead = true;
		return P9_BROKEN;
	}
	return P9_RESET;
}

void p9_report_refused(struct p9_dev *p, const char *check, int rc)
{
	if (rc == P9_RESET) {
		report(true, check, "dev=%u outcome=needs-reset", p->num);
	} else if (rc > 0) {
		report(true, check, "dev=%u ecode=%d", p->num, rc);
	} else if (rc == P9_OK) {
		report(false, check, "dev=%u reason=accepted", p->num);
	} else {
		report(false, check, "dev=%u reason=%s", p->num, p->why);
	}
}

bool p9_session(struct p9_dev *p, uint32_t msize, uint32_t fid,
		const char *check)
{
	int rc;

	p->asked_msize = msize;
	p->root_fid = fid;
	rc = p9_version(p, msize);
	if (rc == P9_OK)
		rc = p9_attach(p, fid);
	if (rc == P9_OK && !(p->root.type & P9_QTDIR)) {
		p->why = "root-not-dir";
		rc = P9_BROKEN;
	}
	if (rc != P9_OK) {
		p9_report_failed(p, check, rc);
		return false;
	}
	report(true, check, "dev=%u msize=%u root=0x%lx", p->num, p->msize,
	       p->root.path);
	return true;
}

static bool start(struct p9_dev *p, const struct virtio_cand *c,
		  const char **why)
{
	p->vd.may_poll = true;
	return virtio_probe(&p->vd, c, 1, why) && start_device(p, why);
}

/* Every virtio-9p device, with a line each; one that does not start
 * keeps its number (and its interrupt slot) but is not used. */
static void find_devices(void)
{
	for (unsigned i = 0; i < virtio_ncands && ndevs < P9_MAX_DEVS; i++) {
		const struct virtio_cand *c = &virtio_cands[i];
		struct p9_dev *p = &devs[ndevs];
		const char *why = 0;

		if (c->id != VIRTIO_ID_9P)
			continue;
		p->num = ndevs++;
		if (!start(p, c, &why)) {
			p->dead = true;
			report(false, "9p-init", "dev=%u %s reason=%s", p->num,
			       c->where, why);
			continue;
		}
		print("tg: 9p dev=%u %s tag=%s features=0x%lx irq=%s\n", p->num,
		      c->where, p->tag, p->vd.features,
		      virtio_irq_mode(&p->vd));
	}
}

/* The started device whose tag is tag, or with no tag the first one. */
static struct p9_dev *device_tagged(const char *tag)
{
	for (unsigned i = 0; i < ndevs; i++)
		if (!devs[i].dead &&
		    (!*tag || !memcmp(devs[i].tag, tag, strlen(tag) + 1)))
			return &devs[i];
	return 0;
}

/* One share's checks, or a failure if no device has its tag. */
static void run_on(const char *tag, const char *check,
		   void (*checks)(struct p9_dev *))
{
	struct p9_dev *p = device_tagged(tag);

	if (!p) {
		report(false, check, "tag=%s reason=no-device", tag);
		return;
	}
	checks(p);
}

void run_9p(void)
{
	uint64_t buf = free_ram(2 * P9_BUF_SIZE);

	if (!buf) {
		report(false, "9p", "reason=no-free-ram");
		return;
	}
	p9_tx = (uint8_t *)buf;
	p9_rx = (uint8_t *)buf + P9_BUF_SIZE;
	find_devices();
	watchdog_start();
	if (params.p9)
		run_on(params.p9_tag, "9p", p9_check_share);
	if (params.p9_hostile)
		run_on(params.p9_tag, "9p-evil", p9_check_hostile);
	if (*params.p9_ro_tag)
		run_on(params.p9_ro_tag, "9p-ro", p9_check_read_only);
	if (params.p9bench)
		run_on(params.p9_tag, "p9bench", p9_bench);
	/* Quiet the devices for whatever runs next (dead ones are). */
	for (unsigned i = 0; i < ndevs; i++)
		if (!devs[i].dead)
			virtio_reset(&devs[i].vd);
	watchdog_stop();
}
