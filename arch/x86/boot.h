/* Shared state of one x86 kernel load (boot.c, boot_linux.c, pvh.c). */
#ifndef THPVM_X86_BOOT_H
#define THPVM_X86_BOOT_H

#include <asm/bootparam.h>
#include <stdint.h>

#include "arch/x86/bzimage.h"
#include "core/arch.h"
#include "core/vm.h"

/* arch_boot_entries, in order. */
enum x86_entry {
	X86_ENTRY_AUTO,		/* per image (see boot.c) */
	X86_ENTRY_PVH,		/* ELF, or a bzImage unpacked on the host */
	X86_ENTRY_64,		/* bzImage 64-bit entry (in-guest decompressor) */
	X86_ENTRY_16,		/* bzImage real-mode setup entry */
};

struct x86_boot {
	struct vm *vm;
	const struct boot_source *src;
	struct boot_e820_entry e820[E820_MAX_ENTRIES_ZEROPAGE];
	unsigned nr_e820;
	uint64_t kernel_end;		/* first byte after the kernel */
	uint64_t initrd_addr;		/* valid when src->initrd */
	uint64_t cmdline_len;		/* without the NUL */
	uint64_t rsdp;			/* ACPI's root pointer; 0: none */
};

/* Copies the initrd to the highest page-aligned place below max_addr (and
 * below the MMIO hole) above the kernel. */
int x86_boot_place_initrd(struct x86_boot *b, uint64_t max_addr);
/* Copies the command line to X86_CMDLINE_ADDR, if it is at most max_len
 * bytes long. */
int x86_boot_write_cmdline(struct x86_boot *b, uint64_t max_len);
/* Copies [data, data+len) to guest RAM at gpa, after checking that all of
 * [gpa, gpa+mem_len) is RAM. Loading happens once, into fresh RAM, which
 * is zero: the bytes past len already are. */
int x86_boot_copy(struct x86_boot *b, uint64_t gpa, const uint8_t *data,
		  uint64_t len, uint64_t mem_len);

/* bzImage through its 64-bit entry, or its real-mode setup entry. */
int x86_boot_bzimage_64(struct x86_boot *b, const struct bzimage *img);
int x86_boot_bzimage_16(struct x86_boot *b, const struct bzimage *img);
/* ELF with a PVH entry note (a vmlinux, or a bzImage payload unpacked on
 * the host). Returns -ENOENT, without a message, if there is no note. */
int x86_boot_pvh(struct x86_boot *b, const uint8_t *elf, size_t len);

#endif
