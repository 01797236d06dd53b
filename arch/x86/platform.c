/* The x86 platform around the vCPUs: the interrupt controllers (KVM's
 * LAPICs with the IOAPIC in user space, or all of them in KVM with its
 * 8259s), the PIT where asked for, the interrupt routing the MP table
 * describes, and the legacy devices on the port bus. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/x86/acpi_pm.h"
#include "arch/x86/arch_vm.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/ioapic.h"
#include "arch/x86/layout.h"
#include "arch/x86/mptable.h"
#include "core/arch.h"
#include "core/vm.h"
#include "hw/debug_exit.h"
#include "lib/log.h"

#define POST_PORT 0x80
/* QEMU's isa-debug-exit iobase, and its ports (hw/debug_exit.h). */
#define DEBUG_EXIT_PORT 0x501
#define DEBUG_EXIT_PORTS 4
#define PIC_SLAVE_CASCADE_IRQ 2
#define ISA_IRQS 16

/* KVM_CAP_SPLIT_IRQCHIP and KVM_CAP_PIT2 are checked where asked for. */
const struct kvm_cap_need arch_kvm_caps[] = {
	KVM_CAP_NEED(IRQCHIP),
	KVM_CAP_NEED(IRQ_ROUTING),	/* MSI routes */
	KVM_CAP_NEED(SET_TSS_ADDR),
	KVM_CAP_NEED(EXT_CPUID),	/* KVM_GET_SUPPORTED_CPUID */
	{ 0, NULL },
};

/* GSIs are IOAPIC pins: the ISA IRQs below 16, then 8 lines for PCI INTx
 * and other devices. */
const struct arch_irq_layout arch_irq_layout = {
	.nr = IOAPIC_PINS,
	.first = ISA_IRQS,
	.count = IOAPIC_PINS - ISA_IRQS,
};

uint32_t arch_irq_line_kvm(unsigned line)
{
	return line;	/* the GSI, which routes to the IOAPIC pin */
}

long arch_vm_type(int kvm_fd, uint64_t ram_size, uint64_t hotplug_size)
{
	return 0;	/* the only type x86 KVM has */
}

unsigned arch_max_vcpus(void)
{
	/* xAPIC IDs are 8 bits and the IOAPIC takes the ID after the last
	 * CPU (mptable.c). */
	return 254;
}

const struct arch_facts arch_facts = {
	.name = "x86",
	.kernel_images = "a bzImage or an ELF vmlinux with a PVH note",
	.mmio_discovery = "in the ACPI tables' DSDT (with --no-acpi, as "
			  "virtio_mmio.device= on the kernel command line)",
	.no_acpi = "the guest finds its CPUs in the MP table and virtio-mmio "
		   "devices on its command line",
	.irqchip = "split (default): the LAPICs in KVM, the IOAPIC in thpvm, "
		   "no 8259 PICs; kernel: all of them in KVM",
	.mem_hotplug = true,
};

/* With KVM's irqchip: GSI n drives PIC input n (n < 16, not the cascade)
 * and IOAPIC pin n, except GSI 0, the PIT, which is wired to IOAPIC pin 2
 * as on PCs (and as our MP table says). GSIs above the IOAPIC pins are
 * MSI routes. */
static int set_kernel_gsi_routing(struct vm *vm)
{
	unsigned gsi;
	int err = 0;

	for (gsi = 0; gsi < ISA_IRQS && !err; gsi++) {
		if (gsi != PIC_SLAVE_CASCADE_IRQ)
			err = irq_routing_add_irqchip(&vm->irq, gsi,
				gsi < 8 ? KVM_IRQCHIP_PIC_MASTER :
					  KVM_IRQCHIP_PIC_SLAVE, gsi % 8);
	}
	for (gsi = 0; gsi < IOAPIC_PINS && !err; gsi++) {
		if (gsi != MPTABLE_TIMER_IOAPIC_PIN)
			err = irq_routing_add_irqchip(&vm->irq, gsi,
				KVM_IRQCHIP_IOAPIC,
				gsi == 0 ? MPTABLE_TIMER_IOAPIC_PIN : gsi);
	}
	return err ?: irq_routing_commit(&vm->irq);
}

static int kernel_irqchip_init(struct vm *vm)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		pr_err("KVM_CREATE_IRQCHIP: %s", strerror(errno));
		return -errno;
	}
	if (vm->cfg->pit && ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
		pr_err("KVM_CREATE_PIT2: %s", strerror(errno));
		return -errno;
	}
	return set_kernel_gsi_routing(vm);
}

static int ioapic_route(void *opaque, unsigned pin, uint64_t addr,
			uint32_t data)
{
	struct vm *vm = opaque;

	return irq_msi_set(&vm->irq, pin, addr, data, 0);
}

static int ioapic_fire(void *opaque, unsigned pin)
{
	struct vm *vm = opaque;
	struct kvm_irq_level irq = { .irq = pin, .level = 1 };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}

static const struct ioapic_ops kvm_ioapic_ops = {
	.route = ioapic_route,
	.fire = ioapic_fire,
};

