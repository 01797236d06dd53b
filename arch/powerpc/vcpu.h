/* powerpc vCPU state beyond what core/arch.h's hooks cover. */
#ifndef THPVM_PPC_VCPU_H
#define THPVM_PPC_VCPU_H

#include <stdint.h>

struct vm;
struct vcpu;

/* LPCR bits the guest may choose through H_SET_MODE. */
#define LPCR_ILE	(1ULL << 25)	/* interrupts in little-endian */
#define LPCR_AIL	(3ULL << 23)	/* where relocated interrupts go */
#define LPCR_AIL_3	(3ULL << 23)

/* Sets the bits of mask in every vCPU's LPCR to those of value. Called
 * while only the calling vCPU runs (the guest asks early in its boot).
 * Returns 0 or -errno. */
int ppc_vcpus_update_lpcr(struct vm *vm, uint64_t mask, uint64_t value);
/* Sets the vCPU to enter the guest at pc, 64-bit, little-endian, with
 * r3 and r4 as given and every other register 0 (r5 = 0: no Open
 * Firmware client interface, Linux reads the device tree): the boot
 * vCPU at the kernel (r3 = the device tree, r4 = where the kernel was
 * loaded), a secondary where RTAS start-cpu says. */
int ppc_vcpu_enter(struct vcpu *vcpu, uint64_t pc, uint64_t r3,
		   uint64_t r4);

#endif
