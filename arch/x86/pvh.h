/* The PVH boot ABI's start-of-day structures (Xen's public
 * arch-x86/hvm/start_info.h, version 1), which Linux, QEMU and Firecracker
 * use outside Xen too. Not in the Linux UAPI headers. */
#ifndef THPVM_X86_PVH_H
#define THPVM_X86_PVH_H

#include <stdint.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC 0x336ec578
#define HVM_START_VERSION 1

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;		/* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

#endif
