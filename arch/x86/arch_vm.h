/* The x86 state of a VM (vm->arch), made by arch_vm_init. */
#ifndef THPVM_X86_ARCH_VM_H
#define THPVM_X86_ARCH_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cmos_rtc.h"
#include "arch/x86/i8042.h"
#include "arch/x86/ioapic.h"
#include "arch/x86/pci_ports.h"
#include "core/irq_lines.h"
#include "hw/serial8250.h"

struct kvm_cpuid2;

struct arch_vm {
	struct kvm_cpuid2 *supported_cpuid;
	struct serial8250 serial;
	struct irq_source com1_irq;
	struct cmos_rtc rtc;
	struct i8042 i8042;
	struct x86_pci_ports pci_ports;
	bool split_irqchip;		/* then this IOAPIC is the guest's */
	struct ioapic ioapic;
};

#endif
