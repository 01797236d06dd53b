/* Register state for the kernel entries, and the GDT and page tables the
 * protected- and long-mode entries need in guest RAM (layout.h). */
#include "arch/x86/boot_regs.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/layout.h"
#include "lib/log.h"

#define CR0_PE (1U << 0)
#define CR0_ET (1U << 4)
#define CR0_NE (1U << 5)
#define CR0_WP (1U << 16)
#define CR0_PG (1U << 31)
#define CR4_PAE (1U << 5)
#define EFER_LME (1U << 8)
#define EFER_LMA (1U << 10)

#define PTE_PRESENT 0x1ULL
#define PTE_WRITE 0x2ULL
#define PTE_HUGE 0x80ULL

#define SEG_CODE_EXEC_READ 0xb	/* accessed */
#define SEG_DATA_READ_WRITE 0x3	/* accessed */
#define SEG_TSS_BUSY 0xb

#define BOOT_CS 0x10
#define BOOT_DS 0x18

struct gdt_desc {
	uint8_t type;
	uint8_t l;	/* 64-bit code */
	uint8_t db;	/* 32-bit */
};

static uint64_t gdt_entry(const struct gdt_desc *d)
{
	/* Flat: base 0, limit 0xfffff in 4 KiB units, present, DPL 0. */
	return 0xffffULL | 0xfULL << 48 | (uint64_t)d->type << 40 |
	       1ULL << 44 | 1ULL << 47 | (uint64_t)d->l << 53 |
	       (uint64_t)d->db << 54 | 1ULL << 55;
}

static struct kvm_segment segment(const struct gdt_desc *d, uint16_t sel)
{
	return (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel,
		.type = d->type, .present = 1, .dpl = 0, .db = d->db, .s = 1,
		.l = d->l, .g = 1,
	};
}

/* GDT at X86_BOOT_GDT_ADDR: null, null, code at 0x10, data at 0x18. */
static int write_gdt(struct vm *vm, const struct gdt_desc *code,
		     const struct gdt_desc *data, struct kvm_sregs *sregs)
{
	uint64_t *gdt = guest_ram_ptr(&vm->ram, X86_BOOT_GDT_ADDR, 4 * 8);

	if (!gdt)
		return -EINVAL;
	gdt[0] = gdt[1] = 0;
	gdt[2] = gdt_entry(code);
	gdt[3] = gdt_entry(data);
	sregs->gdt.base = X86_BOOT_GDT_ADDR;
	sregs->gdt.limit = 4 * 8 - 1;
	sregs->cs = segment(code, BOOT_CS);
	sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss =
		segment(data, BOOT_DS);
	/* VMX insists on a usable, busy TSS in protected mode. */
	sregs->tr.type = SEG_TSS_BUSY;
	sregs->tr.present = 1;
	sregs->tr.s = 0;
	sregs->tr.limit = 0x67;
	return 0;
}

/* Identity map of the first 4 GiB with 2 MiB pages. */
static int write_page_tables(struct vm *vm)
{
	uint64_t *pml4 = guest_ram_ptr(&vm->ram, X86_BOOT_PML4_ADDR, 4096);
	uint64_t *pdpt = guest_ram_ptr(&vm->ram, X86_BOOT_PDPT_ADDR, 4096);
	uint64_t *pd = guest_ram_ptr(&vm->ram, X86_BOOT_PD_ADDR, 4 * 4096);
	unsigned i;

	if (!pml4 || !pdpt || !pd)
		return -EINVAL;
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = X86_BOOT_PDPT_ADDR | PTE_PRESENT | PTE_WRITE;
	for (i = 0; i < 4; i++)
		pdpt[i] = (X86_BOOT_PD_ADDR + i * 4096ULL) | PTE_PRESENT |
			  PTE_WRITE;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | PTE_PRESENT | PTE_WRITE |
			PTE_HUGE;
	return 0;
}

static int get_sregs(struct vcpu *vcpu, struct kvm_sregs *sregs)
{
	if (ioctl(vcpu->fd, KVM_GET_SREGS, sregs) < 0) {
		pr_err("KVM_GET_SREGS: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int set_state(struct vcpu *vcpu, struct kvm_sregs *sregs,
		     struct kvm_regs *regs)
{
	if (ioctl(vcpu->fd, KVM_SET_SREGS, sregs) < 0) {
		pr_err("KVM_SET_SREGS: %s", strerror(errno));
		return -errno;
	}
	if (ioctl(vcpu->fd, KVM_SET_REGS, regs) < 0) {
		pr_err("KVM_SET_REGS: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int x86_enter_64(struct vm *vm, struct vcpu *vcpu, uint64_t rip,
		 uint64_t zero_page)
{
	static const struct gdt_desc code = { SEG_CODE_EXEC_READ, 1, 0 };
	static const struct gdt_desc data = { SEG_DATA_READ_WRITE, 0, 1 };
	struct kvm_regs regs = { .rip = rip, .rsi = zero_page, .rflags = 2,
				 .rsp = X86_BOOT_STACK_TOP };
	struct kvm_sregs sregs;
	int err;

	err = get_sregs(vcpu, &sregs) ?: write_gdt(vm, &code, &data, &sregs) ?:
	      write_page_tables(vm);
	if (err)
		return err;
	sregs.cr3 = X86_BOOT_PML4_ADDR;
	sregs.cr4 = CR4_PAE;
	sregs.cr0 = CR0_PE | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
	sregs.efer = EFER_LME | EFER_LMA;
	return set_state(vcpu, &sregs, &regs);
}

int x86_enter_16(struct vcpu *vcpu, uint16_t seg, uint16_t sp)
{
	struct kvm_regs regs = { .rip = 0, .rsp = sp, .rflags = 2 };
	struct kvm_sregs sregs;
	struct kvm_segment *data_segs[] = { &sregs.ds, &sregs.es, &sregs.fs,
					    &sregs.gs, &sregs.ss };
	unsigned i;
	int err;

	/* Keep KVM's reset state (real mode) and move the segments. */
	err = get_sregs(vcpu, &sregs);
	if (err)
		return err;
	sregs.cs.selector = seg + 0x20;
	sregs.cs.base = (seg + 0x20) * 16ULL;
	for (i = 0; i < sizeof(data_segs) / sizeof(data_segs[0]); i++) {
		data_segs[i]->selector = seg;
		data_segs[i]->base = seg * 16ULL;
	}
	return set_state(vcpu, &sregs, &regs);
}

int x86_enter_pvh(struct vm *vm, struct vcpu *vcpu, uint32_t eip,
		  uint32_t start_info)
{
	static const struct gdt_desc code = { SEG_CODE_EXEC_READ, 0, 1 };
	static const struct gdt_desc data = { SEG_DATA_READ_WRITE, 0, 1 };
	struct kvm_regs regs = { .rip = eip, .rbx = start_info, .rflags = 2 };
	struct kvm_sregs sregs;
	int err;

	err = get_sregs(vcpu, &sregs) ?: write_gdt(vm, &code, &data, &sregs);
	if (err)
		return err;
	sregs.cr0 = CR0_PE | CR0_ET;
	sregs.cr4 = 0;
	sregs.efer = 0;
	return set_state(vcpu, &sregs, &regs);
}
