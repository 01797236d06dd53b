/* The TSC's rate, found once (clock_hz, clock.c), so that the TSC, which
 * ring 3 reads too, gives durations. Under KVM, from kvmclock: the rate
 * KVM gives the guest's clock is the TSC's, and a VM may have no PIT.
 * Elsewhere, against the PIT: channel 2 gated through port 0x61, polling
 * its output on bit 5; or, where port 0x61 does not show channel 2
 * (kvmtool answers 0x20 for ever), channel 0 counted down through
 * latched reads. */
#include "guest.h"
#include "io.h"

/* KVM's CPUID leaves and clock MSR (Linux's Documentation/virt/kvm). */
#define KVM_CPUID_SIGNATURE 0x40000000
#define KVM_CPUID_FEATURES 0x40000001
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01
#define KVMCLOCK_ENABLE 1

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

/* pvclock_vcpu_time_info: system time in ns is (TSC delta * mul) >> 32,
 * after a shift of the delta. */
struct pvclock {
	uint32_t version, pad;
	uint64_t tsc_timestamp, system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags, pad2[2];
};

static bool is_kvm(void)
{
	uint32_t a, b, c, d;

	cpuid(KVM_CPUID_SIGNATURE, &a, &b, &c, &d);
	return b == 0x4b4d564b && c == 0x564b4d56 && d == 0x4d;	/* KVMKVMKVM */
}

/* The TSC's rate in Hz from kvmclock, or 0 where there is none. */
static uint64_t kvmclock_hz(void)
{
	static volatile struct pvclock clock __attribute__((aligned(64)));
	uint32_t a, b, c, d;
	uint64_t hz;

	if (!is_kvm())
		return 0;
	cpuid(KVM_CPUID_FEATURES, &a, &b, &c, &d);
	if (!(a & KVM_FEATURE_CLOCKSOURCE2))
		return 0;
	/* The guest is identity-mapped: the address is the physical one.
	 * KVM fills the structure before the vCPU next runs guest code. */
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uint64_t)&clock | KVMCLOCK_ENABLE);
	if (!clock.version || (clock.version & 1) || !clock.tsc_to_system_mul)
		hz = 0;
	else
		hz = (1000000000ULL << 32) / clock.tsc_to_system_mul;
	if (clock.tsc_shift < 0)
		hz <<= -clock.tsc_shift;
	else
		hz >>= clock.tsc_shift;
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, 0);
	return hz;
}

void tsc_calibrate(void)
{
	uint64_t count = PIT_HZ * CAL_MS / 1000, t0, cycles;
	uint8_t v;

	clock_hz = kvmclock_hz();
	if (clock_hz) {
		print("tg: tsc calibration source=kvmclock hz=%lu\n", clock_hz);
		return;
	}
	v = inb(0x61);
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
