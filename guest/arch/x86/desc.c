/* IDT, the CPUs' TSSs and interrupt dispatch; the ring-3 call wrapper. */
#include "guest.h"
#include "io.h"
#include "lib.h"

struct regs {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed, aligned(16)));

struct idt_desc {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern uint64_t gdt[];
extern const uint64_t exception_stubs[32];
extern const uint64_t virtio_stubs[VEC_VIRTIO_COUNT];
extern char isr32[], isr33[], isr240[], isr255[], user_int[];
void user_return(long result) __attribute__((noreturn));

/* What a CPU needs to run ring-3 work: its TSS (whose rsp0 stack takes
 * int 0x80 and exceptions from ring 3) and a user stack. */
struct user_cpu {
	uint8_t *kstack;		/* KSTACK_SIZE bytes, as aligned */
	uint8_t *ustack_top;
	bool tss_loaded;
};

static struct tss tss[USER_CPUS];
static struct user_cpu user_cpus[USER_CPUS];
static uint64_t *idt;
static struct idt_desc idt_desc;
volatile unsigned lapic_ticks, pit_ticks;
volatile unsigned virtio_irqs[VEC_VIRTIO_COUNT];

#define USTACK_PAGES 16		/* the boot CPU's: every workload's */
#define AP_USTACK_PAGES 4	/* the APs': blkbench's loops */

static void set_gate(unsigned vec, uint64_t handler, unsigned dpl)
{
	idt[vec * 2] = (handler & 0xffff) | (uint64_t)SEL_KCODE << 16 |
		       (uint64_t)(0x8e | dpl << 5) << 40 |
		       (handler >> 16 & 0xffff) << 48;
	idt[vec * 2 + 1] = handler >> 32;
}

void desc_load_ap(void)
{
	asm volatile("lidt %0" : : "m"(idt_desc));
}

/* CPU n's TSS, GDT entry and stacks. */
static void user_cpu_init(unsigned n, unsigned ustack_pages)
{
	struct tss *t = &tss[n];
	uint64_t base = (uint64_t)t, limit = sizeof(*t) - 1;
	uint64_t *d = &gdt[SEL_TSS / 8 + 2 * n];
	uint8_t *k = alloc_pages(2 * KSTACK_SIZE / 4096);

	k = (uint8_t *)ALIGN_UP((uint64_t)k, KSTACK_SIZE);
	user_cpus[n].kstack = k;
	t->rsp[0] = (uint64_t)k + KSTACK_SIZE;
	t->iomap_base = sizeof(*t);
	d[0] = (limit & 0xffff) | (base & 0xffffff) << 16 | 0x89ULL << 40 |
	       (limit >> 16 & 0xf) << 48 | (base >> 24 & 0xff) << 56;
	d[1] = base >> 32;
	user_cpus[n].ustack_top = (uint8_t *)alloc_pages(ustack_pages) +
				  ustack_pages * 4096;
}

void desc_init(void)
{
	user_cpu_init(0, USTACK_PAGES);
	asm volatile("ltr %w0" : : "r"(SEL_TSS));
	user_cpus[0].tss_loaded = true;

	/* Unused vectors stay not-present and end up in #NP. */
	idt = alloc_pages(1);
	memset(idt, 0, 4096);
	for (unsigned v = 0; v < 32; v++)
		set_gate(v, exception_stubs[v], 0);
	set_gate(VEC_LAPIC_TIMER, (uint64_t)isr32, 0);
	set_gate(VEC_PIT, (uint64_t)isr33, 0);
	for (unsigned v = 0; v < VEC_VIRTIO_COUNT; v++)
		set_gate(VEC_VIRTIO_BASE + v, virtio_stubs[v], 0);
	set_gate(VEC_WAKE, (uint64_t)isr240, 0);
	set_gate(VEC_SPURIOUS, (uint64_t)isr255, 0);
	set_gate(VEC_USER_RETURN, (uint64_t)user_return, 3);
	idt_desc.limit = 4096 - 1;
	idt_desc.base = (uint64_t)idt;
	desc_load_ap();
}

void arch_user_prepare(unsigned n)
{
	if (!user_cpus[n].kstack)
		user_cpu_init(n, AP_USTACK_PAGES);
}

/* An AP loads its TSS at its first ring-3 call (ltr marks the TSS busy:
 * once only). */
long run_user_on(unsigned n, long (*fn)(long), long arg)
{
	if (!user_cpus[n].tss_loaded) {
		asm volatile("ltr %w0" : : "r"(SEL_TSS + 16 * n));
		user_cpus[n].tss_loaded = true;
	}
	return user_call(fn, arg, user_cpus[n].ustack_top,
			 user_cpus[n].kstack);
}

void interrupt_dispatch(struct regs *r)
{
	switch (r->vector) {
	case VEC_LAPIC_TIMER:
		lapic_ticks++;
		lapic_eoi();
		return;
	case VEC_PIT:
		pit_ticks++;
		lapic_eoi();
		return;
	case VEC_WAKE:
		lapic_eoi();
		return;
	case VEC_SPURIOUS:
		return;
	case VEC_VIRTIO_BASE ... VEC_VIRTIO_BASE + VEC_VIRTIO_COUNT - 1:
		virtio_interrupt(r->vector - VEC_VIRTIO_BASE);
		lapic_eoi();
		return;
	case 6:
		/* PVM hosts turn `int n` in ring 3 into #UD; it still means
		 * "return to the kernel" when it is our gate instruction. */
		if ((r->cs & 3) == 3 && r->rip == (uint64_t)user_int)
			user_return(r->rdi);
		break;
	}
	report(false, "exception", "vector=%lu error=0x%lx rip=0x%lx cs=0x%lx "
	       "rsp=0x%lx cr2=0x%lx", r->vector, r->error, r->rip, r->cs,
	       r->rsp, read_cr2());
	guest_exit(1);
}
