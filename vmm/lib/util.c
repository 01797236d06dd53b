/* Size parsing, file, iovec and eventfd helpers. */
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int size_parse(const char *s, uint64_t *out)
{
	uint64_t value = 0, shift = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned digit = *p - '0';

		if (value > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		value = value * 10 + digit;
	}
	switch (toupper((unsigned char)*p)) {
	case 'K': shift = 10; break;
	case '\0':	/* a bare number */
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	case 'B': break;
	default: return -EINVAL;
	}
	if (*p)
		p++;
	if (shift && (!strcasecmp(p, "iB") || !strcasecmp(p, "B")))
		p += strlen(p);
	if (*p)
		return -EINVAL;
	if (value == 0)
		return -EDOM;
	if (value > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = value << shift;
	return 0;
}

const char *size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	uint64_t scale = 1;

	while (u + 1 < ARRAY_SIZE(unit) && bytes >= scale * 1024)
		scale *= 1024, u++;
	if (bytes % scale == 0)
		snprintf(buf, len, "%llu %s",
			 (unsigned long long)(bytes / scale), unit[u]);
	else
		snprintf(buf, len, "%.1f %s", (double)bytes / scale, unit[u]);
	return buf;
}

int uint_parse(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fd_size(int fd, const struct stat *st, uint64_t *size)
{
	if (S_ISREG(st->st_mode)) {
		*size = st->st_size;
		return 0;
	}
	if (!S_ISBLK(st->st_mode))
		return -EINVAL;
	return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
}

int file_read_all(const char *path, size_t max_size, uint8_t **data,
		  size_t *size)
{
	struct stat st;
	uint64_t len;
	uint8_t *buf;
	size_t done = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	err = fd_size(fd, &st, &len);
	if (err)
		goto out_close;
	if (len > max_size) {
		err = -EFBIG;
		goto out_close;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			free(buf);
			goto out_close;
		}
		done += n;
	}
	*data = buf;
	*size = done;
	err = 0;
out_close:
	close(fd);
	return err;
}

uint64_t iov_bytes(const struct iovec *iov, unsigned nr)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < nr; i++)
		n += iov[i].iov_len;
	return n;
}

unsigned iov_slice(const struct iovec *iov, unsigned nr, uint64_t skip,
		   struct iovec *dst)
{
	unsigned i, n = 0;

	for (i = 0; i < nr; i++) {
		size_t len = iov[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		dst[n].iov_base = (uint8_t *)iov[i].iov_base + skip;
		dst[n].iov_len = len - skip;
		skip = 0;
		n++;
	}
	return n;
}

unsigned iov_truncate(struct iovec *iov, unsigned nr, uint64_t len)
{
	unsigned i;

	for (i = 0; i < nr && len; i++) {
		if (iov[i].iov_len > len)
			iov[i].iov_len = len;
		len -= iov[i].iov_len;
	}
	return i;
}

static uint64_t iov_copy(const struct iovec *iov, unsigned nr, uint64_t skip,
			 uint8_t *buf, uint64_t len, bool to_iov)
{
	uint64_t done = 0;
	unsigned i;

	for (i = 0; i < nr && done < len; i++) {
		uint64_t n;

		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		n = MIN(iov[i].iov_len - skip, len - done);
		if (to_iov)
			memcpy((uint8_t *)iov[i].iov_base + skip, buf + done, n);
		else
			memcpy(buf + done, (uint8_t *)iov[i].iov_base + skip, n);
		done += n;
		skip = 0;
	}
	return done;
}

uint64_t iov_to_buf(const struct iovec *iov, unsigned nr, uint64_t skip,
		    void *buf, uint64_t len)
{
	return iov_copy(iov, nr, skip, buf, len, false);
}

uint64_t buf_to_iov(const struct iovec *iov, unsigned nr, uint64_t skip,
		    const void *buf, uint64_t len)
{
	return iov_copy(iov, nr, skip, (uint8_t *)buf, len, true);
}

int eventfd_signal(int fd)
{
	static const uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0) {
		if (errno == EAGAIN)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

double time_ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1e3 +
	       (now.tv_nsec - start->tv_nsec) / 1e6;
}

uint8_t byte_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return (uint8_t)-sum;
}

uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000 + (uint64_t)t.tv_nsec;
}

int64_t monotonic_ms(void)
{
	return (int64_t)(monotonic_ns() / 1000000);
}
