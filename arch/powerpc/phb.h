/* The sPAPR PCI host bridge: bus 0 of core/pci.c, whose configuration
 * space a PAPR guest reaches through RTAS (ibm,read-pci-config and
 * friends, by bus unit ID and configuration address) rather than ECAM,
 * and whose devices it finds in the device tree. */
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

#endif
