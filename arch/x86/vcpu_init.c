/* Per-vCPU x86 set-up: CPUID, MSRs, FPU and the local APIC's LINT pins. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/arch_vm.h"
#include "arch/x86/cpuid.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

/* Architectural MSR numbers are not in the UAPI headers. */
#define MSR_IA32_MISC_ENABLE 0x000001a0
#define MISC_ENABLE_FAST_STRING 0x1

#define APIC_LVT0 0x350
#define APIC_LVT1 0x360
#define APIC_MODE_NMI 0x4
#define APIC_MODE_EXTINT 0x7

static int set_cpuid(struct vm *vm, struct vcpu *vcpu)
{
	const struct kvm_cpuid2 *supported = vm->arch->supported_cpuid;
	size_t size = sizeof(*supported) +
		      supported->nent * sizeof(supported->entries[0]);
	struct kvm_cpuid2 *cpuid = malloc(size);
	int err = 0;

	if (!cpuid)
		return -ENOMEM;
	memcpy(cpuid, supported, size);
	cpuid_filter(cpuid, vcpu->id, vm->cfg->nr_vcpus);
	if (ioctl(vcpu->fd, KVM_SET_CPUID2, cpuid) < 0) {
		err = -errno;
		pr_err("vCPU %u: KVM_SET_CPUID2: %s", vcpu->id,
		       strerror(errno));
	}
	free(cpuid);
	return err;
}

static int set_msrs(struct vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[1];
	} msrs = {
		.hdr.nmsrs = 1,
		.entries[0] = { .index = MSR_IA32_MISC_ENABLE,
				.data = MISC_ENABLE_FAST_STRING },
	};

	if (ioctl(vcpu->fd, KVM_SET_MSRS, &msrs) != 1) {
		pr_err("vCPU %u: KVM_SET_MSRS failed", vcpu->id);
		return -EINVAL;
	}
	return 0;
}

static int set_fpu(struct vcpu *vcpu)
{
	struct kvm_fpu fpu = {
		.fcw = 0x37f,		/* x87 defaults after FNINIT */
		.mxcsr = 0x1f80,	/* SSE exceptions masked */
	};

	if (ioctl(vcpu->fd, KVM_SET_FPU, &fpu) < 0) {
		pr_err("vCPU %u: KVM_SET_FPU: %s", vcpu->id, strerror(errno));
		return -errno;
	}
	return 0;
}

static void lvt_set_mode(struct kvm_lapic_state *lapic, unsigned reg,
			 unsigned mode)
{
	uint32_t v;

	memcpy(&v, &lapic->regs[reg], sizeof(v));
	v = (v & ~0x700U) | mode << 8;
	memcpy(&lapic->regs[reg], &v, sizeof(v));
}

/* LINT0 receives the 8259's interrupts (virtual wire mode), LINT1 NMIs:
 * what firmware sets up and what the MP table says. */
static int set_lapic(struct vcpu *vcpu)
{
	struct kvm_lapic_state lapic;

	if (ioctl(vcpu->fd, KVM_GET_LAPIC, &lapic) < 0) {
		pr_err("vCPU %u: KVM_GET_LAPIC: %s", vcpu->id, strerror(errno));
		return -errno;
	}
	lvt_set_mode(&lapic, APIC_LVT0, APIC_MODE_EXTINT);
	lvt_set_mode(&lapic, APIC_LVT1, APIC_MODE_NMI);
	if (ioctl(vcpu->fd, KVM_SET_LAPIC, &lapic) < 0) {
		pr_err("vCPU %u: KVM_SET_LAPIC: %s", vcpu->id, strerror(errno));
		return -errno;
	}
	return 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu)
{
	return set_cpuid(vm, vcpu) ?: set_msrs(vcpu) ?: set_fpu(vcpu) ?:
	       set_lapic(vcpu);
}

int arch_vcpus_created(struct vm *vm)
{
	return 0;	/* the in-kernel irqchip needs nothing more */
}
