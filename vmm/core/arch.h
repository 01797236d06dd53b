/* The hooks each architecture implements under arch/<arch>/. The layers
 * above core/ call only these; everything that differs between x86, arm64
 * and powerpc (memory map, boot protocol, vCPU state, platform devices)
 * lives behind them. An arch keeps its own state in its struct arch_vm,
 * which arch_vm_init allocates as vm->arch: nothing outside arch/<arch>/
 * sees inside it. */
#ifndef THPVM_ARCH_H
#define THPVM_ARCH_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/guest_ram.h"

struct vm;
struct vcpu;

/* A guest to boot, already read into memory. */
struct boot_source {
	const char *kernel_name;	/* path, or a description for messages */
	const uint8_t *kernel;
	size_t kernel_size;
	const uint8_t *initrd;		/* NULL: none */
	size_t initrd_size;
	const char *cmdline;		/* never NULL */
	unsigned entry;			/* in arch_boot_entries */
	const char *dump_dtb;		/* write the device tree here, where
					 * the arch makes one; NULL: no */
	bool no_acpi;			/* no ACPI tables, where the arch
					 * makes them (x86) */
};

/* The kernel command line a Linux guest gets when the user gives none:
 * "console=" the arch's UART (arch_linux_uart), or hvc0 with a
 * virtio-console, then arch_linux_params, whose early console stays on
 * the UART for what comes before the driver. */
extern const char arch_linux_uart[];
extern const char arch_linux_params[];

/* The kernel entries the arch offers, by name (thpvm run --boot): the
 * first, "auto", lets arch_boot_load choose per image. NULL-terminated. */
extern const char *const arch_boot_entries[];

/* A KVM capability and its name for messages (KVM_CAP_IRQCHIP:
 * "IRQCHIP"). */
struct kvm_cap_need {
	int cap;
	const char *name;
};
#define KVM_CAP_NEED(x) { KVM_CAP_##x, #x }

/* The capabilities the arch cannot work without, checked after the
 * core's own; ends with { 0, NULL }. */
extern const struct kvm_cap_need arch_kvm_caps[];

/* The type argument of KVM_CREATE_VM for this host's KVM, ram_size
 * bytes of RAM and a memory hotplug region of hotplug_size (0: none)
 * (x86: 0; arm64: the guest-physical address size they need; powerpc:
 * HV). Returns it, or -errno after saying why. */
long arch_vm_type(int kvm_fd, uint64_t ram_size, uint64_t hotplug_size);

/* Guest-physical RAM ranges for ram_size bytes of RAM, each aligned to
 * align, the host's huge page (holes for MMIO are the arch's to place).
 * Returns the number of ranges (at most GUEST_RAM_MAX_REGIONS) or
 * -errno. */
int arch_ram_layout(uint64_t ram_size, uint64_t align,
		    struct ram_range *ranges);

/* Where the memory hotplug region of size bytes goes (virtio-mem), given
 * the boot RAM mapped: above all of it, outside every MMIO window and
 * the boot memory map, aligned so that a Linux guest can add it in whole
 * memory blocks. Returns 0 with *gpa set, or -errno after saying why. */
int arch_hotplug_base(const struct guest_ram *ram, uint64_t size,
		      uint64_t *gpa);

/* The platform's wired interrupt lines (core/irq_lines.h): nr in all, of
 * which devices are given [first, first + count). */
struct arch_irq_layout {
	unsigned nr, first, count;
};
extern const struct arch_irq_layout arch_irq_layout;

/* The irq field of KVM_IRQ_LINE for a line (x86: the GSI; arm64: type
 * and number packed). */
uint32_t arch_irq_line_kvm(unsigned line);

/* Largest number of vCPUs the platform code can describe to a guest. */
unsigned arch_max_vcpus(void);

/* What the arch offers of thpvm's generic options, in words for `thpvm
 * run --help`: options an arch does not offer are left out of its help
 * (still parsed, and refused or ignored where the arch meets them). */
struct arch_facts {
	const char *name;	/* as messages name the arch: "powerpc" */
	/* The kernel images arch_boot_load takes, after "a Linux kernel:". */
	const char *kernel_images;
	/* What lowers arch_max_vcpus() on some hosts, or NULL. */
	const char *vcpus_limit;
	/* Where a guest finds a virtio-mmio device, after "described";
	 * NULL: the arch offers no virtio-mmio. */
	const char *mmio_discovery;
	/* What a guest does without ACPI tables (boot_source.no_acpi);
	 * NULL: the arch makes none. */
	const char *no_acpi;
	/* Where its interrupt controllers can be (vm_config.irqchip), in
	 * words; NULL: KVM's only, and --irqchip and --pit are refused. */
	const char *irqchip;
	bool device_tree;	/* boot_source.dump_dtb can write one */
	bool mem_hotplug;	/* arch_hotplug_base places a region */
};
extern const struct arch_facts arch_facts;

/* After RAM is registered, before vCPUs exist: vm->arch, interrupt
 * controller, timers and platform devices (console, reset, RTC...); sets
 * vm->console. */
int arch_vm_init(struct vm *vm);

/* Right after KVM_CREATE_VCPU: CPUID, MSRs, local interrupt controller. */
int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu);

/* Once every vCPU exists and is set up, before any device is added: what
 * needs them all (arm64 finalises its GIC here). */
int arch_vcpus_created(struct vm *vm);

/* An exit reason the generic vCPU loop does not handle itself (powerpc's
 * KVM_EXIT_PAPR_HCALL, ...), on the vCPU's thread. Returns true when it
 * was handled and the vCPU goes on; false for an exit the arch does not
 * know either, which stops the VM as a failure (arch_vcpu_report_failure
 * says why). */
bool arch_vcpu_exit(struct vcpu *vcpu);

/* Loads kernel, initrd and command line into guest RAM, writes the boot
 * data the platform's boot protocol needs, and sets the boot vCPU's
 * registers for the chosen entry. Reports its own errors. */
int arch_boot_load(struct vm *vm, const struct boot_source *src);

/* Explains why a vCPU stopped (emulation failure, entry failure...) in one
 * line on stderr: reason, instruction pointer, instruction bytes. */
void arch_vcpu_report_failure(struct vcpu *vcpu);

/* Frees what arch_vm_init made, however far it got. */
void arch_vm_destroy(struct vm *vm);

#endif
