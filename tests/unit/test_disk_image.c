/* Disk images under O_DIRECT with unaligned buffers and offsets (the
 * bounce path) against the same requests on a buffered image, with the
 * bounce buffer never over 1 MiB however long the request (linked with
 * --wrap=posix_memalign to see its sizes), and concurrent partial-block
 * writes that must not lose each other's bytes. Needs a filesystem that
 * takes O_DIRECT: /var/tmp, else /tmp. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/disk_image.h"
#include "lib/util.h"
#include "unit.h"

#define IMAGE_SIZE (4u << 20)	/* several bounce chunks */
#define MAX_PIECES 12
#define GUARD 64
#define GUARD_BYTE 0xa5
#define RANDOM_OPS 300
#define BOUNCE_MAX (1u << 20)

int __real_posix_memalign(void **p, size_t align, size_t size);

/* The largest aligned allocation so far: the bounce buffers. */
static size_t largest_aligned;

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	size_t seen = __atomic_load_n(&largest_aligned, __ATOMIC_RELAXED);

	while (size > seen &&
	       !__atomic_compare_exchange_n(&largest_aligned, &seen, size,
					    false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	return __real_posix_memalign(p, align, size);
}

static const char *const dirs[] = { "/var/tmp", "/tmp" };

static void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = unit_rand(256);
}

/* A new empty file in dir that accepts O_DIRECT, or false (and no file):
 * tmpfs, for one, refuses it with EINVAL. */
static bool make_file(const char *dir, char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/thpvm-test-disk-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	close(fd);
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	unlink(path);
	return false;
}

/* Files of size bytes, all with the same random contents, in the first
 * directory that takes O_DIRECT; false if none does. */
static bool make_images(char paths[][64], unsigned n, size_t size)
{
	uint8_t *data = malloc(size);
	unsigned d, i;
	bool ok = false;

	for (d = 0; d < ARRAY_SIZE(dirs) && !ok; d++) {
		for (i = 0; i < n && make_file(dirs[d], paths[i], 64); i++)
			;
		ok = i == n;
		while (!ok && i--)
			unlink(paths[i]);
	}
	fill_random(data, size);
	for (i = 0; i < n && ok; i++) {
		int fd = open(paths[i], O_WRONLY);

		CHECK(fd >= 0);
		CHECK_EQ(pwrite(fd, data, size, 0), size);
		close(fd);
	}
	free(data);
	return ok;
}

static void read_file(const char *path, uint8_t *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, buf, size, 0), size);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_size, size);
	close(fd);
}

/* A request's buffers: len bytes cut into pieces at random points, each
 * in its own allocation at a random misalignment with guard bytes around
 * it, some pieces empty. */
struct request {
	struct iovec iov[MAX_PIECES];
	uint8_t *alloc[MAX_PIECES];
	unsigned nr;
};

static size_t misalignment(void)
{
	static const size_t choices[] = { 0, 1, 7, 511, 512, 2048, 4095 };

	return choices[unit_rand(ARRAY_SIZE(choices))];
}

static void request_make(struct request *r, size_t len)
{
	size_t left = len, n, mis;
	unsigned i;

	r->nr = 1 + unit_rand(MAX_PIECES);
	for (i = 0; i < r->nr; i++) {
		n = i == r->nr - 1 ? left : unit_rand(4) ? unit_rand(left + 1) : 0;
		mis = misalignment();
		/* Not posix_memalign: that is how the bounce buffers are
		 * seen. */
		r->alloc[i] = aligned_alloc(4096,
					    ALIGN_UP(mis + n + GUARD, 4096));
		CHECK(r->alloc[i] != NULL);
		memset(r->alloc[i], GUARD_BYTE, mis + n + GUARD);
		r->iov[i].iov_base = r->alloc[i] + mis;
		r->iov[i].iov_len = n;
		left -= n;
	}
}

/* Copies between the pieces and a flat buffer. */
static void request_copy(struct request *r, uint8_t *flat, bool to_pieces)
{
	unsigned i;

	for (i = 0; i < r->nr; i++) {
		if (to_pieces)
			memcpy(r->iov[i].iov_base, flat, r->iov[i].iov_len);
		else
			memcpy(flat, r->iov[i].iov_base, r->iov[i].iov_len);
		flat += r->iov[i].iov_len;
	}
}

/* Frees the pieces; false if anything wrote outside them. */
static bool request_free(struct request *r)
{
	bool ok = true;
	unsigned i;

	for (i = 0; i < r->nr; i++) {
		uint8_t *base = r->iov[i].iov_base;
		uint8_t *p;

		for (p = r->alloc[i]; p < base; p++)
			ok &= *p == GUARD_BYTE;
		for (p = base + r->iov[i].iov_len;
		     p < base + r->iov[i].iov_len + GUARD; p++)
			ok &= *p == GUARD_BYTE;
		free(r->alloc[i]);
	}
	return ok;
}

/* Lengths from a byte to several bounce chunks, at sector or byte
 * granularity, and sometimes ending at the end of the image. */
static void random_range(uint64_t *offset, size_t *len)
{
	static const size_t max_len[] = { 8192, 300 << 10, 5 << 19 };
	bool sectors = unit_rand(2);

	*len = 1 + unit_rand(max_len[unit_rand(ARRAY_SIZE(max_len))]);
	if (sectors)
		*len = ALIGN_UP(*len, DISK_SECTOR_SIZE);
	*offset = unit_rand(8) ? unit_rand(IMAGE_SIZE - *len + 1) : IMAGE_SIZE - *len;
	if (sectors)
		*offset = ALIGN_DOWN(*offset, DISK_SECTOR_SIZE);
}

