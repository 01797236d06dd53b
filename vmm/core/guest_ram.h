/* Guest RAM: host mappings, KVM memslots, and the one place where a
 * guest-physical address becomes a host pointer and where the host
 * memory behind guest RAM is given back. Device and boot code never do
 * pointer arithmetic on guest addresses themselves: they call
 * guest_ram_ptr(), which checks the whole range. Everything outside
 * guest_ram.c sees RAM as guest-physical ranges; the region table and
 * the host mappings are its own.
 *
 * Mappings and memslots start on a transparent huge page boundary (the
 * host's, read at run time: 2 MiB on x86), in host and guest-physical
 * space alike, so the host can back RAM with huge pages. */
#ifndef THPVM_GUEST_RAM_H
#define THPVM_GUEST_RAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_RAM_MAX_REGIONS 4
/* The KVM memslot of the hotplug region (guest_ram_map_hotplug): after
 * every boot RAM slot. */
#define GUEST_RAM_HOTPLUG_SLOT GUEST_RAM_MAX_REGIONS
/* Extents one guest_ram_discard() takes at most: the kernel's limit on
 * the iovecs of one process_madvise() (IOV_MAX). */
#define GUEST_RAM_DISCARD_BATCH 1024

struct ram_range {
	uint64_t gpa;
	uint64_t size;
};

enum ram_backing {
	RAM_BACKING_THP,	/* anonymous, MADV_HUGEPAGE (default) */
	RAM_BACKING_NO_THP,	/* anonymous, MADV_NOHUGEPAGE */
	RAM_BACKING_HUGETLBFS,	/* a file on a hugetlbfs mount */
};

/* Private to guest_ram.c. */
struct ram_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *host;
	uint64_t offset;	/* in RAM counted without holes: the hugetlbfs
				 * file offset, guest_ram_offset() */
};

struct guest_ram {
	/* Private to guest_ram.c. */
	struct ram_region regions[GUEST_RAM_MAX_REGIONS];
	unsigned nr_regions;
	int hugetlb_fd;		/* -1 unless RAM_BACKING_HUGETLBFS */
	int pidfd;		/* own pidfd for batched discards, or -1 */
	/* Memory hotplug (virtio-mem): size 0 when there is none. Not boot
	 * RAM: guest_ram_range and guest_ram_offset leave it out. */
	struct ram_region hotplug;

	/* Read-only once mapped. */
	uint64_t total;
	enum ram_backing backing;
	/* The smallest piece the host can give back: its base page, or a
	 * whole huge page on hugetlbfs. */
	uint64_t page_size;
	/* The huge page: THP's size, or hugetlbfs's; what regions are
	 * aligned to. */
	uint64_t huge_page_size;
};

/* What arch_ram_layout's ranges must be aligned to: the host's THP
 * size. */
uint64_t guest_ram_align(void);

/* An empty guest RAM, which guest_ram_unmap leaves alone. */
void guest_ram_init(struct guest_ram *ram);
/* Maps one host region per range (ranges must be guest_ram_align()
 * aligned and, on hugetlbfs, whole huge pages), sorted by address and
 * not overlapping. hugetlbfs_dir is only used for RAM_BACKING_HUGETLBFS.
 * Reports its own errors. */
int guest_ram_map(struct guest_ram *ram, const struct ram_range *ranges,
		  unsigned nr, enum ram_backing backing,
		  const char *hugetlbfs_dir);
/* Maps the hotplug region at gpa, size bytes (both aligned to the huge
 * page, above every boot RAM range): reserved, nothing committed until the
 * guest touches it, with boot RAM's THP advice. Not on hugetlbfs. Reports
 * its own errors. */
int guest_ram_map_hotplug(struct guest_ram *ram, uint64_t gpa, uint64_t size);
/* The hotplug region, or false when there is none. */
bool guest_ram_hotplug(const struct guest_ram *ram, struct ram_range *out);
/* Registers each region, and the hotplug region, as a KVM memslot. */
int guest_ram_register(const struct guest_ram *ram, int vm_fd);
/* Unmaps what guest_ram_map made (also after it failed). */
void guest_ram_unmap(struct guest_ram *ram);

/* Boot RAM range i (0 .. nr - 1), in ascending address order; false past
 * the last. */
bool guest_ram_range(const struct guest_ram *ram, unsigned i,
		     struct ram_range *out);

/* Host pointer for [gpa, gpa+len) or NULL when any byte of it lies outside
 * guest RAM, boot or hotplug (or the range wraps). len 0 is treated as
 * 1. */
void *guest_ram_ptr(const struct guest_ram *ram, uint64_t gpa, uint64_t len);

/* Copies len bytes of data to gpa (data may overlap the destination:
 * boot code moves images already in guest RAM). Returns 0, or -EFAULT
 * when the range is not all guest RAM. */
int guest_ram_write(const struct guest_ram *ram, uint64_t gpa,
		    const void *data, uint64_t len);

/* Bytes of guest RAM contiguous from gpa within its region (0 if gpa is not
 * RAM), boot RAM or the hotplug region. */
uint64_t guest_ram_contig(const struct guest_ram *ram, uint64_t gpa);
/* The same within boot RAM only (0 in the hotplug region): for the
 * balloon, whose bitmaps cover boot RAM (guest_ram_offset). */
uint64_t guest_ram_boot_contig(const struct guest_ram *ram, uint64_t gpa);

/* Where gpa lies in boot RAM counted without its holes (0 .. total - 1),
 * or UINT64_MAX when it is not boot RAM. A range inside one region is contiguous
 * there too, and huge pages start at multiples of huge_page_size: the
 * balloon keeps its bitmaps this way. */
uint64_t guest_ram_offset(const struct guest_ram *ram, uint64_t gpa);

/* Gives the host memory behind ext[0..nr) back (nr at most
 * GUEST_RAM_DISCARD_BATCH; each extent page_size-aligned, inside one
 * region, boot or hotplug; sorted, not overlapping): a later guest access reads zeros, and
 * faults in fresh memory. MADV_DONTNEED on anonymous RAM, in one
 * process_madvise() call where the host kernel takes that (Linux 6.13 and
 * later), else one call per extent; punched holes on hugetlbfs. Adds the
 * system calls made to *calls. Returns how many extents, from the first,
 * it gave back: fewer than nr when a call failed, with errno set. */
unsigned guest_ram_discard(const struct guest_ram *ram,
			   const struct ram_range *ext, unsigned nr,
			   uint64_t *calls);

struct guest_ram_usage {
	uint64_t size;		/* guest RAM, or the hotplug region */
	uint64_t resident;	/* host memory backing it now */
	uint64_t huge;		/* of which in huge pages (THP or hugetlbfs) */
};
/* Reads the host's view of the boot RAM mappings from /proc/self/smaps. */
int guest_ram_usage(const struct guest_ram *ram, struct guest_ram_usage *u);
/* The same for the hotplug region (all 0 when there is none). */
int guest_ram_hotplug_usage(const struct guest_ram *ram,
			    struct guest_ram_usage *u);

#endif
