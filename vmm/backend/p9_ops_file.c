/* The 9p server's operations on one file: attributes, opening, reading
 * and writing, sync and locks (see p9_fid.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "backend/p9_fid.h"
#include "lib/util.h"

/* Tgetattr's request_mask and Rgetattr's valid: the fields of stat. */
#define GETATTR_BASIC 0x7ffULL
/* Tsetattr's valid. */
#define SETATTR_MODE 0x1
#define SETATTR_UID 0x2
#define SETATTR_GID 0x4
#define SETATTR_SIZE 0x8
#define SETATTR_ATIME 0x10
#define SETATTR_MTIME 0x20
#define SETATTR_ATIME_SET 0x80
#define SETATTR_MTIME_SET 0x100
/* Open flags as Linux's client sends them (its x86 values, on every
 * arch), which the host's O_ values need not match. */
#define DOTL_ACCMODE 03
#define DOTL_EXCL 0200
#define DOTL_TRUNC 01000
#define DOTL_APPEND 02000
#define DOTL_DSYNC 010000
#define DOTL_DIRECTORY 0200000
#define DOTL_SYNC 04000000
#define LOCK_SUCCESS 0
#define LOCK_TYPE_UNLCK 2

/* The host's flags for Linux's: the access mode and what changes the
 * file's contents or checks its kind; the rest (O_DIRECT, whose
 * alignment the guest's buffers need not have, O_NOATIME, ...) are
 * dropped, as QEMU does. A share never opens what would block a thread
 * (a FIFO without a writer) or become a terminal. */
static int host_flags(uint32_t dotl)
{
	static const struct { uint32_t dotl; int host; } map[] = {
		{ DOTL_EXCL, O_EXCL }, { DOTL_TRUNC, O_TRUNC },
		{ DOTL_APPEND, O_APPEND }, { DOTL_DSYNC, O_DSYNC },
		{ DOTL_DIRECTORY, O_DIRECTORY }, { DOTL_SYNC, O_SYNC },
	};
	int flags = (dotl & DOTL_ACCMODE) | O_NONBLOCK | O_NOCTTY;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (dotl & map[i].dotl)
			flags |= map[i].host;
	return flags;
}

static bool changes_file(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || flags & O_TRUNC;
}

/* fid's file as an fd: its open one if it has one (*own false), or one
 * opened O_PATH for the call, which the caller closes. */
static int fid_fd(struct p9_server *s, struct p9_fid *f, const char *path,
		  bool *own)
{
	int fd = p9_fid_fd(s, f, NULL);

	*own = fd < 0;
	return *own ? p9_open(s, path, O_PATH, 0) : fd;
}

int p9_op_getattr(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char path[PATH_MAX];
	struct p9_fid *f;
	struct p9_qid qid;
	struct stat st;
	bool own;
	int fd, err;

	p9_get_u64(&rq->in);	/* request_mask: all of it is cheap */
	if (rq->in.bad)
		return -EINVAL;
	f = p9_fid_get(s, fid, path);
	if (!f)
		return -EBADF;
	fd = fid_fd(s, f, path, &own);
	err = fd < 0 ? fd : p9_stat_fd(s, fd, &st, &qid);
	if (own && fd >= 0)
		close(fd);
	p9_fid_put(s, f);
	if (err)
		return err;
	p9_put_u64(&rq->out, GETATTR_BASIC);
	p9_put_qid(&rq->out, &qid);
	p9_put_u32(&rq->out, st.st_mode);
	p9_put_u32(&rq->out, st.st_uid);
	p9_put_u32(&rq->out, st.st_gid);
	p9_put_u64(&rq->out, st.st_nlink);
	p9_put_u64(&rq->out, st.st_rdev);
	p9_put_u64(&rq->out, st.st_size);
	p9_put_u64(&rq->out, st.st_blksize);
	p9_put_u64(&rq->out, st.st_blocks);
	p9_put_u64(&rq->out, st.st_atim.tv_sec);
	p9_put_u64(&rq->out, st.st_atim.tv_nsec);
	p9_put_u64(&rq->out, st.st_mtim.tv_sec);
	p9_put_u64(&rq->out, st.st_mtim.tv_nsec);
	p9_put_u64(&rq->out, st.st_ctim.tv_sec);
	p9_put_u64(&rq->out, st.st_ctim.tv_nsec);
	/* btime, gen, data_version: not asked for by GETATTR_BASIC. */
	for (int i = 0; i < 4; i++)
		p9_put_u64(&rq->out, 0);
	return 0;
}

