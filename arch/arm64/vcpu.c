/* arm64 vCPUs: KVM_ARM_VCPU_INIT with PSCI 0.2 (the boot vCPU runs, the
 * others wait powered off for the guest's PSCI CPU_ON, which KVM
 * handles), the PMU where KVM offers one, the boot registers, and what
 * to say when a vCPU stops. */
#include "arch/arm64/vcpu.h"

#include <asm/ptrace.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/arm64/arch_vm.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

#define CORE_REG(name) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | \
			KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(name))
#define MPIDR_EL1 ARM64_SYS_REG(3, 0, 0, 0, 5)
/* The affinity fields Aff2..Aff0 of MPIDR_EL1 (Aff3 stays 0 below 256
 * vCPUs), as a device tree's cpu reg gives them. */
#define MPIDR_AFFINITY 0xffffffULL
#define BOOT_PSTATE (PSR_MODE_EL1h | PSR_D_BIT | PSR_A_BIT | PSR_I_BIT | \
		     PSR_F_BIT)

static int get_reg(struct vcpu *vcpu, uint64_t id, uint64_t *value)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)value };

	return ioctl(vcpu->fd, KVM_GET_ONE_REG, &reg) < 0 ? -errno : 0;
}

static int set_reg(struct vcpu *vcpu, uint64_t id, uint64_t value)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&value };

	return ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg) < 0 ? -errno : 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu)
{
	struct kvm_vcpu_init init = vm->arch->vcpu_init;
	uint64_t mpidr;
	int err;

	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	if (vcpu->id)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	if (vm->arch->pmu)
		init.features[0] |= 1u << KVM_ARM_VCPU_PMU_V3;
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &init) < 0) {
		pr_err("vCPU %u: KVM_ARM_VCPU_INIT: %s", vcpu->id,
		       strerror(errno));
		return -errno;
	}
	err = get_reg(vcpu, MPIDR_EL1, &mpidr);
	if (err) {
		pr_err("vCPU %u: reading MPIDR_EL1: %s", vcpu->id,
		       strerror(-err));
		return err;
	}
	vm->arch->mpidr[vcpu->id] = mpidr & MPIDR_AFFINITY;
	return 0;
}

static int pmu_attr(struct vcpu *vcpu, uint64_t attr, const void *value)
{
	struct kvm_device_attr a = {
		.group = KVM_ARM_VCPU_PMU_V3_CTRL,
		.attr = attr,
		.addr = (uintptr_t)value,
	};

	return ioctl(vcpu->fd, KVM_SET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}

int arm64_vcpus_pmu_init(struct vm *vm)
{
	static const int irq = GIC_PPI_PMU;
	unsigned i;
	int err;

	if (!vm->arch->pmu)
		return 0;
	for (i = 0; i < vm->nr_vcpus; i++) {
		err = pmu_attr(&vm->vcpus[i], KVM_ARM_VCPU_PMU_V3_IRQ, &irq) ?:
		      pmu_attr(&vm->vcpus[i], KVM_ARM_VCPU_PMU_V3_INIT, NULL);
		if (err) {
			pr_err("vCPU %u: setting up the PMU: %s", i,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

int arm64_vcpu_set_boot_regs(struct vcpu *vcpu, uint64_t pc, uint64_t fdt)
{
	int err = set_reg(vcpu, CORE_REG(regs.pstate), BOOT_PSTATE) ?:
		  set_reg(vcpu, CORE_REG(regs.regs[0]), fdt) ?:
		  set_reg(vcpu, CORE_REG(regs.regs[1]), 0) ?:
		  set_reg(vcpu, CORE_REG(regs.regs[2]), 0) ?:
		  set_reg(vcpu, CORE_REG(regs.regs[3]), 0) ?:
		  set_reg(vcpu, CORE_REG(regs.pc), pc);

	if (err)
		pr_err("vCPU %u: setting the boot registers: %s", vcpu->id,
		       strerror(-err));
	return err;
}

bool arch_vcpu_exit(struct vcpu *vcpu)
{
	/* MMIO and PSCI's system events are all arm64 guests cause. */
	return false;
}

static const char *reason_of(const struct kvm_run *run, char *buf,
			     size_t len)
{
	switch (run->exit_reason) {
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(buf, len, "entry failed (reason 0x%llx)",
			 (unsigned long long)
				 run->fail_entry.hardware_entry_failure_reason);
		return buf;
	case KVM_EXIT_INTERNAL_ERROR:
		snprintf(buf, len, "KVM internal error (suberror %u)",
			 run->internal.suberror);
		return buf;
	case KVM_EXIT_ARM_NISV:
		snprintf(buf, len, "MMIO access KVM cannot decode at "
			 "0x%llx (a load/store pair or writeback?)",
			 (unsigned long long)run->arm_nisv.fault_ipa);
		return buf;
	default:
		snprintf(buf, len, "unhandled exit reason %u",
			 run->exit_reason);
		return buf;
	}
}

void arch_vcpu_report_failure(struct vcpu *vcpu)
{
	char reason[128];
	uint64_t pc, pstate;

	reason_of(vcpu->run, reason, sizeof(reason));
	if (get_reg(vcpu, CORE_REG(regs.pc), &pc) ||
	    get_reg(vcpu, CORE_REG(regs.pstate), &pstate)) {
		pr_err("vCPU %u: %s (registers unreadable)", vcpu->id,
		       reason);
		return;
	}
	pr_err("vCPU %u: %s at PC 0x%llx (PSTATE 0x%llx)", vcpu->id, reason,
	       (unsigned long long)pc, (unsigned long long)pstate);
}
