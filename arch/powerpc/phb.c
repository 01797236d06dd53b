/* RTAS's PCI configuration accesses, onto core/pci.c. */
#include "arch/powerpc/phb.h"

#include "arch/powerpc/layout.h"
#include "arch/powerpc/rtas.h"
#include "core/pci.h"
#include "core/vm.h"

int phb_cfg_access(struct vm *vm, uint64_t buid, uint32_t addr,
		   uint32_t size, uint32_t *value, bool is_write)
{
	uint32_t bus = (addr >> 16) & 0xff, devfn = (addr >> 8) & 0xff;
	uint32_t reg = (addr & 0xff) | ((addr >> 28) & 0xf) << 8;
	uint8_t data[4] = { 0 };
	uint32_t i;

	if (buid != PPC_PHB_BUID || (size != 1 && size != 2 && size != 4) ||
	    reg % size)
		return RTAS_PARAM_ERROR;
	if (bus) {
		/* Nothing behind bus 0. */
		if (!is_write)
			*value = size == 4 ? ~0u : (1u << (8 * size)) - 1;
		return RTAS_SUCCESS;
	}
	for (i = 0; i < size && is_write; i++)
		data[i] = (uint8_t)(*value >> (8 * i));
	pci_cfg_access(&vm->pci, devfn >> 3, devfn & 7, reg, data, size,
		       is_write);
	if (!is_write)
		for (*value = 0, i = 0; i < size; i++)
			*value |= (uint32_t)data[i] << (8 * i);
	return RTAS_SUCCESS;
}
