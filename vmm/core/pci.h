/* A PCI bus 0 with a host bridge: configuration space through ECAM (or
 * an arch's own way in, which calls pci_cfg_access), and memory BARs that
 * thpvm places itself in the arch's MMIO window. BARs stay where thpvm put them: a guest
 * may size them (write all ones, read back), but a guest that moves one is
 * warned once and keeps reaching the device at its first address (Linux
 * keeps firmware-assigned BARs). Functions other than 0 and buses other
 * than 0 are empty. */
#ifndef THPVM_PCI_H
#define THPVM_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/io_bus.h"

#define PCI_CFG_SIZE		256
#define PCI_ECAM_FN_SIZE	4096
#define PCI_ECAM_BUS_SIZE	(32 * 8 * PCI_ECAM_FN_SIZE)
#define PCI_MAX_SLOTS		32
#define PCI_NUM_BARS		6

/* Configuration space registers. */
#define PCI_VENDOR_ID		0x00
#define PCI_DEVICE_ID		0x02
#define PCI_COMMAND		0x04
#define PCI_STATUS		0x06
#define PCI_REVISION_ID		0x08
#define PCI_CLASS_PROG		0x09
#define PCI_HEADER_TYPE		0x0e
#define PCI_BAR0		0x10
#define PCI_SUBSYSTEM_VENDOR_ID	0x2c
#define PCI_SUBSYSTEM_ID	0x2e
#define PCI_CAPABILITY_LIST	0x34
#define PCI_INTERRUPT_LINE	0x3c
#define PCI_INTERRUPT_PIN	0x3d
#define PCI_INTERRUPT_PIN_A	1
#define PCI_CAP_START		0x40

#define PCI_COMMAND_MEMORY	0x0002
#define PCI_COMMAND_MASTER	0x0004
#define PCI_COMMAND_INTX_DISABLE 0x0400
#define PCI_STATUS_CAP_LIST	0x0010

#define PCI_CAP_ID_MSIX		0x11
#define PCI_MSIX_ENTRY_SIZE	16
#define PCI_CAP_ID_VNDR		0x09

struct pci_device;

/* Called with the bus lock held after the generic handling of a
 * configuration access: for a write, once cfg[] holds the new bytes; for a
 * read, with data already filled from cfg[] (a device may replace it). */
typedef void (*pci_cfg_hook_fn)(struct pci_device *dev, uint32_t reg,
				uint8_t *data, uint32_t len, bool is_write);

struct pci_bar {
	uint64_t addr;		/* where the guest reaches it; 0 if absent */
	uint64_t size;		/* a power of two */
	io_handler_fn handler;
	void *opaque;
};

struct pci_device {
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE];	/* bits the guest may change */
	struct pci_bar bars[PCI_NUM_BARS];
	uint8_t cap_end;		/* where the next capability goes */
	uint8_t cap_last;		/* offset of the last one, 0 if none */
	pci_cfg_hook_fn cfg_hook;
	void *opaque;
	const char *name;
	bool warned_bar_moved;
};

struct pci_bus {
	pthread_mutex_t lock;		/* configuration accesses */
	struct pci_device *slots[PCI_MAX_SLOTS];
	struct pci_device host_bridge;
	struct io_bus *mmio;
	uint64_t mmio_next, mmio_end;	/* BAR window still free */
	uint64_t ecam_base;		/* 0: no ECAM */
};

/* Header of a type 0 function; class_code is base << 16 | sub << 8 |
 * prog-if. */
void pci_device_init(struct pci_device *dev, const char *name,
		     uint16_t vendor, uint16_t device, uint32_t class_code,
		     uint8_t revision, uint16_t subsys_vendor,
		     uint16_t subsys);
/* A 32-bit, non-prefetchable memory BAR of size bytes (a power of two,
 * at least 16); placed by pci_bus_add(). */
void pci_device_set_bar(struct pci_device *dev, unsigned bar, uint64_t size,
			io_handler_fn handler, void *opaque);
/* Appends a capability (cap[0] = ID; cap[1], the next pointer, is filled
 * in) and returns its offset in configuration space, or 0 if it does not
 * fit. */
uint8_t pci_device_add_cap(struct pci_device *dev, const void *cap,
			   uint8_t len);
void pci_device_set_wmask(struct pci_device *dev, unsigned reg, unsigned len,
			  uint8_t mask);

/* Firmware's side of MSI-X, for platforms whose firmware, not the guest,
 * chooses the messages (sPAPR's ibm,change-msi). The number of entries
 * in the function's MSI-X table, 0 if it has no MSI-X capability: */
unsigned pci_msix_table_size(const struct pci_device *dev);
/* Writes message address addr and data into table entry i, through the
 * BAR as the guest would (the vector control word is left as it is).
 * -EINVAL without such an entry. */
int pci_msix_write_message(struct pci_device *dev, unsigned i, uint64_t addr,
			   uint32_t data);

/* The host bridge goes in slot 0; BARs are taken from
 * [mmio_base, mmio_base + mmio_size); ECAM for bus 0 is registered at
 * ecam_base unless it is 0. */
int pci_bus_init(struct pci_bus *bus, struct io_bus *mmio,
		 uint64_t mmio_base, uint64_t mmio_size, uint64_t ecam_base);
/* Places dev in the next free slot and its BARs in the window, and
 * registers the BARs on the MMIO bus. Returns the slot, or -errno after
 * saying why. */
int pci_bus_add(struct pci_bus *bus, struct pci_device *dev);
void pci_bus_free(struct pci_bus *bus);

/* One configuration access, for ECAM below and an arch's own way in.
 * reg + len must not cross a 4-byte boundary. */
void pci_cfg_access(struct pci_bus *bus, unsigned slot, unsigned fn,
		    uint32_t reg, uint8_t *data, uint32_t len, bool is_write);

/* The io_bus handler of ECAM (PCI_ECAM_BUS_SIZE bytes), opaque = the
 * bus. */
void pci_ecam_access(void *opaque, uint64_t offset, uint8_t *data,
		     uint32_t len, bool is_write);

#endif
