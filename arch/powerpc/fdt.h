/* The device tree a ppc64le sPAPR guest boots with: Linux's pseries
 * platform reads it in place of Open Firmware's (no client interface). */
#ifndef THPVM_PPC_FDT_H
#define THPVM_PPC_FDT_H

#include <stddef.h>
#include <stdint.h>

struct vm;

struct ppc_boot_data {
	const char *cmdline;
	uint64_t initrd_start, initrd_end;	/* equal: no initrd */
	uint64_t rtas_base, rtas_size;
};

/* Writes the tree for vm into a new buffer (*fdt, freed by the caller)
 * of *size bytes. Returns 0 or -errno after saying why. */
int ppc_fdt_build(const struct vm *vm, const struct ppc_boot_data *boot,
		  void **fdt, size_t *size);

#endif
