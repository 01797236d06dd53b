/* Port I/O, MMIO, MSRs and other single instructions. */
#ifndef TG_IO_H
#define TG_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void outl(uint16_t port, uint32_t v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint8_t mmio_read8(uint64_t addr)
{
	return *(volatile uint8_t *)addr;
}

static inline uint16_t mmio_read16(uint64_t addr)
{
	return *(volatile uint16_t *)addr;
}

static inline uint32_t mmio_read32(uint64_t addr)
{
	return *(volatile uint32_t *)addr;
}

static inline void mmio_write8(uint64_t addr, uint8_t v)
{
	*(volatile uint8_t *)addr = v;
}

static inline void mmio_write16(uint64_t addr, uint16_t v)
{
	*(volatile uint16_t *)addr = v;
}

static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

/* Full barrier (store-load ordering too); a locked add, which the
 * instruction emulator handles, rather than mfence. */
static inline void mb(void)
{
	asm volatile("lock; addl $0, (%%rsp)" : : : "memory", "cc");
}

/* Stores in order (ring entries before an index the device reads): x86
 * keeps them so; only the compiler must be stopped. */
static inline void wmb(void)
{
	asm volatile("" : : : "memory");
}

/* Loads in order (an index the device wrote, then what it published):
 * x86 keeps them so, and the compiler keeps volatile accesses in order. */
static inline void rmb(void)
{
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The shared code's clock (guest.h). */
static inline uint64_t clock_now(void)
{
	return rdtsc();
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
		     "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b,
			 uint32_t *c, uint32_t *d)
{
	asm volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
		     : "a"(leaf), "c"(0));
}

static inline void write_cr3(uint64_t v)
{
	asm volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;

	asm volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline void cpu_relax(void)
{
	asm volatile("pause" : : : "memory");
}

/* Sleeps until an interrupt and takes it: sti's one-instruction shadow
 * makes `sti; hlt` atomic, so none slips in between. */
static inline void wait_irq(void)
{
	asm volatile("sti; hlt; cli");
}

#endif
