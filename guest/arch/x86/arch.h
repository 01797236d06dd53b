/* The x86 side of guest.h: boot data, checks, interrupt vectors, the PC
 * platform (LAPIC, IOAPIC, PIT, firmware tables), and the hooks the
 * shared code calls, inline so that they cost nothing here. */
#ifndef TG_ARCH_H
#define TG_ARCH_H

#include "bootparam.h"
#include "io.h"

#define MEM_MAX BP_E820_MAX
#define MMIO_MAX_DEVS 16

/* Normalised view of what the loader passed, whatever the entry. */
struct boot_info {
	int entry;
	unsigned nmem;
	struct mem_range mem[MEM_MAX];	/* the e820 map */
	uint64_t initrd_addr;
	uint64_t initrd_size;
	uint64_t rsdp;		/* 0: search the BIOS areas */
	char cmdline[CMDLINE_MAX];
};

extern struct boot_info boot;

const char *raw_cmdline(int entry, uint64_t ptr);
void boot_info_init(int entry, uint64_t ptr);

/* What skip= names. */
enum check_id { CHK_E820, CHK_SMP, CHK_LAPIC, CHK_PIT, CHK_INITRD, CHK_COUNT };
#define CHECK_NAMES { \
	[CHK_E820] = "e820", [CHK_SMP] = "smp", [CHK_LAPIC] = "lapic", \
	[CHK_PIT] = "pit", [CHK_INITRD] = "initrd", \
}

/* Page tables (mm.c). */
void mm_init(void);
extern uint64_t page_table_root;

/* Descriptors, interrupts, ring 3. */
#define VEC_LAPIC_TIMER 32
#define VEC_PIT 33
#define VEC_SPURIOUS 255
/* MSI-X: two per virtio device (config change, queue 0). */
#define VEC_VIRTIO_BASE 0x40
#define VEC_VIRTIO_COUNT 16

void desc_init(void);
void desc_load_ap(void);
long user_call(long (*fn)(long), long arg, void *stack_top, void *kstack);
extern volatile unsigned lapic_ticks, pit_ticks;

/* The TSC as the clock. */
void tsc_calibrate(void);

/* Interrupt controllers. */
#define LAPIC_BASE 0xfee00000ULL
unsigned lapic_id(void);
void lapic_enable(void);
void lapic_eoi(void);
void lapic_send_ipi(unsigned apic_id, uint32_t icr_low);
void lapic_timer_periodic(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);
#define IOAPIC_EDGE 0
#define IOAPIC_LEVEL (1u << 15)	/* trigger mode; polarity (13) stays 0 */
unsigned ioapic_pins(uint64_t base);
void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, unsigned dest,
		  uint32_t mode);
void ioapic_mask(uint64_t base, unsigned pin);
void pic_mask_all(void);

/* Firmware tables. */
struct mp_info {
	bool found;
	const char *source;	/* "mptable" or "madt" */
	unsigned ncpus;
	uint8_t apic_ids[MAX_CPUS];
	uint64_t ioapic_addr;
	unsigned ioapic_gsi_base;	/* the GSI of its pin 0 */
	unsigned irq0_pin;
};

extern struct mp_info mp;
uint8_t checksum8(const void *p, unsigned n);
void mptable_scan(void);
bool madt_scan(void);
/* The ACPI tables' check (adds the DSDT's virtio-mmio devices to
 * params.mmio when the command line has none), and acpi_exit= (returns
 * when the VM went on). */
void check_acpi(void);
void acpi_exit(void);

/* Checks of this platform. */
void check_smp(void);
void check_timers(void);

/* ---- Hooks of the shared code ---- */

/* The console: COM1. */
#define COM1 0x3f8

static inline void uart_init(void)
{
	outb(COM1 + 1, 0x00);	/* no interrupts */
	outb(COM1 + 3, 0x80);	/* DLAB */
	outb(COM1 + 0, 0x01);	/* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1 */
	outb(COM1 + 2, 0x07);	/* FIFOs on and cleared */
}

