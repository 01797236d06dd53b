/* LAPIC timer (periodic) and PIT channel 0 through the IOAPIC pin the MP
 * table gives for ISA IRQ0. Both run at once so that either wakes the
 * `sti; hlt` loop and the deadline is seen even if the other never fires.
 * A VM without a PIT (thpvm's default) gets "tg: pit absent" instead of
 * the PIT's check. */
#include "guest.h"
#include "io.h"

#define TICKS 10
#define LAPIC_COUNT 10000000	/* 10 ms at KVM's 1 GHz APIC bus */
#define PIT_DIVISOR 11932	/* 100 Hz */
#define PIT_PROBE_COUNT 0x1000

/* Where no PIT is, its ports read all ones; a PIT's channel 0, latched
 * right after a count is loaded, reads at most that count. */
static bool pit_present(void)
{
	uint16_t count;

	outb(0x43, 0x34);		/* ch0, lo/hi, mode 2 */
	outb(0x40, PIT_PROBE_COUNT & 0xff);
	outb(0x40, PIT_PROBE_COUNT >> 8);
	outb(0x43, 0x00);		/* latch ch0 */
	count = inb(0x40);
	count |= inb(0x40) << 8;
	outb(0x43, 0x30);		/* ch0 back to one-shot, idle */
	return count <= PIT_PROBE_COUNT;
}

void check_timers(void)
{
	bool lapic = !(params.skip & 1u << CHK_LAPIC);
	bool pit = !(params.skip & 1u << CHK_PIT);
	uint64_t deadline;

	if (pit && !pit_present()) {
		print("tg: pit absent\n");
		pit = false;
	}
	if (!lapic && !pit)
		return;
	lapic_enable();
	lapic_ticks = pit_ticks = 0;
	if (lapic)
		lapic_timer_periodic(VEC_LAPIC_TIMER, LAPIC_COUNT);
	if (pit) {
		outb(0x43, 0x34);		/* ch0, lo/hi, mode 2 */
		outb(0x40, PIT_DIVISOR & 0xff);
		outb(0x40, PIT_DIVISOR >> 8);
		ioapic_route(mp.ioapic_addr, mp.irq0_pin, VEC_PIT, lapic_id(),
			     IOAPIC_EDGE);
	}
	deadline = clock_deadline(TIMER_WAIT_MS);
	while (((lapic && lapic_ticks < TICKS) || (pit && pit_ticks < TICKS)) &&
	       rdtsc() < deadline)
		asm volatile("sti; hlt; cli");
	if (lapic)
		lapic_timer_stop();
	if (pit) {
		ioapic_mask(mp.ioapic_addr, mp.irq0_pin);
		outb(0x43, 0x30);		/* ch0 back to one-shot, idle */
	}
	if (lapic)
		report(lapic_ticks >= TICKS, "lapic-timer", "ticks=%u%s",
		       lapic_ticks, lapic_ticks >= TICKS ? "" : " reason=timeout");
	if (pit)
		report(pit_ticks >= TICKS, "pit-timer", "ticks=%u ioapic_pin=%u%s",
		       pit_ticks, mp.irq0_pin,
		       pit_ticks >= TICKS ? "" : " reason=timeout");
}
