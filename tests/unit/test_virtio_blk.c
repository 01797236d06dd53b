/* virtio-blk without KVM, as test_virtio_net.c drives virtio-net: guest
 * RAM mapped, rings built by hand, the device on its threads, a scratch
 * image file; each case on both engines (io_uring, worker threads).
 * fdatasync and disk_ring_flush are wrapped (--wrap) so that each case
 * sees whether a flush went to the disk, and can make it fail; and
 * io_uring_submit, so that a case can have the kernel refuse it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
static enum blk_engine engine;	/* what the case runs on */
static char image[64];
static unsigned syncs;		/* flushes sent to the file */
static int sync_error;		/* errno a flush fails with, or 0 */

/* io_uring_submit calls to refuse, and the errno; the device's threads
 * read them while the case sets them. */
static unsigned submit_refusals;
static int submit_error;

int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
int __real_disk_ring_flush(struct disk_ring *r, uint64_t tag);
int __wrap_disk_ring_flush(struct disk_ring *r, uint64_t tag);

int __wrap_fdatasync(int fd)
{
	if (sync_error) {
		errno = sync_error;
		return -1;
	}
	__atomic_add_fetch(&syncs, 1, __ATOMIC_SEQ_CST);
	return __real_fdatasync(fd);
}

/* The ring's flush is an fsync the kernel does: counted as it is
 * queued, and failed before it is. */
int __wrap_disk_ring_flush(struct disk_ring *r, uint64_t tag)
{
	if (sync_error)
		return -sync_error;
	__atomic_add_fetch(&syncs, 1, __ATOMIC_SEQ_CST);
	return __real_disk_ring_flush(r, tag);
}

int __wrap_io_uring_submit(struct io_uring *ring)
{
	unsigned left = __atomic_load_n(&submit_refusals, __ATOMIC_SEQ_CST);

	while (left && !__atomic_compare_exchange_n(&submit_refusals, &left,
						    left - 1, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
		;
	if (left)
		return -__atomic_load_n(&submit_error, __ATOMIC_SEQ_CST);
	return __real_io_uring_submit(ring);
}

static void refuse_submits(int error, unsigned times)
{
	__atomic_store_n(&submit_error, error, __ATOMIC_SEQ_CST);
	__atomic_store_n(&submit_refusals, times, __ATOMIC_SEQ_CST);
}

static void drop_image(void)
{
	unlink(image);
}

/* A scratch image of DISK_SIZE bytes in dir; with direct, only where
 * O_DIRECT opens (tmpfs refuses it). */
static bool make_image(const char *dir, bool direct)
{
	int fd;

	snprintf(image, sizeof(image), "%s/thpvm-blk-XXXXXX", dir);
	fd = mkstemp(image);
	if (fd < 0)
		return false;
	if (ftruncate(fd, DISK_SIZE) == 0) {
		close(fd);
		fd = open(image, O_RDWR | (direct ? O_DIRECT : 0));
		if (fd >= 0) {
			close(fd);
			return true;
		}
	}
	close(fd);
	drop_image();
	return false;
}

static bool setup_disk(bool read_only, bool direct, unsigned queues)
{
	struct blk_options opts = {
		.disk = { .read_only = read_only, .direct = direct },
		.engine = engine,
		.queues = queues,
	};
	int err;

	if (!make_image("/tmp", direct) && !make_image("/var/tmp", direct)) {
		if (direct)
			SKIP("neither /tmp nor /var/tmp takes O_DIRECT "
			     "(tmpfs?)");
		else
			CHECK(!"scratch image");
		return false;
	}
	syncs = 0;
	sync_error = 0;
	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		drop_image();
		return false;
	}
	err = virtio_blk_create(&blk, 0, image, &opts, &ram);
	if (err) {
		/* qemu-user (the arm64 cross build's unit tests) has no
		 * io_uring; the emulated arm64 host runs these for real. */
		if (err == -ENOSYS && engine == BLK_ENGINE_IO_URING)
			SKIP("no io_uring in this kernel (ENOSYS)");
		else
			CHECK(!"virtio_blk_create");
		guest_ram_unmap(&ram);
		drop_image();
		return false;
	}
	CHECK_EQ(blk.engine, engine);
	blk.vdev.notify = count_irq;
	blk.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&blk.vdev), 0);
	driver_start(&blk.vdev, 1ULL << VIRTIO_F_VERSION_1 |
				1ULL << VIRTIO_BLK_F_FLUSH |
				(queues > 1 ? 1ULL << VIRTIO_BLK_F_MQ : 0),
		     queues);
	return true;
}

static bool setup(bool read_only)
{
	return setup_disk(read_only, false, 1);
}

