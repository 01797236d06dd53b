/* The 9p server's operations on directories and their entries: listing,
 * making, linking, renaming and removing (see p9_fid.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backend/p9_fid.h"
#include "lib/util.h"

#define AT_REMOVEDIR_DOTL 0x200
/* An Rreaddir entry: qid[13] offset[8] type[1] name[s]. */
#define DIRENT_FIXED (P9_QID_SIZE + 8 + 1 + 2)

/* getdents64's record, which glibc does not declare. */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The entries of dir from offset on, as many as fit in out (cap bytes):
 * the bytes written, or -errno. Each entry's offset is the cookie of
 * the one after it, which the guest's next Treaddir starts from. */
static ssize_t list(int dir, uint64_t offset, uint8_t *out, size_t cap)
{
	struct p9_writer w = { out, cap, 0, false };
	char buf[16 * 1024];
	long n;

	if (lseek(dir, offset, SEEK_SET) < 0)
		return -errno;
	while ((n = getdents64(dir, buf, sizeof(buf))) > 0) {
		for (long pos = 0; pos < n;) {
			struct linux_dirent64 *d = (void *)(buf + pos);
			size_t len = strlen(d->d_name);
			struct p9_qid qid = {
				d->d_type == DT_DIR ? P9_QTDIR :
				d->d_type == DT_LNK ? P9_QTSYMLINK : P9_QTFILE,
				0, d->d_ino,
			};

			if (w.pos + DIRENT_FIXED + len > cap)
				return w.pos;
			p9_put_qid(&w, &qid);
			p9_put_u64(&w, d->d_off);
			p9_put_u8(&w, d->d_type);
			p9_put_str(&w, d->d_name, len);
			pos += d->d_reclen;
		}
	}
	return n < 0 ? -errno : (ssize_t)w.pos;
}

int p9_op_readdir(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	uint64_t offset = p9_get_u64(&rq->in);
	uint32_t count = p9_get_u32(&rq->in);
	struct p9_fid *f;
	uint8_t *ents;
	ssize_t n;
	int fd;

	if (rq->in.bad || offset > INT64_MAX)
		return -EINVAL;
	count = MIN(count, MIN(rq->msize, rq->resp_room) - P9_IO_HEADER);
	f = p9_fid_get(s, fid, NULL);
	if (!f)
		return -EBADF;
	fd = p9_fid_fd(s, f, NULL);
	ents = malloc(count ?: 1);
	if (fd < 0 || !ents) {
		n = ents ? -EBADF : -ENOMEM;
	} else {
		pthread_mutex_lock(&f->dir_lock);
		n = list(fd, offset, ents, count);
		pthread_mutex_unlock(&f->dir_lock);
	}
	p9_fid_put(s, f);
	if (n >= 0) {
		buf_to_iov(rq->resp, rq->nr_resp, P9_IO_HEADER, ents, n);
		p9_put_u32(&rq->out, n);
		rq->data_len = n;
	}
	free(ents);
	return n < 0 ? n : 0;
}

/* The reply to a message that made path: its qid. */
static int put_made(struct p9_server *s, struct p9_req *rq, const char *path)
{
	struct p9_qid qid;
	struct stat st;
	int fd, err;

	fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	err = p9_stat_fd(s, fd, &st, &qid);
	close(fd);
	if (!err)
		p9_put_qid(&rq->out, &qid);
	return err;
}

int p9_op_mkdir(struct p9_server *s, struct p9_req *rq)
{
	uint32_t dfid = p9_get_u32(&rq->in), mode;
	char name[NAME_MAX + 2], path[PATH_MAX];
	int dir, err;

	p9_get_str(&rq->in, name, sizeof(name));
	mode = p9_get_u32(&rq->in);
	p9_get_u32(&rq->in);	/* gid: the host user's */
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	dir = p9_open_entry(s, dfid, name, path);
	if (dir < 0)
		return dir;
	err = mkdirat(dir, name, mode & 07777) < 0 ? -errno : 0;
	close(dir);
	return err ?: put_made(s, rq, path);
}

int p9_op_symlink(struct p9_server *s, struct p9_req *rq)
{
	uint32_t dfid = p9_get_u32(&rq->in);
	char name[NAME_MAX + 2], target[PATH_MAX], path[PATH_MAX];
	int dir, err;

	p9_get_str(&rq->in, name, sizeof(name));
	/* Any target: the server never follows a link, the guest does. */
	p9_get_str(&rq->in, target, sizeof(target));
	p9_get_u32(&rq->in);	/* gid */
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	dir = p9_open_entry(s, dfid, name, path);
	if (dir < 0)
		return dir;
	err = symlinkat(target, dir, name) < 0 ? -errno : 0;
	close(dir);
	return err ?: put_made(s, rq, path);
}