/* chmod of the file fd (O_PATH) is, through its /proc/self/fd link,
 * which reaches that very inode whatever its path has become since (an
 * O_PATH fd cannot fchmod, and fchmodat cannot leave a symbolic link
 * unfollowed). */
static int chmod_fd(int fd, mode_t mode)
{
	char link[32];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -EOPNOTSUPP;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return chmod(link, mode & 07777) < 0 ? -errno : 0;
}

static int truncate_fd(struct p9_server *s, struct p9_fid *f,
		       const char *path, int fd, uint64_t size)
{
	int access, open_fd = p9_fid_fd(s, f, &access), wfd, err;
	struct stat st;

	if (size > INT64_MAX)
		return -EFBIG;
	if (open_fd >= 0 && access != O_RDONLY)
		return ftruncate(open_fd, size) < 0 ? -errno : 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	wfd = p9_open(s, path, O_WRONLY | O_NONBLOCK, 0);
	if (wfd < 0)
		return wfd;
	err = ftruncate(wfd, size) < 0 ? -errno : 0;
	close(wfd);
	return err;
}

/* Times set on path's entry itself, never through a symbolic link. */
static int set_times(struct p9_server *s, const char *path,
		     const struct timespec ts[2])
{
	const char *base;
	int dir, err;

	if (!path[0])
		return utimensat(s->root_fd, ".", ts, 0) < 0 ? -errno : 0;
	dir = p9_open_parent(s, path, &base);
	if (dir < 0)
		return dir;
	err = utimensat(dir, base, ts, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(dir);
	return err;
}

static struct timespec time_of(uint32_t valid, uint32_t given,
			       uint32_t set, uint64_t sec, uint64_t nsec)
{
	if (!(valid & given))
		return (struct timespec){ 0, UTIME_OMIT };
	if (!(valid & set))
		return (struct timespec){ 0, UTIME_NOW };
	return (struct timespec){ (time_t)sec, (long)nsec };
}

int p9_op_setattr(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), valid = p9_get_u32(&rq->in);
	uint32_t mode = p9_get_u32(&rq->in), uid = p9_get_u32(&rq->in);
	uint32_t gid = p9_get_u32(&rq->in);
	uint64_t size = p9_get_u64(&rq->in);
	uint64_t as = p9_get_u64(&rq->in), ans = p9_get_u64(&rq->in);
	uint64_t ms = p9_get_u64(&rq->in), mns = p9_get_u64(&rq->in);
	struct timespec ts[2] = {
		time_of(valid, SETATTR_ATIME, SETATTR_ATIME_SET, as, ans),
		time_of(valid, SETATTR_MTIME, SETATTR_MTIME_SET, ms, mns),
	};
	char path[PATH_MAX];
	struct p9_fid *f;
	int fd, err = 0;

	if (rq->in.bad)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	if ((ts[0].tv_nsec != UTIME_OMIT && ts[0].tv_nsec != UTIME_NOW &&
	     ans >= 1000000000) ||
	    (ts[1].tv_nsec != UTIME_OMIT && ts[1].tv_nsec != UTIME_NOW &&
	     mns >= 1000000000))
		return -EINVAL;
	f = p9_fid_get(s, fid, path);
	if (!f)
		return -EBADF;
	fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0) {
		p9_fid_put(s, f);
		return fd;
	}
	if (valid & SETATTR_MODE)
		err = chmod_fd(fd, mode);
	if (!err && valid & (SETATTR_UID | SETATTR_GID) &&
	    fchownat(fd, "", valid & SETATTR_UID ? uid : (uid_t)-1,
		     valid & SETATTR_GID ? gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		err = -errno;
	if (!err && valid & SETATTR_SIZE)
		err = truncate_fd(s, f, path, fd, size);
	if (!err && valid & (SETATTR_ATIME | SETATTR_MTIME))
		err = set_times(s, path, ts);
	close(fd);
	p9_fid_put(s, f);
	return err;
}

int p9_op_statfs(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char path[PATH_MAX];
	struct statfs st;
	int fd, err;

	if (rq->in.bad)
		return -EINVAL;
	fd = p9_fid_path(s, fid, path);
	if (!fd)
		fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	err = fstatfs(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	p9_put_u32(&rq->out, st.f_type);
	p9_put_u32(&rq->out, st.f_bsize);
	p9_put_u64(&rq->out, st.f_blocks);
	p9_put_u64(&rq->out, st.f_bfree);
	p9_put_u64(&rq->out, st.f_bavail);
	p9_put_u64(&rq->out, st.f_files);
	p9_put_u64(&rq->out, st.f_ffree);
	p9_put_u64(&rq->out, (uint32_t)st.f_fsid.__val[0] |
			     (uint64_t)(uint32_t)st.f_fsid.__val[1] << 32);
	p9_put_u32(&rq->out, st.f_namelen);
	return 0;
}

int p9_op_readlink(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	int fd;

	if (rq->in.bad)
		return -EINVAL;
	fd = p9_fid_path(s, fid, path);
	if (!fd)
		fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	n = readlinkat(fd, "", target, sizeof(target));
	if (n < 0)
		n = -errno;
	/* An empty path names no link unless the fd is one: what is no
	 * link gets readlink(2)'s EINVAL. */
	if (n == -ENOENT)
		n = -EINVAL;
	close(fd);
	if (n < 0)
		return n;
	if (n == sizeof(target))
		return -ENAMETOOLONG;
	p9_put_str(&rq->out, target, n);
	return 0;
}

/* Opens path as flags for Tlopen: its kind is checked on an O_PATH fd
 * first, so that the open itself never reaches a device node (whose
 * open can act), and the file opened must be that same one. */
static int open_checked(struct p9_server *s, const char *path, int flags,
			struct p9_qid *qid)
{
	struct stat before, after;
	int fd, err;

	fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	err = p9_stat_fd(s, fd, &before, NULL);
	close(fd);
	if (err)
		return err;
	if (S_ISCHR(before.st_mode) || S_ISBLK(before.st_mode))
		return -EACCES;
	if (S_ISLNK(before.st_mode))
		return -ELOOP;
	fd = p9_open(s, path, flags, 0);
	if (fd < 0)
		return fd;
	err = p9_stat_fd(s, fd, &after, qid);
	if (!err && (after.st_ino != before.st_ino ||
		     after.st_dev != before.st_dev))
		err = -EAGAIN;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The reply to Tlopen and Tlcreate: the qid and an iounit of 0 (the
 * client then sizes its reads and writes by the msize). */
static void put_opened(struct p9_req *rq, const struct p9_qid *qid)
{
	p9_put_qid(&rq->out, qid);
	p9_put_u32(&rq->out, 0);
}

int p9_op_lopen(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), dotl = p9_get_u32(&rq->in);
	int flags = host_flags(dotl), fd, err;
	char path[PATH_MAX];
	struct p9_fid *f;
	struct p9_qid qid;

	if (rq->in.bad || (dotl & DOTL_ACCMODE) == DOTL_ACCMODE)
		return -EINVAL;
	if (s->read_only && changes_file(flags))
		return -EROFS;
	f = p9_fid_get(s, fid, path);
	if (!f)
		return -EBADF;
	fd = p9_fid_fd(s, f, NULL) >= 0 ? -EBADF :
	     open_checked(s, path, flags, &qid);
	err = fd < 0 ? fd : p9_fid_set_open(s, f, NULL, fd, flags & O_ACCMODE);
	p9_fid_put(s, f);
	if (err)
		return err;
	put_opened(rq, &qid);
	return 0;
}

/* Tlcreate's open: a new file, or, unless the guest asked for O_EXCL,
 * the one already there opened as Tlopen would (so never a device node
 * the host put in the share). Returns the fd or -errno. */
static int create_or_open(struct p9_server *s, const char *path, int flags,
			  mode_t mode, struct p9_qid *qid)
{
	struct stat st;
	int fd, err;

	fd = p9_open(s, path, flags | O_CREAT | O_EXCL, mode);
	if (fd == -EEXIST && !(flags & O_EXCL))
		return open_checked(s, path, flags, qid);
	if (fd < 0)
		return fd;
	err = p9_stat_fd(s, fd, &st, qid);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int p9_op_lcreate(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char name[NAME_MAX + 2], path[PATH_MAX], dir[PATH_MAX];
	uint32_t dotl, mode;
	struct p9_fid *f;
	struct p9_qid qid;
	int flags, fd, err;

	p9_get_str(&rq->in, name, sizeof(name));
	dotl = p9_get_u32(&rq->in);
	mode = p9_get_u32(&rq->in);
	p9_get_u32(&rq->in);	/* gid: the file is the host user's */
	if (rq->in.bad || (dotl & DOTL_ACCMODE) == DOTL_ACCMODE)
		return -EINVAL;
	if (s->read_only)
		return -EROFS;
	flags = host_flags(dotl);
	f = p9_fid_get(s, fid, dir);
	if (!f)
		return -EBADF;
	err = p9_fid_fd(s, f, NULL) >= 0 ? -EBADF :
	      p9_path_join(path, dir, name);
	fd = err ?: create_or_open(s, path, flags, mode & 07777, &qid);
	err = fd < 0 ? fd : p9_fid_set_open(s, f, path, fd,
					     flags & O_ACCMODE);
	p9_fid_put(s, f);
	if (err)
		return err;
	put_opened(rq, &qid);
	return 0;
}

/* Tread and Twrite: count bytes at offset of fid's open file, between
 * it and the guest's buffers (bufs, from skip on), straight. Returns the
 * bytes moved or -errno; -EBADF unless fid is open for the direction. */
static ssize_t fid_io(struct p9_server *s, uint32_t fid, bool write,
		      uint64_t offset, uint32_t count,
		      const struct iovec *bufs, unsigned nr_bufs,
		      uint64_t skip)
{
	struct iovec iov[P9_MAX_BUFFERS];
	struct p9_fid *f = p9_fid_get(s, fid, NULL);
	int fd, access;
	unsigned nr;
	ssize_t n;

	if (!f)
		return -EBADF;
	fd = p9_fid_fd(s, f, &access);
	if (fd < 0 || access == (write ? O_RDONLY : O_WRONLY)) {
		p9_fid_put(s, f);
		return -EBADF;
	}
	nr = iov_truncate(iov, iov_slice(bufs, nr_bufs, skip, iov), count);
	do
		n = write ? pwritev(fd, iov, nr, offset) :
			    preadv(fd, iov, nr, offset);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	p9_fid_put(s, f);
	return n;
}

int p9_op_read(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	uint64_t offset = p9_get_u64(&rq->in);
	uint32_t count = p9_get_u32(&rq->in);
	ssize_t n;

	if (rq->in.bad || offset > INT64_MAX)
		return -EINVAL;
	if (rq->nr_resp > P9_MAX_BUFFERS)
		return -ENOBUFS;
	count = MIN(count, MIN(rq->msize, rq->resp_room) - P9_IO_HEADER);
	n = fid_io(s, fid, false, offset, count, rq->resp, rq->nr_resp,
		   P9_IO_HEADER);
	if (n < 0)
		return n;
	p9_put_u32(&rq->out, n);
	rq->data_len = n;
	return 0;
}

int p9_op_write(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	uint64_t offset = p9_get_u64(&rq->in);
	uint32_t count = p9_get_u32(&rq->in);
	ssize_t n;

	if (rq->in.bad || offset > INT64_MAX ||
	    count > rq->size - P9_TWRITE_HEADER)
		return -EINVAL;
	if (rq->nr_req > P9_MAX_BUFFERS)
		return -ENOBUFS;
	n = fid_io(s, fid, true, offset, count, rq->req, rq->nr_req,
		   P9_TWRITE_HEADER);
	if (n < 0)
		return n;
	p9_put_u32(&rq->out, n);
	return 0;
}

int p9_op_fsync(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), datasync = p9_get_u32(&rq->in);
	struct p9_fid *f;
	int fd, err;

	if (rq->in.bad)
		return -EINVAL;
	f = p9_fid_get(s, fid, NULL);
	if (!f)
		return -EBADF;
	fd = p9_fid_fd(s, f, NULL);
	if (fd < 0)
		err = -EBADF;
	else
		err = (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
	p9_fid_put(s, f);
	return err;
}

/* POSIX locks are the guest's own business: one guest mounts a share,
 * and its kernel orders its own processes' locks. As QEMU does, every
 * lock is granted and none is reported held. */
int p9_op_lock(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char client[256];
	int err;

	p9_get_u8(&rq->in);	/* type */
	p9_get_u32(&rq->in);	/* flags */
	p9_get_u64(&rq->in);	/* start */
	p9_get_u64(&rq->in);	/* length */
	p9_get_u32(&rq->in);	/* proc_id */
	p9_get_str(&rq->in, client, sizeof(client));
	if (rq->in.bad)
		return -EINVAL;
	err = p9_fid_path(s, fid, NULL);
	if (err)
		return err;
	p9_put_u8(&rq->out, LOCK_SUCCESS);
	return 0;
}

int p9_op_getlock(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), proc_id;
	uint64_t start, length;
	char client[256];
	int err;

	p9_get_u8(&rq->in);	/* type */
	start = p9_get_u64(&rq->in);
	length = p9_get_u64(&rq->in);
	proc_id = p9_get_u32(&rq->in);
	p9_get_str(&rq->in, client, sizeof(client));
	if (rq->in.bad)
		return -EINVAL;
	err = p9_fid_path(s, fid, NULL);
	if (err)
		return err;
	p9_put_u8(&rq->out, LOCK_TYPE_UNLCK);
	p9_put_u64(&rq->out, start);
	p9_put_u64(&rq->out, length);
	p9_put_u32(&rq->out, proc_id);
	p9_put_str(&rq->out, client, strlen(client));
	return 0;
}
