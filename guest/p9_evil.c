/* Hostile 9P requests against a share (9p_hostile): walks and names
 * that lead out of it (`..` past its root, symbolic links pointing
 * out, names with '/'), reads and writes larger than the msize, fids
 * until the server runs out, fids used after their clunk. Each must be
 * refused or kept inside the share; the host checks that nothing outside
 * changed (tests/integration/p9_share.py). Runs its own session, with a
 * smaller msize than the buffers so that an oversized reply shows. */
#include "guest.h"
#include "lib.h"
#include "p9.h"

#define FID_ROOT		1
#define FID_A			2
#define FID_B			3
#define FID_MANY		1000
/* More than thpvm's server holds (P9_MAX_FIDS, 16384); QEMU's has no
 * limit, and after this many the check stops asking. */
#define FID_TRIES		17000
#define EVIL_MSIZE		(64 * 1024)
#define WRITE_TOO_BIG		(EVIL_MSIZE + 4096)
#define UNKNOWN_FID		0xdead
#define LONG_NAME		300	/* more than any NAME_MAX (255) */

static int walk_names(struct p9_dev *p, uint32_t fid, uint32_t newfid,
		      unsigned n, const char *const *names, unsigned *nwqid,
		      struct p9_qid *last)
{
	*last = p->root;
	return p9_walk(p, fid, newfid, n, names, nwqid, last);
}

/* A walk of the names from the root must not get to their end: refused,
 * or stopped short (newfid not made). */
static void must_not_reach(struct p9_dev *p, const char *check, unsigned n,
			   const char *const *names)
{
	struct p9_qid last;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_A, n, names, &nwqid, &last);

	if (rc > 0)
		report(true, check, "dev=%u ecode=%d", p->num, rc);
	else if (rc == P9_OK && nwqid < n)
		report(true, check, "dev=%u walked=%u of=%u", p->num, nwqid, n);
	else
		p9_report_refused(p, check, rc);
	if (rc == P9_OK && nwqid == n)
		p9_clunk(p, FID_A);
}

/* `..` at the root stays there, as on a mount point. */
static void check_dotdot(struct p9_dev *p)
{
	const char *up[] = { "dir", "..", "..", ".." };
	const char *out[] = { "..", "sentinel.txt" };
	const char *deep[] = { "dir", "..", "..", "..", "sentinel.txt" };
	struct p9_qid last;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_A, 4, up, &nwqid, &last);

	if (rc > 0)
		report(true, "9p-evil-dotdot-root", "dev=%u ecode=%d", p->num,
		       rc);
	else if (rc == P9_OK && nwqid == 4)
		report(last.path == p->root.path, "9p-evil-dotdot-root",
		       "dev=%u qid=0x%lx root=0x%lx", p->num, last.path,
		       p->root.path);
	else
		p9_report_failed(p, "9p-evil-dotdot-root", rc);
	if (rc == P9_OK && nwqid == 4)
		p9_clunk(p, FID_A);
	must_not_reach(p, "9p-evil-dotdot-out", 2, out);
	must_not_reach(p, "9p-evil-dotdot-deep", 5, deep);
}

/* Walks to the link name (a link itself may be walked to, as Linux's
 * lstat does) and opens it with flags: the open, or the walk, refused. */
static void open_link(struct p9_dev *p, const char *check, const char *name,
		      uint32_t flags)
{
	struct p9_qid last;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_A, 1, &name, &nwqid, &last);

	if (rc == P9_OK) {
		rc = p9_lopen(p, FID_A, flags);
		p9_clunk(p, FID_A);
	}
	p9_report_refused(p, check, rc);
}

/* Makes name in the directory the link dir_link seems to be: refused
 * (a file with lcreate, else a directory). */
static void make_in_link(struct p9_dev *p, const char *check,
			 const char *dir_link, const char *name, bool file)
{
	struct p9_qid last;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_A, 1, &dir_link, &nwqid, &last);

	if (rc == P9_OK) {
		rc = file ? p9_lcreate(p, FID_A, name, P9_O_RDWR | P9_O_CREAT,
				       0644)
			  : p9_mkdir(p, FID_A, name, &last);
		p9_clunk(p, FID_A);
	}
	p9_report_refused(p, check, rc);
}

/* The share's links out: escape_abs and escape_rel to the sentinel by
 * an absolute and a relative path, escape_abs_dir and escape_rel_dir to
 * the share's parent. */
