/* Raw disk images and block devices (see disk_image.h). */
#include "backend/disk_image.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

/* O_DIRECT on a file: 4 KiB suits every common filesystem and device. */
#define FILE_DIRECT_ALIGN 4096
#define ZERO_CHUNK (1u << 20)
/* Largest bounce buffer for unaligned O_DIRECT I/O. */
#define BOUNCE_CHUNK (1u << 20)

static int lock_image(struct disk_image *d)
{
	struct flock fl = {
		.l_type = d->read_only ? F_RDLCK : F_WRLCK,
		.l_whence = SEEK_SET,
	};
	int err;

	if (fcntl(d->fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES) {
		pr_err("disk %s: in use by another process (%s); a disk may be "
		       "shared only read-only", d->path,
		       d->read_only ? "open for writing" : "locked");
		return -EBUSY;
	}
	err = -errno;
	pr_err("disk %s: cannot lock: %s", d->path, strerror(-err));
	return err;
}

static int image_size(struct disk_image *d)
{
	struct stat st;
	uint64_t size;
	int err;

	if (fstat(d->fd, &st) < 0)
		return -errno;
	err = fd_size(d->fd, &st, &size);
	if (err == -EINVAL)
		pr_err("disk %s: not a regular file or a block device", d->path);
	if (err)
		return err;
	d->block_device = S_ISBLK(st.st_mode);
	d->direct_align = FILE_DIRECT_ALIGN;
	if (d->block_device) {
		int sector;

		if (ioctl(d->fd, BLKSSZGET, &sector) < 0)
			return -errno;
		d->direct_align = sector;
	}
	if (size < DISK_SECTOR_SIZE) {
		pr_err("disk %s: %llu bytes is smaller than one %d-byte sector",
		       d->path, (unsigned long long)size, DISK_SECTOR_SIZE);
		return -EINVAL;
	}
	d->file_bytes = size;
	d->size = ALIGN_DOWN(size, DISK_SECTOR_SIZE);
	return 0;
}

int disk_image_open(struct disk_image *d, const char *path, bool read_only,
		    bool direct)
{
	int flags = (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC |
		    (direct ? O_DIRECT : 0);
	int err;

	memset(d, 0, sizeof(*d));
	pthread_rwlock_init(&d->rmw_lock, NULL);
	d->path = path;
	d->read_only = read_only;
	d->direct = direct;
	d->fd = open(path, flags);
	if (d->fd < 0) {
		err = -errno;
		if (errno == EACCES || errno == EROFS)
			pr_err("disk %s: %s%s", path, strerror(errno),
			       read_only ? "" : " (add ,ro for a read-only disk)");
		else if (errno == EINVAL && direct)
			pr_err("disk %s: O_DIRECT is not supported here (drop "
			       ",direct)", path);
		else
			pr_err("disk %s: %s", path, strerror(errno));
		return err;
	}
	err = image_size(d);
	if (!err)
		err = lock_image(d);
	if (err) {
		if (err != -EINVAL && err != -EBUSY)
			pr_err("disk %s: %s", path, strerror(-err));
		close(d->fd);
		d->fd = -1;
	}
	return err;
}

void disk_image_close(struct disk_image *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	pthread_rwlock_destroy(&d->rmw_lock);
}

/* See rmw_lock: only O_DIRECT widens writes. */
static void write_begin(struct disk_image *d, bool widened)
{
	if (widened)
		pthread_rwlock_wrlock(&d->rmw_lock);
	else if (d->direct)
		pthread_rwlock_rdlock(&d->rmw_lock);
}

static void write_end(struct disk_image *d)
{
	if (d->direct)
		pthread_rwlock_unlock(&d->rmw_lock);
}

bool disk_image_bounces(const struct disk_image *d, const struct iovec *iov,
			unsigned nr, uint64_t offset)
{
	unsigned i;

	if (!d->direct)
		return false;
	if (!IS_ALIGNED(offset, d->direct_align))
		return true;
	for (i = 0; i < nr; i++)
		if (!IS_ALIGNED((uintptr_t)iov[i].iov_base, d->direct_align) ||
		    !IS_ALIGNED(iov[i].iov_len, d->direct_align))
			return true;
	return false;
}

/* preadv/pwritev until done; iov is copied so partial progress can move
 * through it. */
static int transfer(struct disk_image *d, const struct iovec *iov,
		    unsigned nr, uint64_t offset, bool write)
{
	struct iovec v[nr ? nr : 1];
	ssize_t n;

	memcpy(v, iov, nr * sizeof(*iov));
	while (nr) {
		n = write ? pwritev(d->fd, v, nr, offset) :
			    preadv(d->fd, v, nr, offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* the image shrank under us */
		offset += n;
		nr = iov_slice(v, nr, n, v);
	}
	return 0;
}

/* A place in an iovec array, for copying through it piece by piece. */
struct iov_cursor {
	const struct iovec *iov;
	size_t off;		/* bytes already used of iov[0] */
};

/* Copies n bytes between the cursor's place and buf, and moves on. */
static void iov_copy(struct iov_cursor *c, uint8_t *buf, uint64_t n,
		     bool to_iov)
{
	while (n) {
		size_t k = MIN(n, c->iov->iov_len - c->off);
		uint8_t *p = (uint8_t *)c->iov->iov_base + c->off;

		/* k is 0 on an empty iovec, whose base may be NULL. */
		if (k && to_iov)
			memcpy(p, buf, k);
		else if (k)
			memcpy(buf, p, k);
		buf += k;
		n -= k;
		c->off += k;
		if (c->off == c->iov->iov_len) {
			c->iov++;
			c->off = 0;
		}
	}
}

/* One bounced request: the bytes [lo, hi) of the image, copied through an
 * aligned buffer a piece at a time. */
struct bounce {
	struct disk_image *d;
	struct iov_cursor cur;
	uint8_t *buf;
	uint64_t lo, hi;
	bool write;
};

/* An aligned block read for the bounce buffer: where it runs past the
 * end of the file (a file that is not whole blocks, read near its end)
 * the rest reads as zeros. Under O_DIRECT only the end of the file makes
 * a read short, and what follows it would not be aligned. */
static int read_block(struct disk_image *d, uint8_t *buf, uint64_t n,
		      uint64_t pos)
{
	uint64_t got = 0;
	ssize_t r;

	while (got < n) {
		r = pread(d->fd, buf + got, n - got, pos + got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		got += r;
		if (!r || !IS_ALIGNED(got, d->direct_align))
			break;
	}
	memset(buf + got, 0, n - got);
	return 0;
}

/* The aligned piece [pos, pos + n) of the widened range. A write reads it
 * first where it covers the piece only in part, which happens only at the
 * two ends of the range. */
static int bounce_piece(struct bounce *b, uint64_t pos, uint64_t n)
{
	uint64_t from = MAX(pos, b->lo), to = MIN(pos + n, b->hi);
	struct iovec v = { .iov_base = b->buf, .iov_len = n };
	int err = 0;

	if (!b->write || from != pos || to != pos + n)
		err = read_block(b->d, b->buf, n, pos);
	if (err)
		return err;
	iov_copy(&b->cur, b->buf + (from - pos), to - from, !b->write);
	return b->write ? transfer(b->d, &v, 1, pos, true) : 0;
}

/* O_DIRECT with guest buffers that are not aligned: the range is widened
 * to aligned bounds and copied through an aligned buffer of at most
 * BOUNCE_CHUNK bytes, so a request of any size (up to 1 GiB from a guest)
 * costs at most that much memory per worker. A widened write holds
 * rmw_lock exclusively from its first read to its last write (see
 * disk_image.h). */
static int bounce(struct disk_image *d, const struct iovec *iov, unsigned nr,
		  uint64_t offset, bool write)
{
	uint64_t len = iov_bytes(iov, nr);
	uint64_t start = ALIGN_DOWN(offset, d->direct_align);
	uint64_t end = ALIGN_UP(offset + len, d->direct_align);
	/* Both are powers of two, so the larger is a multiple of the other. */
	uint64_t chunk = MIN(end - start, MAX(BOUNCE_CHUNK, d->direct_align));
	struct bounce b = {
		.d = d, .cur = { .iov = iov }, .lo = offset,
		.hi = offset + len, .write = write,
	};
	uint64_t pos;
	int err = 0;

	if (posix_memalign((void **)&b.buf, d->direct_align, chunk))
		return -ENOMEM;
	if (write)
		write_begin(d, start != offset || end != offset + len);
	for (pos = start; pos < end && !err; pos += chunk)
		err = bounce_piece(&b, pos, MIN(chunk, end - pos));
	if (write)
		write_end(d);
	free(b.buf);
	return err;
}

int disk_image_readv(struct disk_image *d, const struct iovec *iov,
		     unsigned nr, uint64_t offset)
{
	if (disk_image_bounces(d, iov, nr, offset))
		return bounce(d, iov, nr, offset, false);
	return transfer(d, iov, nr, offset, false);
}

int disk_image_writev(struct disk_image *d, const struct iovec *iov,
		      unsigned nr, uint64_t offset)
{
	int err;

	if (d->read_only)
		return -EROFS;
	if (disk_image_bounces(d, iov, nr, offset))
		return bounce(d, iov, nr, offset, true);
	write_begin(d, false);
	err = transfer(d, iov, nr, offset, true);
	write_end(d);
	return err;
}

int disk_image_flush(struct disk_image *d)
{
	while (fdatasync(d->fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int disk_image_discard(struct disk_image *d, uint64_t offset, uint64_t len)
{
	uint64_t range[2] = { offset, len };
	int err = 0;

	if (d->read_only)
		return -EROFS;
	write_begin(d, false);
	if (d->block_device ? ioctl(d->fd, BLKDISCARD, range) < 0 :
	    fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      offset, len) < 0)
		err = -errno;
	write_end(d);
	return err;
}

static int write_zero_buffers(struct disk_image *d, uint64_t offset,
			      uint64_t len)
{
	struct iovec v;
	void *zeros;
	int err = 0;

	if (posix_memalign(&zeros, FILE_DIRECT_ALIGN, ZERO_CHUNK))
		return -ENOMEM;
	memset(zeros, 0, ZERO_CHUNK);
	while (len && !err) {
		v.iov_base = zeros;
		v.iov_len = len < ZERO_CHUNK ? len : ZERO_CHUNK;
		err = disk_image_writev(d, &v, 1, offset);
		offset += v.iov_len;
		len -= v.iov_len;
	}
	free(zeros);
	return err;
}

static int zero_range(struct disk_image *d, uint64_t offset, uint64_t len,
		      bool unmap)
{
	uint64_t range[2] = { offset, len };
	int mode = unmap ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE :
			   FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;

	if (d->block_device)
		return ioctl(d->fd, BLKZEROOUT, range) < 0 ? -errno : 0;
	return fallocate(d->fd, mode, offset, len) < 0 ? -errno : 0;
}

int disk_image_write_zeroes(struct disk_image *d, uint64_t offset,
			    uint64_t len, bool unmap)
{
	int err;

	if (d->read_only)
		return -EROFS;
	write_begin(d, false);
	err = zero_range(d, offset, len, unmap);
	write_end(d);
	/* Filesystems and devices without these operations: write zeros
	 * (outside the lock, which the writes take themselves). */
	if (err == -EOPNOTSUPP || err == -ENOTTY || err == -EINVAL)
		err = write_zero_buffers(d, offset, len);
	return err;
}
