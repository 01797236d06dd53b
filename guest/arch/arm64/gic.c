/* The GIC as the device tree gives it (Arm IHI 0069 for GICv3, IHI 0048
 * for GICv2): the distributor with affinity routing (v3) or CPU targets
 * (v2), this CPU's redistributor (v3), and the CPU interface through
 * system registers (v3) or its memory-mapped registers (v2). Everything
 * the guest uses is group 1 non-secure, level or edge as configured,
 * one priority, and goes to the boot CPU. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define GICD_CTLR		0x0000
#define GICD_TYPER		0x0004
#define GICD_IGROUPR		0x0080
#define GICD_ISENABLER		0x0100
#define GICD_ICENABLER		0x0180
#define GICD_IPRIORITYR		0x0400
#define GICD_ITARGETSR		0x0800
#define GICD_ICFGR		0x0c00
#define GICD_IROUTER		0x6000
#define GICD_CTLR_RWP		(1u << 31)
/* v3: affinity routing and group 1 (non-secure group 1 in a two
 * security state view); v2: groups 0 and 1. */
#define GICD_CTLR_V3		((1u << 4) | (1u << 1))
#define GICD_CTLR_V2		3u

#define GICR_TYPER		0x0008
#define GICR_WAKER		0x0014
#define GICR_TYPER_VLPIS	(1u << 1)
#define GICR_TYPER_LAST		(1u << 4)
#define WAKER_SLEEP		(1u << 1)
#define WAKER_ASLEEP		(1u << 2)
#define GICR_SGI		0x10000		/* SGI_base frame */
#define GICR_FRAME		0x20000
#define GICR_FRAME_VLPI		0x40000

#define GICC_CTLR		0x0000
#define GICC_PMR		0x0004
#define GICC_IAR		0x000c
#define GICC_EOIR		0x0010

#define PRIORITY		0xa0
#define MAX_WIRED		8
#define WAIT_MS			100

static uint64_t rd_base;	/* this CPU's redistributor (v3) */
static unsigned nspis;
static struct {
	unsigned intid, vector;
} wired[MAX_WIRED];
static unsigned nwired;

static uint64_t my_affinity(void)
{
	return sysreg_read(mpidr_el1) & 0xff00ffffffULL;
}

/* Waits for a register's bits to read as want; false at the timeout. */
static bool wait32(uint64_t reg, uint32_t mask, uint32_t want)
{
	uint64_t deadline = clock_deadline(WAIT_MS);

	while ((mmio_read32(reg) & mask) != want)
		if (clock_now() > deadline)
			return false;
	return true;
}

/* The redistributor whose GICR_TYPER names this CPU's affinity
 * (Aff3.Aff2.Aff1.Aff0 in bits 63:32), woken up. */
static bool find_redistributor(void)
{
	uint64_t aff = my_affinity(), want, a = plat.gicr;

	want = (aff >> 32 & 0xff) << 24 | (aff & 0xffffff);
	while (a + GICR_FRAME <= plat.gicr + plat.gicr_size) {
		uint64_t typer = mmio_read64(a + GICR_TYPER);

		if (typer >> 32 == want) {
			rd_base = a;
			mmio_write32(a + GICR_WAKER,
				     mmio_read32(a + GICR_WAKER) & ~WAKER_SLEEP);
			return wait32(a + GICR_WAKER, WAKER_ASLEEP, 0);
		}
		if (typer & GICR_TYPER_LAST)
			break;
		a += typer & GICR_TYPER_VLPIS ? GICR_FRAME_VLPI : GICR_FRAME;
	}
	return false;
}

/* The registers of an interrupt's bank: a PPI's in the redistributor's
 * SGI frame (v3), else the distributor's. */
static uint64_t bank(unsigned intid)
{
	return plat.gic_version == 3 && intid < 32 ? rd_base + GICR_SGI
						    : plat.gicd;
}

static void configure(unsigned intid, bool level)
{
	uint64_t b = bank(intid);
	uint64_t cfg = b + GICD_ICFGR + intid / 16 * 4;
	uint32_t edge = 2u << (intid % 16 * 2);

	mmio_write8(b + GICD_IPRIORITYR + intid, PRIORITY);
	if (intid >= 32)
		mmio_write32(cfg, level ? mmio_read32(cfg) & ~edge
					: mmio_read32(cfg) | edge);
	if (plat.gic_version == 3) {
		uint64_t grp = b + GICD_IGROUPR + intid / 32 * 4;

		mmio_write32(grp, mmio_read32(grp) | 1u << intid % 32);
	}
}

