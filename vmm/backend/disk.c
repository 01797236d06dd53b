/* Disk formats and backing chains (see disk.h). */
#include "backend/disk.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/qcow2.h"
#include "lib/log.h"
#include "lib/util.h"

/* The images above the one being opened, for finding a chain that loops
 * back. */
struct chain {
	dev_t dev;
	ino_t ino;
	const struct chain *above;
};

static int open_chain(struct disk *d, const char *path,
		      const struct disk_options *o, unsigned depth,
		      const struct chain *above);

const char *disk_format_name(enum disk_format format)
{
	switch (format) {
	case DISK_FORMAT_RAW: return "raw";
	case DISK_FORMAT_QCOW2: return "qcow2";
	default: return "auto";
	}
}

static bool has_qcow2_magic(struct disk_image *file)
{
	uint8_t magic[4];
	struct iovec v = { .iov_base = magic, .iov_len = sizeof(magic) };

	return disk_image_readv(file, &v, 1, 0) == 0 &&
	       get_be32(magic) == QCOW2_MAGIC;
}

/* name as written in the image at path: absolute, or relative to the
 * image's directory (as QEMU resolves it). */
static char *backing_path(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	int dir = slash && name[0] != '/' ? slash - path + 1 : 0;
	char *out;

	if (asprintf(&out, "%.*s%s", dir, path, name) < 0)
		return NULL;
	return out;
}

static int backing_format(const struct disk *d, const char *name,
			  enum disk_format *format)
{
	if (!name[0])
		*format = DISK_FORMAT_AUTO;
	else if (!strcmp(name, "raw"))
		*format = DISK_FORMAT_RAW;
	else if (!strcmp(name, "qcow2"))
		*format = DISK_FORMAT_QCOW2;
	else {
		pr_err("disk %s: backing file format \"%s\" (thpvm reads raw "
		       "and qcow2)", d->file.path, name);
		return -ENOTSUP;
	}
	return 0;
}

/* The backing file a qcow2 image names, opened read-only in its turn. */
static int open_backing(struct disk *d, const struct qcow2_info *info,
			const struct disk_options *o, unsigned depth,
			const struct chain *self)
{
	struct disk_options bo = { .read_only = true, .direct = o->direct,
				   .l2_cache = o->l2_cache };
	struct disk *b;
	char *path;
	int err;

	err = backing_format(d, info->backing_format, &bo.format);
	if (err)
		return err;
	if (depth == DISK_MAX_BACKING) {
		pr_err("disk %s: more than %d backing files below it",
		       d->file.path, DISK_MAX_BACKING);
		return -ELOOP;
	}
	b = calloc(1, sizeof(*b));
	path = backing_path(d->file.path, info->backing);
	if (!b || !path) {
		free(b);
		free(path);
		return -ENOMEM;
	}
	b->backing_path = path;
	err = open_chain(b, path, &bo, depth + 1, self);
	if (err) {
		free(path);
		free(b);
		return err;
	}
	d->backing = b;
	return 0;
}

static int open_qcow2(struct disk *d, const struct disk_options *o,
		      bool detected, unsigned depth, const struct chain *self)
{
	struct qcow2_info info;
	int err;

	err = qcow2_open(&d->qcow2, &d->file, !o->read_only, o->l2_cache,
			 &info);
	if (err)
		return err;
	d->size = info.size;
	if (info.backing[0] && detected) {
		pr_err("disk %s: its qcow2 header names a backing file (%s), "
		       "which thpvm follows only for images given as "
		       "format=qcow2 (format=raw if it is a raw image that "
		       "only looks like qcow2)", d->file.path, info.backing);
		return -EPERM;
	}
	if (info.backing[0])
		err = open_backing(d, &info, o, depth, self);
	if (!err && !o->read_only)
		err = qcow2_start_writing(d->qcow2);
	return err;
}

static int check_loop(struct disk *d, const struct chain *above,
		      struct chain *self)
{
	struct stat st;

	if (fstat(d->file.fd, &st) < 0)
		return -errno;
	self->dev = st.st_dev;
	self->ino = st.st_ino;
	self->above = above;
	for (; above; above = above->above) {
		if (above->dev == st.st_dev && above->ino == st.st_ino) {
			pr_err("disk %s: the backing chain comes back to this "
			       "image", d->file.path);
			return -ELOOP;
		}
	}
	return 0;
}

static int open_chain(struct disk *d, const char *path,
		      const struct disk_options *o, unsigned depth,
		      const struct chain *above)
{
	struct chain self;
	bool detected = false;
	int err;

	d->read_only = o->read_only;
	err = disk_image_open(&d->file, path, o->read_only, o->direct);
	if (err)
		return err;
	err = check_loop(d, above, &self);
	d->format = o->format;
	if (!err && d->format == DISK_FORMAT_AUTO) {
		detected = true;
		d->format = has_qcow2_magic(&d->file) ? DISK_FORMAT_QCOW2 :
							 DISK_FORMAT_RAW;
	}
	if (!err && d->format == DISK_FORMAT_QCOW2) {
		err = open_qcow2(d, o, detected, depth, &self);
	} else if (!err) {
		d->size = d->file.size;
		/* Bounced O_DIRECT writes widen ranges to aligned blocks,
		 * which must not run past the end. */
		if (o->direct && d->size % d->file.direct_align) {
			pr_err("disk %s: ,direct needs a size that is a multiple "
			       "of %u bytes", path, d->file.direct_align);
			err = -EINVAL;
		}
		if (!err && d->file.file_bytes % DISK_SECTOR_SIZE)
			pr_warn("disk %s: the last %llu bytes are not a whole "
				"sector and are not visible to the guest", path,
				(unsigned long long)(d->file.file_bytes %
						     DISK_SECTOR_SIZE));
	}
	if (err)
		disk_close(d);
	return err;
}

