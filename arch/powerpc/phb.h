/* The sPAPR PCI host bridge: bus 0 of core/pci.c, whose configuration
 * space a PAPR guest reaches through RTAS (ibm,read-pci-config and
 * friends, by bus unit ID and configuration address) rather than ECAM,
 * and whose devices it finds in the device tree. MSIs are firmware's
 * too: the guest asks RTAS for them (ibm,change-msi), which programs the
 * function's MSI-X table with messages naming XICS sources, and asks
 * which source each vector got (ibm,query-interrupt-source-number). */
#ifndef THPVM_PPC_PHB_H
#define THPVM_PPC_PHB_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

/* A configuration access of size bytes (1, 2 or 4, aligned) at the RTAS
 * configuration address addr (bus << 16 | devfn << 8 | register, the
 * register's bits 8-11 in bits 28-31) of the bridge buid. Returns an
 * RTAS status: RTAS_SUCCESS, or RTAS_PARAM_ERROR for a bad bridge, size
 * or alignment (nothing accessed). A read of no function gives all ones. */
int phb_cfg_access(struct vm *vm, uint64_t buid, uint32_t addr,
		   uint32_t size, uint32_t *value, bool is_write);

/* ibm,change-msi's functions (PAPR): MSI or else MSI-X, MSI, MSI-X, and
 * 32-bit MSI. thpvm's functions have MSI-X only. */
#define PHB_CHANGE_FN		1
#define PHB_CHANGE_MSI_FN	3
#define PHB_CHANGE_MSIX_FN	4
#define PHB_CHANGE_32MSI_FN	5

/* ibm,change-msi on the function at configuration address addr: gives
 * it nr MSI-X vectors (its previous ones, if any, are gone; 0 releases
 * them all) and sets *granted to nr. If nr is more than it can have,
 * nothing changes and *granted is its most. Returns an RTAS status;
 * RTAS_PARAM_ERROR for no such function, a function without MSI-X, or
 * an unknown or MSI (not MSI-X) function. */
int phb_change_msi(struct vm *vm, uint64_t buid, uint32_t addr,
		   uint32_t func, uint32_t nr, uint32_t *granted);
/* ibm,query-interrupt-source-number: the XICS source of the function's
 * vector i; RTAS_PARAM_ERROR unless change-msi gave it that vector. */
int phb_query_msi(struct vm *vm, uint64_t buid, uint32_t addr, uint32_t i,
		  uint32_t *source);
/* The XICS source an MSI message names (the messages change-msi
 * writes), or -1: the VM's irq.msi_source. */
int phb_msi_source(uint64_t addr, uint32_t data);

#endif
