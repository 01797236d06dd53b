/* The hypercalls KVM HV passes to user space. Arguments are the guest's
 * registers, each checked before use. */
#include "arch/powerpc/hcall.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/rtas.h"
#include "arch/powerpc/vcpu.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

/* H_REGISTER_PROC_TBL's flags (PAPR 14.5.4.3.2). */
#define PROC_TBL_FLAGS		0x1fULL
#define PROC_TBL_MODIFY		0x10
#define PROC_TBL_REGISTER	0x08
#define PROC_TBL_RADIX		0x04
#define PROC_TBL_GTSE		0x01
/* The largest process table: 2^(12 + 24) bytes. */
#define PROC_TBL_SIZE_MAX	24
/* The partition table entry's "guest radix" bit. */
#define PATE_GR			(1ULL << 63)

/* H_SET_MODE's resources and the flags they take. */
#define SET_MODE_ADDR_TRANS	3
#define SET_MODE_LE		4
#define SET_MODE_ENDIAN_BIG	0
#define SET_MODE_ENDIAN_LITTLE	1
#define SET_MODE_AIL_NONE	0
#define SET_MODE_AIL_3		3

/* Characters travel in registers as if loaded big-endian from memory:
 * the first in the most significant byte of the first register. */
static void chars_from_regs(const uint64_t *regs, uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(regs[i / 8] >> (56 - 8 * (i % 8)));
}

static void chars_to_regs(const uint8_t *buf, size_t len, uint64_t *regs)
{
	size_t i;

	regs[0] = regs[1] = 0;
	for (i = 0; i < len; i++)
		regs[i / 8] |= (uint64_t)buf[i] << (56 - 8 * (i % 8));
}

static int64_t put_term_char(struct vcpu *vcpu, uint64_t *args)
{
	uint8_t buf[VTY_CHARS_MAX];
	uint64_t len = args[1];

	if (args[0] != PPC_VTY_REG)
		return H_PARAMETER;
	if (len > VTY_CHARS_MAX)
		return H_P2;
	chars_from_regs(&args[2], buf, len);
	spapr_vty_put(&vcpu->vm->arch->vty, buf, len);
	return H_SUCCESS;
}

static int64_t get_term_char(struct vcpu *vcpu, uint64_t *args)
{
	uint8_t buf[VTY_CHARS_MAX];
	size_t len;

	if (args[0] != PPC_VTY_REG)
		return H_PARAMETER;
	len = spapr_vty_get(&vcpu->vm->arch->vty, buf, sizeof(buf));
	args[0] = len;
	chars_to_regs(buf, len, &args[1]);
	return H_SUCCESS;
}

/* The guest's radix process table, handed to KVM. Nested KVM HV offers
 * the radix MMU only, and the device tree says so, so a hash table is
 * refused. */
static int64_t register_proc_tbl(struct vcpu *vcpu, const uint64_t *args)
{
	uint64_t flags = args[0], base = args[1], page_size = args[2];
	uint64_t size = args[3];
	struct kvm_ppc_mmuv3_cfg cfg = { .flags = KVM_PPC_MMUV3_RADIX };

	if (flags & ~PROC_TBL_FLAGS)
		return H_PARAMETER;
	if (!(flags & PROC_TBL_MODIFY))
		return H_SUCCESS;
	if (flags & PROC_TBL_REGISTER) {
		if (!(flags & PROC_TBL_RADIX))
			return H_PARAMETER;
		if (base & 0xfff || base >> 60)
			return H_P2;
		if (page_size)
			return H_P3;
		if (size > PROC_TBL_SIZE_MAX)
			return H_P4;
		cfg.process_table = PATE_GR | base | size;
	} else {
		/* Deregistered: radix with no table. */
		cfg.process_table = PATE_GR;
	}
	if (flags & PROC_TBL_GTSE)
		cfg.flags |= KVM_PPC_MMUV3_GTSE;
	if (ioctl(vcpu->vm->vm_fd, KVM_PPC_CONFIGURE_V3_MMU, &cfg) < 0) {
		pr_warn_ratelimited("vCPU %u: KVM_PPC_CONFIGURE_V3_MMU: %s",
				    vcpu->id, strerror(errno));
		return H_HARDWARE;
	}
	return H_SUCCESS;
}

