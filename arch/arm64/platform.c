/* The arm64 platform around the vCPUs: guest-physical size, RAM, the GIC,
 * the interrupt routing and the UART. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/arm64/arch_vm.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/vcpu.h"
#include "core/arch.h"
#include "core/vm.h"
#include "hw/debug_exit.h"
#include "lib/log.h"
#include "lib/util.h"

#define UART_LINE 0
/* KVM's guest-physical size when the VM type names none. */
#define IPA_BITS_DEFAULT 40
/* The smallest KVM accepts in the VM type. */
#define IPA_BITS_MIN 32

const struct kvm_cap_need arch_kvm_caps[] = {
	KVM_CAP_NEED(ONE_REG),
	KVM_CAP_NEED(IRQ_ROUTING),	/* SPIs and MSI routes */
	KVM_CAP_NEED(DEVICE_CTRL),	/* the GIC is a KVM device */
	KVM_CAP_NEED(ARM_PSCI_0_2),
	{ 0, NULL },
};

/* Line 0 is the UART's; devices get the rest. */
const struct arch_irq_layout arch_irq_layout = {
	.nr = GIC_NR_SPIS,
	.first = UART_LINE + 1,
	.count = GIC_NR_SPIS - UART_LINE - 1,
};

uint32_t arch_irq_line_kvm(unsigned line)
{
	return KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT |
	       (GIC_SPI_BASE + line);
}

unsigned arch_max_vcpus(void)
{
	return gic_max_vcpus(GIC_V3);
}

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

const struct arch_facts arch_facts = {
	.name = "arm64",
	.kernel_images = "an Image, plain or compressed (as Debian's vmlinuz)",
	.vcpus_limit = STRINGIFY(GICV2_MAX_VCPUS) " with a GICv2",
	.mmio_discovery = "in the device tree",
	.device_tree = true,
	.mem_hotplug = true,
};

int arch_ram_layout(uint64_t ram_size, uint64_t align,
		    struct ram_range *ranges)
{
	if (!ram_size || !IS_ALIGNED(ram_size, align) ||
	    !IS_ALIGNED(ARM64_RAM_START, align) ||
	    ram_size > UINT64_MAX - ARM64_RAM_START)
		return -EINVAL;
	ranges[0].gpa = ARM64_RAM_START;
	ranges[0].size = ram_size;
	return 1;
}

/* The hotplug region starts at the first 1 GiB boundary above boot RAM:
 * a memory block boundary for Linux whatever its page size (its blocks
 * are 128 MiB with 4 KiB pages, 512 MiB with 64 KiB ones). */
static uint64_t hotplug_gpa(uint64_t ram_size)
{
	return ALIGN_UP(ARM64_RAM_START + ram_size, ARM64_HOTPLUG_ALIGN);
}

/* arch_vm_type made the guest-physical space cover the region. */
int arch_hotplug_base(const struct guest_ram *ram, uint64_t size,
		      uint64_t *gpa)
{
	*gpa = hotplug_gpa(ram->total);
	return 0;
}

static unsigned bits_for(uint64_t end)
{
	unsigned bits = IPA_BITS_MIN;

	while (bits < 64 && end > 1ULL << bits)
		bits++;
	return bits;
}

/* The guest-physical address size: the fewest bits that cover RAM and
 * the hotplug region (fewer stage-2 levels), where KVM lets us choose. */
long arch_vm_type(int kvm_fd, uint64_t ram_size, uint64_t hotplug_size)
{
	uint64_t end = ARM64_RAM_START + ram_size;
	int max = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_ARM_VM_IPA_SIZE);
	/* Without the capability, KVM's fixed size and type 0. */
	bool choose = max > 0;
	unsigned need, limit = choose ? (unsigned)max : IPA_BITS_DEFAULT;

	if (hotplug_size) {
		end = hotplug_gpa(ram_size);
		if (hotplug_size > UINT64_MAX - end) {
			pr_err("--mem-hotplug: %llu MiB does not fit above "
			       "RAM", (unsigned long long)(hotplug_size >> 20));
			return -EINVAL;
		}
		end += hotplug_size;
	}
	need = bits_for(end);
	if (need > limit) {
		pr_err("%llu MiB of RAM%s needs a %u-bit guest-physical space; "
		       "this %s offers %u bits",
		       (unsigned long long)(ram_size >> 20),
		       hotplug_size ? " and its hotplug region" : "", need,
		       choose ? "host" : "KVM", limit);
		return -EINVAL;
	}
	return choose ? KVM_VM_TYPE_ARM_IPA_SIZE(need) : 0;
}

