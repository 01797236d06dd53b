/* Guest RAM mappings: aligned to a huge page on the host and in
 * guest-physical space, so that the host can back them with huge pages
 * (THP with MADV_HUGEPAGE, or hugetlbfs); and the give-back of host
 * memory behind them. */
#include "core/guest_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/host_mem.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

uint64_t guest_ram_align(void)
{
	return host_thp_size();
}

/* An anonymous mapping of size bytes whose start is align aligned:
 * over-allocate by one alignment unit and trim both ends. */
static void *map_aligned_anon(uint64_t size, uint64_t align)
{
	uint64_t span = size + align;
	uint8_t *raw, *start;

	raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	start = (uint8_t *)ALIGN_UP((uintptr_t)raw, align);
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
	/* Only whole huge pages can be punched out of the file. */
	ram->page_size = ram->huge_page_size = sfs.f_bsize;
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
			    ram->hugetlb_fd, r->offset);
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

		host = map_aligned_anon(r->size, ram->huge_page_size);
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

/* This process's pidfd if process_madvise() takes MADV_DONTNEED for it
 * (Linux 6.13 and later; before, only advice for other processes that
 * drops nothing), tried on a page of its own; otherwise -1. */
static int open_self_pidfd(uint64_t page_size)
{
	int pidfd = pidfd_open(getpid(), 0);
	void *page;
	bool ok;

	if (pidfd < 0)
		return -1;
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = page != MAP_FAILED &&
	     process_madvise(pidfd, &(struct iovec){ page, page_size }, 1,
			     MADV_DONTNEED, 0) == (ssize_t)page_size;
	if (page != MAP_FAILED)
		munmap(page, page_size);
	if (ok)
		return pidfd;
	close(pidfd);
	return -1;
}

static bool ranges_valid(const struct ram_range *ranges, unsigned nr,
			 uint64_t align)
{
	unsigned i;

	if (nr > GUEST_RAM_MAX_REGIONS)
		return false;
	for (i = 0; i < nr; i++) {
		if (!ranges[i].size || !IS_ALIGNED(ranges[i].gpa, align) ||
		    !IS_ALIGNED(ranges[i].size, align) ||
		    ranges[i].size > UINT64_MAX - ranges[i].gpa)
			return false;
		if (i && ranges[i].gpa < ranges[i - 1].gpa + ranges[i - 1].size)
			return false;
	}
	return true;
}

void guest_ram_init(struct guest_ram *ram)
{
	memset(ram, 0, sizeof(*ram));
	ram->hugetlb_fd = ram->pidfd = -1;
}