static int64_t set_lpcr(struct vcpu *vcpu, uint64_t mask, uint64_t value)
{
	int err = ppc_vcpus_update_lpcr(vcpu, mask, value);

	if (err) {
		pr_warn_ratelimited("vCPU %u: cannot set LPCR: %s", vcpu->id,
				    strerror(-err));
		return H_HARDWARE;
	}
	return H_SUCCESS;
}

static int64_t set_mode(struct vcpu *vcpu, const uint64_t *args)
{
	uint64_t mflags = args[0], resource = args[1];

	if (resource != SET_MODE_LE && resource != SET_MODE_ADDR_TRANS)
		return H_P2;
	if (args[2])
		return H_P3;
	if (args[3])
		return H_P4;
	if (resource == SET_MODE_LE) {
		if (mflags == SET_MODE_ENDIAN_BIG)
			return set_lpcr(vcpu, LPCR_ILE, 0);
		if (mflags == SET_MODE_ENDIAN_LITTLE)
			return set_lpcr(vcpu, LPCR_ILE, LPCR_ILE);
		return H_UNSUPPORTED_FLAG;
	}
	if (mflags == SET_MODE_AIL_NONE)
		return set_lpcr(vcpu, LPCR_AIL, 0);
	if (mflags == SET_MODE_AIL_3 && vcpu->vm->arch->ail_mode_3)
		return set_lpcr(vcpu, LPCR_AIL, LPCR_AIL_3);
	return H_UNSUPPORTED_FLAG;
}

/* What KVM says of the host CPU's speculation flaws and the mitigations
 * it wants, so that the guest picks the right ones. */
static int64_t get_cpu_characteristics(struct vcpu *vcpu, uint64_t *args)
{
	const struct kvm_ppc_cpu_char *cc = &vcpu->vm->arch->cpu_char;

	if (!cc->character_mask && !cc->behaviour_mask)
		return H_FUNCTION;
	args[0] = cc->character & cc->character_mask;
	args[1] = cc->behaviour & cc->behaviour_mask;
	return H_SUCCESS;
}

/* 64 bits from the host's pool: the guest's arch random hook and its
 * pseries-rng driver, found through the tree's ibm,random node. A pool
 * that would block is a hardware error rather than a stalled vCPU. */
static int64_t random_long(uint64_t *args)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		return H_HARDWARE;
	args[0] = v;
	return H_SUCCESS;
}

int64_t spapr_hcall(struct vcpu *vcpu, uint64_t nr, uint64_t *args)
{
	switch (nr) {
	case H_PUT_TERM_CHAR:
		return put_term_char(vcpu, args);
	case H_GET_TERM_CHAR:
		return get_term_char(vcpu, args);
	case H_RTAS:
		return spapr_rtas_call(vcpu, args[0]);
	case H_REGISTER_PROC_TBL:
		return register_proc_tbl(vcpu, args);
	case H_SET_MODE:
		return set_mode(vcpu, args);
	case H_GET_CPU_CHARACTERISTICS:
		return get_cpu_characteristics(vcpu, args);
	case H_RANDOM:
		return random_long(args);
	case H_QUERY_VAS_CAPABILITIES:
	case H_GET_PERF_COUNTER_INFO:
		return H_FUNCTION;	/* probed at boot: not worth a line */
	default:
		pr_warn_ratelimited("vCPU %u: hypercall 0x%llx not offered",
				    vcpu->id, (unsigned long long)nr);
		return H_FUNCTION;
	}
}

bool arch_vcpu_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	if (run->exit_reason != KVM_EXIT_PAPR_HCALL)
		return false;
	run->papr_hcall.ret = (uint64_t)spapr_hcall(vcpu, run->papr_hcall.nr,
						    run->papr_hcall.args);
	return true;
}
