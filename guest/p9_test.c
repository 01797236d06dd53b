/* The virtio-9p checks on a share the host prepared
 * (tests/integration/p9_share.py): what Linux's v9fs does to mount it,
 * read a file and change the tree, each check one line; and on a
 * read-only share, every change refused. The host then checks the tree. */
#include "guest.h"
#include "lib.h"
#include "p9.h"

#define FID_ROOT		1
#define FID_FILE		2
#define FID_DIR			3
#define FID_NEW			4

#define WRITE_BYTES		600000	/* more than one msize */
#define TRUNC_BYTES		1000
#define UNUSED_TAG		0x7777
#define LINK_TARGET		"dir/data.bin"
#define PATH_NAMES		4

/* Walks the names of path ("a/b", "" for a clone) from the root to
 * newfid; P9_BROKEN with why=not-found if not all were walked. */
static int walk_path(struct p9_dev *p, uint32_t newfid, const char *path,
		     struct p9_qid *qid)
{
	char buf[64], *s = buf;
	const char *names[PATH_NAMES];
	unsigned n = 0, nwqid;
	int rc;

	if (strlen(path) >= sizeof(buf)) {
		p->why = "path-too-long";
		return P9_BROKEN;
	}
	memcpy(buf, path, strlen(path) + 1);
	for (; *s && n < PATH_NAMES; n++) {
		names[n] = s;
		while (*s && *s != '/')
			s++;
		if (*s)
			*s++ = 0;
	}
	if (*s) {
		p->why = "path-too-long";
		return P9_BROKEN;
	}
	*qid = p->root;
	rc = p9_walk(p, FID_ROOT, newfid, n, names, &nwqid, qid);
	if (rc == P9_OK && nwqid < n) {
		p->why = "not-found";
		return P9_BROKEN;
	}
	return rc;
}

/* A check that failed after it may have made fid: reported, and fid
 * clunked so that the next check can make it again. */
static void fail_and_clunk(struct p9_dev *p, const char *check, int rc,
			   uint32_t fid)
{
	p9_report_failed(p, check, rc);
	p9_clunk(p, fid);
}

static void check_walk(struct p9_dev *p)
{
	const char *partial[] = { "dir", "missing" };
	struct p9_qid qid;
	unsigned nwqid;
	int rc, missing;

	rc = walk_path(p, FID_FILE, "dir/data.bin", &qid);
	if (rc == P9_OK && qid.type & P9_QTDIR) {
		p->why = "file-is-dir";
		rc = P9_BROKEN;
	}
	if (rc != P9_OK) {
		fail_and_clunk(p, "9p-walk", rc, FID_FILE);
		return;
	}
	/* A later name not found ends the walk short; the first, an error. */
	rc = p9_walk(p, FID_ROOT, FID_NEW, 2, partial, &nwqid, &qid);
	missing = walk_path(p, FID_NEW, "missing", &qid);
	if (rc != P9_OK || nwqid != 1 || missing <= 0) {
		p9_clunk(p, FID_NEW);
		report(false, "9p-walk", "dev=%u partial_rc=%d nwqid=%u "
		       "missing_rc=%d", p->num, rc, nwqid, missing);
	} else {
		report(true, "9p-walk", "dev=%u names=2 partial=1 "
		       "missing_ecode=%d", p->num, missing);
	}
}

/* FID_FILE is dir/data.bin (check_walk). */
static void check_getattr(struct p9_dev *p)
{
	struct p9_attr a;
	int rc = p9_getattr(p, FID_FILE, &a);

	if (rc != P9_OK) {
		p9_report_failed(p, "9p-getattr", rc);
		return;
	}
	report((a.mode & P9_S_IFMT) == P9_S_IFREG && a.size == P9_DATA_BYTES,
	       "9p-getattr", "dev=%u size=%lu mode=0x%x uid=%u gid=%u",
	       p->num, a.size, a.mode, a.uid, a.gid);
}

