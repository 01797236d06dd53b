/* Guest RAM mappings: 2 MiB aligned on the host and in guest-physical
 * space, so that the host can back them with huge pages (THP with
 * MADV_HUGEPAGE, or hugetlbfs). */
#include "core/guest_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

/* An anonymous mapping of size bytes whose start is GUEST_RAM_ALIGN
 * aligned: over-allocate by one alignment unit and trim both ends. */
static void *map_aligned_anon(uint64_t size)
{
	uint64_t span = size + GUEST_RAM_ALIGN;
	uint8_t *raw, *start;

	raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	start = (uint8_t *)ALIGN_UP((uintptr_t)raw, GUEST_RAM_ALIGN);
	if (start > raw)
		munmap(raw, start - raw);
	if (raw + span > start + size)
		munmap(start + size, raw + span - (start + size));
	return start;
}

static int hugetlb_open(struct guest_ram *ram, const char *dir,
			uint64_t total)
{
	struct statfs sfs;
	int fd;

	if (statfs(dir, &sfs) < 0) {
		pr_err("--hugetlbfs %s: %s", dir, strerror(errno));
		return -errno;
	}
	if ((unsigned long)sfs.f_type != HUGETLBFS_MAGIC) {
		pr_err("--hugetlbfs %s: not a hugetlbfs mount", dir);
		return -EINVAL;
	}
	/* An unnamed file: nothing is left behind if we crash. */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_err("--hugetlbfs %s: cannot create a file: %s", dir,
		       strerror(errno));
		return -errno;
	}
	ram->hugetlb_page_size = sfs.f_bsize;
	if (ftruncate(fd, total) < 0) {
		int err = -errno;

		pr_err("--hugetlbfs %s: cannot size the file to %llu bytes: %s",
		       dir, (unsigned long long)total, strerror(errno));
		close(fd);
		return err;
	}
	ram->hugetlb_fd = fd;
	return 0;
}

static int map_region(struct guest_ram *ram, struct ram_region *r)
{
	void *host;

	if (ram->backing == RAM_BACKING_HUGETLBFS) {
		/* Shared, so that a later balloon can punch holes; no
		 * MAP_NORESERVE, so a shortage of huge pages fails here and
		 * not with SIGBUS while the guest runs. */
		host = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    ram->hugetlb_fd, r->file_offset);
		if (host == MAP_FAILED) {
			pr_err("cannot map %llu MiB of hugetlbfs memory: %s "
			       "(are enough huge pages reserved?)",
			       (unsigned long long)(r->size >> 20),
			       strerror(errno));
			return -errno;
		}
	} else {
		int advice = ram->backing == RAM_BACKING_THP ?
				     MADV_HUGEPAGE : MADV_NOHUGEPAGE;

		host = map_aligned_anon(r->size);
		if (!host) {
			pr_err("cannot map %llu MiB of guest RAM: %s",
			       (unsigned long long)(r->size >> 20),
			       strerror(errno));
			return -errno;
		}
		if (madvise(host, r->size, advice) < 0) {
			int err = -errno;

			pr_err("madvise(%s) on guest RAM: %s",
			       advice == MADV_HUGEPAGE ? "MADV_HUGEPAGE" :
							 "MADV_NOHUGEPAGE",
			       strerror(errno));
			munmap(host, r->size);
			return err;
		}
	}
	/* Guest RAM is not worth a core dump of gigabytes; if the kernel
	 * refuses, a core dump is only larger, so the error is not fatal. */
	if (madvise(host, r->size, MADV_DONTDUMP) < 0)
		pr_debug("madvise(MADV_DONTDUMP) on guest RAM: %s",
			 strerror(errno));
	r->host = host;
	return 0;
}

int guest_ram_map(struct guest_ram *ram, const struct ram_range *ranges,
		  unsigned nr, enum ram_backing backing,
		  const char *hugetlbfs_dir)
{
	uint64_t offset = 0;
	unsigned i;
	int err;

	memset(ram, 0, sizeof(*ram));
	ram->hugetlb_fd = -1;
	ram->backing = backing;
	if (nr > GUEST_RAM_MAX_REGIONS)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!IS_ALIGNED(ranges[i].gpa, GUEST_RAM_ALIGN) ||
		    !IS_ALIGNED(ranges[i].size, GUEST_RAM_ALIGN) ||
		    !ranges[i].size)
			return -EINVAL;
		ram->total += ranges[i].size;
	}
	if (backing == RAM_BACKING_HUGETLBFS) {
		err = hugetlb_open(ram, hugetlbfs_dir, ram->total);
		if (err)
			return err;
		for (i = 0; i < nr; i++) {
			if (!IS_ALIGNED(ranges[i].size, ram->hugetlb_page_size)) {
				pr_err("guest RAM regions must be multiples of "
				       "the %llu KiB huge page size",
				       (unsigned long long)(ram->hugetlb_page_size >> 10));
				guest_ram_unmap(ram);
				return -EINVAL;
			}
		}
	}
	for (i = 0; i < nr; i++) {
		struct ram_region *r = &ram->regions[i];

		r->gpa = ranges[i].gpa;
		r->size = ranges[i].size;
		r->file_offset = offset;
		offset += r->size;
		err = map_region(ram, r);
		if (err) {
			guest_ram_unmap(ram);
			return err;
		}
		ram->nr_regions++;
	}
	return 0;
}

