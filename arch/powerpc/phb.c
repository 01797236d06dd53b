/* RTAS's PCI configuration accesses and MSIs, onto core/pci.c. */
#include "arch/powerpc/phb.h"

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/rtas.h"
#include "arch/powerpc/xics.h"
#include "core/pci.h"
#include "core/vm.h"
#include "lib/util.h"

_Static_assert(XICS_NR_MSIS == PCI_MAX_SLOTS * XICS_MSIS_PER_FN,
	       "an MSI block per PCI slot");

/* An RTAS configuration address: bus << 16 | devfn << 8 | register. */
static uint32_t cfg_addr_bus(uint32_t addr)
{
	return (addr >> 16) & 0xff;
}

static uint32_t cfg_addr_devfn(uint32_t addr)
{
	return (addr >> 8) & 0xff;
}

int phb_cfg_access(struct vm *vm, uint64_t buid, uint32_t addr,
		   uint32_t size, uint32_t *value, bool is_write)
{
	uint32_t bus = cfg_addr_bus(addr), devfn = cfg_addr_devfn(addr);
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

/* The function at configuration address addr of the bridge buid, with
 * its slot, or NULL: MSIs are per function, which is bus 0's slots 1 on
 * (0 is the host bridge itself). */
static struct pci_device *msi_function(struct vm *vm, uint64_t buid,
				       uint32_t addr, unsigned *slot)
{
	uint32_t devfn = cfg_addr_devfn(addr);

	*slot = devfn >> 3;
	if (buid != PPC_PHB_BUID || cfg_addr_bus(addr) || devfn & 7 || !*slot)
		return NULL;
	return vm->pci.slots[*slot];
}

static uint32_t msi_first_source(unsigned slot)
{
	return XICS_MSI_BASE + slot * XICS_MSIS_PER_FN;
}

int phb_change_msi(struct vm *vm, uint64_t buid, uint32_t addr,
		   uint32_t func, uint32_t nr, uint32_t *granted)
{
	struct arch_vm *a = vm->arch;
	struct pci_device *dev;
	uint32_t first, i, max;
	unsigned slot;
	int err;

	dev = msi_function(vm, buid, addr, &slot);
	if (!dev)
		return RTAS_PARAM_ERROR;
	/* MSI itself may only be switched off (Linux's way of switching
	 * off both). */
	if (func != PHB_CHANGE_FN && func != PHB_CHANGE_MSIX_FN &&
	    (nr || (func != PHB_CHANGE_MSI_FN && func != PHB_CHANGE_32MSI_FN)))
		return RTAS_PARAM_ERROR;
	max = MIN(pci_msix_table_size(dev), XICS_MSIS_PER_FN);
	if (!max)
		return RTAS_PARAM_ERROR;
	if (nr > max) {
		*granted = max;
		return RTAS_SUCCESS;
	}
	first = msi_first_source(slot);
	pthread_mutex_lock(&a->msi_lock);
	/* Sources start masked for their new owner, as after a reset. */
	err = xics_reset_sources(a->xics_fd, first,
				 MAX(nr, (uint32_t)a->msis[slot]), false);
	for (i = 0; !err && i < max; i++)
		err = i < nr ? pci_msix_write_message(dev, i, PPC_MSI_ADDR,
						      first + i) :
			       pci_msix_write_message(dev, i, 0, 0);
	a->msis[slot] = err ? 0 : nr;
	pthread_mutex_unlock(&a->msi_lock);
	if (err)
		return RTAS_HW_ERROR;
	*granted = nr;
	return RTAS_SUCCESS;
}

int phb_query_msi(struct vm *vm, uint64_t buid, uint32_t addr, uint32_t i,
		  uint32_t *source)
{
	struct arch_vm *a = vm->arch;
	unsigned slot;
	int status = RTAS_PARAM_ERROR;

	if (!msi_function(vm, buid, addr, &slot))
		return RTAS_PARAM_ERROR;
	pthread_mutex_lock(&a->msi_lock);
	if (i < a->msis[slot]) {
		*source = msi_first_source(slot) + i;
		status = RTAS_SUCCESS;
	}
	pthread_mutex_unlock(&a->msi_lock);
	return status;
}

int phb_msi_source(uint64_t addr, uint32_t data)
{
	if (addr != PPC_MSI_ADDR || data < XICS_MSI_BASE ||
	    data - XICS_MSI_BASE >= XICS_NR_MSIS)
		return -1;
	return (int)data;
}
