/* vCPU register state for each x86 kernel entry. */
#ifndef THPVM_X86_BOOT_REGS_H
#define THPVM_X86_BOOT_REGS_H

#include <stdint.h>

#include "core/vcpu.h"
#include "core/vm.h"

/* Linux 64-bit boot protocol: long mode with identity-mapped page tables
 * for the first 4 GiB, __BOOT_CS 0x10 / __BOOT_DS 0x18, RSI = zero page. */
int x86_enter_64(struct vm *vm, struct vcpu *vcpu, uint64_t rip,
		 uint64_t zero_page);
/* Real-mode setup entry: CS = seg + 0x20, IP = 0, other segments = seg. */
int x86_enter_16(struct vcpu *vcpu, uint16_t seg, uint16_t sp);
/* PVH: flat 32-bit protected mode, paging off, EBX = hvm_start_info. */
int x86_enter_pvh(struct vm *vm, struct vcpu *vcpu, uint32_t eip,
		  uint32_t start_info);

#endif
