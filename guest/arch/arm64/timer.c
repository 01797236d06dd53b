/* The architected timers: the counter's frequency as the clock, the
 * virtual (CNTV) and EL1 physical (CNTP) timers checked as x86 checks
 * its LAPIC timer and PIT, both at once, each periodic at 100 Hz through
 * its PPI; the virtual one is also the drivers' watchdog tick. */
#include "guest.h"
#include "io.h"

#define TICKS		10
#define HZ		100
#define CTL_ENABLE	1u

static volatile unsigned vtimer_ticks, ptimer_ticks;
static volatile bool vtimer_on, ptimer_on;

void timer_init(void)
{
	clock_hz = sysreg_read(cntfrq_el0) & 0xffffffff;
	if (!clock_hz) {
		report(false, "timer", "hz=0 reason=no-frequency");
		clock_hz = 1000000000;
	}
	print("tg: timer hz=%lu\n", clock_hz);
}

static void vtimer_arm(void)
{
	sysreg_write(cntv_tval_el0, clock_hz / HZ);
	sysreg_write(cntv_ctl_el0, CTL_ENABLE);
	isb();
}

static void ptimer_arm(void)
{
	sysreg_write(cntp_tval_el0, clock_hz / HZ);
	sysreg_write(cntp_ctl_el0, CTL_ENABLE);
	isb();
}

/* Counts the tick and starts the next period, which also lowers the
 * level-triggered PPI; a timer that was stopped is only silenced. */
void timer_interrupt(unsigned intid)
{
	if (intid == plat.vtimer_intid) {
		vtimer_ticks++;
		if (vtimer_on)
			vtimer_arm();
		else
			sysreg_write(cntv_ctl_el0, 0);
	} else {
		ptimer_ticks++;
		if (ptimer_on)
			ptimer_arm();
		else
			sysreg_write(cntp_ctl_el0, 0);
	}
	isb();
}

static void vtimer_start(void)
{
	vtimer_on = true;
	vtimer_arm();
	gic_enable_ppi(plat.vtimer_intid);
}

static void vtimer_stop(void)
{
	vtimer_on = false;
	sysreg_write(cntv_ctl_el0, 0);
	isb();
	gic_disable_ppi(plat.vtimer_intid);
}

void watchdog_start(void)
{
	vtimer_start();
}

void watchdog_stop(void)
{
	vtimer_stop();
}

void check_timers(void)
{
	bool v = !(params.skip & 1u << CHK_VTIMER) && plat.vtimer_intid;
	bool p = !(params.skip & 1u << CHK_PTIMER) && plat.ptimer_intid;
	uint64_t deadline;

	if (!v && !p)
		return;
	vtimer_ticks = ptimer_ticks = 0;
	if (v)
		vtimer_start();
	if (p) {
		ptimer_on = true;
		ptimer_arm();
		gic_enable_ppi(plat.ptimer_intid);
	}
	deadline = clock_deadline(TIMER_WAIT_MS);
	while (((v && vtimer_ticks < TICKS) || (p && ptimer_ticks < TICKS)) &&
	       clock_now() < deadline)
		wait_irq();
	if (v)
		vtimer_stop();
	if (p) {
		ptimer_on = false;
		sysreg_write(cntp_ctl_el0, 0);
		isb();
		gic_disable_ppi(plat.ptimer_intid);
	}
	if (v)
		report(vtimer_ticks >= TICKS, "vtimer", "ticks=%u intid=%u%s",
		       vtimer_ticks, plat.vtimer_intid,
		       vtimer_ticks >= TICKS ? "" : " reason=timeout");
	if (p)
		report(ptimer_ticks >= TICKS, "ptimer", "ticks=%u intid=%u%s",
		       ptimer_ticks, plat.ptimer_intid,
		       ptimer_ticks >= TICKS ? "" : " reason=timeout");
}
