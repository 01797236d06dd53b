/* CPUID set-up. KVM reports what it can virtualize; the topology leaves
 * still carry the host's values and must describe our guest instead, or
 * the guest looks for CPUs that do not exist. */
#include "arch/x86/cpuid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <asm/kvm_para.h>

#include "lib/log.h"

#define CPUID_MAX_ENTRIES 512

#define CPUID_1_ECX_TSC_DEADLINE (1U << 24)
#define CPUID_1_ECX_HYPERVISOR (1U << 31)
#define CPUID_1_EDX_HTT (1U << 28)
#define TOPO_LEVEL_SMT 1
#define TOPO_LEVEL_CORE 2

/* KVM's LAPIC emulates the TSC-deadline timer, which older kernels'
 * KVM_GET_SUPPORTED_CPUID leave out and KVM_CAP_TSC_DEADLINE_TIMER
 * reports (QEMU adds the bit the same way). Linux needs it where it has
 * no PIT and no ACPI: it would otherwise check its LAPIC timer against
 * a PIT that never ticks, and turn the timer off. */
static void add_tsc_deadline(int kvm_fd, struct kvm_cpuid2 *cpuid)
{
	unsigned i;

	if (ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) <= 0)
		return;
	for (i = 0; i < cpuid->nent; i++) {
		if (cpuid->entries[i].function == 1)
			cpuid->entries[i].ecx |= CPUID_1_ECX_TSC_DEADLINE;
	}
}

int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *cpuid;
	unsigned nent;

	/* Start at KVM's own limit (256): each call runs every host CPUID
	 * leaf, which traps when this host is itself a VM, so a retry after
	 * E2BIG costs as much as the call (0.3 ms here). */
	for (nent = 256; nent <= CPUID_MAX_ENTRIES; nent *= 2) {
		cpuid = calloc(1, sizeof(*cpuid) + nent * sizeof(cpuid->entries[0]));
		if (!cpuid)
			return -ENOMEM;
		cpuid->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) == 0) {
			add_tsc_deadline(kvm_fd, cpuid);
			*out = cpuid;
			return 0;
		}
		free(cpuid);
		if (errno != E2BIG) {
			pr_err("KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
			return -errno;
		}
	}
	return -E2BIG;
}

/* Bits needed to number n things (x2APIC ID shift). */
static unsigned order_base_2(unsigned n)
{
	unsigned bits = 0;

	while ((1U << bits) < n)
		bits++;
	return bits;
}

static void topology_leaf(struct kvm_cpuid_entry2 *e, unsigned apic_id,
			  unsigned nr_vcpus)
{
	e->edx = apic_id;
	switch (e->index) {
	case 0:		/* threads: one per core */
		e->eax = 0;
		e->ebx = 1;
		e->ecx = TOPO_LEVEL_SMT << 8 | e->index;
		break;
	case 1:		/* cores: all vCPUs in one package */
		e->eax = order_base_2(nr_vcpus);
		e->ebx = nr_vcpus;
		e->ecx = TOPO_LEVEL_CORE << 8 | e->index;
		break;
	default:	/* invalid level ends the enumeration */
		e->eax = 0;
		e->ebx = 0;
		e->ecx = e->index;
		break;
	}
}

void cpuid_filter(struct kvm_cpuid2 *cpuid, unsigned apic_id,
		  unsigned nr_vcpus)
{
	unsigned i;

	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0xffff) | (nr_vcpus & 0xff) << 16 |
				 apic_id << 24;
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			if (nr_vcpus > 1)
				e->edx |= CPUID_1_EDX_HTT;
			else
				e->edx &= ~CPUID_1_EDX_HTT;
			break;
		case 4:
			/* Cores per package in 31:26; each cache private
			 * to one thread (25:14 = 0). */
			e->eax = (e->eax & 0x3fff) | (nr_vcpus - 1) << 26;
			break;
		case KVM_CPUID_FEATURES:
			/* Hints describe the host's scheduling, which we do
			 * not promise (e.g. KVM_HINTS_REALTIME). */
			e->edx = 0;
			break;
		case 0xb:
		case 0x1f:
			topology_leaf(e, apic_id, nr_vcpus);
			break;
		}
	}
}
