/* Size and number parsing, whole-file reads, iovec slicing, eventfd
 * signalling. */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/util.h"
#include "unit.h"

static void test_size_parse_units(void)
{
	uint64_t v;

	CHECK_EQ(size_parse("512M", &v), 0);
	CHECK_EQ(v, 512ULL << 20);
	CHECK_EQ(size_parse("2G", &v), 0);
	CHECK_EQ(v, 2ULL << 30);
	CHECK_EQ(size_parse("2g", &v), 0);
	CHECK_EQ(v, 2ULL << 30);
	CHECK_EQ(size_parse("4096K", &v), 0);
	CHECK_EQ(v, 4096ULL << 10);
	CHECK_EQ(size_parse("1GiB", &v), 0);
	CHECK_EQ(v, 1ULL << 30);
	CHECK_EQ(size_parse("3MB", &v), 0);
	CHECK_EQ(v, 3ULL << 20);
	CHECK_EQ(size_parse("1T", &v), 0);
	CHECK_EQ(v, 1ULL << 40);
	/* A bare number is MiB, as for lkvm and QEMU; B alone is bytes. */
	CHECK_EQ(size_parse("123", &v), 0);
	CHECK_EQ(v, 123ULL << 20);
	CHECK_EQ(size_parse("123b", &v), 0);
	CHECK_EQ(v, 123);
}

static void test_size_parse_rejects(void)
{
	uint64_t v = 7;

	CHECK_EQ(size_parse("", &v), -EINVAL);
	CHECK_EQ(size_parse("M", &v), -EINVAL);
	CHECK_EQ(size_parse("-1G", &v), -EINVAL);
	CHECK_EQ(size_parse("1.5G", &v), -EINVAL);
	CHECK_EQ(size_parse("12X", &v), -EINVAL);
	CHECK_EQ(size_parse("12 M", &v), -EINVAL);
	CHECK_EQ(size_parse("0", &v), -EDOM);
	CHECK_EQ(size_parse("0M", &v), -EDOM);
	CHECK_EQ(size_parse("00GiB", &v), -EDOM);
	CHECK_EQ(size_parse("1Gx", &v), -EINVAL);
	CHECK_EQ(size_parse("99999999999999999999", &v), -ERANGE);
	CHECK_EQ(size_parse("17179869184G", &v), -ERANGE);
	CHECK_EQ(size_parse("17592186044416", &v), -ERANGE);	/* 2^44 MiB */
	CHECK_EQ(size_parse("12BB", &v), -EINVAL);
	CHECK_EQ(size_parse("12iB", &v), -EINVAL);
	CHECK_EQ(v, 7);
}

static void test_size_format(void)
{
	char buf[32];

	CHECK_STR(size_format(512ULL << 20, buf, sizeof(buf)), "512 MiB");
	CHECK_STR(size_format(3ULL << 29, buf, sizeof(buf)), "1.5 GiB");
	CHECK_STR(size_format(100, buf, sizeof(buf)), "100 B");
}

