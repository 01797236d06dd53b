/* TSC calibrated once against PIT channel 2 (gated through port 0x61,
 * polling its output on bit 5), so rdtsc, which ring 3 may execute, gives
 * durations. */
#include "guest.h"
#include "io.h"

#define PIT_HZ 1193182ULL
#define CAL_MS 20

uint64_t tsc_hz;

void tsc_calibrate(void)
{
	uint64_t count = PIT_HZ * CAL_MS / 1000, t0, t1;
	uint8_t v = inb(0x61);

	outb(0x61, (v & ~0x02) | 0x01);		/* gate on, speaker off */
	outb(0x43, 0xb0);			/* ch2, lo/hi, mode 0 */
	outb(0x42, count & 0xff);
	outb(0x42, count >> 8);
	t0 = rdtsc();
	for (unsigned long i = 0; !(inb(0x61) & 0x20) && i < 10000000; i++)
		;
	t1 = rdtsc();
	outb(0x61, v);
	tsc_hz = (t1 - t0) * 1000 / CAL_MS;
	if (!tsc_hz)
		tsc_hz = 1000000000;
	print("tg: tsc hz=%lu\n", tsc_hz);
}

uint64_t tsc_to_ns(uint64_t c)
{
	return c / tsc_hz * 1000000000ULL + c % tsc_hz * 1000000000ULL / tsc_hz;
}

uint64_t tsc_deadline(uint64_t ms)
{
	return rdtsc() + tsc_hz / 1000 * ms;
}

void tsc_delay_us(uint64_t us)
{
	uint64_t end = rdtsc() + tsc_hz / 1000000 * us;

	while (rdtsc() < end)
		cpu_relax();
}