static void enable(unsigned intid, bool on)
{
	uint64_t reg = bank(intid) + (on ? GICD_ISENABLER : GICD_ICENABLER);

	mmio_write32(reg + intid / 32 * 4, 1u << intid % 32);
}

/* This CPU's interface (v3: its system registers, enabled first; v2:
 * its registers in memory): every priority let through, groups on. */
static void cpu_interface_init(void)
{
	if (plat.gic_version == 2) {
		mmio_write32(plat.gicc + GICC_PMR, 0xff);
		mmio_write32(plat.gicc + GICC_CTLR, 3);
		return;
	}
	sysreg_write(S3_0_C12_C12_5, sysreg_read(S3_0_C12_C12_5) | 1);
	isb();
	sysreg_write(S3_0_C4_C6_0, 0xff);	/* ICC_PMR_EL1 */
	sysreg_write(S3_0_C12_C12_3, 0);	/* ICC_BPR1_EL1 */
	sysreg_write(S3_0_C12_C12_7, 1);	/* ICC_IGRPEN1_EL1 */
	isb();
}

bool gic_init(void)
{
	const char *why = 0;

	if (!plat.gic_version)
		return false;
	map_mmio(plat.gicd, 0x10000);
	if (plat.gic_version == 3)
		map_mmio(plat.gicr, plat.gicr_size);
	else
		map_mmio(plat.gicc, 0x2000);
	nspis = MIN(32 * ((mmio_read32(plat.gicd + GICD_TYPER) & 0x1f) + 1),
		    1020u) - 32;
	mmio_write32(plat.gicd + GICD_CTLR, 0);
	if (!wait32(plat.gicd + GICD_CTLR, GICD_CTLR_RWP, 0))
		why = "distributor-busy";
	else if (plat.gic_version == 3 && !find_redistributor())
		why = "no-redistributor";
	if (why) {
		report(false, "gic", "version=%u reason=%s", plat.gic_version,
		       why);
		return false;
	}
	mmio_write32(plat.gicd + GICD_CTLR, plat.gic_version == 3 ?
					    GICD_CTLR_V3 : GICD_CTLR_V2);
	cpu_interface_init();
	print("tg: gic version=%u gicd=0x%lx %s=0x%lx spis=%u\n",
	      plat.gic_version, plat.gicd,
	      plat.gic_version == 3 ? "gicr" : "gicc",
	      plat.gic_version == 3 ? rd_base : plat.gicc, nspis);
	if (plat.gic_version == 3)
		its_init(rd_base);
	return true;
}

unsigned gic_spis(void)
{
	return nspis;
}

unsigned gic_ack(void)
{
	if (plat.gic_version == 2)
		return mmio_read32(plat.gicc + GICC_IAR) & 0x3ff;
	return sysreg_read(S3_0_C12_C12_0) & 0xffffff;	/* ICC_IAR1_EL1 */
}

void gic_eoi(unsigned intid)
{
	if (plat.gic_version == 2)
		mmio_write32(plat.gicc + GICC_EOIR, intid);
	else
		sysreg_write(S3_0_C12_C12_1, intid);	/* ICC_EOIR1_EL1 */
}

/* A timer's PPI: level triggered by definition. */
void gic_enable_ppi(unsigned intid)
{
	configure(intid, true);
	enable(intid, true);
}

void gic_disable_ppi(unsigned intid)
{
	enable(intid, false);
}

/* A device's SPI, level triggered, to this CPU; its interrupts count
 * for the vector (gic_vector). */
void gic_route_spi(unsigned intid, unsigned vector)
{
	if (nwired == MAX_WIRED)
		return;
	wired[nwired].intid = intid;
	wired[nwired++].vector = vector;
	configure(intid, true);
	if (plat.gic_version == 3)
		mmio_write64(plat.gicd + GICD_IROUTER + 8 * intid,
			     my_affinity());
	else
		mmio_write8(plat.gicd + GICD_ITARGETSR + intid,
			    mmio_read8(plat.gicd + GICD_ITARGETSR));
	enable(intid, true);
}

int gic_vector(unsigned intid)
{
	for (unsigned i = 0; i < nwired; i++)
		if (wired[i].intid == intid)
			return wired[i].vector;
	return -1;
}