static inline bool uart_rx_ready(void)
{
	return inb(COM1 + 5) & 0x01;	/* data ready */
}

static inline char uart_rx(void)
{
	return inb(COM1);
}

static inline bool uart_tx_ready(void)
{
	return inb(COM1 + 5) & 0x20;	/* THR empty */
}

static inline void uart_tx(char c)
{
	outb(COM1, c);
}

/* The 10 ms tick that wakes the drivers' sleeps so that their deadlines
 * are seen: the LAPIC timer (10,000,000 at KVM's 1 GHz APIC bus). */
static inline void watchdog_start(void)
{
	lapic_enable();
	lapic_timer_periodic(VEC_LAPIC_TIMER, 10000000);
}

static inline void watchdog_stop(void)
{
	lapic_timer_stop();
}

/* This CPU takes device interrupts (MSIs need the LAPIC enabled). */
static inline void irq_cpu_enable(void)
{
	lapic_enable();
}

/* A virtio-mmio device's line: a GSI, which must be a pin of the IOAPIC
 * the firmware tables name (else IRQ_LINE_MISSING), routed level
 * triggered to the vector. */
#define WIRED_IRQ_NAME "ioapic"
#define IRQ_LINE_MISSING "gsi-not-on-ioapic"

/* The line's pin. */
static inline unsigned irq_line(unsigned gsi)
{
	return gsi - mp.ioapic_gsi_base;
}

/* Macros: the tests and calls stay where they were written. */
#define irq_line_missing(gsi, pin) \
	((gsi) < mp.ioapic_gsi_base || (pin) >= ioapic_pins(mp.ioapic_addr))
#define irq_line_route(pin, vector) \
	ioapic_route(mp.ioapic_addr, pin, vector, lapic_id(), IOAPIC_LEVEL)

/* An MSI from function f to this CPU's vector: the LAPIC's address with
 * its ID, the vector as the data. */
#define msi_address(f)		(LAPIC_BASE | lapic_id() << 12)
#define msi_data(f, vector)	(vector)
/* MSIs always reach the LAPIC; PCI INTx is never used. */
#define pci_msi_ready()		true
struct pci_func;
static inline bool pci_intx_line(const struct pci_func *f, unsigned *gsi)
{
	(void)f;
	(void)gsi;
	return false;
}

/* PCI: configuration mechanism #1 (dword address to 0xcf8, data at
 * 0xcfc + (offset & 3)) unless ecam= is given; BARs the firmware left at
 * 0 go to 3 GiB up to the IOAPIC. */
#define PCI_BAR_WINDOW_START	0xc0000000ULL
#define PCI_BAR_WINDOW_END	0xfec00000ULL	/* IOAPIC, LAPIC, BIOS above */

static inline uint16_t pci_port_select(unsigned dev, unsigned fn,
				       unsigned off)
{
	outl(0xcf8, 0x80000000u | dev << 11 | fn << 8 | (off & 0xfc));
	return 0xcfc + (off & 3);
}

static inline uint8_t pci_port_read8(unsigned dev, unsigned fn, unsigned off)
{
	return inb(pci_port_select(dev, fn, off));
}

static inline uint16_t pci_port_read16(unsigned dev, unsigned fn,
				       unsigned off)
{
	return inw(pci_port_select(dev, fn, off));
}

static inline uint32_t pci_port_read32(unsigned dev, unsigned fn,
				       unsigned off)
{
	return inl(pci_port_select(dev, fn, off));
}

static inline void pci_port_write16(unsigned dev, unsigned fn, unsigned off,
				    uint16_t v)
{
	outw(pci_port_select(dev, fn, off), v);
}

static inline void pci_port_write32(unsigned dev, unsigned fn, unsigned off,
				    uint32_t v)
{
	outl(pci_port_select(dev, fn, off), v);
}

/* Guest-physical address of no RAM but of a device (blk_evil): the
 * IOAPIC. */
#define MMIO_HOLE_ADDR	0xfec00000ULL

#endif
