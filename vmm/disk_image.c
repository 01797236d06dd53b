/* Raw disk images and block devices (see disk_image.h). */
#include "disk_image.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* O_DIRECT on a file: 4 KiB suits every common filesystem and device. */
#define FILE_DIRECT_ALIGN 4096
#define ZERO_CHUNK (1u << 20)

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
		pr_err("%s: in use by another process (%s); a disk may be "
		       "shared only read-only", d->path,
		       d->read_only ? "open for writing" : "locked");
		return -EBUSY;
	}
	err = -errno;
	pr_err("%s: cannot lock: %s", d->path, strerror(-err));
	return err;
}

static int image_size(struct disk_image *d)
{
	struct stat st;
	uint64_t size;

	if (fstat(d->fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		int sector;

		d->block_device = true;
		if (ioctl(d->fd, BLKGETSIZE64, &size) < 0 ||
		    ioctl(d->fd, BLKSSZGET, &sector) < 0)
			return -errno;
		d->direct_align = sector;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
		d->direct_align = FILE_DIRECT_ALIGN;
	} else {
		pr_err("%s: not a regular file or a block device", d->path);
		return -EINVAL;
	}
	if (size < DISK_SECTOR_SIZE) {
		pr_err("%s: %llu bytes is smaller than one %d-byte sector",
		       d->path, (unsigned long long)size, DISK_SECTOR_SIZE);
		return -EINVAL;
	}
	if (size % DISK_SECTOR_SIZE)
		pr_warn("%s: the last %llu bytes are not a whole sector and "
			"are not visible to the guest", d->path,
			(unsigned long long)(size % DISK_SECTOR_SIZE));
	d->size = ALIGN_DOWN(size, DISK_SECTOR_SIZE);
	/* Bounced O_DIRECT I/O widens ranges to aligned blocks, which must
	 * not run past the end. */
	if (d->direct && d->size % d->direct_align) {
		pr_err("%s: ,direct needs a size that is a multiple of %u "
		       "bytes", d->path, d->direct_align);
		return -EINVAL;
	}
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
			pr_err("%s: %s%s", path, strerror(errno),
			       read_only ? "" : " (add ,ro for a read-only disk)");
		else if (errno == EINVAL && direct)
			pr_err("%s: O_DIRECT is not supported here (drop "
			       ",direct)", path);
		else
			pr_err("%s: %s", path, strerror(errno));
		return err;
	}
	err = image_size(d);
	if (!err)
		err = lock_image(d);
	if (err) {
		if (err != -EINVAL && err != -EBUSY)
			pr_err("%s: %s", path, strerror(-err));
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

static bool direct_aligned(const struct disk_image *d,
			   const struct iovec *iov, unsigned nr,
			   uint64_t offset)
{
	unsigned i;

	if (!IS_ALIGNED(offset, d->direct_align))
		return false;
	for (i = 0; i < nr; i++)
		if (!IS_ALIGNED((uintptr_t)iov[i].iov_base, d->direct_align) ||
		    !IS_ALIGNED(iov[i].iov_len, d->direct_align))
			return false;
	return true;
}

static uint64_t iov_bytes(const struct iovec *iov, unsigned nr)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < nr; i++)
		n += iov[i].iov_len;
	return n;
}

/* preadv/pwritev until done; iov is copied so partial progress can move
 * through it. */
static int transfer(struct disk_image *d, const struct iovec *iov,
		    unsigned nr, uint64_t offset, bool write)
{
	struct iovec local[nr ? nr : 1];
	struct iovec *v = local;
	ssize_t n;

	memcpy(local, iov, nr * sizeof(*iov));
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
		while (nr && (size_t)n >= v->iov_len) {
			n -= v->iov_len;
			v++;
			nr--;
		}
		if (nr) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
	return 0;
}

/* O_DIRECT with guest buffers that are not aligned: one aligned copy.
 * The range is widened to aligned bounds, so a write first reads the
 * partial blocks at its ends. */
static int bounce(struct disk_image *d, const struct iovec *iov, unsigned nr,
		  uint64_t offset, bool write)
{
	uint64_t len = iov_bytes(iov, nr);
	uint64_t start = ALIGN_DOWN(offset, d->direct_align);
	uint64_t end = ALIGN_UP(offset + len, d->direct_align);
	struct iovec b;
	uint8_t *buf, *p;
	bool need_read;
	unsigned i;
	int err;

	if (posix_memalign((void **)&buf, d->direct_align, end - start))
		return -ENOMEM;
	b.iov_base = buf;
	b.iov_len = end - start;
	need_read = !write || start != offset || end != offset + len;
	if (write)
		write_begin(d, need_read);
	err = need_read ? transfer(d, &b, 1, start, false) : 0;
	for (i = 0, p = buf + (offset - start); i < nr && !err; i++) {
		if (write)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	if (write && !err)
		err = transfer(d, &b, 1, start, true);
	if (write)
		write_end(d);
	free(buf);
	return err;
}

int disk_image_readv(struct disk_image *d, const struct iovec *iov,
		     unsigned nr, uint64_t offset)
{
	if (d->direct && !direct_aligned(d, iov, nr, offset))
		return bounce(d, iov, nr, offset, false);
	return transfer(d, iov, nr, offset, false);
}

int disk_image_writev(struct disk_image *d, const struct iovec *iov,
		      unsigned nr, uint64_t offset)
{
	int err;

	if (d->read_only)
		return -EROFS;
	if (d->direct && !direct_aligned(d, iov, nr, offset))
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
