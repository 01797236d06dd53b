/* usemem: a small memory workload for Linux guests (docs/linux-guests.md).
 *
 *   usemem [--punch-holes] [--hold] SIZE        SIZE: 64k, 800m, 1g, bytes
 *
 * Maps SIZE bytes of anonymous memory, writes every 8-byte word once (a
 * pattern, so no page stays the shared zero page), and prints
 *
 *   usemem bytes=N seconds=S mb_per_s=X          (MB = 10^6 bytes)
 *
 * --punch-holes then gives back every other 4 KiB page with
 * MADV_DONTNEED, leaving the guest's free memory fragmented, and prints
 *
 *   usemem punched=N kept=N                      (counts of 4 KiB pages)
 *
 * --hold then keeps the memory until a signal ends the program. Output is
 * flushed line by line so that a script reading it sees each line at once.
 * Bad arguments exit 2, a failed mmap exits 1, each with one message. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HOLE_PAGE 4096UL

static void usage(const char *why)
{
	fprintf(stderr, "usemem: %s (usage: usemem [--punch-holes] [--hold] "
		"SIZE, SIZE like 64k, 800m, 1g)\n", why);
	exit(2);
}

/* A positive size with an optional k/m/g suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v, shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v == 0 || v > (SIZE_MAX >> 1) >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int punch = 0, hold = 0;
	const char *size_arg = NULL;
	uint64_t size;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--punch-holes"))
			punch = 1;
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (argv[i][0] == '-' && argv[i][1] == '-')
			usage("unknown option");
		else if (size_arg)
			usage("more than one SIZE");
		else
			size_arg = argv[i];
	}
	if (!size_arg)
		usage("no SIZE");
	if (parse_size(size_arg, &size))
		usage("bad SIZE");
	setvbuf(stdout, NULL, _IOLBF, 0);

	unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "usemem: mmap of %llu bytes failed: %s\n",
			(unsigned long long)size, strerror(errno));
		return 1;
	}

	/* Holes must free 4 KiB pages in the guest, which a huge page
	 * punched 4 KiB at a time does not: it is only split lazily, and
	 * khugepaged may collapse the holes back (Debian's kernel has THP
	 * "always"). So a fragmenting run maps small pages. */
	if (punch && madvise(p, size, MADV_NOHUGEPAGE)) {
		fprintf(stderr, "usemem: madvise(MADV_NOHUGEPAGE) failed: %s\n",
			strerror(errno));
		return 1;
	}

	uint64_t words = size / 8;
	uint64_t *w = (uint64_t *)p;
	double t0 = now();
	for (uint64_t i = 0; i < words; i++)
		w[i] = i * 0x9e3779b97f4a7c15ULL + 1;
	for (uint64_t i = words * 8; i < size; i++)
		p[i] = (unsigned char)i;
	/* The stores are the workload: keep the compiler from dropping them. */
	__asm__ volatile("" : : "r"(p) : "memory");
	double secs = now() - t0;
	if (secs <= 0)
		secs = 1e-9;
	printf("usemem bytes=%llu seconds=%.6f mb_per_s=%.1f\n",
	       (unsigned long long)size, secs, (double)size / secs / 1e6);

	if (punch) {
		uint64_t pages = (size + HOLE_PAGE - 1) / HOLE_PAGE;
		uint64_t punched = 0;

		for (uint64_t i = 1; i < pages; i += 2) {
			if (madvise(p + i * HOLE_PAGE, HOLE_PAGE, MADV_DONTNEED)) {
				fprintf(stderr, "usemem: madvise failed: %s\n",
					strerror(errno));
				return 1;
			}
			punched++;
		}
		printf("usemem punched=%llu kept=%llu\n",
		       (unsigned long long)punched,
		       (unsigned long long)(pages - punched));
	}
	if (hold)
		pause();
	return 0;
}
