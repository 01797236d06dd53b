/* The exits the generic vCPU loop leaves to x86: the EOIs of the
 * user-space IOAPIC's level-triggered pins (the split irqchip), and
 * failures, each said in one clear line: why, where (RIP), and the
 * instruction bytes there, named where they are one of the instructions
 * an emulator gives up on ("lock cmpxchg16b", "xrstor", ...). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/arch_vm.h"
#include "arch/x86/insn_name.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

#define INSN_MAX 15

/* Reads up to INSN_MAX bytes at the linear address of RIP, page by page
 * through the guest's page tables (KVM_TRANSLATE). */
static size_t read_insn(struct vcpu *vcpu, uint64_t linear, uint8_t *buf)
{
	size_t done = 0;

	while (done < INSN_MAX) {
		struct kvm_translation tr = { .linear_address = linear + done };
		size_t chunk = 4096 - ((linear + done) & 4095);
		const uint8_t *p;

		if (ioctl(vcpu->fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
			break;
		chunk = chunk < INSN_MAX - done ? chunk : INSN_MAX - done;
		p = guest_ram_ptr(&vcpu->vm->ram, tr.physical_address, chunk);
		if (!p)
			break;
		memcpy(buf + done, p, chunk);
		done += chunk;
	}
	return done;
}

/* "f0 48 0f c7 4d 20 ... (lock cmpxchg16b)" */
static void format_bytes(const uint8_t *b, size_t n, char *out, size_t len)
{
	char name[32];
	size_t i, pos = 0;

	out[0] = '\0';
	for (i = 0; i < n && pos + 4 < len; i++)
		pos += snprintf(out + pos, len - pos, "%s%02x", i ? " " : "",
				b[i]);
	if (!n)
		snprintf(out, len, "unreadable");
	else if (x86_insn_name(b, n, name, sizeof(name)) && pos < len)
		snprintf(out + pos, len - pos, " (%s)", name);
}

static const char *reason_of(const struct kvm_run *run, char *buf, size_t len)
{
	switch (run->exit_reason) {
	case KVM_EXIT_INTERNAL_ERROR:
		if (run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION)
			return "emulation failure";
		snprintf(buf, len, "KVM internal error (suberror %u)",
			 run->internal.suberror);
		return buf;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(buf, len, "entry failed (hardware reason 0x%llx)",
			 (unsigned long long)
				 run->fail_entry.hardware_entry_failure_reason);
		return buf;
	case KVM_EXIT_SHUTDOWN:
		return "triple fault";
	case KVM_EXIT_HLT:
		return "halted with no interrupt controller";
	default:
		snprintf(buf, len, "unhandled exit reason %u",
			 run->exit_reason);
		return buf;
	}
}

bool arch_vcpu_exit(struct vcpu *vcpu)
{
	struct arch_vm *a = vcpu->vm->arch;

	if (vcpu->run->exit_reason != KVM_EXIT_IOAPIC_EOI || !a->split_irqchip)
		return false;
	ioapic_eoi(&a->ioapic, vcpu->run->eoi.vector);
	return true;
}

/* KVM on AMD re-initialises a vCPU at a shutdown (the VMCB is undefined
 * after the SHUTDOWN intercept): what it reports is the reset state, not
 * where the guest died, and saying so keeps anyone from chasing 0xfff0. */
static bool lost_at_shutdown(const struct kvm_run *run,
			     const struct kvm_regs *regs,
			     const struct kvm_sregs *sregs)
{
	return run->exit_reason == KVM_EXIT_SHUTDOWN && regs->rip == 0xfff0 &&
	       sregs->cs.selector == 0xf000 && !(sregs->cr0 & 1);
}

void arch_vcpu_report_failure(struct vcpu *vcpu)
{
	const struct kvm_run *run = vcpu->run;
	uint8_t insn[INSN_MAX];
	char reason[96], bytes[INSN_MAX * 3 + 48];
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	size_t n = 0;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0 ||
	    ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0) {
		pr_err("vCPU %u: %s (registers unreadable: %s)", vcpu->id,
		       reason_of(run, reason, sizeof(reason)), strerror(errno));
		return;
	}
	if (lost_at_shutdown(run, &regs, &sregs)) {
		pr_err("vCPU %u: triple fault (where is unknown: KVM reset the "
		       "vCPU at the shutdown, as it does on AMD)", vcpu->id);
		return;
	}
	/* Newer KVMs hand over the bytes they failed on. */
	if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR &&
	    run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION &&
	    (run->emulation_failure.flags &
	     KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES)) {
		n = run->emulation_failure.insn_size < INSN_MAX ?
			    run->emulation_failure.insn_size : INSN_MAX;
		memcpy(insn, run->emulation_failure.insn_bytes, n);
	} else {
		n = read_insn(vcpu, sregs.cs.base + regs.rip, insn);
	}
	format_bytes(insn, n, bytes, sizeof(bytes));
	pr_err("vCPU %u: %s at RIP 0x%llx (CS 0x%x, CR0 0x%llx), "
	       "instruction bytes: %s", vcpu->id,
	       reason_of(run, reason, sizeof(reason)),
	       (unsigned long long)regs.rip, sregs.cs.selector,
	       (unsigned long long)sregs.cr0, bytes);
}
