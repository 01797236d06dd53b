/* The 16-bit BIOS of bios.S, for the real-mode bzImage entry. */
#ifndef THPVM_X86_BIOS_H
#define THPVM_X86_BIOS_H

#include <asm/bootparam.h>

#include "core/vm.h"

#define BIOS_E820_MAX_ENTRIES 128

/* Writes the BIOS, its e820 table, the interrupt vector table and the BIOS
 * data area into guest RAM. */
int x86_bios_setup(struct vm *vm, const struct boot_e820_entry *map,
		   unsigned nr);

#endif
