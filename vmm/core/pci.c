/* PCI bus 0: configuration space and BAR placement (see pci.h). */
#include "core/pci.h"

#include <errno.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"

/* An Intel host bridge ID that guests know needs no driver. */
#define HOST_BRIDGE_VENDOR	0x8086
#define HOST_BRIDGE_DEVICE	0x29c0
#define CLASS_HOST_BRIDGE	0x060000

void pci_device_set_wmask(struct pci_device *dev, unsigned reg, unsigned len,
			  uint8_t mask)
{
	if (reg < PCI_CFG_SIZE && len <= PCI_CFG_SIZE - reg)
		memset(dev->wmask + reg, mask, len);
}

void pci_device_init(struct pci_device *dev, const char *name,
		     uint16_t vendor, uint16_t device, uint32_t class_code,
		     uint8_t revision, uint16_t subsys_vendor,
		     uint16_t subsys)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = name;
	put_le16(dev->cfg + PCI_VENDOR_ID, vendor);
	put_le16(dev->cfg + PCI_DEVICE_ID, device);
	dev->cfg[PCI_REVISION_ID] = revision;
	dev->cfg[PCI_CLASS_PROG] = class_code;
	put_le16(dev->cfg + PCI_CLASS_PROG + 1, class_code >> 8);
	put_le16(dev->cfg + PCI_SUBSYSTEM_VENDOR_ID, subsys_vendor);
	put_le16(dev->cfg + PCI_SUBSYSTEM_ID, subsys);
	dev->cap_end = PCI_CAP_START;
	/* Memory space, bus master and INTx disable are the guest's; there
	 * are no I/O BARs. */
	put_le16(dev->wmask + PCI_COMMAND, PCI_COMMAND_MEMORY |
	      PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE | 0x0001);
	dev->wmask[PCI_INTERRUPT_LINE] = 0xff;
}

void pci_device_set_bar(struct pci_device *dev, unsigned bar, uint64_t size,
			io_handler_fn handler, void *opaque)
{
	dev->bars[bar].size = size;
	dev->bars[bar].handler = handler;
	dev->bars[bar].opaque = opaque;
	/* Sizing: the guest writes all ones and reads back ~(size - 1) with
	 * the low four type bits (32-bit memory, not prefetchable) zero. */
	put_le32(dev->wmask + PCI_BAR0 + 4 * bar, ~(uint32_t)(size - 1));
}

uint8_t pci_device_add_cap(struct pci_device *dev, const void *cap,
			   uint8_t len)
{
	uint8_t off = ALIGN_UP(dev->cap_end, 4);

	if (len < 2 || off < PCI_CAP_START || PCI_CFG_SIZE - off < len)
		return 0;
	memcpy(dev->cfg + off, cap, len);
	dev->cfg[off + 1] = 0;
	if (dev->cap_last)
		dev->cfg[dev->cap_last + 1] = off;
	else
		dev->cfg[PCI_CAPABILITY_LIST] = off;
	put_le16(dev->cfg + PCI_STATUS,
	      get_le16(dev->cfg + PCI_STATUS) | PCI_STATUS_CAP_LIST);
	dev->cap_last = off;
	dev->cap_end = off + len;
	return off;
}

/* Offset of the function's capability with this ID, 0 if none. Each hop
 * moves forward (pci_device_add_cap links them in order), so the walk
 * ends. */
static uint8_t find_cap(const struct pci_device *dev, uint8_t id)
{
	uint8_t off = dev->cfg[PCI_CAPABILITY_LIST];

	while (off >= PCI_CAP_START && off <= PCI_CFG_SIZE - 2) {
		if (dev->cfg[off] == id)
			return off;
		if (dev->cfg[off + 1] <= off)
			break;
		off = dev->cfg[off + 1];
	}
	return 0;
}

/* The MSI-X capability's words after its ID: message control, then
 * table offset | BAR. */
#define MSIX_CTRL		2
#define MSIX_TABLE		4
#define MSIX_CTRL_SIZE_MASK	0x07ff
#define MSIX_BIR_MASK		0x7

unsigned pci_msix_table_size(const struct pci_device *dev)
{
	uint8_t cap = find_cap(dev, PCI_CAP_ID_MSIX);

	return cap ? (get_le16(dev->cfg + cap + MSIX_CTRL) &
		      MSIX_CTRL_SIZE_MASK) + 1 : 0;
}

int pci_msix_write_message(struct pci_device *dev, unsigned i, uint64_t addr,
			   uint32_t data)
{
	uint8_t cap = find_cap(dev, PCI_CAP_ID_MSIX);
	const struct pci_bar *bar;
	uint8_t entry[12];
	uint64_t off;
	uint32_t table;

	if (!cap || i >= pci_msix_table_size(dev))
		return -EINVAL;
	table = get_le32(dev->cfg + cap + MSIX_TABLE);
	if ((table & MSIX_BIR_MASK) >= PCI_NUM_BARS)
		return -EINVAL;
	bar = &dev->bars[table & MSIX_BIR_MASK];
	off = (table & ~MSIX_BIR_MASK) + (uint64_t)i * PCI_MSIX_ENTRY_SIZE;
	if (!bar->handler || off + sizeof(entry) > bar->size)
		return -EINVAL;
	put_le64(entry, addr);
	put_le32(entry + 8, data);
	bar->handler(bar->opaque, off, entry, sizeof(entry), true);
	return 0;
}