int guest_ram_map(struct guest_ram *ram, const struct ram_range *ranges,
		  unsigned nr, enum ram_backing backing,
		  const char *hugetlbfs_dir)
{
	uint64_t offset = 0;
	unsigned i;
	int err;

	guest_ram_init(ram);
	ram->backing = backing;
	ram->page_size = host_page_size();
	ram->huge_page_size = guest_ram_align();
	if (!ranges_valid(ranges, nr, ram->huge_page_size))
		return -EINVAL;
	for (i = 0; i < nr; i++)
		ram->total += ranges[i].size;
	if (backing == RAM_BACKING_HUGETLBFS) {
		err = hugetlb_open(ram, hugetlbfs_dir, ram->total);
		if (err)
			return err;
		for (i = 0; i < nr; i++) {
			if (!IS_ALIGNED(ranges[i].gpa, ram->huge_page_size) ||
			    !IS_ALIGNED(ranges[i].size, ram->huge_page_size)) {
				pr_err("guest RAM regions must start and end on "
				       "%llu KiB huge pages",
				       (unsigned long long)(ram->huge_page_size >> 10));
				guest_ram_unmap(ram);
				return -EINVAL;
			}
		}
	} else {
		ram->pidfd = open_self_pidfd(ram->page_size);
	}
	for (i = 0; i < nr; i++) {
		struct ram_region *r = &ram->regions[i];

		r->gpa = ranges[i].gpa;
		r->size = ranges[i].size;
		r->offset = offset;
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

int guest_ram_map_hotplug(struct guest_ram *ram, uint64_t gpa, uint64_t size)
{
	uint64_t align = ram->huge_page_size, ram_end = 0;
	struct ram_range r;
	unsigned i;

	if (ram->backing == RAM_BACKING_HUGETLBFS) {
		pr_err("memory hotplug is not offered with --hugetlbfs");
		return -ENOTSUP;
	}
	for (i = 0; guest_ram_range(ram, i, &r); i++)
		ram_end = r.gpa + r.size;
	if (ram->hotplug.host || !size || !IS_ALIGNED(gpa, align) ||
	    !IS_ALIGNED(size, align) || size > UINT64_MAX - gpa ||
	    gpa < ram_end) {
		pr_err("cannot place a hotplug region of %llu MiB at 0x%llx",
		       (unsigned long long)(size >> 20),
		       (unsigned long long)gpa);
		return -EINVAL;
	}
	ram->hotplug.gpa = gpa;
	ram->hotplug.size = size;
	return map_region(ram, &ram->hotplug);
}

bool guest_ram_hotplug(const struct guest_ram *ram, struct ram_range *out)
{
	*out = (struct ram_range){ ram->hotplug.gpa, ram->hotplug.size };
	return ram->hotplug.host != NULL;
}

/* The hotplug region's memslot: one for the whole region, plugged or
 * not, so that plugging never changes KVM's view of guest memory. */
static int hotplug_register(const struct guest_ram *ram, int vm_fd)
{
	const struct ram_region *r = &ram->hotplug;
	struct kvm_userspace_memory_region slot = {
		.slot = GUEST_RAM_HOTPLUG_SLOT,
		.guest_phys_addr = r->gpa,
		.memory_size = r->size,
		.userspace_addr = (uintptr_t)r->host,
	};

	if (!r->host)
		return 0;
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) < 0) {
		pr_err("KVM_SET_USER_MEMORY_REGION (hotplug slot %u): %s",
		       GUEST_RAM_HOTPLUG_SLOT, strerror(errno));
		return -errno;
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
	return hotplug_register(ram, vm_fd);
}

void guest_ram_unmap(struct guest_ram *ram)
{
	unsigned i;

	for (i = 0; i < ram->nr_regions; i++)
		munmap(ram->regions[i].host, ram->regions[i].size);
	if (ram->hotplug.host)
		munmap(ram->hotplug.host, ram->hotplug.size);
	memset(&ram->hotplug, 0, sizeof(ram->hotplug));
	if (ram->hugetlb_fd >= 0)
		close(ram->hugetlb_fd);
	if (ram->pidfd >= 0)
		close(ram->pidfd);
	ram->nr_regions = 0;
	ram->hugetlb_fd = ram->pidfd = -1;
}

static const struct ram_region *boot_region_of(const struct guest_ram *ram,
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

/* A boot RAM or hotplug region. */
static const struct ram_region *region_of(const struct guest_ram *ram,
					  uint64_t gpa)
{
	const struct ram_region *h = &ram->hotplug;

	if (h->host && gpa >= h->gpa && gpa - h->gpa < h->size)
		return h;
	return boot_region_of(ram, gpa);
}

bool guest_ram_range(const struct guest_ram *ram, unsigned i,
		     struct ram_range *out)
{
	if (i >= ram->nr_regions)
		return false;
	*out = (struct ram_range){ ram->regions[i].gpa, ram->regions[i].size };
	return true;
}

void *guest_ram_ptr(const struct guest_ram *ram, uint64_t gpa, uint64_t len)
{
	const struct ram_region *r = region_of(ram, gpa);

	if (!len)
		len = 1;
	/* Never across two regions: their host mappings are apart. */
	if (!r || len > r->size - (gpa - r->gpa))
		return NULL;
	return r->host + (gpa - r->gpa);
}

int guest_ram_write(const struct guest_ram *ram, uint64_t gpa,
		    const void *data, uint64_t len)
{
	void *dst = guest_ram_ptr(ram, gpa, len);

	if (!dst)
		return -EFAULT;
	memmove(dst, data, len);
	return 0;
}

/* Bytes of r from gpa on; 0 when gpa is in no region. */
static uint64_t left_in(const struct ram_region *r, uint64_t gpa)
{
	return r ? r->size - (gpa - r->gpa) : 0;
}

uint64_t guest_ram_contig(const struct guest_ram *ram, uint64_t gpa)
{
	return left_in(region_of(ram, gpa), gpa);
}

uint64_t guest_ram_boot_contig(const struct guest_ram *ram, uint64_t gpa)
{
	return left_in(boot_region_of(ram, gpa), gpa);
}

uint64_t guest_ram_offset(const struct guest_ram *ram, uint64_t gpa)
{
	const struct ram_region *r = boot_region_of(ram, gpa);

	return r ? r->offset + (gpa - r->gpa) : UINT64_MAX;
}

/* Host address of an extent, which lies inside one region. */
static void *extent_host(const struct guest_ram *ram,
			 const struct ram_range *e)
{
	const struct ram_region *r = region_of(ram, e->gpa);

	return r->host + (e->gpa - r->gpa);
}

/* A shared hugetlbfs mapping keeps its pages in the file: only punching
 * the file gives them back. */
static unsigned discard_hugetlbfs(const struct guest_ram *ram,
				  const struct ram_range *ext, unsigned nr,
				  uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		(*calls)++;
		if (fallocate(ram->hugetlb_fd,
			      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      guest_ram_offset(ram, ext[i].gpa),
			      ext[i].size) < 0)
			break;
	}
	return i;
}

static unsigned discard_each(const struct guest_ram *ram,
			     const struct ram_range *ext, unsigned nr,
			     uint64_t *calls)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		(*calls)++;
		if (madvise(extent_host(ram, &ext[i]), ext[i].size,
			    MADV_DONTNEED) < 0)
			break;
	}
	return i;
}