int disk_open(struct disk *d, const char *path, const struct disk_options *o)
{
	memset(d, 0, sizeof(*d));
	d->file.fd = -1;
	return open_chain(d, path, o, 0, NULL);
}

void disk_close(struct disk *d)
{
	if (d->backing) {
		disk_close(d->backing);
		free(d->backing->backing_path);
		free(d->backing);
		d->backing = NULL;
	}
	/* Tables changed since the guest's last flush go to disk now, as
	 * QEMU writes them at close. */
	if (d->qcow2 && !d->read_only) {
		int err = qcow2_flush(d->qcow2);

		if (err)
			pr_err("disk %s: cannot write the qcow2 tables at "
			       "close: %s", d->file.path, strerror(-err));
	}
	qcow2_close(d->qcow2);
	d->qcow2 = NULL;
	/* Once: a failed open has closed it already. */
	if (d->file.fd >= 0)
		disk_image_close(&d->file);
}

static void iov_zero(const struct iovec *iov, unsigned nr)
{
	unsigned i;

	for (i = 0; i < nr; i++)
		memset(iov[i].iov_base, 0, iov[i].iov_len);
}

/* Bytes of a qcow2 image's unallocated clusters: the backing disk's,
 * zeros past its end or without one. */
static int backing_readv(struct disk *d, const struct iovec *iov,
			 unsigned nr, uint64_t offset, uint64_t len)
{
	struct iovec part[nr ? nr : 1];
	uint64_t have = 0;
	unsigned n;
	int err;

	if (d->backing && offset < d->backing->size)
		have = MIN(len, d->backing->size - offset);
	if (have) {
		memcpy(part, iov, nr * sizeof(*iov));
		n = iov_truncate(part, nr, have);
		err = disk_readv(d->backing, part, n, offset);
		if (err)
			return err;
	}
	n = iov_slice(iov, nr, have, part);
	iov_zero(part, n);
	return 0;
}

static int qcow2_readv(struct disk *d, const struct iovec *iov, unsigned nr,
		       uint64_t offset)
{
	uint64_t len = iov_bytes(iov, nr), done = 0;
	struct iovec part[nr ? nr : 1];
	struct qcow2_extent e;
	unsigned n;
	int err = 0;

	while (done < len && !err) {
		err = qcow2_map(d->qcow2, offset + done, len - done, &e);
		if (err)
			break;
		n = iov_slice(iov, nr, done, part);
		n = iov_truncate(part, n, e.len);
		switch (e.kind) {
		case QCOW2_DATA:
			err = disk_image_readv(&d->file, part, n, e.host);
			break;
		case QCOW2_ZERO:
			iov_zero(part, n);
			break;
		case QCOW2_BACKING:
			err = backing_readv(d, part, n, offset + done, e.len);
			break;
		case QCOW2_COMPRESSED:
			err = qcow2_read_compressed(d->qcow2, &e, part, n);
			break;
		}
		qcow2_io_done(d->qcow2);
		done += e.len;
	}
	return err;
}

int disk_readv(struct disk *d, const struct iovec *iov, unsigned nr,
	       uint64_t offset)
{
	if (d->qcow2)
		return qcow2_readv(d, iov, nr, offset);
	return disk_image_readv(&d->file, iov, nr, offset);
}

/* For copy-on-write: what a qcow2 disk's unallocated clusters read as. */
static int below_readv(void *ctx, const struct iovec *iov, unsigned nr,
		       uint64_t offset)
{
	return backing_readv(ctx, iov, nr, offset, iov_bytes(iov, nr));
}

static struct qcow2_below below_of(struct disk *d)
{
	return (struct qcow2_below){ .readv = below_readv, .ctx = d };
}

int disk_writev(struct disk *d, const struct iovec *iov, unsigned nr,
		uint64_t offset)
{
	struct qcow2_below below = below_of(d);

	if (d->read_only)
		return -EROFS;
	if (d->qcow2)
		return qcow2_writev(d->qcow2, iov, nr, offset, &below);
	return disk_image_writev(&d->file, iov, nr, offset);
}

int disk_flush(struct disk *d)
{
	if (d->qcow2)
		return qcow2_flush(d->qcow2);
	return disk_image_flush(&d->file);
}

int disk_discard(struct disk *d, uint64_t offset, uint64_t len)
{
	struct qcow2_below below = below_of(d);

	if (d->read_only)
		return -EROFS;
	if (d->qcow2)
		return qcow2_zero(d->qcow2, offset, len, true, &below);
	return disk_image_discard(&d->file, offset, len);
}

int disk_write_zeroes(struct disk *d, uint64_t offset, uint64_t len,
		      bool unmap)
{
	struct qcow2_below below = below_of(d);

	if (d->read_only)
		return -EROFS;
	if (d->qcow2)
		return qcow2_zero(d->qcow2, offset, len, false, &below);
	return disk_image_write_zeroes(&d->file, offset, len, unmap);
}

bool disk_is_raw(const struct disk *d)
{
	return !d->qcow2;
}

bool disk_map(struct disk *d, uint64_t offset, uint64_t len, bool write,
	      uint64_t *file_offset)
{
	struct qcow2_extent e;

	if (!d->qcow2) {
		*file_offset = offset;
		return true;
	}
	if (!len || qcow2_map(d->qcow2, offset, len, &e))
		return false;
	/* io_uring's transfers are all drained before a qcow2 disk's
	 * flush, where clusters are freed (blk_uring.c). */
	qcow2_io_done(d->qcow2);
	if (e.kind != QCOW2_DATA || e.len < len || (write && !e.copied))
		return false;
	*file_offset = e.host;
	return true;
}
