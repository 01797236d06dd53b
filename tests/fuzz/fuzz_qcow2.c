/* qcow2 images as thpvm opens, reads and writes them (backend/disk.c,
 * qcow2*.c): the input is the image file. It is opened writable with its
 * format detected, so a backing file it names is refused rather than
 * opened on this host, with a small L2 cache so that tables are evicted
 * (and written out) and read again. The disk is read at its start,
 * middle and end, then written there (allocating clusters, growing the
 * refcount table where the crafted one is full), a range discarded and
 * one zeroed, and flushed: every table change goes through the image's
 * own, possibly lying, refcounts. A request may fail with -EIO, -ENOMEM
 * or -ENOSPC; none may crash, hang or touch memory outside its buffer
 * (ASan). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/disk.h"
#include "fuzz.h"
#include "lib/util.h"

#define CHUNK (64u << 10)
#define CHUNKS_AT_START 16
/* The smallest cache qcow2.c keeps: four tables. */
#define TINY_L2_CACHE 1

static int image_fd = -1;
static char image_path[64];
static uint8_t buf[CHUNK];

static void check(int err)
{
	if (err && err != -EIO && err != -ENOMEM && err != -ENOSPC)
		abort();
}

static void io_at(struct disk *d, uint64_t offset, bool write)
{
	struct iovec v[2] = {
		{ .iov_base = buf, .iov_len = 512 },
		{ .iov_base = buf + 512, .iov_len = CHUNK - 512 },
	};
	uint64_t len = MIN(CHUNK, d->size - offset);
	unsigned nr = len > 512 ? 2 : 1;

	v[nr - 1].iov_len = len - (nr - 1) * 512;
	check(write ? disk_writev(d, v, nr, offset) :
		      disk_readv(d, v, nr, offset));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct disk_options o = { .l2_cache = TINY_L2_CACHE };
	struct disk d;
	uint64_t off, mid;
	unsigned i;

	if (image_fd < 0) {
		image_fd = memfd_create("fuzz-qcow2", MFD_CLOEXEC);
		if (image_fd < 0)
			abort();
		snprintf(image_path, sizeof(image_path), "/proc/self/fd/%d",
			 image_fd);
	}
	if (ftruncate(image_fd, 0) || ftruncate(image_fd, size) ||
	    pwrite(image_fd, data, size, 0) != (ssize_t)size)
		abort();
	if (disk_open(&d, image_path, &o))
		return 0;
	memset(buf, 0xa5, sizeof(buf));
	mid = ALIGN_DOWN(d.size / 2, DISK_SECTOR_SIZE);
	for (i = 0, off = 0; i < CHUNKS_AT_START && off < d.size;
	     i++, off += CHUNK)
		io_at(&d, off, false);
	io_at(&d, mid, false);
	io_at(&d, d.size - MIN(d.size, CHUNK), false);
	io_at(&d, 0, true);
	io_at(&d, mid, true);
	io_at(&d, d.size - MIN(d.size, CHUNK), true);
	check(disk_discard(&d, 0, MIN(d.size, 2 * CHUNK)));
	check(disk_write_zeroes(&d, mid, MIN(d.size - mid, CHUNK), true));
	check(disk_flush(&d));
	io_at(&d, mid, false);
	disk_close(&d);
	return 0;
}