int guest_ram_register(const struct guest_ram *ram, int vm_fd)
{
	unsigned i;

	for (i = 0; i < ram->nr_regions; i++) {
		const struct ram_region *r = &ram->regions[i];
		struct kvm_userspace_memory_region slot = {
			.slot = i,
			.guest_phys_addr = r->gpa,
			.memory_size = r->size,
			.userspace_addr = (uintptr_t)r->host,
		};

		if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) < 0) {
			pr_err("KVM_SET_USER_MEMORY_REGION (slot %u): %s", i,
			       strerror(errno));
			return -errno;
		}
	}
	return 0;
}

void guest_ram_unmap(struct guest_ram *ram)
{
	unsigned i;

	for (i = 0; i < ram->nr_regions; i++)
		munmap(ram->regions[i].host, ram->regions[i].size);
	if (ram->hugetlb_fd >= 0)
		close(ram->hugetlb_fd);
	ram->nr_regions = 0;
	ram->hugetlb_fd = -1;
}

const struct ram_region *guest_ram_region(const struct guest_ram *ram,
					  uint64_t gpa)
{
	unsigned i;

	for (i = 0; i < ram->nr_regions; i++) {
		const struct ram_region *r = &ram->regions[i];

		/* Not gpa < r->gpa + r->size: that sum can overflow. */
		if (gpa >= r->gpa && gpa - r->gpa < r->size)
			return r;
	}
	return NULL;
}

void *guest_ram_ptr(const struct guest_ram *ram, uint64_t gpa, uint64_t len)
{
	const struct ram_region *r = guest_ram_region(ram, gpa);

	if (!len)
		len = 1;
	/* Never across two regions: their host mappings are apart. */
	if (!r || len > r->size - (gpa - r->gpa))
		return NULL;
	return r->host + (gpa - r->gpa);
}

uint64_t guest_ram_contig(const struct guest_ram *ram, uint64_t gpa)
{
	const struct ram_region *r = guest_ram_region(ram, gpa);

	return r ? r->size - (gpa - r->gpa) : 0;
}

/* The region a host mapping (VMA) belongs to; madvise() can split one
 * region into several VMAs. */
static const struct ram_region *region_of_vma(const struct guest_ram *ram,
					      uintptr_t start)
{
	unsigned i;

	for (i = 0; i < ram->nr_regions; i++) {
		uintptr_t host = (uintptr_t)ram->regions[i].host;

		if (start >= host && start - host < ram->regions[i].size)
			return &ram->regions[i];
	}
	return NULL;
}

/* The smaps fields that say how a mapping is backed, in kB. */
static bool smaps_field(const char *line, const char *name, uint64_t *kb)
{
	size_t n = strlen(name);
	unsigned long long v;

	if (strncmp(line, name, n) || line[n] != ':')
		return false;
	if (sscanf(line + n + 1, "%llu", &v) != 1)
		return false;
	*kb += v;
	return true;
}

int guest_ram_usage(const struct guest_ram *ram, struct guest_ram_usage *u)
{
	const struct ram_region *cur = NULL;
	char line[512];
	FILE *f;

	memset(u, 0, sizeof(*u));
	u->size = ram->total;
	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		uint64_t rss = 0, huge = 0;

		/* A mapping header: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			cur = region_of_vma(ram, start);
			continue;
		}
		if (!cur)
			continue;
		if (smaps_field(line, "Rss", &rss)) {
			u->resident += rss << 10;
		} else if (smaps_field(line, "AnonHugePages", &huge) ||
			   smaps_field(line, "Private_Hugetlb", &huge) ||
			   smaps_field(line, "Shared_Hugetlb", &huge)) {
			u->huge += huge << 10;
		}
	}
	fclose(f);
	/* hugetlbfs pages are not counted in Rss. */
	if (ram->backing == RAM_BACKING_HUGETLBFS)
		u->resident = u->huge;
	return 0;
}
