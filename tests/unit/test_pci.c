/* PCI bus 0: configuration access through ECAM and x86's 0xCF8/0xCFC,
 * BAR placement and sizing, capability chains, absent functions. */
#include <errno.h>
#include <string.h>

#include "arch/x86/pci_ports.h"
#include "core/io_bus.h"
#include "core/pci.h"
#include "lib/util.h"
#include "unit.h"

#define WINDOW 0xc0000000ULL
#define ECAM 0xe0000000ULL

static struct io_bus mmio;
static struct pci_bus bus;
static struct x86_pci_ports ports;
static struct pci_device dev;
static unsigned bar_hits;

static void bar_handler(void *opaque, uint64_t off, uint8_t *data,
			uint32_t len, bool is_write)
{
	bar_hits++;
	if (!is_write)
		memset(data, 0xab, len);
}

static uint32_t cf8_read(unsigned slot, unsigned fn, unsigned reg,
			 unsigned len)
{
	uint8_t addr[4], data[4] = { 0 };

	put_le32(addr, 0x80000000u | slot << 11 | fn << 8 | (reg & 0xfc));
	x86_pci_config_address_access(&ports, 0, addr, 4, true);
	x86_pci_config_data_access(&ports, reg & 3, data, len, false);
	return get_le32(data);
}

static void cf8_write32_bus(unsigned busnr, unsigned slot, unsigned reg,
			   uint32_t v)
{
	uint8_t addr[4], data[4];

	put_le32(addr, 0x80000000u | busnr << 16 | slot << 11 | reg);
	x86_pci_config_address_access(&ports, 0, addr, 4, true);
	put_le32(data, v);
	x86_pci_config_data_access(&ports, 0, data, 4, true);
}

static void cf8_write32(unsigned slot, unsigned reg, uint32_t v)
{
	cf8_write32_bus(0, slot, reg, v);
}

static uint32_t cf8_read_bus(unsigned busnr, unsigned slot, unsigned reg)
{
	uint8_t addr[4], data[4] = { 0 };

	put_le32(addr, 0x80000000u | busnr << 16 | slot << 11 | reg);
	x86_pci_config_address_access(&ports, 0, addr, 4, true);
	x86_pci_config_data_access(&ports, 0, data, 4, false);
	return get_le32(data);
}

static void setup(void)
{
	static const uint8_t cap_a[4] = { 0x11 }, cap_b[8] = { 0x09 };

	memset(&mmio, 0, sizeof(mmio));
	CHECK_EQ(pci_bus_init(&bus, &mmio, WINDOW, 0x100000, ECAM), 0);
	x86_pci_ports_init(&ports, &bus);
	pci_device_init(&dev, "test", 0x1af4, 0x1042, 0x018000, 1, 0x1af4,
			0x1100);
	pci_device_set_bar(&dev, 0, 0x4000, bar_handler, NULL);
	pci_device_set_bar(&dev, 2, 0x1000, bar_handler, NULL);
	CHECK_EQ(pci_device_add_cap(&dev, cap_a, sizeof(cap_a)), 0x40);
	CHECK_EQ(pci_device_add_cap(&dev, cap_b, sizeof(cap_b)), 0x44);
	CHECK_EQ(pci_bus_add(&bus, &dev), 1);
}

static void teardown(void)
{
	x86_pci_ports_destroy(&ports);
	pci_bus_free(&bus);
	io_bus_free(&mmio);
}

static void test_ids_and_absent_functions(void)
{
	setup();
	CHECK_EQ(cf8_read(0, 0, 0, 4), 0x29c08086);	/* host bridge */
	CHECK_EQ(cf8_read(1, 0, 0, 4), 0x10421af4);
	CHECK_EQ(cf8_read(1, 0, 2, 2), 0x1042);
	CHECK_EQ(cf8_read(1, 0, 0x0b, 1), 0x01);	/* class: storage */
	CHECK_EQ(cf8_read(2, 0, 0, 4), 0xffffffff);	/* empty slot */
	CHECK_EQ(cf8_read(1, 3, 0, 4), 0xffffffff);	/* function 3 */
	teardown();
}

