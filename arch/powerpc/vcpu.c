/* powerpc vCPUs: PAPR mode (KVM_RUN refuses to run without it), the
 * LPCR bits the guest asks for, the entry registers, and what to say
 * when a vCPU stops. All but the boot vCPU start powered off: the guest
 * starts them with RTAS start-cpu. */
#include "arch/powerpc/vcpu.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/xics.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

#define MSR_SF	(1ULL << 63)	/* 64-bit mode */
#define MSR_ME	(1ULL << 12)	/* machine checks on */
#define MSR_LE	1ULL		/* little-endian */

static int one_reg(struct vcpu *vcpu, unsigned long op, uint64_t id,
		   uint64_t *value)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)value };

	return ioctl(vcpu->fd, op, &reg) < 0 ? -errno : 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_PPC_PAPR };

	if (ioctl(vcpu->fd, KVM_ENABLE_CAP, &cap) < 0) {
		pr_err("vCPU %u: enabling PAPR mode: %s", vcpu->id,
		       strerror(errno));
		return -errno;
	}
	vcpu->powered_off = vcpu->id != 0;
	return xics_connect_vcpu(vm->arch->xics_fd, vcpu);
}

int ppc_vcpus_update_lpcr(struct vcpu *caller, uint64_t mask,
			  uint64_t value)
{
	struct vm *vm = caller->vm;
	uint64_t lpcr;
	unsigned i;
	int err;

	for (i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		if (v != caller)
			vcpu_kick(v);
		err = one_reg(v, KVM_GET_ONE_REG, KVM_REG_PPC_LPCR_64, &lpcr);
		if (err)
			return err;
		lpcr = (lpcr & ~mask) | (value & mask);
		err = one_reg(v, KVM_SET_ONE_REG, KVM_REG_PPC_LPCR_64, &lpcr);
		if (err)
			return err;
	}
	return 0;
}

int ppc_vcpu_enter(struct vcpu *vcpu, uint64_t pc, uint64_t r3,
		   uint64_t r4)
{
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0) {
		pr_err("vCPU %u: KVM_GET_REGS: %s", vcpu->id, strerror(errno));
		return -errno;
	}
	regs.pc = pc;
	regs.msr = MSR_SF | MSR_ME | MSR_LE;
	memset(regs.gpr, 0, sizeof(regs.gpr));
	regs.gpr[3] = r3;
	regs.gpr[4] = r4;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0) {
		pr_err("vCPU %u: KVM_SET_REGS: %s", vcpu->id, strerror(errno));
		return -errno;
	}
	/* A vCPU that stopped itself (RTAS stop-self) left a hypercall whose
	 * results KVM writes into r3-r12 at its next KVM_RUN: make them the
	 * entry's. */
	if (vcpu->run->exit_reason == KVM_EXIT_PAPR_HCALL) {
		memset(&vcpu->run->papr_hcall.args, 0,
		       sizeof(vcpu->run->papr_hcall.args));
		vcpu->run->papr_hcall.ret = r3;
		vcpu->run->papr_hcall.args[0] = r4;
	}
	return 0;
}

void arch_vcpu_report_failure(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;
	char where[96] = "";

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) == 0)
		snprintf(where, sizeof(where), " at pc 0x%llx (msr 0x%llx, "
			 "lr 0x%llx)", (unsigned long long)regs.pc,
			 (unsigned long long)regs.msr,
			 (unsigned long long)regs.lr);
	switch (run->exit_reason) {
	case KVM_EXIT_FAIL_ENTRY:
		pr_err("vCPU %u: KVM could not enter the guest (reason 0x%llx)%s",
		       vcpu->id, (unsigned long long)
		       run->fail_entry.hardware_entry_failure_reason, where);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		pr_err("vCPU %u: KVM internal error %u%s", vcpu->id,
		       run->internal.suberror, where);
		break;
	default:
		pr_err("vCPU %u: unexpected exit %u%s", vcpu->id,
		       run->exit_reason, where);
	}
}
