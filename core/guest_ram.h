/* Guest RAM: host mappings, KVM memslots, and the one place where a
 * guest-physical address becomes a host pointer. Device and boot code never
 * do pointer arithmetic on guest addresses themselves: they call
 * guest_ram_ptr(), which checks the whole range. */
#ifndef THPVM_GUEST_RAM_H
#define THPVM_GUEST_RAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_RAM_MAX_REGIONS 4
/* Host mappings and memslots are aligned to this, so the host can back
 * guest RAM with transparent huge pages. */
#define GUEST_RAM_ALIGN (2ULL << 20)

struct ram_range {
	uint64_t gpa;
	uint64_t size;
};

enum ram_backing {
	RAM_BACKING_THP,	/* anonymous, MADV_HUGEPAGE (default) */
	RAM_BACKING_NO_THP,	/* anonymous, MADV_NOHUGEPAGE */
	RAM_BACKING_HUGETLBFS,	/* a file on a hugetlbfs mount */
};

struct ram_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *host;
	uint64_t file_offset;	/* into the hugetlbfs file */
};

struct guest_ram {
	struct ram_region regions[GUEST_RAM_MAX_REGIONS];
	unsigned nr_regions;
	uint64_t total;
	enum ram_backing backing;
	int hugetlb_fd;		/* -1 unless RAM_BACKING_HUGETLBFS */
	uint64_t hugetlb_page_size;
};

/* Maps one host region per range (ranges must be GUEST_RAM_ALIGN
 * aligned). hugetlbfs_dir is only used for RAM_BACKING_HUGETLBFS. */
int guest_ram_map(struct guest_ram *ram, const struct ram_range *ranges,
		  unsigned nr, enum ram_backing backing,
		  const char *hugetlbfs_dir);
/* Registers each region as a KVM memslot. */
int guest_ram_register(const struct guest_ram *ram, int vm_fd);
void guest_ram_unmap(struct guest_ram *ram);

/* The region that holds gpa, or NULL when gpa is not RAM. */
const struct ram_region *guest_ram_region(const struct guest_ram *ram,
					  uint64_t gpa);

/* Host pointer for [gpa, gpa+len) or NULL when any byte of it lies outside
 * guest RAM (or the range wraps). len 0 is treated as 1. */
void *guest_ram_ptr(const struct guest_ram *ram, uint64_t gpa, uint64_t len);

/* Bytes of guest RAM contiguous from gpa within its region (0 if gpa is not
 * RAM). */
uint64_t guest_ram_contig(const struct guest_ram *ram, uint64_t gpa);

struct guest_ram_usage {
	uint64_t size;		/* guest RAM */
	uint64_t resident;	/* host memory backing it now */
	uint64_t huge;		/* of which in huge pages (THP or hugetlbfs) */
};
/* Reads the host's view of the RAM mappings from /proc/self/smaps. */
int guest_ram_usage(const struct guest_ram *ram, struct guest_ram_usage *u);

#endif