static void teardown(void)
{
	virtio_blk_destroy(&blk);
	guest_ram_unmap(&ram);
	drop_image();
}

/* One request: header, data (len bytes at DATA_GPA, device-writable for
 * a read) unless len is 0, status; returns the status byte, or 0xff if it
 * did not complete. */
static uint8_t request_at(uint32_t type, uint64_t sector, uint64_t data,
			  uint32_t len)
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
		set_desc(0, n, data, len, VRING_DESC_F_NEXT |
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

static uint8_t request(uint32_t type, uint64_t sector, uint32_t len)
{
	return request_at(type, sector, DATA_GPA, len);
}

/* A write reaches the image; a flush completes only after one went to
 * the file. */
static void write_then_flush(void)
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
static void flush_error(void)
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
 * request; and what is not one. */
static void refusals(void)
{
	if (!setup(true))
		return;
	CHECK_EQ(request(VIRTIO_BLK_T_OUT, 0, SECTOR), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, DISK_SIZE / SECTOR, SECTOR),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(0x7f, 0, 0), VIRTIO_BLK_S_UNSUPP);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, DISK_SIZE / SECTOR - 1, SECTOR),
		 VIRTIO_BLK_S_OK);
	/* A read of no data is no error, on either engine. */
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 0, 0), VIRTIO_BLK_S_OK);
	teardown();
}

/* The image shrank under the device: a read past its new end is an I/O
 * error (nothing to read there), not a hang or a short success. */
static void image_shrank(void)
{
	if (!setup(false))
		return;
	CHECK_EQ(truncate(image, 4 * SECTOR), 0);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 8, SECTOR), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 2, SECTOR), VIRTIO_BLK_S_OK);
	teardown();
}

/* O_DIRECT with a buffer off the sector alignment: through the bounce
 * buffer (on io_uring, once the ring is empty), the data intact. */
static void direct_unaligned(void)
{
	uint64_t odd = DATA_GPA + 8;

	if (!setup_disk(false, true, 1))
		return;
	memset(gpa(odd), 0xa5, 2 * SECTOR);
	CHECK_EQ(request_at(VIRTIO_BLK_T_OUT, 5, odd, 2 * SECTOR),
		 VIRTIO_BLK_S_OK);
	memset(gpa(odd), 0, 2 * SECTOR);
	CHECK_EQ(request_at(VIRTIO_BLK_T_IN, 5, odd, 2 * SECTOR),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(*gpa(odd), 0xa5);
	CHECK_EQ(*gpa(odd + 2 * SECTOR - 1), 0xa5);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 5, 2 * SECTOR), VIRTIO_BLK_S_OK);
	CHECK_EQ(*gpa(DATA_GPA + SECTOR), 0xa5);
	teardown();
}

/* Request slot of queue q, for requests in flight on several queues at
 * once: its header, status byte and a sector of data. */
#define SLOTS 5			/* of 3 descriptors each, in QSIZE */
#define SLOT(q, i) ((q) * SLOTS + (i))
#define SLOT_HDR(q, i) (HDR_GPA + SLOT(q, i) * 16)
#define SLOT_STATUS(q, i) (STATUS_GPA + SLOT(q, i))
#define SLOT_DATA(q, i) (DATA_GPA + SLOT(q, i) * SECTOR)

/* Makes slot i of queue q a request for one sector at data, available
 * (no notification). */
static void publish_slot_at(unsigned q, unsigned i, uint32_t type,
			    uint64_t sector, uint64_t data)
{
	uint8_t *hdr = gpa(SLOT_HDR(q, i));
	unsigned d = 3 * i;

	put_le32(hdr, type);
	put_le32(hdr + 4, 0);
	put_le64(hdr + 8, sector);
	*gpa(SLOT_STATUS(q, i)) = 0xff;
	set_desc(q, d, SLOT_HDR(q, i), 16, VRING_DESC_F_NEXT, d + 1);
	set_desc(q, d + 1, data, SECTOR, VRING_DESC_F_NEXT |
		 (type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0), d + 2);
	set_desc(q, d + 2, SLOT_STATUS(q, i), 1, VRING_DESC_F_WRITE, 0);
	publish(q, d);
}

/* The same with the slot's own sector of data. */
static void publish_slot(unsigned q, unsigned i, uint32_t type,
			 uint64_t sector)
{
	publish_slot_at(q, i, type, sector, SLOT_DATA(q, i));
}

/* Every slot of every queue: published first, then each queue kicked,
 * so that the queues' threads serve them at the same time; whether all
 * completed with OK on the queue they came from. Sector of slot i of q:
 * sector0 + SLOT(q, i). */
