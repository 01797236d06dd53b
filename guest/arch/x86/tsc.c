/* TSC calibrated once against the PIT (clock_hz, clock.c), so that the
 * TSC, which ring 3 reads too, gives durations: channel 2 gated through
 * port 0x61, polling its output on bit 5; or, where port 0x61 does not
 * show channel 2 (kvmtool answers 0x20 for ever), channel 0 counted down
 * through latched reads. */
#include "guest.h"
#include "io.h"

#define PIT_HZ 1193182ULL
#define CAL_MS 20
#define CAL_SPINS 10000000UL	/* gives up on a PIT that never counts */

/* TSC cycles while channel 0, in mode 2 from 0xffff, counts count
 * ticks. */
static uint64_t ticks_on_ch0(uint64_t count)
{
	uint16_t prev, cur;
	uint64_t t0;

	outb(0x43, 0x34);		/* ch0, lo/hi, mode 2 */
	outb(0x40, 0xff);
	outb(0x40, 0xff);
	outb(0x43, 0x00);		/* latch ch0 */
	prev = inb(0x40);
	prev |= inb(0x40) << 8;
	t0 = rdtsc();
	for (unsigned long i = 0; i < CAL_SPINS; i++) {
		uint16_t done;

		outb(0x43, 0x00);
		cur = inb(0x40);
		cur |= inb(0x40) << 8;
		done = prev - cur;	/* counts down, reloads at 0xffff */
		prev = cur;
		if (done >= count)
			break;
		count -= done;
	}
	return rdtsc() - t0;
}

void tsc_calibrate(void)
{
	uint64_t count = PIT_HZ * CAL_MS / 1000, t0, cycles;
	uint8_t v = inb(0x61);

	outb(0x61, (v & ~0x02) | 0x01);		/* gate on, speaker off */
	outb(0x43, 0xb0);			/* ch2, lo/hi, mode 0 */
	outb(0x42, count & 0xff);
	outb(0x42, count >> 8);
	/* Right after a mode-0 count is written OUT2 is low, unless port
	 * 0x61 does not show it. */
	if (inb(0x61) & 0x20) {
		outb(0x61, v);
		cycles = ticks_on_ch0(count);
		print("tg: tsc calibration source=pit0\n");
	} else {
		t0 = rdtsc();
		for (unsigned long i = 0; !(inb(0x61) & 0x20) && i < CAL_SPINS;
		     i++)
			;
		cycles = rdtsc() - t0;
		outb(0x61, v);
	}
	clock_hz = cycles * 1000 / CAL_MS;
	if (!clock_hz)
		clock_hz = 1000000000;
	print("tg: tsc hz=%lu\n", clock_hz);
}
