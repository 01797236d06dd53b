/* The e820 memory map handed to x86 guests (zero page, PVH memmap, and
 * the 16-bit BIOS's int 0x15). */
#ifndef THPVM_X86_E820_H
#define THPVM_X86_E820_H

#include <asm/bootparam.h>

#include "core/guest_ram.h"

#define E820_TYPE_RAM 1
#define E820_TYPE_RESERVED 2

/* Describes guest RAM, and the reserved legacy areas below 1 MiB, in
 * ascending order. Returns the number of entries or -ENOSPC. */
int x86_e820_build(const struct guest_ram *ram, struct boot_e820_entry *map,
		   unsigned max);

#endif