/* Where the bytes at p9_rx's data, from file offset off, first differ
 * from the pattern seed, or -1. */
static int64_t mismatch(uint64_t off, uint32_t n, uint8_t seed)
{
	const uint8_t *d = p9_rx + P9_RREAD_HEADER;

	for (uint32_t i = 0; i < n; i++)
		if (d[i] != p9_pattern(off + i, seed))
			return off + i;
	return -1;
}

/* How far a read of the open fid to its end got: its bytes and reads,
 * and where its data first differed from the pattern (-1: nowhere). */
struct read_end {
	uint64_t bytes;
	unsigned reads;
	int64_t bad;
};

/* Reads the open fid to its end, each read as much as the msize allows,
 * comparing with the pattern seed until a byte differs: P9_OK, or why
 * a read failed. */
static int read_all(struct p9_dev *p, uint32_t fid, uint8_t seed,
		    struct read_end *e)
{
	uint32_t got;
	int rc;

	*e = (struct read_end){ 0, 0, -1 };
	do {
		rc = p9_read(p, fid, e->bytes, p->msize - P9_RREAD_HEADER,
			     &got);
		if (rc != P9_OK)
			return rc;
		e->bad = mismatch(e->bytes, got, seed);
		e->bytes += got;
		e->reads++;
	} while (got && e->bad < 0);
	return P9_OK;
}

static void check_read(struct p9_dev *p)
{
	struct read_end e;
	int rc = p9_lopen(p, FID_FILE, P9_O_RDONLY);

	if (rc == P9_OK)
		rc = read_all(p, FID_FILE, P9_SEED_DATA, &e);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-read", rc);
	else if (e.bad >= 0)
		report(false, "9p-read", "dev=%u reason=mismatch offset=0x%lx",
		       p->num, e.bad);
	else
		report(e.bytes == P9_DATA_BYTES && e.reads > 2, "9p-read",
		       "dev=%u bytes=%lu reads=%u", p->num, e.bytes, e.reads);
	p9_clunk(p, FID_FILE);
}

/* Writes len bytes of the pattern seed to the open fid from offset 0,
 * each write as much as the msize allows: P9_OK, or why not. */
static int write_all(struct p9_dev *p, uint32_t fid, uint32_t len,
		     uint8_t seed, unsigned *writes)
{
	uint32_t off = 0, done;
	int rc;

	for (*writes = 0; off < len; (*writes)++) {
		uint32_t n = MIN(len - off, p->msize - P9_TWRITE_HEADER);

		for (uint32_t i = 0; i < n; i++)
			p9_tx[P9_TWRITE_HEADER + i] = p9_pattern(off + i, seed);
		rc = p9_write(p, fid, off, n, &done);
		if (rc != P9_OK)
			return rc;
		if (done != n) {
			p->why = "short-write";
			return P9_BROKEN;
		}
		off += n;
	}
	return P9_OK;
}

/* created.bin, written and synced; its size as getattr sees it. */
static void check_create(struct p9_dev *p)
{
	struct p9_qid qid;
	struct p9_attr a;
	unsigned writes;
	int rc = walk_path(p, FID_NEW, "", &qid);

	if (rc == P9_OK)
		rc = p9_lcreate(p, FID_NEW, "created.bin",
				P9_O_RDWR | P9_O_CREAT | P9_O_TRUNC, 0644);
	if (rc == P9_OK)
		rc = write_all(p, FID_NEW, WRITE_BYTES, P9_SEED_CREATED,
			       &writes);
	if (rc != P9_OK) {
		fail_and_clunk(p, "9p-create", rc, FID_NEW);
		return;
	}
	rc = p9_getattr(p, FID_NEW, &a);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-create", rc);
	else
		report(a.size == WRITE_BYTES, "9p-create", "dev=%u bytes=%lu "
		       "writes=%u uid=%u", p->num, a.size, writes, a.uid);
	rc = p9_fsync(p, FID_NEW);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-fsync", rc);
	else
		report(true, "9p-fsync", "dev=%u", p->num);
	p9_clunk(p, FID_NEW);
}