/* KVM's LAPICs; the IOAPIC here, its pins the GSIs below IOAPIC_PINS
 * (KVM watches the EOIs of their level-triggered routes). KVM's PIT
 * needs its 8259s, which the split irqchip leaves out. */
static int split_irqchip_init(struct vm *vm)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_SPLIT_IRQCHIP,
				      .args = { IOAPIC_PINS } };
	struct ioapic *io = &vm->arch->ioapic;

	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
		pr_err("KVM_CAP_SPLIT_IRQCHIP: %s (--irqchip=kernel does "
		       "without it)", strerror(errno));
		return -errno;
	}
	irq_routing_reserve(&vm->irq, IOAPIC_PINS);
	/* The ID the MP table and MADT give it, the one after the CPUs',
	 * in the 4 bits its register has (Linux compares neither). */
	ioapic_init(io, vm->cfg->nr_vcpus, &kvm_ioapic_ops, vm);
	vm->arch->split_irqchip = true;
	irq_lines_set_driver(&vm->lines, ioapic_set_line, io);
	return io_bus_register(&vm->mmio, X86_IOAPIC_ADDR, IOAPIC_MMIO_SIZE,
			       ioapic_mmio, io);
}

static void post_port_access(void *opaque, uint64_t offset, uint8_t *data,
			     uint32_t len, bool is_write)
{
	/* Port 0x80 is written for I/O delays; reads see nothing there. */
	if (!is_write)
		memset(data, 0xff, len);
}

static void serial_set_irq(void *opaque, int level)
{
	struct vm *vm = opaque;

	irq_source_set(&vm->lines, &vm->arch->com1_irq, level);
}

static int register_devices(struct vm *vm)
{
	struct arch_vm *a = vm->arch;
	int err = irq_lines_claim(&vm->lines, &a->com1_irq, X86_COM1_IRQ);

	if (err)
		return err;
	serial8250_init(&a->serial, &vm->console_out, serial_set_irq, vm);
	vm->console = (struct vm_console){ &serial8250_console_ops,
					   &a->serial };
	cmos_rtc_init(&a->rtc);
	i8042_init(&a->i8042, vm);
	x86_pci_ports_init(&a->pci_ports, &vm->pci);
	return io_bus_register(&vm->pio, X86_COM1_PORT, SERIAL8250_REGS,
			       serial8250_access, &a->serial) ?:
	       io_bus_register(&vm->pio, CMOS_RTC_PORT, CMOS_RTC_PORTS,
			       cmos_rtc_access, &a->rtc) ?:
	       io_bus_register(&vm->pio, I8042_DATA_PORT, 1,
			       i8042_data_access, &a->i8042) ?:
	       io_bus_register(&vm->pio, I8042_CMD_PORT, 1, i8042_cmd_access,
			       &a->i8042) ?:
	       io_bus_register(&vm->pio, DEBUG_EXIT_PORT, DEBUG_EXIT_PORTS,
			       debug_exit_access, vm) ?:
	       io_bus_register(&vm->pio, POST_PORT, 1, post_port_access, NULL) ?:
	       io_bus_register(&vm->pio, X86_ACPI_PM_PORT, X86_ACPI_PM_PORTS,
			       x86_acpi_pm_access, vm) ?:
	       x86_pci_ports_register(&a->pci_ports, &vm->pio);
}

int arch_vm_init(struct vm *vm)
{
	int err;

	vm->arch = calloc(1, sizeof(*vm->arch));
	if (!vm->arch)
		return -ENOMEM;
	/* Intel VMX needs these pages for real-mode emulation; they sit in
	 * the MMIO hole, not in RAM. */
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, X86_KVM_TSS_ADDR) < 0) {
		pr_err("KVM_SET_TSS_ADDR: %s", strerror(errno));
		return -errno;
	}
	err = vm->cfg->irqchip == IRQCHIP_SPLIT ? split_irqchip_init(vm) :
						       kernel_irqchip_init(vm);
	if (err)
		return err;
	err = cpuid_get_supported(vm->kvm_fd, &vm->arch->supported_cpuid);
	if (err)
		return err;
	vm->mmio_next = X86_PLATFORM_MMIO_START;
	vm->mmio_end = X86_PLATFORM_MMIO_END;
	err = pci_bus_init(&vm->pci, &vm->mmio, X86_PCI_MMIO_START,
			   X86_PCI_MMIO_SIZE, X86_PCI_ECAM_ADDR);
	if (err)
		return err;
	err = register_devices(vm);
	if (err)
		pr_err("cannot register the platform devices: %s",
		       strerror(-err));
	return err;
}

void arch_vm_destroy(struct vm *vm)
{
	if (!vm->arch)
		return;
	free(vm->arch->supported_cpuid);
	if (vm->arch->split_irqchip)
		ioapic_destroy(&vm->arch->ioapic);
	serial8250_destroy(&vm->arch->serial);
	x86_pci_ports_destroy(&vm->arch->pci_ports);
	free(vm->arch);
	vm->arch = NULL;
	vm->console = (struct vm_console){ 0 };
}
