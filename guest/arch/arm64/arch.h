/* The arm64 side of guest.h: boot data and the platform as the device
 * tree describes them, checks, interrupt numbers, and the hooks the
 * shared code calls. */
#ifndef TG_ARCH_H
#define TG_ARCH_H

#include "io.h"

#define MEM_MAX 16
/* QEMU's virt machine has 32 virtio-mmio transports. */
#define MMIO_MAX_DEVS 32

struct boot_info {
	unsigned nmem;
	struct mem_range mem[MEM_MAX];	/* the memory nodes */
	uint64_t initrd_addr;
	uint64_t initrd_size;
	char cmdline[CMDLINE_MAX];
};

extern struct boot_info boot;

/* What skip= names. */
enum check_id {
	CHK_MEMORY, CHK_SMP, CHK_VTIMER, CHK_PTIMER, CHK_INITRD, CHK_COUNT
};
#define CHECK_NAMES { \
	[CHK_MEMORY] = "memory", [CHK_SMP] = "smp", \
	[CHK_VTIMER] = "vtimer", [CHK_PTIMER] = "ptimer", \
	[CHK_INITRD] = "initrd", \
}

/* The machine, from the device tree (dt.c). */
enum uart_kind { UART_NONE, UART_8250, UART_PL011 };

#define PCI_IMAP_MAX 64

struct platform {
	enum uart_kind uart_kind;
	uint64_t uart;
	unsigned uart_shift;		/* 8250: register stride, log2 */
	unsigned uart_width;		/* 8250: access width, 1 or 4 */
	bool psci, psci_smc;		/* PSCI, through hvc or smc */
	unsigned ncpus;
	uint64_t mpidr[MAX_CPUS];	/* affinity, as reg gives it */
	unsigned gic_version;		/* 2, 3, or 0: none found */
	uint64_t gicd, gicr, gicr_size, gicc;
	unsigned vtimer_intid, ptimer_intid;
	uint64_t its;			/* GICv3 ITS, or 0 */
	uint64_t pci_mem, pci_mem_end;	/* BAR window (32-bit MEM) */
	bool pci_msi;			/* msi-map to the ITS, from... */
	uint32_t pci_msi_base;		/* ...this DeviceID for RID 0 */
	/* PCI INTx (interrupt-map onto GIC SPIs): entries by masked
	 * phys.hi and pin, and the mask of both. */
	struct pci_imap {
		uint32_t hi, pin, spi;
	} pci_imap[PCI_IMAP_MAX];
	unsigned pci_imap_n;
	uint32_t pci_imap_mask_hi, pci_imap_mask_pin;
	uint64_t exit_dev;		/* thpvm's exit register, or 0 */
};

extern struct platform plat;

/* Reads the device tree at dtb into boot and plat (and the virtio-mmio
 * devices and ECAM into params); false if it names no console. What is
 * wrong with it is printed by dt_report once the console is up. */
bool dt_parse(uint64_t dtb);
void dt_report(void);

/* Memory and the MMU (mm.c): what the boot CPU loads to turn it on,
 * which the secondaries load too. */
struct mmu_regs {
	uint64_t mair, tcr, ttbr0, sctlr;
	uint64_t inval_start, inval_end;	/* dropped from caches first */
};

extern struct mmu_regs mmu;
void mm_init(void);

/* Exceptions, EL0 (exceptions.c, vectors.S). CPUs (by slot: the boot
 * CPU is 0) that may run EL0 work at once: a queue each for blkbench. */
#define USER_CPUS 8
long user_call(long (*fn)(long), long arg, void *stack_top);
void exceptions_init(void);
void el0_cpu_init(unsigned n);

/* PSCI (psci.c). */
uint32_t psci_version(void);
int64_t psci_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t context);
void __attribute__((noreturn)) psci_system_off(void);

/* The GIC (gic.c). */
bool gic_init(void);
unsigned gic_ack(void);
void gic_eoi(unsigned intid);
unsigned gic_spis(void);
void gic_enable_ppi(unsigned intid);
void gic_disable_ppi(unsigned intid);
void gic_route_spi(unsigned intid, unsigned vector);
int gic_vector(unsigned intid);

/* The architected timers (timer.c). */
void timer_init(void);
void timer_interrupt(unsigned intid);
void check_timers(void);
void watchdog_start(void);
void watchdog_stop(void);

/* Secondary CPUs (smp.c). */
void check_smp(void);

/* ---- Hooks of the shared code ---- */

/* The console (console.c). */
void uart_init(void);
bool uart_rx_ready(void);
char uart_rx(void);
bool uart_tx_ready(void);
void uart_tx(char c);

/* Interrupt numbers a virtio device's slot stands for: its MSI-X
 * vectors are the LPIs from here (the first LPI) on; a wired line only
 * notes the slot's number. */
#define VEC_VIRTIO_BASE 0x2000
#define VEC_VIRTIO_COUNT 16

/* The GIC CPU interface takes interrupts from boot on. */
static inline void irq_cpu_enable(void)
{
}

/* A virtio-mmio device's line: an SPI (its INTID, 32 up), routed level
 * triggered to this CPU. */
#define WIRED_IRQ_NAME "gic"
#define IRQ_LINE_MISSING "spi-not-on-gic"

static inline unsigned irq_line(unsigned spi)
{
	return 32 + spi;
}

static inline bool irq_line_missing(unsigned spi, unsigned intid)
{
	return spi >= gic_spis() || intid < 32;
}

static inline void irq_line_route(unsigned intid, unsigned vector)
{
	gic_route_spi(intid, vector);
}

/* MSIs through the ITS (its.c): its doorbell, and an event of the
 * function's DeviceID mapped to the LPI that is the vector. */
struct pci_func;
bool its_init(uint64_t rd);
bool its_ready(void);
uint64_t its_doorbell(void);
uint32_t its_map_msi(const struct pci_func *f, unsigned vector);
#define msi_address(f)		its_doorbell()
#define msi_data(f, vector)	its_map_msi(f, vector)
/* Without an ITS (a GICv2), PCI functions interrupt on INTA: its SPI
 * (dt.c, from interrupt-map), as a wired line's number for irq_line. */
#define pci_msi_ready()		its_ready()
bool pci_intx_line(const struct pci_func *f, unsigned *spi);

/* PCI: ECAM only (the device tree's, or ecam=); there is no other way
 * into configuration space, so without it no function answers. BARs
 * that are not assigned go in the device tree's 32-bit memory window. */
#define PCI_BAR_WINDOW_START	plat.pci_mem
#define PCI_BAR_WINDOW_END	plat.pci_mem_end
#define pci_port_read8(dev, fn, off)		((uint8_t)0xff)
#define pci_port_read16(dev, fn, off)		((uint16_t)0xffff)
#define pci_port_read32(dev, fn, off)		(~0u)
#define pci_port_write16(dev, fn, off, v)	((void)0)
#define pci_port_write32(dev, fn, off, v)	((void)0)

/* Guest-physical address of no RAM but of a device (blk_evil): the GIC
 * distributor. */
#define MMIO_HOLE_ADDR	plat.gicd

#endif
