/* The arm64 state of a VM (vm->arch), made by arch_vm_init. */
#ifndef THPVM_ARM64_ARCH_VM_H
#define THPVM_ARM64_ARCH_VM_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/arm64/gic.h"
#include "core/irq_lines.h"
#include "hw/serial8250.h"

struct arch_vm {
	struct gic gic;
	struct kvm_vcpu_init vcpu_init;	/* KVM_ARM_PREFERRED_TARGET's */
	bool pmu;			/* KVM offers a PMU to guests */
	uint64_t *mpidr;		/* per vCPU, what the guest's DT names */
	struct serial8250 uart;
	struct irq_source uart_irq;
};

#endif
