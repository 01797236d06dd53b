/* The device tree an arm64 guest boots with, written from the VM: its
 * RAM, vCPUs, GIC, timer, PSCI, UART and every device in the core's
 * registry. */
#ifndef THPVM_ARM64_FDT_H
#define THPVM_ARM64_FDT_H

#include <stddef.h>
#include <stdint.h>

struct vm;

struct arm64_boot_data {
	const char *cmdline;
	uint64_t initrd_start, initrd_end;	/* equal: no initrd */
};

/* A blob of at most ARM64_FDT_MAX bytes in *fdt (the caller frees it).
 * Returns 0 or -errno after saying why. */
int arm64_fdt_build(struct vm *vm, const struct arm64_boot_data *boot,
		    void **fdt, size_t *size);

#endif