int p9_op_mknod(struct p9_server *s, struct p9_req *rq)
{
	uint32_t dfid = p9_get_u32(&rq->in), mode, major, minor;
	char name[NAME_MAX + 2], path[PATH_MAX];
	int dir, err;

	p9_get_str(&rq->in, name, sizeof(name));
	mode = p9_get_u32(&rq->in);
	major = p9_get_u32(&rq->in);
	minor = p9_get_u32(&rq->in);
	p9_get_u32(&rq->in);	/* gid */
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	/* No device nodes: a guest's would open the host's devices. */
	if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		return -EPERM;
	dir = p9_open_entry(s, dfid, name, path);
	if (dir < 0)
		return dir;
	err = mknodat(dir, name, mode & (S_IFMT | 07777),
		      makedev(major, minor)) < 0 ? -errno : 0;
	close(dir);
	return err ?: put_made(s, rq, path);
}

int p9_op_link(struct p9_server *s, struct p9_req *rq)
{
	uint32_t dfid = p9_get_u32(&rq->in), fid = p9_get_u32(&rq->in);
	char name[NAME_MAX + 2], path[PATH_MAX], src[PATH_MAX];
	const char *base;
	int dir, from, err;

	p9_get_str(&rq->in, name, sizeof(name));
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	err = p9_fid_path(s, fid, src);
	if (err)
		return err;
	dir = p9_open_entry(s, dfid, name, path);
	if (dir < 0)
		return dir;
	from = p9_open_parent(s, src, &base);
	/* Flags 0: a symbolic link is linked, not followed. */
	err = from < 0 ? from :
	      linkat(from, base, dir, name, 0) < 0 ? -errno : 0;
	if (from >= 0)
		close(from);
	close(dir);
	return err;
}

/* Renames from (a path below the share) to dir/name, where dir is open
 * as to_dir, and has the fids follow. */
static int rename_to(struct p9_server *s, const char *from, int to_dir,
		     const char *name, const char *to)
{
	const char *base;
	int dir, err;

	dir = p9_open_parent(s, from, &base);
	if (dir < 0)
		return dir == -EINVAL ? -EBUSY : dir;
	err = renameat(dir, base, to_dir, name) < 0 ? -errno : 0;
	close(dir);
	if (!err)
		p9_fids_renamed(s, from, to);
	return err;
}

int p9_op_rename(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), dfid = p9_get_u32(&rq->in);
	char name[NAME_MAX + 2], from[PATH_MAX], to[PATH_MAX];
	int dir, err;

	p9_get_str(&rq->in, name, sizeof(name));
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	err = p9_fid_path(s, fid, from);
	if (err)
		return err;
	dir = p9_open_entry(s, dfid, name, to);
	if (dir < 0)
		return dir;
	err = rename_to(s, from, dir, name, to);
	close(dir);
	return err;
}

int p9_op_renameat(struct p9_server *s, struct p9_req *rq)
{
	uint32_t olddir = p9_get_u32(&rq->in), newdir;
	char oldname[NAME_MAX + 2], newname[NAME_MAX + 2];
	char from[PATH_MAX], to[PATH_MAX];
	int dir, old, err;

	p9_get_str(&rq->in, oldname, sizeof(oldname));
	newdir = p9_get_u32(&rq->in);
	p9_get_str(&rq->in, newname, sizeof(newname));
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	old = p9_open_entry(s, olddir, oldname, from);
	if (old < 0)
		return old;
	close(old);
	dir = p9_open_entry(s, newdir, newname, to);
	if (dir < 0)
		return dir;
	err = rename_to(s, from, dir, newname, to);
	close(dir);
	return err;
}

int p9_op_unlinkat(struct p9_server *s, struct p9_req *rq)
{
	uint32_t dfid = p9_get_u32(&rq->in), flags;
	char name[NAME_MAX + 2], path[PATH_MAX];
	int dir, err;

	p9_get_str(&rq->in, name, sizeof(name));
	flags = p9_get_u32(&rq->in);
	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	dir = p9_open_entry(s, dfid, name, path);
	if (dir < 0)
		return dir;
	err = unlinkat(dir, name, flags & AT_REMOVEDIR_DOTL ?
				  AT_REMOVEDIR : 0) < 0 ? -errno : 0;
	close(dir);
	return err;
}

/* Tremove: the file goes, and the fid with it whatever happened. */
int p9_op_remove(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char path[PATH_MAX];
	const char *base;
	int dir, err;

	if (rq->in.bad)
		return -EINVAL;
	err = p9_fid_path(s, fid, path);
	if (err)
		return err;
	dir = s->read_only ? -EROFS : p9_open_parent(s, path, &base);
	if (dir == -EINVAL)
		dir = -EBUSY;	/* the share's root */
	err = dir;
	if (dir >= 0) {
		err = unlinkat(dir, base, 0) < 0 ? -errno : 0;
		if (err == -EISDIR)
			err = unlinkat(dir, base, AT_REMOVEDIR) < 0 ? -errno : 0;
		close(dir);
	}
	p9_fid_remove(s, fid);
	return err;
}
