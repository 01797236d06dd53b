/* Exceptions and interrupts (vectors.S saves the frame), and EL0: each
 * CPU's stack for it and the return from it through svc. Anything
 * unexpected is reported with its syndrome and ends the run. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define USTACK_PAGES	16
#define EC_SVC64	0x15
/* Vector index: the group (EL1 on SP0, EL1, EL0 64-bit, EL0 32-bit)
 * times 4, plus the kind. */
#define KIND_SYNC	0
#define KIND_IRQ	1
#define GROUP_EL0	2
#define PSR_I		(1u << 7)

struct frame {
	uint64_t x[31];
	uint64_t elr, spsr;
};

extern char __image_start[];
void user_return(long result) __attribute__((noreturn));
void exception_dispatch(struct frame *f, unsigned vector);

/* A CPU's EL0 state. user_call keeps the CPU's EL1 stack pointer in
 * saved_sp, found through tpidr_el1, so that the svc ending a call
 * returns on the CPU that made it. */
struct el0_cpu {
	uint64_t saved_sp;		/* first: vectors.S's offset 0 */
	uint8_t *stack_top;
};

volatile unsigned virtio_irqs[VEC_VIRTIO_COUNT];
static struct el0_cpu el0_cpus[USER_CPUS];
static bool in_exception;

void exceptions_init(void)
{
	el0_cpu_init(0);
	arch_user_prepare(0);
}

/* On CPU n, before it runs EL0 work: EL0 reads the virtual counter
 * (clock_now) and nothing else. */
void el0_cpu_init(unsigned n)
{
	sysreg_write(cntkctl_el1, 1u << 1);
	sysreg_write(tpidr_el1, (uint64_t)&el0_cpus[n]);
}

void arch_user_prepare(unsigned n)
{
	if (!el0_cpus[n].stack_top)
		el0_cpus[n].stack_top = (uint8_t *)alloc_pages(USTACK_PAGES) +
					USTACK_PAGES * 4096;
}

long run_user_on(unsigned n, long (*fn)(long), long arg)
{
	return user_call(fn, arg, el0_cpus[n].stack_top);
}

static void irq(void)
{
	unsigned intid = gic_ack();
	int v;

	if (intid >= 1020 && intid < 1024)	/* special: spurious */
		return;
	if (intid == plat.vtimer_intid || intid == plat.ptimer_intid)
		timer_interrupt(intid);
	else if (intid >= VEC_VIRTIO_BASE &&
		 intid < VEC_VIRTIO_BASE + VEC_VIRTIO_COUNT)
		virtio_interrupt(intid - VEC_VIRTIO_BASE);
	else if ((v = gic_vector(intid)) >= 0)
		virtio_interrupt(v - VEC_VIRTIO_BASE);
	else
		print("tg: irq intid=%u reason=unexpected\n", intid);
	gic_eoi(intid);
}

void exception_dispatch(struct frame *f, unsigned vector)
{
	static const char *const groups[] = {
		"el1-sp0", "el1", "el0", "el0-aarch32"
	};
	static const char *const kinds[] = { "sync", "irq", "fiq", "serror" };
	uint64_t esr = sysreg_read(esr_el1);

	if (vector % 4 == KIND_IRQ) {
		irq();
		/* Back with interrupts masked: wait_irq takes one interrupt
		 * per sleep, as x86's sti; hlt does, so that a line that
		 * stays high (QEMU keeps a broken virtio device's up until
		 * it is reset) cannot hold the CPU in this handler. */
		f->spsr |= PSR_I;
		return;
	}
	if (vector == GROUP_EL0 * 4 + KIND_SYNC &&
	    (esr >> 26 & 0x3f) == EC_SVC64)
		user_return(f->x[0]);
	/* A fault while reporting one (no console yet, say) just stops. */
	if (in_exception)
		guest_exit(1);
	in_exception = true;
	/* image_offset: where in testguest.elf (linked at 0). */
	report(false, "exception", "from=%s kind=%s esr=0x%lx ec=0x%lx "
	       "elr=0x%lx image_offset=0x%lx far=0x%lx spsr=0x%lx",
	       groups[vector / 4], kinds[vector % 4], esr, esr >> 26 & 0x3f,
	       f->elr, f->elr - (uint64_t)__image_start,
	       sysreg_read(far_el1), f->spsr);
	guest_exit(1);
}