/* One call for the whole batch. A short count means the kernel stopped
 * in an extent: from that one on they go one by one, which says why. */
static unsigned discard_batched(const struct guest_ram *ram,
				const struct ram_range *ext, unsigned nr,
				uint64_t *calls)
{
	/* Zeroed: GCC cannot see that the loop fills the nr read. */
	struct iovec iov[GUEST_RAM_DISCARD_BATCH] = { { 0 } };
	ssize_t done;
	unsigned i;

	for (i = 0; i < nr; i++)
		iov[i] = (struct iovec){ extent_host(ram, &ext[i]),
					 ext[i].size };
	(*calls)++;
	done = process_madvise(ram->pidfd, iov, nr, MADV_DONTNEED, 0);
	if (done < 0)
		return 0;
	for (i = 0; i < nr && (uint64_t)done >= ext[i].size; i++)
		done -= ext[i].size;
	return i + discard_each(ram, ext + i, nr - i, calls);
}

unsigned guest_ram_discard(const struct guest_ram *ram,
			   const struct ram_range *ext, unsigned nr,
			   uint64_t *calls)
{
	if (!nr)
		return 0;
	if (ram->hugetlb_fd >= 0)
		return discard_hugetlbfs(ram, ext, nr, calls);
	if (ram->pidfd >= 0)
		return discard_batched(ram, ext, nr, calls);
	return discard_each(ram, ext, nr, calls);
}

static bool vma_in(const struct ram_region *r, uintptr_t start)
{
	uintptr_t host = (uintptr_t)r->host;

	return r->host && start >= host && start - host < r->size;
}

/* Whether a host mapping (VMA) belongs to boot RAM or, with hotplug, to
 * the hotplug region; madvise() can split one region into several
 * VMAs. */
static bool vma_counted(const struct guest_ram *ram, bool hotplug,
			uintptr_t start)
{
	unsigned i;

	if (hotplug)
		return vma_in(&ram->hotplug, start);
	for (i = 0; i < ram->nr_regions; i++)
		if (vma_in(&ram->regions[i], start))
			return true;
	return false;
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

static int usage_read(const struct guest_ram *ram, bool hotplug,
		      struct guest_ram_usage *u)
{
	bool cur = false;
	char line[512];
	FILE *f;

	memset(u, 0, sizeof(*u));
	u->size = hotplug ? ram->hotplug.size : ram->total;
	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		uint64_t rss = 0, huge = 0;

		/* A mapping header: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			cur = vma_counted(ram, hotplug, start);
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

int guest_ram_usage(const struct guest_ram *ram, struct guest_ram_usage *u)
{
	return usage_read(ram, false, u);
}

int guest_ram_hotplug_usage(const struct guest_ram *ram,
			    struct guest_ram_usage *u)
{
	return usage_read(ram, true, u);
}
