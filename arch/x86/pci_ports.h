/* PCI configuration mechanism #1, the x86 way into configuration space:
 * CONFIG_ADDRESS (a dword at port 0xCF8) selects bus, slot, function and
 * register, and CONFIG_DATA (ports 0xCFC-0xCFF) reads or writes it on
 * the core's PCI bus. Only bus 0 exists; everything else reads as all
 * ones. (ECAM, the other way in, is the core's.) */
#ifndef THPVM_X86_PCI_PORTS_H
#define THPVM_X86_PCI_PORTS_H

#include <pthread.h>
#include <stdint.h>

#include "core/io_bus.h"
#include "core/pci.h"

#define X86_PCI_CONFIG_ADDRESS_PORT 0xcf8
#define X86_PCI_CONFIG_DATA_PORT 0xcfc

struct x86_pci_ports {
	pthread_mutex_t lock;		/* address, and each data access */
	struct pci_bus *bus;
	uint32_t address;		/* CONFIG_ADDRESS */
};

void x86_pci_ports_init(struct x86_pci_ports *p, struct pci_bus *bus);
void x86_pci_ports_destroy(struct x86_pci_ports *p);
/* Puts both registers on the port bus. */
int x86_pci_ports_register(struct x86_pci_ports *p, struct io_bus *pio);

/* io_bus handlers, opaque = p: CONFIG_ADDRESS (4 ports), CONFIG_DATA
 * (4 ports). */
void x86_pci_config_address_access(void *p, uint64_t offset, uint8_t *data,
				   uint32_t len, bool is_write);
void x86_pci_config_data_access(void *p, uint64_t offset, uint8_t *data,
				uint32_t len, bool is_write);

#endif
