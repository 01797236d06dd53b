/* The in-kernel interrupt controller: a GICv3 (with an ITS for MSIs when
 * KVM has one) or, on hosts without GICv3 support, a GICv2. Interrupt
 * lines (core/irq_lines.h) are SPIs: line n is INTID 32 + n. */
#ifndef THPVM_ARM64_GIC_H
#define THPVM_ARM64_GIC_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

/* SPIs the platform has: the UART's, then the devices'. */
#define GIC_NR_SPIS		64
#define GIC_SPI_BASE		32
/* Private interrupts (PPIs) as INTIDs. */
#define GIC_PPI_BASE		16
#define GIC_PPI_PMU		23
#define GIC_PPI_HYP_TIMER	26
#define GIC_PPI_VIRT_TIMER	27
#define GIC_PPI_SEC_TIMER	29
#define GIC_PPI_PHYS_TIMER	30

enum gic_version { GIC_V2 = 2, GIC_V3 = 3 };

/* GICv2's CPU interface numbers only 8 CPUs. */
#define GICV2_MAX_VCPUS 8

struct gic {
	enum gic_version version;
	int fd;			/* the KVM device */
	int its_fd;		/* GICv3 ITS, or -1 */
};

/* The most vCPUs the GIC's layout has room for. */
unsigned gic_max_vcpus(enum gic_version version);
/* Creates the GIC (v3, else v2) and places it in the memory map. */
int gic_create(struct gic *gic, struct vm *vm);
/* Once every vCPU exists: sizes and initialises it. */
int gic_finalize(struct gic *gic, struct vm *vm);
void gic_destroy(struct gic *gic);

#endif