static void test_bars(void)
{
	uint8_t data[4];

	setup();
	CHECK_EQ(dev.bars[0].addr, WINDOW);
	CHECK_EQ(dev.bars[2].addr, WINDOW + 0x4000);
	CHECK_EQ(cf8_read(1, 0, 0x10, 4), WINDOW);
	/* Sizing: all ones reads back the size mask, then restore. */
	cf8_write32(1, 0x10, 0xffffffff);
	CHECK_EQ(cf8_read(1, 0, 0x10, 4), 0xffffc000);
	cf8_write32(1, 0x10, WINDOW);
	CHECK_EQ(cf8_read(1, 0, 0x10, 4), WINDOW);
	CHECK_EQ(cf8_read(1, 0, 0x14, 4), 0);		/* no BAR1 */
	/* The BAR is on the MMIO bus at its address. */
	CHECK(io_bus_dispatch(&mmio, WINDOW + 0x10, data, 4, false));
	CHECK_EQ(get_le32(data), 0xabababab);
	CHECK(io_bus_dispatch(&mmio, WINDOW + 0x4000, data, 4, true));
	CHECK_EQ(bar_hits, 2);
	/* Read-only header fields stay put. */
	cf8_write32(1, 0x00, 0x12345678);
	CHECK_EQ(cf8_read(1, 0, 0, 4), 0x10421af4);
	teardown();
}

static void test_capabilities(void)
{
	setup();
	CHECK(cf8_read(1, 0, 0x06, 2) & PCI_STATUS_CAP_LIST);
	CHECK_EQ(cf8_read(1, 0, 0x34, 1), 0x40);
	CHECK_EQ(cf8_read(1, 0, 0x40, 2), 0x4411);	/* id 0x11, next 0x44 */
	CHECK_EQ(cf8_read(1, 0, 0x44, 2), 0x0009);	/* last */
	teardown();
}

static void test_ecam(void)
{
	uint8_t data[4];

	setup();
	CHECK(io_bus_dispatch(&mmio, ECAM + (1 << 15), data, 4, false));
	CHECK_EQ(get_le32(data), 0x10421af4);
	/* Extended space of a present function reads as zeros. */
	CHECK(io_bus_dispatch(&mmio, ECAM + (1 << 15) + 0x100, data, 4, false));
	CHECK_EQ(get_le32(data), 0);
	CHECK(io_bus_dispatch(&mmio, ECAM + (5 << 15), data, 4, false));
	CHECK_EQ(get_le32(data), 0xffffffff);
	/* A dword access may not straddle two registers. */
	CHECK(io_bus_dispatch(&mmio, ECAM + (1 << 15) + 2, data, 4, false));
	CHECK_EQ(get_le32(data), 0xffffffff);
	teardown();
}

static void test_disabled_config_address(void)
{
	uint8_t addr[4] = { 0 }, data[4];

	setup();
	x86_pci_config_address_access(&ports, 0, addr, 4, true);
	x86_pci_config_data_access(&ports, 0, data, 4, false);
	CHECK_EQ(get_le32(data), 0xffffffff);
	/* Byte accesses near 0xCF8 are not CONFIG_ADDRESS. */
	data[0] = 0x12;
	x86_pci_config_address_access(&ports, 1, data, 1, true);
	x86_pci_config_address_access(&ports, 0, data, 4, false);
	CHECK_EQ(get_le32(data), 0);
	teardown();
}

/* Only bus 0 exists: other buses read as all ones and take no writes,
 * even where bus 0 has a device in the same slot. */
static void test_other_buses(void)
{
	setup();
	CHECK_EQ(cf8_read_bus(1, 1, 0), 0xffffffff);
	CHECK_EQ(cf8_read_bus(255, 0, 0), 0xffffffff);
	cf8_write32_bus(1, 1, 0x3c, 0x5a);
	CHECK_EQ(cf8_read(1, 0, 0x3c, 1), 0);
	cf8_write32_bus(0, 1, 0x3c, 0x5a);
	CHECK_EQ(cf8_read(1, 0, 0x3c, 1), 0x5a);
	teardown();
}

/* Slot 0 is the host bridge: 31 devices fit, the 32nd is refused. */
static void test_out_of_slots(void)
{
	static struct pci_device more[PCI_MAX_SLOTS];
	unsigned i;

	setup();
	for (i = 0; i < PCI_MAX_SLOTS - 2; i++) {
		pci_device_init(&more[i], "more", 0x1af4, 0x1042, 0x018000, 1,
				0x1af4, 0x1100);
		CHECK_EQ(pci_bus_add(&bus, &more[i]), (int)i + 2);
	}
	pci_device_init(&more[i], "one too many", 0x1af4, 0x1042, 0x018000,
			1, 0x1af4, 0x1100);
	CHECK_EQ(pci_bus_add(&bus, &more[i]), -ENOSPC);
	CHECK_EQ(cf8_read(31, 0, 0, 4), 0x10421af4);
	teardown();
}