static void one_random_op(struct disk_image *direct, struct disk_image *ref,
			  uint8_t *data, uint8_t *expect)
{
	struct request r;
	uint64_t offset;
	size_t len;
	bool write = unit_rand(2);

	random_range(&offset, &len);
	request_make(&r, len);
	if (write) {
		fill_random(data, len);
		request_copy(&r, data, true);
		CHECK_EQ(disk_image_writev(direct, r.iov, r.nr, offset), 0);
		CHECK_EQ(disk_image_writev(ref, r.iov, r.nr, offset), 0);
	} else {
		struct iovec flat = { .iov_base = expect, .iov_len = len };

		CHECK_EQ(disk_image_readv(direct, r.iov, r.nr, offset), 0);
		CHECK_EQ(disk_image_readv(ref, &flat, 1, offset), 0);
		request_copy(&r, data, false);
		CHECK(!memcmp(data, expect, len));
	}
	CHECK(request_free(&r));
}

static void test_direct_matches_buffered(void)
{
	struct disk_image direct, ref;
	char paths[2][64];
	uint8_t *a = malloc(IMAGE_SIZE), *b = malloc(IMAGE_SIZE);
	unsigned i;

	if (!make_images(paths, 2, IMAGE_SIZE)) {
		SKIP("neither /var/tmp nor /tmp takes O_DIRECT (tmpfs?)");
		goto out;
	}
	CHECK_EQ(disk_image_open(&direct, paths[0], false, true), 0);
	CHECK_EQ(disk_image_open(&ref, paths[1], false, false), 0);
	largest_aligned = 0;
	for (i = 0; i < RANDOM_OPS && !unit.current_failures; i++)
		one_random_op(&direct, &ref, a, b);
	/* Requests of up to 2.5 MiB were bounced, through 1 MiB at most. */
	CHECK(largest_aligned > 0);
	CHECK(largest_aligned <= BOUNCE_MAX);
	disk_image_close(&direct);
	disk_image_close(&ref);
	read_file(paths[0], a, IMAGE_SIZE);
	read_file(paths[1], b, IMAGE_SIZE);
	CHECK(!memcmp(a, b, IMAGE_SIZE));
	unlink(paths[0]);
	unlink(paths[1]);
out:
	free(a);
	free(b);
}

/* Each thread writes its own sector of every 4 KiB block, through an
 * unaligned buffer, so every write reads, modifies and writes a block
 * that the other threads write too. */
#define RMW_THREADS 8
#define RMW_BLOCKS 16
#define RMW_ROUNDS 20

struct rmw_thread {
	pthread_t thread;
	struct disk_image *d;
	unsigned index;
	int err;
};

static uint8_t rmw_byte(unsigned thread, unsigned round)
{
	return thread * RMW_ROUNDS + round + 1;
}

static void *rmw_writer(void *arg)
{
	struct rmw_thread *t = arg;
	uint8_t *buf = malloc(DISK_SECTOR_SIZE + 1);
	struct iovec v = { .iov_base = buf + 1, .iov_len = DISK_SECTOR_SIZE };
	unsigned round, block;

	for (round = 0; round < RMW_ROUNDS && !t->err; round++) {
		memset(v.iov_base, rmw_byte(t->index, round), v.iov_len);
		for (block = 0; block < RMW_BLOCKS && !t->err; block++)
			t->err = disk_image_writev(t->d, &v, 1,
				block * 4096 + t->index * DISK_SECTOR_SIZE);
	}
	free(buf);
	return NULL;
}

static void test_direct_concurrent_partial_writes(void)
{
	struct rmw_thread threads[RMW_THREADS];
	size_t size = RMW_BLOCKS * 4096, i;
	uint8_t *data = malloc(size);
	struct disk_image d;
	char path[1][64];
	unsigned t;

	if (!make_images(path, 1, size)) {
		SKIP("neither /var/tmp nor /tmp takes O_DIRECT (tmpfs?)");
		goto out;
	}
	CHECK_EQ(disk_image_open(&d, path[0], false, true), 0);
	for (t = 0; t < RMW_THREADS; t++) {
		threads[t] = (struct rmw_thread){ .d = &d, .index = t };
		CHECK_EQ(pthread_create(&threads[t].thread, NULL, rmw_writer,
					&threads[t]), 0);
	}
	for (t = 0; t < RMW_THREADS; t++) {
		pthread_join(threads[t].thread, NULL);
		CHECK_EQ(threads[t].err, 0);
	}
	disk_image_close(&d);
	read_file(path[0], data, size);
	for (i = 0; i < size; i++) {
		t = i % 4096 / DISK_SECTOR_SIZE;
		if (data[i] != rmw_byte(t, RMW_ROUNDS - 1)) {
			CHECK_EQ(data[i], rmw_byte(t, RMW_ROUNDS - 1));
			break;
		}
	}
	unlink(path[0]);
out:
	free(data);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_direct_matches_buffered),
		UNIT_TEST(test_direct_concurrent_partial_writes),
	};

	return UNIT_RUN(tests);
}
