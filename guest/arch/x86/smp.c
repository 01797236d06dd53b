/* AP bring-up: INIT, SIPI, SIPI to every CPU the MP table lists (or a
 * broadcast when there is none and cpus= asks for more than one); each AP
 * reports its APIC ID and then idles with interrupts enabled, until the
 * boot CPU wakes it (VEC_WAKE) with ring-3 work (run_user_cpus). */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define ICR_INIT	0x4500		/* INIT, level assert */
#define ICR_SIPI	0x4600		/* start-up, vector in low byte */
#define ICR_ALL_BUT_SELF (3u << 18)
#define AP_STACK_PAGES	2

extern char __tramp_start[], __tramp_end[], tramp_start[];
extern char tramp_gdtr[], tramp_cr3[], tramp_stack_base[], tramp_stack_size[];
extern char tramp_next[], tramp_entry[];
extern char gdt_desc[];

#define ICR_FIXED	0x4000		/* fixed delivery, level assert */

static volatile unsigned cpus_up;
static volatile uint8_t up_ids[MAX_CPUS];

/* Address of a trampoline variable in the copy at TRAMP_BASE. */
static void *tramp_var(char *sym)
{
	return (void *)(uint64_t)(TRAMP_BASE + (sym - tramp_start));
}

static void ap_main(void)
{
	unsigned slot;

	desc_load_ap();
	lapic_enable();
	slot = __atomic_fetch_add(&cpus_up, 1, __ATOMIC_SEQ_CST);
	if (slot < MAX_CPUS)
		up_ids[slot] = lapic_id();
	/* Work is looked for with interrupts off, and sti; hlt takes a wake
	 * that came meanwhile at once. */
	for (;;) {
		if (slot < USER_CPUS)
			user_work_run(slot);
		asm volatile("sti; hlt; cli");
	}
}

unsigned user_cpu_count(void)
{
	return MIN(MAX(cpus_up, 1), USER_CPUS);
}

void arch_cpu_wake(unsigned n)
{
	lapic_send_ipi(up_ids[n], ICR_FIXED | VEC_WAKE);
}

static void tramp_setup(unsigned naps)
{
	memcpy((void *)TRAMP_BASE, __tramp_start, __tramp_end - __tramp_start);
	memcpy(tramp_var(tramp_gdtr), gdt_desc, 6);
	*(uint64_t *)tramp_var(tramp_cr3) = page_table_root;
	*(uint64_t *)tramp_var(tramp_stack_base) =
		(uint64_t)alloc_pages(naps * AP_STACK_PAGES);
	*(uint64_t *)tramp_var(tramp_stack_size) = AP_STACK_PAGES * 4096;
	*(uint32_t *)tramp_var(tramp_next) = 0;
	*(uint64_t *)tramp_var(tramp_entry) = (uint64_t)ap_main;
}

static void start_aps(const uint8_t *ids, unsigned n, bool broadcast)
{
	uint32_t vec = TRAMP_BASE >> 12;

	for (unsigned i = 0; i < n; i++)
		lapic_send_ipi(ids[i], ICR_INIT);
	if (broadcast)
		lapic_send_ipi(0, ICR_INIT | ICR_ALL_BUT_SELF);
	clock_delay_us(10000);
	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < n; i++)
			lapic_send_ipi(ids[i], ICR_SIPI | vec);
		if (broadcast)
			lapic_send_ipi(0, ICR_SIPI | vec | ICR_ALL_BUT_SELF);
		clock_delay_us(200);
	}
}

void check_smp(void)
{
	unsigned bsp = lapic_id(), expect, naps = 0;
	uint8_t aps[MAX_CPUS];
	bool broadcast = false;
	uint64_t deadline;

	up_ids[0] = bsp;
	cpus_up = 1;
	if (mp.found) {
		for (unsigned i = 0; i < mp.ncpus; i++)
			if (mp.apic_ids[i] != bsp)
				aps[naps++] = mp.apic_ids[i];
		expect = params.has_cpus ? params.cpus : mp.ncpus;
	} else {
		expect = params.has_cpus ? params.cpus : 1;
		broadcast = expect > 1;
	}
	if (naps || broadcast) {
		tramp_setup(broadcast ? MAX_CPUS - 1 : naps);
		start_aps(aps, naps, broadcast);
		deadline = clock_deadline(SMP_WAIT_MS);
		while (cpus_up < 1 + (broadcast ? expect - 1 : naps) &&
		       rdtsc() < deadline)
			cpu_relax();
	}

	unsigned up = MIN(cpus_up, MAX_CPUS);
	bool ok = up == expect && (!mp.found || up == mp.ncpus);

	print("tg: %s smp cpus=%u apic_ids=", ok ? "ok" : "FAIL", up);
	for (unsigned i = 0; i < up; i++)
		print(i ? ",%u" : "%u", up_ids[i]);
	if (!ok)
		print(" expected=%u listed=%u", expect, mp.found ? mp.ncpus : 0);
	print("\n");
	count_result(ok);
}