static void check_links(struct p9_dev *p)
{
	const char *abs_dir[] = { "escape_abs_dir", "sentinel.txt" };
	const char *rel_dir[] = { "escape_rel_dir", "sentinel.txt" };

	must_not_reach(p, "9p-evil-link-walk-abs", 2, abs_dir);
	must_not_reach(p, "9p-evil-link-walk-rel", 2, rel_dir);
	open_link(p, "9p-evil-link-open-abs", "escape_abs", P9_O_RDONLY);
	open_link(p, "9p-evil-link-open-rel", "escape_rel",
		  P9_O_RDWR | P9_O_TRUNC);
	make_in_link(p, "9p-evil-link-create", "escape_rel_dir",
		     "planted.txt", true);
	make_in_link(p, "9p-evil-link-mkdir", "escape_abs_dir", "planted_dir",
		     false);
}

/* A clone of the root to FID_A, then a Tlcreate of name there. */
static int create_in_root(struct p9_dev *p, const char *name)
{
	struct p9_qid last;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_A, 0, 0, &nwqid, &last);

	if (rc == P9_OK) {
		rc = p9_lcreate(p, FID_A, name, P9_O_RDWR | P9_O_CREAT, 0644);
		p9_clunk(p, FID_A);
	}
	return rc;
}

/* Names that are not one name. */
static void check_names(struct p9_dev *p)
{
	struct p9_qid last;

	p9_report_refused(p, "9p-evil-create-slash",
			  create_in_root(p, "../planted-slash.txt"));
	p9_report_refused(p, "9p-evil-mkdir-slash",
			  p9_mkdir(p, FID_ROOT, "../planted-slash-dir", &last));
	p9_report_refused(p, "9p-evil-create-dotdot", create_in_root(p, ".."));
}

/* Requests no client builds: a walk of more names than 9P allows, a
 * name longer than any file system takes, a name whose length runs past
 * the end of its message. */
static void check_malformed(struct p9_dev *p)
{
	const char *names[P9_MAXWELEM + 1];
	char long_name[LONG_NAME + 1];
	struct p9_qid last;
	unsigned nwqid;
	int rc;

	for (unsigned i = 0; i <= P9_MAXWELEM; i++)
		names[i] = i % 2 ? ".." : "dir";
	rc = walk_names(p, FID_ROOT, FID_A, P9_MAXWELEM + 1, names, &nwqid,
			&last);
	if (rc == P9_OK)
		p9_clunk(p, FID_A);
	p9_report_refused(p, "9p-evil-walk-too-many", rc);
	memset(long_name, 'x', LONG_NAME);
	long_name[LONG_NAME] = 0;
	p9_report_refused(p, "9p-evil-long-name",
			  create_in_root(p, long_name));
	p9_begin(p, P9_TWALK);
	p9_put32(p, FID_ROOT);
	p9_put32(p, FID_A);
	p9_put16(p, 1);
	p9_put16(p, 1000);	/* a name of 1000 bytes, of which 3 come */
	for (const char *c = "dir"; *c; c++)
		p9_put8(p, *c);
	rc = p9_rpc(p, P9_TWALK);
	if (rc == P9_OK)
		p9_clunk(p, FID_A);
	p9_report_refused(p, "9p-evil-string-past-end", rc);
}

/* A read asking for more than the msize: refused (QEMU's device breaks
 * off), or answered within it (p9_rpc refuses a reply over the msize)
 * with the file's bytes. */
static void check_big_read(struct p9_dev *p)
{
	const char *path[] = { "dir", "data.bin" };
	const char *check = "9p-evil-big-read";
	struct p9_qid last;
	unsigned nwqid;
	uint32_t got = 0;
	int rc = walk_names(p, FID_ROOT, FID_A, 2, path, &nwqid, &last);

	if (rc == P9_OK)
		rc = p9_lopen(p, FID_A, P9_O_RDONLY);
	if (rc == P9_OK)
		rc = p9_read(p, FID_A, 0, P9_BUF_SIZE, &got);
	if (rc == P9_OK) {
		bool same = true;

		for (uint32_t i = 0; i < got && same; i++)
			same = p9_rx[P9_RREAD_HEADER + i] ==
			       p9_pattern(i, P9_SEED_DATA);
		report(same, check, "dev=%u count=%u msize=%u", p->num, got,
		       p->msize);
	} else {
		p9_report_refused(p, check, rc);
	}
	p9_clunk(p, FID_A);
}

