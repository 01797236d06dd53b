/* MSIs through the GICv3 ITS (Arm IHI 0069): this CPU's redistributor
 * takes LPIs (a configuration and a pending table), the ITS gets its
 * device and collection tables and a command queue, and each MSI a PCI
 * function is given becomes an event of its DeviceID (its requester ID
 * plus the device tree's msi-map base) mapped to the LPI that is the
 * slot's vector, VEC_VIRTIO_BASE (8192, the first LPI) up. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "pci.h"

#define GICD_TYPER		0x0004
#define GICD_TYPER_LPIS		(1u << 17)
#define GICR_CTLR		0x0000
#define GICR_TYPER		0x0008
#define GICR_PROPBASER		0x0070
#define GICR_PENDBASER		0x0078
#define GICR_CTLR_LPIS		1u

#define GITS_CTLR		0x0000
#define GITS_TYPER		0x0008
#define GITS_CBASER		0x0080
#define GITS_CWRITER		0x0088
#define GITS_CREADR		0x0090
#define GITS_BASER		0x0100
#define GITS_TRANSLATER		0x10040
#define GITS_SIZE		0x20000
#define GITS_CTLR_ENABLED	1u
#define GITS_TYPER_PTA		(1ULL << 19)

/* Table and queue attributes: valid, inner write-back, inner
 * shareable. */
#define VALID			(1ULL << 63)
#define ATTR_WB_INNER		(7ULL << 59)
#define ATTR_SHARE_INNER	(1ULL << 10)
#define PAGE_SIZE_SHIFT		8
#define PAGE_SIZE_MASK		(3ULL << PAGE_SIZE_SHIFT)
#define PAGE_SIZE_64K		(2ULL << PAGE_SIZE_SHIFT)
#define TABLE_BYTES		65536
#define REDIST_WB_INNER		(7ULL << 7)
#define TYPE_DEVICES		1
#define TYPE_COLLECTIONS	4

#define LPI_FIRST		8192
#define LPI_ID_BITS		14	/* LPIs 8192-16383 */
#define LPI_CONFIG		0xa1	/* priority 0xa0, enabled */
#define ITT_EVENT_BITS		4	/* VEC_VIRTIO_COUNT events */
#define MAX_DEVICE_IDS		256	/* bus 0 */
#define CMD_QUEUE		4096
#define WAIT_MS			100

#define CMD_SYNC		0x05
#define CMD_MAPD		0x08
#define CMD_MAPC		0x09
#define CMD_MAPTI		0x0a
#define CMD_INV			0x0c

static uint64_t its_base, rd_target;
static uint8_t *lpi_config;
static uint64_t *cmd_queue;
static unsigned cmd_next;
static bool mapped[MAX_DEVICE_IDS];	/* by device and function */

static void clean(const void *p, uint64_t len)
{
	for (uint64_t a = ALIGN_DOWN((uint64_t)p, 64); a < (uint64_t)p + len;
	     a += 64)
		asm volatile("dc cvac, %0" : : "r"(a) : "memory");
	asm volatile("dsb sy" : : : "memory");
}

/* n pages aligned to align_pages pages (a power of two), zeroed and
 * cleaned to memory, for the GIC to read. */
static void *zeroed_pages(unsigned n, unsigned align_pages)
{
	uint64_t p = (uint64_t)alloc_pages(n + align_pages - 1);

	p = ALIGN_UP(p, align_pages * 4096ULL);
	memset((void *)p, 0, n * 4096ULL);
	clean((void *)p, n * 4096ULL);
	return (void *)p;
}

/* Queues one command and waits until the ITS has read it. */
static bool command(uint64_t d0, uint64_t d1, uint64_t d2)
{
	uint64_t *c = &cmd_queue[cmd_next / 8], deadline;

	c[0] = d0;
	c[1] = d1;
	c[2] = d2;
	c[3] = 0;
	clean(c, 32);
	cmd_next = (cmd_next + 32) % CMD_QUEUE;
	mmio_write64(its_base + GITS_CWRITER, cmd_next);
	deadline = clock_deadline(WAIT_MS);
	while (mmio_read64(its_base + GITS_CREADR) != cmd_next)
		if (clock_now() > deadline)
			return false;
	return true;
}

static bool sync(void)
{
	return command(CMD_SYNC, 0, rd_target);
}

/* The device and collection tables: flat, 64 KiB each, room for bus
 * 0's DeviceIDs and one collection. 64 KiB pages are asked for (KVM
 * takes no other size); an ITS that keeps another size gets the same
 * 64 KiB in its pages. */
