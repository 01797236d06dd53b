/* The host side of a memory balloon: which guest pages are ballooned, and
 * when their host memory is given back. Pure bookkeeping over guest RAM
 * plus one injectable call that releases a range, so that it can be
 * tested without a guest.
 *
 * Input comes in batches of ranges (first pfn, number of 4 KiB pages) in
 * guest-physical terms, straight from the guest: every range is checked
 * against guest RAM, and what is invalid (outside RAM, empty, wrapping,
 * already ballooned, deflated without being inflated) is ignored with one
 * rate-limited line per batch. Each batch is sorted and merged into runs,
 * and the runs are released together through guest_ram_discard(), up to
 * GUEST_RAM_DISCARD_BATCH of them per call. Nothing is left pending
 * between batches: a page the guest deflates next is never released
 * after it took the page back.
 *
 * The host gives back whole host pages only (guest RAM's page_size: 4 KiB
 * on x86, up to 64 KiB on arm64), and its huge pages are huge_page_size.
 * Policies:
 * - EAGER releases every host page as soon as all its 4 KiB balloon pages
 *   are ballooned, splitting a host huge page when the run does not cover
 *   it (as QEMU and kvmtool do).
 * - PRESERVE tracks ballooned pages per block (a host huge page) and
 *   releases a block only once all its pages are ballooned; pages of
 *   incomplete ("partial") blocks stay backed and are counted.
 * On hugetlbfs-backed RAM a host page is a huge page, so the two are the
 * same and the policy is always PRESERVE.
 *
 * Not thread-safe: the caller serialises (the balloon holds vdev->lock). */
#ifndef THPVM_BALLOON_RELEASE_H
#define THPVM_BALLOON_RELEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/guest_ram.h"
#include "lib/log.h"

/* The balloon's page: virtio's, whatever the host's. */
#define BALLOON_PAGE_SHIFT 12
#define BALLOON_PAGE_SIZE (1ULL << BALLOON_PAGE_SHIFT)

enum balloon_policy {
	BALLOON_EAGER,
	BALLOON_PRESERVE,
};

struct balloon_range {
	uint64_t pfn;		/* guest-physical, 4 KiB pages */
	uint64_t nr_pages;
};

/* Gives nr extents back to the host, as guest_ram_discard() does (the
 * default; tests record instead). */
typedef unsigned (*balloon_release_fn)(void *opaque,
				       const struct guest_ram *ram,
				       const struct ram_range *ext,
				       unsigned nr, uint64_t *calls);

struct balloon_release_stats {
	uint64_t ballooned_pages;	/* inflated and not deflated */
	uint64_t held_pages;		/* of which in partial blocks */
	uint64_t partial_blocks;	/* blocks with some pages ballooned */
	uint64_t released_bytes;	/* given back so far, reports too */
	uint64_t release_calls;		/* system calls */
	uint64_t release_errors;	/* batches that failed (in part) */
	uint64_t ignored;		/* elements (pfns, ranges) refused
					 * in whole or in part */
};

struct balloon_release {
	const struct guest_ram *ram;
	enum balloon_policy policy;
	uint64_t block_size;		/* a host huge page */
	uint64_t pages_per_block;
	uint64_t pages_per_host_page;	/* the smallest release */
	/* Indexed by guest_ram_offset(): one bit per ballooned 4 KiB page,
	 * and the ballooned pages of each block. */
	uint64_t *bitmap;
	uint32_t *block_pages;
	balloon_release_fn release;
	void *opaque;
	struct balloon_release_stats stats;
	struct log_ratelimit rl;
	const char *name;		/* for messages */
	/* The release being built; its last extent grows while runs
	 * stay contiguous. */
	struct ram_range pending[GUEST_RAM_DISCARD_BATCH];
	unsigned nr_pending;
};

/* release NULL: guest_ram_discard(). The policy is forced to PRESERVE
 * where a host page is a huge page (hugetlbfs). Returns 0 or -ENOMEM. */
int balloon_release_init(struct balloon_release *br, const char *name,
			 const struct guest_ram *ram,
			 enum balloon_policy policy, balloon_release_fn release,
			 void *opaque);
/* Frees the tracking and zeroes br. */
void balloon_release_destroy(struct balloon_release *br);

/* The guest gave up (inflate) or takes back (deflate) these pages. The
 * array is sorted in place. Return the number of pages whose state
 * changed. */
uint64_t balloon_inflate(struct balloon_release *br,
			 struct balloon_range *ranges, unsigned nr);
uint64_t balloon_deflate(struct balloon_release *br,
			 struct balloon_range *ranges, unsigned nr);
/* Free page reporting: the guest does not need these pages' contents
 * now, but may use them again without telling. They are released (whole
 * blocks only under PRESERVE) and never counted as ballooned. Returns the
 * bytes released. */
uint64_t balloon_report(struct balloon_release *br,
			struct balloon_range *ranges, unsigned nr);
/* The driver started over: every page is the guest's again. Does
 * nothing on a zeroed or destroyed br. */
void balloon_release_reset(struct balloon_release *br);

const char *balloon_policy_name(enum balloon_policy policy);

#endif
