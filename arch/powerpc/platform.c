/* The sPAPR platform around the vCPUs: KVM HV, RAM from 0, the vty
 * console, XICS, the PCI bus, and what the device tree needs from the
 * host (timebase, cache blocks). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/phb.h"
#include "arch/powerpc/platform.h"
#include "arch/powerpc/xics.h"
#include "core/arch.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

/* POWER9's cache block, for a host that does not say (AT_DCACHEBSIZE). */
#define CACHE_BLOCK_DEFAULT 128

const struct kvm_cap_need arch_kvm_caps[] = {
	KVM_CAP_NEED(ONE_REG),
	KVM_CAP_NEED(PPC_PAPR),
	/* Nested KVM HV, what these hosts offer, runs radix guests only. */
	KVM_CAP_NEED(PPC_MMU_RADIX),
	{ 0, NULL },
};

/* XICS sources, all for devices (the vty is polled). */
const struct arch_irq_layout arch_irq_layout = {
	.nr = XICS_NR_LINES,
	.first = 0,
	.count = XICS_NR_LINES,
};

uint32_t arch_irq_line_kvm(unsigned line)
{
	return XICS_IRQ_BASE + line;
}

/* Each vCPU is an XICS interrupt server and a node in the device tree,
 * whose 64 KiB hold this many with room to spare. */
unsigned arch_max_vcpus(void)
{
	return 64;
}

/* Debian's pseries kernel would not probe virtio-mmio devices in the
 * tree (docs/powerpc.md). */
const struct arch_facts arch_facts = {
	.name = "powerpc",
	.kernel_images = "an ELF vmlinux (this arch has no bundled test guest "
			 "yet)",
	.device_tree = true,
};

/* From 0 up to the PCI window, the rest above 4 GiB. */
int arch_ram_layout(uint64_t ram_size, uint64_t align,
		    struct ram_range *ranges)
{
	uint64_t low = MIN(ram_size, PPC_RAM_LOW_MAX);

	if (!ram_size || !IS_ALIGNED(ram_size, align) ||
	    !IS_ALIGNED(PPC_RAM_LOW_MAX, align) ||
	    ram_size - low > UINT64_MAX - PPC_RAM_HIGH_START)
		return -EINVAL;
	ranges[0].gpa = PPC_RAM_START;
	ranges[0].size = low;
	if (low == ram_size)
		return 1;
	ranges[1].gpa = PPC_RAM_HIGH_START;
	ranges[1].size = ram_size - low;
	return 2;
}

int arch_hotplug_base(const struct guest_ram *ram, uint64_t size,
		      uint64_t *gpa)
{
	pr_err("--mem-hotplug: not offered on powerpc yet");
	return -ENOTSUP;
}

long arch_vm_type(int kvm_fd, uint64_t ram_size, uint64_t hotplug_size)
{
	return KVM_VM_PPC_HV;
}

int ppc_cpuinfo_timebase(const char *line, uint32_t *hz)
{
	unsigned long v;
	char *end;

	if (strncmp(line, "timebase", 8))
		return -ENOENT;
	line = strchr(line, ':');
	if (!line)
		return -ENOENT;
	errno = 0;
	v = strtoul(line + 1, &end, 10);
	if (end == line + 1 || errno || !v || v > UINT32_MAX ||
	    (*end && *end != '\n'))
		return -ENOENT;
	*hz = (uint32_t)v;
	return 0;
}

/* The line comes after every processor's block, so a host with many
 * CPUs has it far in. */
static int read_timebase(uint32_t *hz)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t len = 0;
	int err = -ENOENT;

	if (!f) {
		pr_err("/proc/cpuinfo: %s", strerror(errno));
		return -errno;
	}
	while (err && getline(&line, &len, f) > 0)
		err = ppc_cpuinfo_timebase(line, hz);
	free(line);
	fclose(f);
	if (err)
		pr_err("/proc/cpuinfo names no timebase frequency");
	return err;
}

static uint32_t cache_block(unsigned long type)
{
	unsigned long v = getauxval(type);

	return v && v <= 4096 ? (uint32_t)v : CACHE_BLOCK_DEFAULT;
}

int arch_vm_init(struct vm *vm)
{
	struct arch_vm *a;
	int err;

	a = vm->arch = calloc(1, sizeof(*vm->arch));
	if (!a)
		return -ENOMEM;
	a->xics_fd = -1;
	pthread_mutex_init(&a->msi_lock, NULL);
	spapr_vty_init(&a->vty, &vm->console_out);
	vm->console = (struct vm_console){ &spapr_vty_console_ops, &a->vty };
	err = read_timebase(&a->timebase_hz);
	if (err)
		return err;
	a->dcache_block = cache_block(AT_DCACHEBSIZE);
	a->icache_block = cache_block(AT_ICACHEBSIZE);
	a->ail_mode_3 = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION,
			      KVM_CAP_PPC_AIL_MODE_3) > 0;
	if (ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PPC_GET_CPU_CHAR) > 0 &&
	    ioctl(vm->vm_fd, KVM_PPC_GET_CPU_CHAR, &a->cpu_char) < 0)
		memset(&a->cpu_char, 0, sizeof(a->cpu_char));
	a->xics_fd = xics_create(vm);
	if (a->xics_fd < 0)
		return a->xics_fd;
	/* Without KVM_CAP_IRQ_ROUTING there are no MSI routes: an MSI's
	 * data names its XICS source. */
	vm->irq.msi_source = phb_msi_source;
	/* No ECAM: the guest reaches configuration space through RTAS. */
	err = pci_bus_init(&vm->pci, &vm->mmio, PPC_PCI_MMIO_START,
			   PPC_PCI_MMIO_SIZE, 0);
	if (err)
		pr_err("cannot set up the PCI bus: %s", strerror(-err));
	return err;
}

int arch_vcpus_created(struct vm *vm)
{
	return 0;
}

void arch_vm_destroy(struct vm *vm)
{
	if (!vm->arch)
		return;
	if (vm->arch->xics_fd >= 0)
		close(vm->arch->xics_fd);
	spapr_vty_destroy(&vm->arch->vty);
	pthread_mutex_destroy(&vm->arch->msi_lock);
	free(vm->arch);
	vm->arch = NULL;
	vm->console = (struct vm_console){ 0 };
}
