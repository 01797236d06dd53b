/* Device registers, barriers, system registers and other single
 * instructions. MMIO accessors order themselves against normal memory
 * as Linux's readl/writel do: a write waits for earlier stores (the
 * rings a notify announces), a read completes before later loads (what
 * an interrupt status announces). */
#ifndef TG_IO_H
#define TG_IO_H

#include <stdint.h>

#define sysreg_read(reg) ({ \
	uint64_t _v; \
	asm volatile("mrs %0, " #reg : "=r"(_v)); \
	_v; \
})

#define sysreg_write(reg, v) \
	asm volatile("msr " #reg ", %0" : : "r"((uint64_t)(v)) : "memory")

static inline void isb(void)
{
	asm volatile("isb" : : : "memory");
}

static inline void mmio_write_barrier(void)
{
	asm volatile("dmb oshst" : : : "memory");
}

static inline void mmio_read_barrier(void)
{
	asm volatile("dmb oshld" : : : "memory");
}

static inline uint8_t mmio_read8(uint64_t addr)
{
	uint8_t v = *(volatile uint8_t *)addr;

	mmio_read_barrier();
	return v;
}

static inline uint16_t mmio_read16(uint64_t addr)
{
	uint16_t v = *(volatile uint16_t *)addr;

	mmio_read_barrier();
	return v;
}

static inline uint32_t mmio_read32(uint64_t addr)
{
	uint32_t v = *(volatile uint32_t *)addr;

	mmio_read_barrier();
	return v;
}

static inline uint64_t mmio_read64(uint64_t addr)
{
	uint64_t v = *(volatile uint64_t *)addr;

	mmio_read_barrier();
	return v;
}

static inline void mmio_write8(uint64_t addr, uint8_t v)
{
	mmio_write_barrier();
	*(volatile uint8_t *)addr = v;
}

static inline void mmio_write16(uint64_t addr, uint16_t v)
{
	mmio_write_barrier();
	*(volatile uint16_t *)addr = v;
}

static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	mmio_write_barrier();
	*(volatile uint32_t *)addr = v;
}

static inline void mmio_write64(uint64_t addr, uint64_t v)
{
	mmio_write_barrier();
	*(volatile uint64_t *)addr = v;
}

/* Between this CPU and the device's side (another CPU of the host):
 * inner shareable is enough, as for Linux's virtio barriers. */
static inline void mb(void)
{
	asm volatile("dmb ish" : : : "memory");
}

static inline void wmb(void)
{
	asm volatile("dmb ishst" : : : "memory");
}

static inline void rmb(void)
{
	asm volatile("dmb ishld" : : : "memory");
}

/* The virtual counter, which EL0 may read too (CNTKCTL_EL1.EL0VCTEN);
 * the isb keeps it from being read ahead of earlier instructions. */
static inline uint64_t clock_now(void)
{
	isb();
	return sysreg_read(cntvct_el0);
}

static inline void cpu_relax(void)
{
	asm volatile("yield" : : : "memory");
}

/* Sleeps until an interrupt and takes it. WFI wakes for an interrupt
 * that is pending even while it is masked, so nothing slips in between
 * the check that led here and the sleep; it is taken once unmasked. */
static inline void wait_irq(void)
{
	asm volatile("wfi; msr daifclr, #2; isb; msr daifset, #2"
		     : : : "memory");
}

#endif
