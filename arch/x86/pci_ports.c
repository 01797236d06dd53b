/* PCI configuration mechanism #1 (see pci_ports.h). */
#include "arch/x86/pci_ports.h"

#include <string.h>

#include "lib/util.h"

#define ADDRESS_ENABLE	0x80000000u
#define ADDRESS_MASK	0x80fffffcu	/* enable, bus, slot, fn, register */
#define ADDRESS_BUS(a)	(((a) >> 16) & 0xff)
#define ADDRESS_SLOT(a)	(((a) >> 11) & 0x1f)
#define ADDRESS_FN(a)	(((a) >> 8) & 7)
#define ADDRESS_REG(a)	((a) & 0xfc)

void x86_pci_ports_init(struct x86_pci_ports *p, struct pci_bus *bus)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->bus = bus;
}

void x86_pci_ports_destroy(struct x86_pci_ports *p)
{
	pthread_mutex_destroy(&p->lock);
}

int x86_pci_ports_register(struct x86_pci_ports *p, struct io_bus *pio)
{
	return io_bus_register(pio, X86_PCI_CONFIG_ADDRESS_PORT, 4,
			       x86_pci_config_address_access, p) ?:
	       io_bus_register(pio, X86_PCI_CONFIG_DATA_PORT, 4,
			       x86_pci_config_data_access, p);
}

void x86_pci_config_address_access(void *opaque, uint64_t offset,
				   uint8_t *data, uint32_t len, bool is_write)
{
	struct x86_pci_ports *p = opaque;

	/* Only a dword access at 0xCF8 is CONFIG_ADDRESS; the bytes around
	 * it are other chipset registers we do not have. */
	if (offset != 0 || len != 4) {
		if (!is_write)
			memset(data, 0xff, len);
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (is_write)
		p->address = get_le32(data) & ADDRESS_MASK;
	else
		put_le32(data, p->address);
	pthread_mutex_unlock(&p->lock);
}

void x86_pci_config_data_access(void *opaque, uint64_t offset, uint8_t *data,
				uint32_t len, bool is_write)
{
	struct x86_pci_ports *p = opaque;
	uint32_t a;

	pthread_mutex_lock(&p->lock);
	a = p->address;
	/* Bus 0 only; an access may not run past the dword. */
	if ((a & ADDRESS_ENABLE) && ADDRESS_BUS(a) == 0 && offset + len <= 4)
		pci_cfg_access(p->bus, ADDRESS_SLOT(a), ADDRESS_FN(a),
			       ADDRESS_REG(a) + offset, data, len, is_write);
	else if (!is_write)
		memset(data, 0xff, len);
	pthread_mutex_unlock(&p->lock);
}
