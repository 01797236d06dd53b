/* PCI bus 0: configuration space through mechanism #1 or ECAM
 * (ecam=ADDR), enumeration, capability lists, memory BARs. */
#ifndef TG_PCI_H
#define TG_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_VENDOR_ID		0x00
#define PCI_DEVICE_ID		0x02
#define PCI_COMMAND		0x04
#define PCI_STATUS		0x06
#define PCI_CLASS_REV		0x08
#define PCI_HEADER_TYPE		0x0e
#define PCI_BAR0		0x10
#define PCI_SUBSYSTEM_ID	0x2e
#define PCI_CAP_PTR		0x34

#define PCI_CMD_IO		0x0001
#define PCI_CMD_MEM		0x0002
#define PCI_CMD_MASTER		0x0004
#define PCI_CMD_INTX_OFF	0x0400
#define PCI_STATUS_CAPS		0x0010

#define PCI_CAP_VENDOR		0x09
#define PCI_CAP_MSIX		0x11

#define PCI_MAX_FUNCS		256	/* 32 slots x 8 functions */

struct pci_func {
	uint8_t dev, fn;
	uint16_t vendor, device;
	uint32_t class;		/* class << 16 | subclass << 8 | prog-if */
};

extern struct pci_func pci_funcs[PCI_MAX_FUNCS];
extern unsigned pci_nfuncs;

void pci_scan(void);
uint8_t pci_read8(const struct pci_func *f, unsigned off);
uint16_t pci_read16(const struct pci_func *f, unsigned off);
uint32_t pci_read32(const struct pci_func *f, unsigned off);
void pci_write16(const struct pci_func *f, unsigned off, uint16_t v);
void pci_write32(const struct pci_func *f, unsigned off, uint32_t v);
unsigned pci_find_cap(const struct pci_func *f, unsigned after, uint8_t id);
uint64_t pci_bar(const struct pci_func *f, unsigned bar, uint64_t *size);

#endif