static void uart_set_irq(void *opaque, int level)
{
	struct vm *vm = opaque;

	irq_source_set(&vm->lines, &vm->arch->uart_irq, level);
}

static int add_uart(struct vm *vm)
{
	struct arch_vm *a = vm->arch;
	int err = irq_lines_claim(&vm->lines, &a->uart_irq, UART_LINE);

	if (err)
		return err;
	serial8250_init(&a->uart, &vm->console_out, uart_set_irq, vm);
	vm->console = (struct vm_console){ &serial8250_console_ops,
					   &a->uart };
	return io_bus_register(&vm->mmio, ARM64_UART_ADDR, SERIAL8250_REGS,
			       serial8250_access, &a->uart);
}

int arch_vm_init(struct vm *vm)
{
	struct arch_vm *a;
	int err;

	a = vm->arch = calloc(1, sizeof(*vm->arch));
	if (!a)
		return -ENOMEM;
	a->gic.fd = a->gic.its_fd = -1;
	a->mpidr = calloc(vm->cfg->nr_vcpus, sizeof(*a->mpidr));
	if (!a->mpidr)
		return -ENOMEM;
	if (ioctl(vm->vm_fd, KVM_ARM_PREFERRED_TARGET, &a->vcpu_init) < 0) {
		pr_err("KVM_ARM_PREFERRED_TARGET: %s", strerror(errno));
		return -errno;
	}
	a->pmu = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
		       KVM_CAP_ARM_PMU_V3) > 0;
	err = gic_create(&a->gic, vm);
	if (err)
		return err;
	/* MSIs through the ITS name their requester. */
	vm->irq.msi_devid = a->gic.its_fd >= 0;
	vm->mmio_next = ARM64_PLATFORM_MMIO_START;
	vm->mmio_end = ARM64_PLATFORM_MMIO_END;
	err = pci_bus_init(&vm->pci, &vm->mmio, ARM64_PCI_MMIO_START,
			   ARM64_PCI_MMIO_SIZE, ARM64_PCI_ECAM_ADDR);
	if (!err)
		err = add_uart(vm);
	if (!err)
		err = io_bus_register(&vm->mmio, ARM64_EXIT_ADDR,
				      ARM64_EXIT_SIZE, debug_exit_access, vm);
	if (err)
		pr_err("cannot register the platform devices: %s",
		       strerror(-err));
	return err;
}

/* The GIC's own routing replaces ours when it initialises, so the
 * table (SPI lines as GSIs, below the MSI routes devices add) is
 * committed after it. */
static int set_gsi_routing(struct vm *vm)
{
	unsigned line;
	int err = 0;

	for (line = 0; line < GIC_NR_SPIS && !err; line++)
		err = irq_routing_add_irqchip(&vm->irq, line, 0, line);
	return err ?: irq_routing_commit(&vm->irq);
}

int arch_vcpus_created(struct vm *vm)
{
	int err = gic_finalize(&vm->arch->gic, vm);

	return err ?: arm64_vcpus_pmu_init(vm) ?: set_gsi_routing(vm);
}

void arch_vm_destroy(struct vm *vm)
{
	if (!vm->arch)
		return;
	gic_destroy(&vm->arch->gic);
	serial8250_destroy(&vm->arch->uart);
	free(vm->arch->mpidr);
	free(vm->arch);
	vm->arch = NULL;
	vm->console = (struct vm_console){ 0 };
}
