/* virtio-blk without KVM, as test_virtio_net.c drives virtio-net: guest
 * RAM mapped, rings built by hand, the device and its workers on their
 * threads, a scratch image file. fdatasync is wrapped (--wrap) so that
 * each case sees whether a flush reached the disk. */
#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/blk.h"

#define SECTOR 512
#define DISK_SIZE (1 * MiB)
#define HDR_GPA 0x100000
#define DATA_GPA 0x110000
#define STATUS_GPA 0x120000

static struct virtio_blk blk;
static char image[] = "/tmp/thpvm-blk-XXXXXX";
static unsigned syncs;		/* fdatasync calls that reached the file */
static int sync_error;		/* errno fdatasync fails with, or 0 */

int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);

int __wrap_fdatasync(int fd)
{
	if (sync_error) {
		errno = sync_error;
		return -1;
	}
	__atomic_add_fetch(&syncs, 1, __ATOMIC_SEQ_CST);
	return __real_fdatasync(fd);
}

static bool setup(bool read_only)
{
	int fd = mkstemp(image);

	if (fd < 0 || ftruncate(fd, DISK_SIZE)) {
		CHECK(!"scratch image");
		return false;
	}
	close(fd);
	syncs = 0;
	sync_error = 0;
	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	if (virtio_blk_create(&blk, 0, image, read_only, false, &ram)) {
		CHECK(!"virtio_blk_create");
		return false;
	}
	blk.vdev.notify = count_irq;
	blk.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&blk.vdev), 0);
	driver_start(&blk.vdev, 1ULL << VIRTIO_F_VERSION_1 |
				1ULL << VIRTIO_BLK_F_FLUSH, 1);
	return true;
}

static void teardown(void)
{
	virtio_blk_destroy(&blk);
	guest_ram_unmap(&ram);
	unlink(image);
	strcpy(image, "/tmp/thpvm-blk-XXXXXX");
}

/* One request: header, data (len bytes at DATA_GPA, device-writable for
 * a read) unless len is 0, status; returns the status byte, or 0xff if it
 * did not complete. */
static uint8_t request(uint32_t type, uint64_t sector, uint32_t len)
{
	uint16_t before = used_idx(0);
	uint8_t *hdr = gpa(HDR_GPA), *status = gpa(STATUS_GPA);
	unsigned n = 0;

	put_le32(hdr, type);
	put_le32(hdr + 4, 0);
	put_le64(hdr + 8, sector);
	*status = 0xff;
	set_desc(0, n, HDR_GPA, 16, VRING_DESC_F_NEXT, n + 1);
	n++;
	if (len) {
		set_desc(0, n, DATA_GPA, len, VRING_DESC_F_NEXT |
			 (type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0),
			 n + 1);
		n++;
	}
	set_desc(0, n, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&blk.vdev, 0);
	if (!WAIT_FOR(used_idx(0) != before))
		return 0xff;
	return __atomic_load_n(status, __ATOMIC_ACQUIRE);
}

/* A write reaches the image; a flush completes only after fdatasync. */
static void test_write_then_flush(void)
{
	uint8_t back[SECTOR];
	int fd;

	if (!setup(false))
		return;
	memset(gpa(DATA_GPA), 0x5a, SECTOR);
	CHECK_EQ(request(VIRTIO_BLK_T_OUT, 3, SECTOR), VIRTIO_BLK_S_OK);
	CHECK_EQ(syncs, 0);
	CHECK_EQ(request(VIRTIO_BLK_T_FLUSH, 0, 0), VIRTIO_BLK_S_OK);
	CHECK_EQ(syncs, 1);
	fd = open(image, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, back, SECTOR, 3 * SECTOR) == SECTOR);
	CHECK_EQ(back[0], 0x5a);
	CHECK_EQ(back[SECTOR - 1], 0x5a);
	close(fd);
	memset(gpa(DATA_GPA), 0, SECTOR);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 3, SECTOR), VIRTIO_BLK_S_OK);
	CHECK_EQ(*gpa(DATA_GPA + 7), 0x5a);
	teardown();
}

/* A flush the disk refuses is an I/O error, never a success. */
static void test_flush_error(void)
{
	if (!setup(false))
		return;
	sync_error = EIO;
	CHECK_EQ(request(VIRTIO_BLK_T_FLUSH, 0, 0), VIRTIO_BLK_S_IOERR);
	sync_error = 0;
	CHECK_EQ(request(VIRTIO_BLK_T_FLUSH, 0, 0), VIRTIO_BLK_S_OK);
	CHECK_EQ(syncs, 1);
	teardown();
}

/* Refusals: a write to a read-only disk, past its end, an unknown
 * request. */
static void test_refusals(void)
{
	if (!setup(true))
		return;
	CHECK_EQ(request(VIRTIO_BLK_T_OUT, 0, SECTOR), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, DISK_SIZE / SECTOR, SECTOR),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(0x7f, 0, 0), VIRTIO_BLK_S_UNSUPP);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, DISK_SIZE / SECTOR - 1, SECTOR),
		 VIRTIO_BLK_S_OK);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_write_then_flush),
		UNIT_TEST(test_flush_error),
		UNIT_TEST(test_refusals),
	};

	return UNIT_RUN(tests);
}
