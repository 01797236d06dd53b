/* arm64 vCPU state beyond what core/arch.h's hooks cover. */
#ifndef THPVM_ARM64_VCPU_H
#define THPVM_ARM64_VCPU_H

#include <stdint.h>

struct vm;
struct vcpu;

/* The guest's PMU on every vCPU, once the GIC is initialised (KVM wants
 * it so); nothing when KVM offers none. */
int arm64_vcpus_pmu_init(struct vm *vm);
/* The boot vCPU enters the kernel at pc with x0 = the device tree, in
 * EL1h with interrupts masked (Linux's arm64 boot protocol). */
int arm64_vcpu_set_boot_regs(struct vcpu *vcpu, uint64_t pc, uint64_t fdt);

#endif