static void check_truncate(struct p9_dev *p)
{
	struct p9_qid qid;
	struct p9_attr a;
	int rc = walk_path(p, FID_FILE, "truncate.bin", &qid);

	if (rc == P9_OK)
		rc = p9_truncate(p, FID_FILE, TRUNC_BYTES);
	if (rc == P9_OK)
		rc = p9_getattr(p, FID_FILE, &a);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-setattr", rc);
	else
		report(a.size == TRUNC_BYTES, "9p-setattr", "dev=%u size=%lu",
		       p->num, a.size);
	p9_clunk(p, FID_FILE);
}

static void check_mkdir(struct p9_dev *p)
{
	struct p9_qid qid;
	int rc = p9_mkdir(p, FID_ROOT, "newdir", &qid);

	if (rc != P9_OK)
		p9_report_failed(p, "9p-mkdir", rc);
	else
		report(qid.type & P9_QTDIR, "9p-mkdir", "dev=%u qid_type=0x%x",
		       p->num, qid.type);
}

/* link -> dir/data.bin, walked to (the link itself) and read back. */
static void check_symlink(struct p9_dev *p)
{
	char target[64];
	struct p9_qid qid;
	int rc = p9_symlink(p, FID_ROOT, "link", LINK_TARGET);

	if (rc == P9_OK)
		rc = walk_path(p, FID_FILE, "link", &qid);
	if (rc == P9_OK)
		rc = p9_readlink(p, FID_FILE, target, sizeof(target));
	if (rc != P9_OK)
		p9_report_failed(p, "9p-symlink", rc);
	else
		report(qid.type & P9_QTSYMLINK &&
		       !memcmp(target, LINK_TARGET, sizeof(LINK_TARGET)),
		       "9p-symlink", "dev=%u qid_type=0x%x target=%s", p->num,
		       qid.type, target);
	p9_clunk(p, FID_FILE);
}

/* The name is gone: walking to it is ENOENT. */
static bool gone(struct p9_dev *p, const char *path)
{
	struct p9_qid qid;
	int rc = walk_path(p, FID_FILE, path, &qid);

	if (rc == P9_OK)
		p9_clunk(p, FID_FILE);
	return rc == P9_ENOENT;
}

/* old.txt into newdir/renamed.txt (check_mkdir made newdir). */
static void check_rename(struct p9_dev *p)
{
	struct p9_qid qid;
	int rc = walk_path(p, FID_DIR, "newdir", &qid);

	if (rc == P9_OK)
		rc = p9_renameat(p, FID_ROOT, "old.txt", FID_DIR,
				 "renamed.txt");
	if (rc == P9_OK)
		rc = walk_path(p, FID_FILE, "newdir/renamed.txt", &qid);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-rename", rc);
	else
		report(gone(p, "old.txt"), "9p-rename", "dev=%u", p->num);
	p9_clunk(p, FID_FILE);
	p9_clunk(p, FID_DIR);
}

/* A file, and an empty directory with AT_REMOVEDIR. */
static void check_unlink(struct p9_dev *p)
{
	int rc = p9_unlinkat(p, FID_ROOT, "doomed.txt", 0);

	if (rc == P9_OK)
		rc = p9_unlinkat(p, FID_ROOT, "emptydir", P9_AT_REMOVEDIR);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-unlink", rc);
	else
		report(gone(p, "doomed.txt") && gone(p, "emptydir"),
		       "9p-unlink", "dev=%u files=1 dirs=1", p->num);
}

/* The names the root must list after the checks above, and those it
 * must not. */
static const char *const listed[] = {
	"dir", "created.bin", "truncate.bin", "newdir", "link",
};
static const char *const unlisted[] = { "old.txt", "doomed.txt", "emptydir" };
#define NLISTED (sizeof(listed) / sizeof(listed[0]))
#define NUNLISTED (sizeof(unlisted) / sizeof(unlisted[0]))