int pci_bus_init(struct pci_bus *bus, struct io_bus *mmio,
		 uint64_t mmio_base, uint64_t mmio_size, uint64_t ecam_base)
{
	memset(bus, 0, sizeof(*bus));
	pthread_mutex_init(&bus->lock, NULL);
	bus->mmio = mmio;
	bus->mmio_next = mmio_base;
	bus->mmio_end = mmio_base + mmio_size;
	bus->ecam_base = ecam_base;
	pci_device_init(&bus->host_bridge, "host bridge", HOST_BRIDGE_VENDOR,
			HOST_BRIDGE_DEVICE, CLASS_HOST_BRIDGE, 0, 0, 0);
	bus->slots[0] = &bus->host_bridge;
	if (!ecam_base)
		return 0;
	return io_bus_register(mmio, ecam_base, PCI_ECAM_BUS_SIZE,
			       pci_ecam_access, bus);
}

void pci_bus_free(struct pci_bus *bus)
{
	pthread_mutex_destroy(&bus->lock);
}

int pci_bus_add(struct pci_bus *bus, struct pci_device *dev)
{
	unsigned slot, i;
	int err;

	for (slot = 0; slot < PCI_MAX_SLOTS && bus->slots[slot]; slot++)
		;
	if (slot == PCI_MAX_SLOTS) {
		pr_err("%s: no free PCI slot (at most %d devices)", dev->name,
		       PCI_MAX_SLOTS - 1);
		return -ENOSPC;
	}
	for (i = 0; i < PCI_NUM_BARS; i++) {
		struct pci_bar *bar = &dev->bars[i];
		uint64_t addr = ALIGN_UP(bus->mmio_next, bar->size);

		if (!bar->size)
			continue;
		if (addr + bar->size > bus->mmio_end) {
			pr_err("%s: the PCI MMIO window is full", dev->name);
			return -ENOSPC;
		}
		err = io_bus_register(bus->mmio, addr, bar->size, bar->handler,
				      bar->opaque);
		if (err) {
			pr_err("%s: cannot place BAR%u at 0x%llx: %s", dev->name,
			       i, (unsigned long long)addr, strerror(-err));
			return err;
		}
		bar->addr = addr;
		put_le32(dev->cfg + PCI_BAR0 + 4 * i, addr);
		bus->mmio_next = addr + bar->size;
	}
	bus->slots[slot] = dev;
	return slot;
}

/* A guest that moves a BAR would lose the device; say so once. */
static void check_bars(struct pci_device *dev)
{
	unsigned i;

	if (dev->warned_bar_moved ||
	    !(get_le16(dev->cfg + PCI_COMMAND) & PCI_COMMAND_MEMORY))
		return;
	for (i = 0; i < PCI_NUM_BARS; i++) {
		uint32_t reg = get_le32(dev->cfg + PCI_BAR0 + 4 * i);

		if (dev->bars[i].size && reg != (uint32_t)dev->bars[i].addr) {
			pr_warn("%s: guest moved BAR%u to 0x%x; thpvm keeps it "
				"at 0x%llx", dev->name, i, reg,
				(unsigned long long)dev->bars[i].addr);
			dev->warned_bar_moved = true;
			return;
		}
	}
}

static void device_access(struct pci_device *dev, uint32_t reg,
			  uint8_t *data, uint32_t len, bool is_write)
{
	uint32_t i;

	if (!dev || reg >= PCI_CFG_SIZE) {
		/* No function there reads as all ones; extended space of a
		 * present one as zeros (no extended capabilities). */
		if (!is_write)
			memset(data, dev ? 0 : 0xff, len);
		return;
	}
	if (!is_write) {
		memcpy(data, dev->cfg + reg, len);
	} else {
		for (i = 0; i < len; i++)
			dev->cfg[reg + i] = (dev->cfg[reg + i] &
					     ~dev->wmask[reg + i]) |
					    (data[i] & dev->wmask[reg + i]);
		if (reg <= PCI_COMMAND + 1 && reg + len > PCI_COMMAND)
			check_bars(dev);
	}
	if (dev->cfg_hook)
		dev->cfg_hook(dev, reg, data, len, is_write);
}

void pci_cfg_access(struct pci_bus *bus, unsigned slot, unsigned fn,
		    uint32_t reg, uint8_t *data, uint32_t len, bool is_write)
{
	struct pci_device *dev = NULL;

	if (slot < PCI_MAX_SLOTS && fn == 0)
		dev = bus->slots[slot];
	pthread_mutex_lock(&bus->lock);
	device_access(dev, reg, data, len, is_write);
	pthread_mutex_unlock(&bus->lock);
}

void pci_ecam_access(void *opaque, uint64_t offset, uint8_t *data,
		     uint32_t len, bool is_write)
{
	struct pci_bus *bus = opaque;
	uint32_t reg = offset & (PCI_ECAM_FN_SIZE - 1);

	if ((reg & 3) + len > 4) {
		if (!is_write)
			memset(data, 0xff, len);
		return;
	}
	pci_cfg_access(bus, offset >> 15, (offset >> 12) & 7, reg, data, len,
		       is_write);
}