static void test_uint_parse(void)
{
	unsigned long v;

	CHECK_EQ(uint_parse("42", 100, &v), 0);
	CHECK_EQ(v, 42);
	CHECK_EQ(uint_parse("101", 100, &v), -ERANGE);
	CHECK_EQ(uint_parse("4x", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("-1", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("99999999999999999999999", ~0UL, &v), -ERANGE);
}

static void test_iov_slice(void)
{
	uint8_t a[8], b[4], c[6];
	struct iovec v[] = {
		{ a, sizeof(a) }, { NULL, 0 }, { b, sizeof(b) }, { c, sizeof(c) },
	};
	struct iovec out[4];

	/* Nothing skipped: only the empty entry goes. */
	CHECK_EQ(iov_slice(v, 4, 0, out), 3);
	CHECK(out[0].iov_base == a && out[0].iov_len == 8);
	CHECK(out[1].iov_base == b && out[1].iov_len == 4);
	/* Into the middle of an entry past an empty one. */
	CHECK_EQ(iov_slice(v, 4, 10, out), 2);
	CHECK(out[0].iov_base == b + 2 && out[0].iov_len == 2);
	CHECK(out[1].iov_base == c && out[1].iov_len == 6);
	/* Exactly to an entry's end, and past everything. */
	CHECK_EQ(iov_slice(v, 4, 12, out), 1);
	CHECK(out[0].iov_base == c);
	CHECK_EQ(iov_slice(v, 4, 18, out), 0);
	CHECK_EQ(iov_slice(v, 4, UINT64_MAX, out), 0);
	/* In place, as a partial transfer moves through its own array. */
	CHECK_EQ(iov_slice(v, 4, 3, v), 3);
	CHECK(v[0].iov_base == a + 3 && v[0].iov_len == 5);
	CHECK(v[1].iov_base == b && v[1].iov_len == 4);
	CHECK(v[2].iov_base == c && v[2].iov_len == 6);
}

static void test_iov_truncate(void)
{
	uint8_t a[8], b[4];
	struct iovec v[] = { { a, sizeof(a) }, { b, sizeof(b) } };

	/* Longer than the entries: all kept. */
	CHECK_EQ(iov_truncate(v, 2, 100), 2);
	CHECK(v[1].iov_len == 4);
	/* Into the second entry, then to the first's end, then nothing. */
	CHECK_EQ(iov_truncate(v, 2, 10), 2);
	CHECK(v[0].iov_len == 8 && v[1].iov_len == 2);
	CHECK_EQ(iov_truncate(v, 2, 8), 1);
	CHECK_EQ(iov_truncate(v, 2, 0), 0);
}

static void test_iov_copy(void)
{
	uint8_t a[3] = { 1, 2, 3 }, b[4] = { 4, 5, 6, 7 }, flat[8];
	struct iovec v[] = { { a, sizeof(a) }, { NULL, 0 }, { b, sizeof(b) } };
	static const uint8_t put[] = { 9, 9, 9 };

	CHECK_EQ(iov_bytes(v, 3), 7);
	CHECK_EQ(iov_bytes(v, 0), 0);
	/* Across entries from inside the first; stops where they end. */
	memset(flat, 0, sizeof(flat));
	CHECK_EQ(iov_to_buf(v, 3, 2, flat, sizeof(flat)), 5);
	CHECK(flat[0] == 3 && flat[1] == 4 && flat[4] == 7 && !flat[5]);
	CHECK_EQ(iov_to_buf(v, 3, 7, flat, 1), 0);
	/* The other way, len shorter than what is left. */
	CHECK_EQ(buf_to_iov(v, 3, 1, put, sizeof(put)), 3);
	CHECK(a[0] == 1 && a[1] == 9 && a[2] == 9 && b[0] == 9 && b[1] == 5);
}

static void test_eventfd_signal(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t count = 0;

	CHECK(fd >= 0);
	CHECK_EQ(eventfd_signal(fd), 0);
	CHECK_EQ(eventfd_signal(fd), 0);
	CHECK_EQ(read(fd, &count, sizeof(count)), sizeof(count));
	CHECK_EQ(count, 2);
	/* A full counter already wakes the reader. */
	count = UINT64_MAX - 1;
	CHECK_EQ(write(fd, &count, sizeof(count)), sizeof(count));
	CHECK_EQ(eventfd_signal(fd), 0);
	close(fd);
	CHECK_EQ(eventfd_signal(fd), -EBADF);
}

/* A scratch file of len bytes of a pattern; returns its fd, path in
 * path (unlink it after). */
static int pattern_file(char *path, size_t len)
{
	int fd;

	strcpy(path, "/tmp/thpvm-test-util-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	for (size_t i = 0; fd >= 0 && i < len; i++)
		CHECK_EQ(write(fd, &(uint8_t){ i * 7 + 1 }, 1), 1);
	return fd;
}

static void test_byte_checksum(void)
{
	uint8_t t[5] = { 0x10, 0x20, 0xff, 0x01, 0 };

	CHECK_EQ(byte_checksum(t, 0), 0);
	t[4] = byte_checksum(t, 4);
	CHECK_EQ(t[4], 0xd0);
	CHECK_EQ(byte_checksum(t, 5), 0);	/* the whole sums to zero */
}

static void check_pattern(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (data[i] != (uint8_t)(i * 7 + 1)) {
			CHECK(!"the file's bytes");
			return;
		}
}

static void test_file_read_all(void)
{
	char path[64];
	uint8_t *data = NULL;
	size_t size = 1;
	int fd = pattern_file(path, 5000);

	CHECK_EQ(file_read_all(path, 5000, &data, &size), 0);
	CHECK_EQ(size, 5000);
	check_pattern(data, size);
	free(data);
	CHECK_EQ(file_read_all(path, 4999, &data, &size), -EFBIG);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(file_read_all(path, 5000, &data, &size), 0);
	CHECK_EQ(size, 0);
	free(data);
	close(fd);
	unlink(path);
	CHECK_EQ(file_read_all("/tmp", 5000, &data, &size), -EINVAL);
	CHECK_EQ(file_read_all("/nonexistent/x", 5000, &data, &size),
		 -ENOENT);
}

/* A block device's st_size is 0: it is read by its real size. */
static void test_file_read_all_block_device(void)
{
	char path[64], dev[32];
	uint8_t *data = NULL;
	size_t size = 0;
	int ctl, loop = -1, fd, nr;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	if (nr >= 0) {
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		loop = open(dev, O_RDWR | O_CLOEXEC);
	}
	if (loop < 0) {
		if (ctl >= 0)
			close(ctl);
		SKIP("no loop device (needs root and /dev/loop-control)");
		return;
	}
	fd = pattern_file(path, 3 * 4096);
	if (ioctl(loop, LOOP_SET_FD, fd) < 0) {
		SKIP("LOOP_SET_FD failed");
	} else {
		CHECK_EQ(file_read_all(dev, 3 * 4096, &data, &size), 0);
		CHECK_EQ(size, 3 * 4096);
		check_pattern(data, size);
		free(data);
		CHECK_EQ(file_read_all(dev, 3 * 4096 - 1, &data, &size),
			 -EFBIG);
		ioctl(loop, LOOP_CLR_FD, 0);
	}
	close(fd);
	unlink(path);
	close(loop);
	close(ctl);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_size_parse_units),
		UNIT_TEST(test_size_parse_rejects),
		UNIT_TEST(test_size_format),
		UNIT_TEST(test_uint_parse),
		UNIT_TEST(test_file_read_all),
		UNIT_TEST(test_file_read_all_block_device),
		UNIT_TEST(test_iov_slice),
		UNIT_TEST(test_iov_truncate),
		UNIT_TEST(test_iov_copy),
		UNIT_TEST(test_eventfd_signal),
		UNIT_TEST(test_byte_checksum),
	};

	return UNIT_RUN(tests);
}