/* Marks the names of one Rreaddir's entries (the reader limited to
 * them) in seen, listed then unlisted, and counts them in *n: the
 * offset to go on from. */
static uint64_t dir_entries(struct p9_dev *p, bool *seen, unsigned *n)
{
	uint64_t next = 0;
	struct p9_qid qid;

	while (p->in < p->in_len && !p->in_bad) {
		char name[32];
		unsigned len;

		p9_get_qid(p, &qid);
		next = p9_get64(p);
		p9_get8(p);		/* type */
		len = p9_get16(p);
		/* Only names as short as the ones looked for matter. */
		for (unsigned i = 0; i < len; i++) {
			uint8_t c = p9_get8(p);

			if (i < sizeof(name))
				name[i] = c;
		}
		for (unsigned i = 0; i < NLISTED + NUNLISTED; i++) {
			const char *want = i < NLISTED ? listed[i] :
						       unlisted[i - NLISTED];

			if (len == strlen(want) && !memcmp(name, want, len))
				seen[i] = true;
		}
		(*n)++;
	}
	return next;
}

static int list_root(struct p9_dev *p, bool *seen, unsigned *n)
{
	uint64_t off = 0;
	uint32_t count;
	struct p9_qid qid;
	int rc = walk_path(p, FID_DIR, "", &qid);

	if (rc == P9_OK)
		rc = p9_lopen(p, FID_DIR, P9_O_RDONLY);
	while (rc == P9_OK) {
		rc = p9_readdir(p, FID_DIR, off, p->msize - P9_RREAD_HEADER,
				&count);
		if (rc != P9_OK || !count)
			break;
		off = dir_entries(p, seen, n);
		if (p->in_bad) {
			p->why = "bad-entries";
			rc = P9_BROKEN;
		}
	}
	return rc;
}

static void check_readdir(struct p9_dev *p)
{
	bool seen[NLISTED + NUNLISTED] = { false };
	unsigned n = 0;
	int rc = list_root(p, seen, &n);

	p9_clunk(p, FID_DIR);
	if (rc != P9_OK) {
		p9_report_failed(p, "9p-readdir", rc);
		return;
	}
	for (unsigned i = 0; i < NLISTED + NUNLISTED; i++) {
		if (seen[i] != (i < NLISTED)) {
			report(false, "9p-readdir", "dev=%u entries=%u name=%s "
			       "reason=%s", p->num, n, i < NLISTED ?
			       listed[i] : unlisted[i - NLISTED],
			       seen[i] ? "listed" : "missing");
			return;
		}
	}
	report(true, "9p-readdir", "dev=%u entries=%u", p->num, n);
}

static void check_statfs(struct p9_dev *p)
{
	uint32_t bsize, namelen;
	uint64_t blocks;
	int rc;

	p9_begin(p, P9_TSTATFS);
	p9_put32(p, FID_ROOT);
	rc = p9_rpc(p, P9_TSTATFS);
	if (rc != P9_OK) {
		p9_report_failed(p, "9p-statfs", rc);
		return;
	}
	p9_get32(p);			/* type */
	bsize = p9_get32(p);
	blocks = p9_get64(p);
	for (unsigned i = 0; i < 5; i++)
		p9_get64(p);		/* bfree bavail files ffree fsid */
	namelen = p9_get32(p);
	report(!p->in_bad && bsize && blocks && namelen, "9p-statfs",
	       "dev=%u bsize=%u blocks=%lu namelen=%u", p->num, bsize, blocks,
	       namelen);
}

/* A flush of a tag with nothing in flight is answered all the same. */
static void check_flush(struct p9_dev *p)
{
	int rc = p9_flush(p, UNUSED_TAG);

	if (rc != P9_OK)
		p9_report_failed(p, "9p-flush", rc);
	else
		report(true, "9p-flush", "dev=%u oldtag=0x%x", p->num,
		       UNUSED_TAG);
}

