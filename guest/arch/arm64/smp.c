/* Secondary CPUs: each one the device tree lists is started with PSCI
 * CPU_ON at secondary_entry (head.S), takes the boot CPU's translation,
 * reports its MPIDR and idles in WFE with interrupts masked, until the
 * boot CPU's SEV brings it EL0 work (run_user_cpus). */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define STACK_PAGES	2
#define MPIDR_AFF_MASK	0xff00ffffffULL

/* What secondary_entry reads with its MMU off: the first four fields are
 * struct mmu_regs's. A cache line of its own, cleaned to memory. */
struct cpu_start {
	uint64_t mair, tcr, ttbr0, sctlr;
	uint64_t stack_top;
} __attribute__((aligned(64)));

extern char secondary_entry[];
void secondary_main(void);

static struct cpu_start starts[MAX_CPUS];
/* A secondary claims a slot, fills it, and only then counts itself up:
 * the boot CPU reads a slot after it sees the count. */
static unsigned slots_claimed;
static volatile unsigned cpus_up;
static volatile uint64_t up_mpidr[MAX_CPUS];

void secondary_main(void)
{
	unsigned slot = __atomic_fetch_add(&slots_claimed, 1, __ATOMIC_SEQ_CST);

	if (slot < MAX_CPUS)
		up_mpidr[slot] = sysreg_read(mpidr_el1) & MPIDR_AFF_MASK;
	if (slot < USER_CPUS)
		el0_cpu_init(slot);
	__atomic_fetch_add(&cpus_up, 1, __ATOMIC_RELEASE);
	/* A SEV between the look for work and the WFE is not lost: it
	 * leaves the event register set, and WFE returns at once. */
	for (;;) {
		if (slot < USER_CPUS)
			user_work_run(slot);
		asm volatile("wfe");
	}
}

unsigned user_cpu_count(void)
{
	return MIN(MAX(__atomic_load_n(&cpus_up, __ATOMIC_ACQUIRE), 1),
		   USER_CPUS);
}

/* The work is stored before the event is sent. */
void arch_cpu_wake(unsigned n)
{
	(void)n;
	asm volatile("dsb ish; sev" : : : "memory");
}

/* Starts the CPU with this MPIDR; PSCI's answer (0: on its way). */
static int64_t start(unsigned i)
{
	struct cpu_start *s = &starts[i];

	s->mair = mmu.mair;
	s->tcr = mmu.tcr;
	s->ttbr0 = mmu.ttbr0;
	s->sctlr = mmu.sctlr;
	s->stack_top = (uint64_t)alloc_pages(STACK_PAGES) + STACK_PAGES * 4096;
	asm volatile("dc cvac, %0; dsb sy" : : "r"(s) : "memory");
	return psci_cpu_on(plat.mpidr[i], (uint64_t)secondary_entry,
			   (uint64_t)s);
}

void check_smp(void)
{
	uint64_t self = sysreg_read(mpidr_el1) & MPIDR_AFF_MASK;
	unsigned expect = params.has_cpus ? params.cpus : plat.ncpus;
	unsigned started = 0, up;
	bool listed = false, ok;
	uint64_t deadline;

	up_mpidr[0] = self;
	slots_claimed = 1;
	cpus_up = 1;
	for (unsigned i = 0; i < plat.ncpus; i++) {
		int64_t rc;

		if (plat.mpidr[i] == self) {
			listed = true;
			continue;
		}
		rc = plat.psci ? start(i) : -1;
		if (rc)
			print("tg: smp mpidr=0x%lx psci=%ld reason=cpu-on-failed\n",
			      plat.mpidr[i], rc);
		else
			started++;
	}
	deadline = clock_deadline(SMP_WAIT_MS);
	while (__atomic_load_n(&cpus_up, __ATOMIC_ACQUIRE) < 1 + started &&
	       clock_now() < deadline)
		cpu_relax();

	up = MIN(cpus_up, MAX_CPUS);
	ok = up == expect && up == plat.ncpus && listed;
	print("tg: %s smp cpus=%u mpidrs=", ok ? "ok" : "FAIL", up);
	for (unsigned i = 0; i < up; i++)
		print(i ? ",0x%lx" : "0x%lx", up_mpidr[i]);
	if (!ok)
		print(" expected=%u listed=%u%s", expect, plat.ncpus,
		      listed ? "" : " reason=boot-cpu-not-listed");
	print("\n");
	count_result(ok);
}