/* A BAR that does not fit what is left of the window is refused. */
static void test_full_window(void)
{
	static struct pci_device big, small;

	setup();
	pci_device_init(&big, "big", 0x1af4, 0x1042, 0x018000, 1, 0x1af4,
			0x1100);
	pci_device_set_bar(&big, 0, 0x100000, bar_handler, NULL);
	CHECK_EQ(pci_bus_add(&bus, &big), -ENOSPC);
	pci_device_init(&small, "small", 0x1af4, 0x1042, 0x018000, 1, 0x1af4,
			0x1100);
	pci_device_set_bar(&small, 0, 0x1000, bar_handler, NULL);
	CHECK_EQ(pci_bus_add(&bus, &small), 2);
	CHECK_EQ(small.bars[0].addr, WINDOW + 0x5000);
	teardown();
}

static uint8_t msix_seen[12];
static uint64_t msix_seen_off;

static void msix_bar(void *opaque, uint64_t off, uint8_t *data,
		     uint32_t len, bool is_write)
{
	CHECK(is_write);
	CHECK_EQ(len, sizeof(msix_seen));
	msix_seen_off = off;
	memcpy(msix_seen, data, sizeof(msix_seen));
}

/* Firmware's MSI-X helpers: the table found through the capability
 * list, a message written through the table's BAR, and tables that are
 * not there (no capability, a BAR index past the six, an entry outside
 * the BAR, a capability list that loops) refused. */
static void test_msix_firmware(void)
{
	static struct pci_device fw;
	uint8_t vndr[4] = { PCI_CAP_ID_VNDR }, msix[12] = { PCI_CAP_ID_MSIX };
	uint8_t cap;

	pci_device_init(&fw, "fw", 0x1af4, 0x1042, 0x018000, 1, 0x1af4,
			0x1100);
	CHECK_EQ(pci_msix_table_size(&fw), 0);
	CHECK_EQ(pci_msix_write_message(&fw, 0, 1, 1), -EINVAL);
	pci_device_set_bar(&fw, 2, 0x1000, msix_bar, NULL);
	CHECK(pci_device_add_cap(&fw, vndr, sizeof(vndr)));
	put_le16(msix + 2, 3);			/* 4 entries */
	put_le32(msix + 4, 0x100 | 2);		/* at 0x100 of BAR2 */
	cap = pci_device_add_cap(&fw, msix, sizeof(msix));
	CHECK(cap);
	CHECK_EQ(pci_msix_table_size(&fw), 4);
	CHECK_EQ(pci_msix_write_message(&fw, 2, 0x40000000000ULL, 0x1062), 0);
	CHECK_EQ(msix_seen_off, 0x100 + 2 * PCI_MSIX_ENTRY_SIZE);
	CHECK_EQ(get_le64(msix_seen), 0x40000000000ULL);
	CHECK_EQ(get_le32(msix_seen + 8), 0x1062);
	CHECK_EQ(pci_msix_write_message(&fw, 4, 1, 1), -EINVAL);
	put_le32(fw.cfg + cap + 4, 0x100 | 7);
	CHECK_EQ(pci_msix_write_message(&fw, 0, 1, 1), -EINVAL);
	put_le32(fw.cfg + cap + 4, 0x100 | 0);	/* BAR0: none */
	CHECK_EQ(pci_msix_write_message(&fw, 0, 1, 1), -EINVAL);
	put_le32(fw.cfg + cap + 4, 0xff8 | 2);	/* entry 0 past the BAR */
	CHECK_EQ(pci_msix_write_message(&fw, 0, 1, 1), -EINVAL);
	fw.cfg[PCI_CAP_START + 1] = PCI_CAP_START;	/* a loop */
	CHECK_EQ(pci_msix_table_size(&fw), 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_ids_and_absent_functions),
		UNIT_TEST(test_bars),
		UNIT_TEST(test_capabilities),
		UNIT_TEST(test_ecam),
		UNIT_TEST(test_disabled_config_address),
		UNIT_TEST(test_other_buses),
		UNIT_TEST(test_out_of_slots),
		UNIT_TEST(test_full_window),
		UNIT_TEST(test_msix_firmware),
	};

	return UNIT_RUN(tests);
}