/* bigwrite.bin, created empty: a write of more than the msize, and a
 * write whose count is more than the message carries, both refused. */
static void check_big_writes(struct p9_dev *p)
{
	struct p9_qid last;
	unsigned nwqid;
	uint32_t done;
	int rc = walk_names(p, FID_ROOT, FID_A, 0, 0, &nwqid, &last);

	if (rc == P9_OK)
		rc = p9_lcreate(p, FID_A, "bigwrite.bin",
				P9_O_RDWR | P9_O_CREAT | P9_O_TRUNC, 0644);
	if (rc != P9_OK) {
		p9_report_failed(p, "9p-evil-big-write", rc);
		p9_clunk(p, FID_A);
		return;
	}
	for (uint32_t i = 0; i < WRITE_TOO_BIG; i++)
		p9_tx[P9_TWRITE_HEADER + i] = p9_pattern(i, P9_SEED_EVIL);
	p9_report_refused(p, "9p-evil-big-write",
			  p9_write(p, FID_A, 0, WRITE_TOO_BIG, &done));
	p9_begin(p, P9_TWRITE);
	p9_put32(p, FID_A);
	p9_put64(p, 0);
	p9_put32(p, P9_BUF_SIZE);
	p->out += 16;		/* of the count's bytes, 16 */
	p9_report_refused(p, "9p-evil-write-count", p9_rpc(p, P9_TWRITE));
	p9_clunk(p, FID_A);
}

/* Clones of the root until the server refuses one (or FID_TRIES), all
 * clunked; then the server still makes and clunks a fid. */
static void check_fid_exhaustion(struct p9_dev *p)
{
	struct p9_qid last;
	unsigned made = 0, nwqid;
	int rc = P9_OK, limit;

	while (made < FID_TRIES && rc == P9_OK) {
		rc = walk_names(p, FID_ROOT, FID_MANY + made, 0, 0, &nwqid,
				&last);
		made += rc == P9_OK;
	}
	if (rc < 0) {
		p9_report_failed(p, "9p-evil-fids", rc);
		return;
	}
	limit = rc;
	for (unsigned i = 0; i < made; i++) {
		rc = p9_clunk(p, FID_MANY + i);
		if (rc != P9_OK) {
			p9_report_failed(p, "9p-evil-fids", rc);
			return;
		}
	}
	report(true, "9p-evil-fids", "dev=%u made=%u ecode=%d", p->num, made,
	       limit);
	rc = walk_names(p, FID_ROOT, FID_A, 0, 0, &nwqid, &last);
	if (rc == P9_OK)
		rc = p9_clunk(p, FID_A);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-evil-fids-after", rc);
	else
		report(true, "9p-evil-fids-after", "dev=%u", p->num);
}

/* A fid after its clunk, and one never made, are unknown. */
static void check_dead_fids(struct p9_dev *p)
{
	struct p9_qid last;
	struct p9_attr a;
	unsigned nwqid;
	int rc = walk_names(p, FID_ROOT, FID_B, 0, 0, &nwqid, &last);

	if (rc == P9_OK)
		rc = p9_clunk(p, FID_B);
	if (rc != P9_OK) {
		p9_report_failed(p, "9p-evil-clunked-use", rc);
		return;
	}
	p9_report_refused(p, "9p-evil-clunked-use", p9_getattr(p, FID_B, &a));
	p9_report_refused(p, "9p-evil-clunked-twice", p9_clunk(p, FID_B));
	p9_report_refused(p, "9p-evil-unknown-fid",
			  p9_getattr(p, UNKNOWN_FID, &a));
}

void p9_check_hostile(struct p9_dev *p)
{
	struct p9_attr a;
	int rc;

	if (!p9_session(p, EVIL_MSIZE, FID_ROOT, "9p-evil-session"))
		return;
	check_dotdot(p);
	check_links(p);
	check_names(p);
	check_malformed(p);
	check_big_read(p);
	check_big_writes(p);
	check_fid_exhaustion(p);
	check_dead_fids(p);
	rc = p9_getattr(p, FID_ROOT, &a);
	if (rc != P9_OK)
		p9_report_failed(p, "9p-evil-survived", rc);
	else
		report(a.qid.path == p->root.path, "9p-evil-survived",
		       "dev=%u", p->num);
	p9_clunk(p, FID_ROOT);
}
