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

/* Sets the bits of mask in every vCPU's LPCR to those of value, for the
 * guest's H_SET_MODE on vCPU caller (Linux asks before it starts the
 * others, which wait outside KVM_RUN; one that runs is kicked out of it
 * to take the change). Returns 0 or -errno. */
int ppc_vcpus_update_lpcr(struct vcpu *caller, uint64_t mask,
			  uint64_t value);
/* Sets the vCPU to enter the guest at pc, 64-bit, little-endian, with
 * r3 and r4 as given and every other register 0 (r5 = 0: no Open
 * Firmware client interface, Linux reads the device tree): the boot
 * vCPU at the kernel (r3 = the device tree, r4 = where the kernel was
 * loaded), a secondary where RTAS start-cpu says. */
int ppc_vcpu_enter(struct vcpu *vcpu, uint64_t pc, uint64_t r3,
		   uint64_t r4);

#endif
