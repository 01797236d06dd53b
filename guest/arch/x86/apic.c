/* xAPIC (MMIO at 0xfee00000), IOAPIC and legacy PIC programming. */
#include "guest.h"
#include "io.h"

#define LAPIC_ID	0x020
#define LAPIC_EOI	0x0b0
#define LAPIC_SVR	0x0f0
#define LAPIC_ICR_LO	0x300
#define LAPIC_ICR_HI	0x310
#define LAPIC_LVT_TIMER	0x320
#define LAPIC_TMICT	0x380
#define LAPIC_TDCR	0x3e0

#define ICR_BUSY	(1u << 12)
#define LVT_MASKED	(1u << 16)
#define LVT_PERIODIC	(1u << 17)

static uint32_t lapic_read(unsigned reg)
{
	return mmio_read32(LAPIC_BASE + reg);
}

static void lapic_write(unsigned reg, uint32_t v)
{
	mmio_write32(LAPIC_BASE + reg, v);
}

unsigned lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

void lapic_enable(void)
{
	lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

void lapic_send_ipi(unsigned apic_id, uint32_t icr_low)
{
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, icr_low);
	for (int i = 0; i < 100000 && (lapic_read(LAPIC_ICR_LO) & ICR_BUSY); i++)
		cpu_relax();
}

void lapic_timer_periodic(uint8_t vector, uint32_t count)
{
	lapic_write(LAPIC_TDCR, 0xb);		/* divide by 1 */
	lapic_write(LAPIC_LVT_TIMER, LVT_PERIODIC | vector);
	lapic_write(LAPIC_TMICT, count);
}

void lapic_timer_stop(void)
{
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
	lapic_write(LAPIC_TMICT, 0);
}

static void ioapic_write(uint64_t base, unsigned reg, uint32_t v)
{
	mmio_write32(base, reg);
	mmio_write32(base + 0x10, v);
}

static uint32_t ioapic_read(uint64_t base, unsigned reg)
{
	mmio_write32(base, reg);
	return mmio_read32(base + 0x10);
}

/* Redirection entries: bits 16-23 of the version register hold the
 * last one's number. */
unsigned ioapic_pins(uint64_t base)
{
	return (ioapic_read(base, 0x01) >> 16 & 0xff) + 1;
}

/* Fixed delivery, physical destination, active high; edge triggered
 * (ISA: the PIT) or with IOAPIC_LEVEL level triggered (virtio-mmio's
 * lines, which stay high until the driver acknowledges; the LAPIC's EOI
 * of a level-triggered vector reaches the IOAPIC, which then looks at
 * the line again). */
void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, unsigned dest,
		  uint32_t mode)
{
	ioapic_write(base, 0x11 + 2 * pin, dest << 24);
	ioapic_write(base, 0x10 + 2 * pin, vector | mode);
}

void ioapic_mask(uint64_t base, unsigned pin)
{
	ioapic_write(base, 0x10 + 2 * pin, LVT_MASKED);
}

/* Interrupts come through the IOAPIC; the 8259s must stay silent. */
void pic_mask_all(void)
{
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}