static bool requests_on_all(unsigned queues, uint32_t type,
			    uint64_t sector0)
{
	uint16_t before[BLK_MAX_QUEUES];
	bool ok = true;
	unsigned q, i;

	for (q = 0; q < queues; q++) {
		before[q] = used_idx(q);
		for (i = 0; i < SLOTS; i++)
			publish_slot(q, i, type, sector0 + SLOT(q, i));
	}
	for (q = 0; q < queues; q++)
		virtio_queue_kick(&blk.vdev, q);
	for (q = 0; q < queues; q++) {
		ok &= WAIT_FOR((uint16_t)(used_idx(q) - before[q]) == SLOTS);
		for (i = 0; i < SLOTS; i++)
			ok &= __atomic_load_n(gpa(SLOT_STATUS(q, i)),
					      __ATOMIC_ACQUIRE) ==
			      VIRTIO_BLK_S_OK;
	}
	return ok;
}

/* Multiqueue: offered with its queue count, a thread per queue, requests
 * on all queues at once served each on its own queue and interrupt, and
 * what one queue wrote read back through another. */
static void multiqueue(void)
{
	enum { QUEUES = 4 };
	unsigned q, i;
	bool same = true;

	if (!setup_disk(false, false, QUEUES))
		return;
	CHECK(blk.vdev.host_features & 1ULL << VIRTIO_BLK_F_MQ);
	CHECK_EQ(get_le16(&blk.config.num_queues), QUEUES);
	CHECK_EQ(blk.vdev.nr_threads, QUEUES);
	for (q = 0; q < QUEUES; q++)
		for (i = 0; i < SLOTS; i++)
			memset(gpa(SLOT_DATA(q, i)), 0x10 + SLOT(q, i),
			       SECTOR);
	CHECK(requests_on_all(QUEUES, VIRTIO_BLK_T_OUT, 0));
	for (q = 0; q < QUEUES; q++)
		CHECK(WAIT_FOR(irq_count(q) > 0));
	/* Read back shifted by one queue: slot i of q reads what slot i of
	 * q + 1 wrote. */
	memset(gpa(DATA_GPA), 0, QUEUES * SLOTS * SECTOR);
	CHECK(requests_on_all(QUEUES, VIRTIO_BLK_T_IN, SLOTS));
	for (q = 0; q + 1 < QUEUES; q++)
		for (i = 0; i < SLOTS; i++)
			same &= *gpa(SLOT_DATA(q, i) + SECTOR - 1) ==
				0x10 + SLOT(q + 1, i);
	CHECK(same);
	teardown();
}

/* Multiqueue and pause: while the device is paused none of its threads
 * takes a request from any queue; after resume every queue's are
 * served. */
static void multiqueue_pause(void)
{
	enum { QUEUES = 3 };
	unsigned q, i;

	if (!setup_disk(false, false, QUEUES))
		return;
	virtio_device_pause(&blk.vdev);
	for (q = 0; q < QUEUES; q++) {
		for (i = 0; i < SLOTS; i++)
			publish_slot(q, i, VIRTIO_BLK_T_IN, SLOT(q, i));
		virtio_queue_kick(&blk.vdev, q);
	}
	poll(NULL, 0, 100);
	for (q = 0; q < QUEUES; q++)
		CHECK_EQ(used_idx(q), 0);
	virtio_device_resume(&blk.vdev);
	for (q = 0; q < QUEUES; q++)
		CHECK(WAIT_FOR(used_idx(q) == SLOTS));
	teardown();
}

/* One queue: no VIRTIO_BLK_F_MQ, one thread (on either engine). */
static void test_single_queue(void)
{
	engine = BLK_ENGINE_THREADS;
	if (!setup(false))
		return;
	CHECK(!(blk.vdev.host_features & 1ULL << VIRTIO_BLK_F_MQ));
	CHECK_EQ(blk.vdev.nr_threads, 1);
	teardown();
}

/* O_DIRECT, two queues: an unaligned (bounced, widened) write on one
 * queue while aligned writes fill the other, and all of them intact. */
