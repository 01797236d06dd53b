/* Durations and deadlines on the arch's clock (clock_now() in io.h; x86:
 * the TSC as tsc.c calibrated it, arm64: the virtual counter at
 * CNTFRQ_EL0). */
#include "guest.h"
#include "io.h"

uint64_t clock_hz;

uint64_t clock_to_ns(uint64_t c)
{
	return c / clock_hz * 1000000000ULL +
	       c % clock_hz * 1000000000ULL / clock_hz;
}

uint64_t clock_deadline(uint64_t ms)
{
	return clock_now() + clock_hz / 1000 * ms;
}

void clock_delay_us(uint64_t us)
{
	uint64_t end = clock_now() + clock_hz / 1000000 * us;

	while (clock_now() < end)
		cpu_relax();
}