void p9_check_share(struct p9_dev *p)
{
	if (!p9_session(p, P9_MSIZE, FID_ROOT, "9p-session"))
		return;
	check_walk(p);
	check_getattr(p);
	check_read(p);
	check_create(p);
	check_truncate(p);
	check_mkdir(p);
	check_symlink(p);
	check_rename(p);
	check_unlink(p);
	check_readdir(p);
	check_statfs(p);
	check_flush(p);
	p9_clunk(p, FID_ROOT);
}

/* The first msize of dir/data.bin, read as check_read does. */
static void check_ro_read(struct p9_dev *p)
{
	struct p9_qid qid;
	uint32_t got = 0;
	int rc = walk_path(p, FID_FILE, "dir/data.bin", &qid);

	if (rc == P9_OK)
		rc = p9_lopen(p, FID_FILE, P9_O_RDONLY);
	if (rc == P9_OK)
		rc = p9_read(p, FID_FILE, 0, p->msize - P9_RREAD_HEADER, &got);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-ro-read", rc);
	else
		report(got && mismatch(0, got, P9_SEED_DATA) < 0, "9p-ro-read",
		       "dev=%u bytes=%u", p->num, got);
	p9_clunk(p, FID_FILE);
}

/* A refusal check whose set-up (a walk) gave setup: reported as a
 * failure unless it went through, then the request's outcome rc. */
static void refused_after(struct p9_dev *p, const char *check, int setup,
			  int rc)
{
	if (setup != P9_OK)
		p9_report_failed(p, check, setup);
	else
		p9_report_refused(p, check, rc);
}

/* path walked to FID_FILE and opened with flags: refused. */
static void refuse_open(struct p9_dev *p, const char *check, const char *path,
			uint32_t flags)
{
	struct p9_qid qid;
	int rc = walk_path(p, FID_FILE, path, &qid);

	refused_after(p, check, rc, rc == P9_OK ? p9_lopen(p, FID_FILE, flags)
						: rc);
	p9_clunk(p, FID_FILE);
}

/* Every change to the share refused; the host sees it unchanged. */
void p9_check_read_only(struct p9_dev *p)
{
	struct p9_qid qid;
	int rc;

	if (!p9_session(p, P9_MSIZE, FID_ROOT, "9p-ro-session"))
		return;
	check_ro_read(p);
	refuse_open(p, "9p-ro-write", "dir/data.bin", P9_O_WRONLY);
	refuse_open(p, "9p-ro-open-trunc", "truncate.bin",
		    P9_O_RDWR | P9_O_TRUNC);
	rc = walk_path(p, FID_NEW, "", &qid);
	refused_after(p, "9p-ro-create", rc, rc == P9_OK ?
		      p9_lcreate(p, FID_NEW, "ro-created.bin",
				 P9_O_RDWR | P9_O_CREAT, 0644) : rc);
	p9_clunk(p, FID_NEW);
	p9_report_refused(p, "9p-ro-mkdir",
			  p9_mkdir(p, FID_ROOT, "ro-newdir", &qid));
	p9_report_refused(p, "9p-ro-symlink",
			  p9_symlink(p, FID_ROOT, "ro-link", LINK_TARGET));
	p9_report_refused(p, "9p-ro-rename",
			  p9_renameat(p, FID_ROOT, "old.txt", FID_ROOT,
				      "ro-renamed.txt"));
	p9_report_refused(p, "9p-ro-unlink",
			  p9_unlinkat(p, FID_ROOT, "doomed.txt", 0));
	rc = walk_path(p, FID_FILE, "truncate.bin", &qid);
	refused_after(p, "9p-ro-setattr", rc, rc == P9_OK ?
		      p9_truncate(p, FID_FILE, 0) : rc);
	p9_clunk(p, FID_FILE);
	p9_clunk(p, FID_ROOT);
}