static const char *tables(void)
{
	static const uint64_t page_bytes[] = { 4096, 16384, 65536, 65536 };

	for (unsigned n = 0; n < 8; n++) {
		uint64_t reg = its_base + GITS_BASER + 8 * n;
		uint64_t b = mmio_read64(reg), entries, table, attrs, pages;
		unsigned type = b >> 56 & 7, esize = (b >> 48 & 0x1f) + 1;

		if (type == TYPE_DEVICES)
			entries = plat.pci_msi_base + MAX_DEVICE_IDS;
		else if (type == TYPE_COLLECTIONS)
			entries = 1;
		else
			continue;
		if (entries * esize > TABLE_BYTES)
			return "device-table-too-large";
		table = (uint64_t)zeroed_pages(TABLE_BYTES / 4096,
					       TABLE_BYTES / 4096);
		attrs = VALID | ATTR_WB_INNER | ATTR_SHARE_INNER | table;
		mmio_write64(reg, attrs | PAGE_SIZE_64K);
		pages = TABLE_BYTES /
			page_bytes[mmio_read64(reg) >> PAGE_SIZE_SHIFT & 3];
		mmio_write64(reg, (mmio_read64(reg) & PAGE_SIZE_MASK) | attrs |
			     (pages - 1));
	}
	return 0;
}

/* LPIs at this CPU's redistributor, with their tables. */
static const char *redistributor(uint64_t rd)
{
	uint64_t pending = (uint64_t)zeroed_pages(1, 16);	/* 64 KiB aligned */

	if (!(mmio_read32(plat.gicd + GICD_TYPER) & GICD_TYPER_LPIS))
		return "no-lpis";
	if ((mmio_read32(plat.gicd + GICD_TYPER) >> 19 & 0x1f) + 1 <
	    LPI_ID_BITS)
		return "too-few-id-bits";
	lpi_config = zeroed_pages(2, 1);
	mmio_write64(rd + GICR_PROPBASER, (uint64_t)lpi_config |
		     ATTR_SHARE_INNER | REDIST_WB_INNER | (LPI_ID_BITS - 1));
	mmio_write64(rd + GICR_PENDBASER, pending | ATTR_SHARE_INNER |
		     REDIST_WB_INNER);
	mmio_write32(rd + GICR_CTLR,
		     mmio_read32(rd + GICR_CTLR) | GICR_CTLR_LPIS);
	/* MAPC names the redistributor by address or by number. */
	if (mmio_read64(its_base + GITS_TYPER) & GITS_TYPER_PTA)
		rd_target = rd;
	else
		rd_target = (mmio_read64(rd + GICR_TYPER) >> 8 & 0xffff) << 16;
	return 0;
}

bool its_init(uint64_t rd)
{
	const char *why;

	if (!plat.its || !plat.pci_msi)
		return false;
	its_base = plat.its;
	map_mmio(its_base, GITS_SIZE);
	mmio_write32(its_base + GITS_CTLR, 0);
	/* 64 KiB aligned: KVM drops the address's bits below that. */
	cmd_queue = zeroed_pages(1, 16);
	why = redistributor(rd);
	if (!why)
		why = tables();
	if (!why) {
		mmio_write64(its_base + GITS_CBASER, VALID |
			     ATTR_WB_INNER | ATTR_SHARE_INNER |
			     (uint64_t)cmd_queue);
		mmio_write64(its_base + GITS_CWRITER, 0);
		mmio_write32(its_base + GITS_CTLR, GITS_CTLR_ENABLED);
		if (!command(CMD_MAPC, 0, VALID | rd_target) || !sync())
			why = "command-timeout";
	}
	if (why) {
		report(false, "its", "its=0x%lx reason=%s", its_base, why);
		its_base = 0;
		return false;
	}
	print("tg: its its=0x%lx msi_base=0x%x\n", its_base, plat.pci_msi_base);
	return true;
}

bool its_ready(void)
{
	return its_base;
}

uint64_t its_doorbell(void)
{
	return its_base + GITS_TRANSLATER;
}

/* The event for vector from function f, mapped to the LPI that is the
 * vector (with an interrupt translation table for the function the first
 * time). */
uint32_t its_map_msi(const struct pci_func *f, unsigned vector)
{
	unsigned devfn = f->dev << 3 | f->fn;
	uint32_t devid = plat.pci_msi_base + devfn;
	uint32_t event = vector - VEC_VIRTIO_BASE;
	uint64_t d0 = (uint64_t)devid << 32;

	lpi_config[vector - LPI_FIRST] = LPI_CONFIG;
	clean(&lpi_config[vector - LPI_FIRST], 1);
	if ((!mapped[devfn] &&
	     !command(CMD_MAPD | d0, ITT_EVENT_BITS - 1,
		      VALID | (uint64_t)zeroed_pages(1, 1))) ||
	    !command(CMD_MAPTI | d0, (uint64_t)vector << 32 | event, 0) ||
	    !command(CMD_INV | d0, event, 0) || !sync())
		report(false, "its", "device=0x%x event=%u "
		       "reason=command-timeout", devid, event);
	mapped[devfn] = true;
	return event;
}