static void direct_unaligned_multiqueue(void)
{
	uint64_t odd = DATA_GPA + 0x8000 + 8;
	uint8_t back[SECTOR];
	bool same = true;
	unsigned i;
	int fd;

	if (!setup_disk(false, true, 2))
		return;
	for (i = 0; i < SLOTS; i++) {
		memset(gpa(SLOT_DATA(0, i)), 0x30 + i, SECTOR);
		publish_slot(0, i, VIRTIO_BLK_T_OUT, 64 + i);
	}
	memset(gpa(odd), 0xa5, SECTOR);
	publish_slot_at(1, 0, VIRTIO_BLK_T_OUT, 69, odd);
	virtio_queue_kick(&blk.vdev, 0);
	virtio_queue_kick(&blk.vdev, 1);
	CHECK(WAIT_FOR(used_idx(0) == SLOTS && used_idx(1) == 1));
	CHECK_EQ(*gpa(SLOT_STATUS(1, 0)), VIRTIO_BLK_S_OK);
	fd = open(image, O_RDONLY);
	CHECK(fd >= 0);
	for (i = 0; i < SLOTS && fd >= 0; i++) {
		same &= *gpa(SLOT_STATUS(0, i)) == VIRTIO_BLK_S_OK &&
			pread(fd, back, SECTOR, (64 + i) * SECTOR) == SECTOR &&
			back[0] == 0x30 + i && back[SECTOR - 1] == 0x30 + i;
	}
	CHECK(same);
	CHECK(fd >= 0 && pread(fd, back, SECTOR, 69 * SECTOR) == SECTOR &&
	      back[0] == 0xa5 && back[SECTOR - 1] == 0xa5);
	if (fd >= 0)
		close(fd);
	teardown();
}

/* io_uring: a submission the kernel puts off (EAGAIN, nothing else in
 * flight) is tried again until it goes; one it refuses for good (EINVAL
 * here, on every try) fails its request, and every later one, with an
 * I/O error, and the device's end waits for nothing that was never
 * submitted. */
static void test_ring_submit_refused(void)
{
	engine = BLK_ENGINE_IO_URING;
	if (!setup(false))
		return;
	refuse_submits(EAGAIN, 3);
	CHECK_EQ(request(VIRTIO_BLK_T_OUT, 1, SECTOR), VIRTIO_BLK_S_OK);
	CHECK_EQ(__atomic_load_n(&submit_refusals, __ATOMIC_SEQ_CST), 0);
	refuse_submits(EINVAL, UINT_MAX);
	CHECK_EQ(request(VIRTIO_BLK_T_OUT, 1, SECTOR), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(VIRTIO_BLK_T_IN, 1, SECTOR), VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(VIRTIO_BLK_T_FLUSH, 0, 0), VIRTIO_BLK_S_IOERR);
	teardown();
	refuse_submits(0, 0);
}

/* io_uring: the ring holds its own open of the image, not the locked
 * one, so the kernel's late freeing of a ring (after thpvm exits) does
 * not keep the image locked. Asked of the lock itself: a conflicting
 * lock is reported only to another open file description. */
static void test_ring_file_not_locked_one(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	engine = BLK_ENGINE_IO_URING;
	if (!setup(false))
		return;
	CHECK_EQ(fcntl(blk.queues[0].uring.file_fd, F_OFD_GETLK, &fl), 0);
	CHECK_EQ(fl.l_type, F_WRLCK);
	teardown();
}

#define ON_BOTH(name)							\
	static void test_##name##_io_uring(void)			\
	{								\
		engine = BLK_ENGINE_IO_URING;				\
		name();							\
	}								\
	static void test_##name##_threads(void)				\
	{								\
		engine = BLK_ENGINE_THREADS;				\
		name();							\
	}

ON_BOTH(write_then_flush)
ON_BOTH(flush_error)
ON_BOTH(refusals)
ON_BOTH(image_shrank)
ON_BOTH(direct_unaligned)
ON_BOTH(multiqueue)
ON_BOTH(multiqueue_pause)
ON_BOTH(direct_unaligned_multiqueue)

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_write_then_flush_io_uring),
		UNIT_TEST(test_write_then_flush_threads),
		UNIT_TEST(test_flush_error_io_uring),
		UNIT_TEST(test_flush_error_threads),
		UNIT_TEST(test_refusals_io_uring),
		UNIT_TEST(test_refusals_threads),
		UNIT_TEST(test_image_shrank_io_uring),
		UNIT_TEST(test_image_shrank_threads),
		UNIT_TEST(test_direct_unaligned_io_uring),
		UNIT_TEST(test_direct_unaligned_threads),
		UNIT_TEST(test_multiqueue_io_uring),
		UNIT_TEST(test_multiqueue_threads),
		UNIT_TEST(test_multiqueue_pause_io_uring),
		UNIT_TEST(test_multiqueue_pause_threads),
		UNIT_TEST(test_single_queue),
		UNIT_TEST(test_direct_unaligned_multiqueue_io_uring),
		UNIT_TEST(test_direct_unaligned_multiqueue_threads),
		UNIT_TEST(test_ring_submit_refused),
		UNIT_TEST(test_ring_file_not_locked_one),
	};

	return UNIT_RUN(tests);
}
