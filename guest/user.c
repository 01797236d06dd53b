/* Workloads that touch a lot of memory; they run in ring 3, which is
 * native here, while the kernel side only times them and reports. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define MAX_RANGES MEM_MAX

struct range {
	uint64_t start, end;
};

struct crc_job {
	const uint8_t *p;
	uint64_t len;
};

struct mem_job {
	struct range r[MAX_RANGES];
	unsigned n;
	uint64_t stride;
	uint64_t limit;		/* bytes to touch */
	uint64_t reads;
};

__attribute__((section(".noinit"))) static uint32_t crc_table[256];
__attribute__((section(".noinit"))) static struct mem_job job;

/* ---- ring 3 ---- */

static long u_crc32(long arg)
{
	const struct crc_job *j = (const void *)arg;
	uint32_t c = 0xffffffff;

	for (unsigned i = 0; i < 256; i++) {
		uint32_t v = i;

		for (int k = 0; k < 8; k++)
			v = v & 1 ? 0xedb88320 ^ (v >> 1) : v >> 1;
		crc_table[i] = v;
	}
	for (uint64_t i = 0; i < j->len; i++)
		c = crc_table[(c ^ j->p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffff;
}

static long u_touch(long arg)
{
	const struct mem_job *j = (const void *)arg;
	uint64_t done = 0;

	for (unsigned i = 0; i < j->n && done < j->limit; i++) {
		uint64_t len = MIN(j->r[i].end - j->r[i].start, j->limit - done);
		uint64_t end = j->r[i].start + len;

		for (uint64_t a = j->r[i].start; a < end; a += j->stride)
			*(volatile uint64_t *)a = a;
		done += len;
	}
	return done;
}

/* A 64-bit LCG picks an 8-byte slot uniformly over the touched ranges. */
static long u_rand(long arg)
{
	const struct mem_job *j = (const void *)arg;
	uint64_t total = 0, x = 0x9e3779b97f4a7c15ULL, sum = 0;

	for (unsigned i = 0; i < j->n; i++)
		total += (j->r[i].end - j->r[i].start) / 8;
	for (uint64_t k = 0; k < j->reads; k++) {
		uint64_t slot;
		unsigned i = 0;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		slot = (uint64_t)(((unsigned __int128)x * total) >> 64);
		while (slot >= (j->r[i].end - j->r[i].start) / 8) {
			slot -= (j->r[i].end - j->r[i].start) / 8;
			i++;
		}
		sum += *(volatile uint64_t *)(j->r[i].start + slot * 8);
	}
	return sum;
}

/* ---- ring 0 ---- */

void check_initrd(void)
{
	struct crc_job j = { (const uint8_t *)boot.initrd_addr, boot.initrd_size };
	uint32_t crc;

	if (!boot.initrd_size) {
		if (params.has_crc)
			report(false, "initrd", "reason=no-initrd");
		return;
	}
	crc = run_user(u_crc32, (long)&j);
	if (params.has_crc && crc != params.initrd_crc)
		report(false, "initrd", "bytes=%lu crc32=0x%08x expected=0x%08x",
		       boot.initrd_size, crc, params.initrd_crc);
	else
		report(true, "initrd", "bytes=%lu crc32=0x%08x",
		       boot.initrd_size, crc);
}

/* Usable RAM above the kernel's area, whole strides only. */
static void touch_ranges(void)
{
	uint64_t lo = kernel_area_end();

	job.n = 0;
	for (unsigned i = 0; i < boot.nmem && job.n < MAX_RANGES; i++) {
		const struct mem_range *e = &boot.mem[i];
		uint64_t s = MAX(e->addr, lo), end = e->addr + e->size;

		if (e->type != MEM_RAM)
			continue;
		s = ALIGN_UP(s, 8);
		end = ALIGN_DOWN(end, 8);
		if (s < end) {
			job.r[job.n].start = s;
			job.r[job.n].end = end;
			job.n++;
		}
	}
}

void run_touch_rand(void)
{
	uint64_t t0, bytes;

	if (!params.touch) {
		if (params.has_rand)
			report(false, "rand", "reason=needs-touch");
		return;
	}
	touch_ranges();
	job.stride = params.touch_stride;
	job.limit = params.touch_all ? ~0ULL : params.touch_size;
	t0 = clock_now();
	bytes = run_user(u_touch, (long)&job);
	print("tg: touch bytes=%lu stride=%lu ns=%lu\n", bytes, job.stride,
	      clock_to_ns(clock_now() - t0));
	if (!params.has_rand)
		return;
	/* Random reads over exactly what was touched. */
	for (unsigned i = 0; i < job.n; i++) {
		uint64_t len = job.r[i].end - job.r[i].start;

		if (len > bytes) {
			job.r[i].end = job.r[i].start + ALIGN_DOWN(bytes, 8);
			job.n = i + 1;
		}
		bytes -= MIN(len, bytes);
	}
	while (job.n && job.r[job.n - 1].end == job.r[job.n - 1].start)
		job.n--;
	if (!job.n) {
		report(false, "rand", "reason=nothing-touched");
		return;
	}
	job.reads = params.rand_reads;
	t0 = clock_now();
	run_user(u_rand, (long)&job);
	print("tg: rand reads=%lu ns=%lu\n", job.reads, clock_to_ns(clock_now() - t0));
}
