/* The in-kernel XICS interrupt controller (KVM_DEV_TYPE_XICS): KVM
 * serves the presentation hypercalls (H_XIRR, H_EOI, H_CPPR, H_IPI...)
 * and, through the tokens defined here, the source RTAS calls
 * (ibm,set-xive and friends), so interrupts never leave the kernel.
 * thpvm's wired lines are XICS sources from XICS_IRQ_BASE, and after
 * them come the MSI sources, a block for each PCI slot, which RTAS's
 * ibm,change-msi hands to the function there. */
#ifndef THPVM_PPC_XICS_H
#define THPVM_PPC_XICS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/powerpc/rtas.h"

struct vm;
struct vcpu;

/* Source numbers: 0 is none and 2 the IPI; PAPR platforms start at
 * 4096 for devices. */
#define XICS_IRQ_BASE	0x1000
#define XICS_NR_LINES	64
#define XICS_MSI_BASE	(XICS_IRQ_BASE + XICS_NR_LINES)
#define XICS_MSIS_PER_FN 16	/* a power of two, as Linux asks */
#define XICS_NR_MSIS	(32 * XICS_MSIS_PER_FN)	/* PCI_MAX_SLOTS blocks */

/* The source calls KVM serves: their names and thpvm's tokens for them,
 * for the device tree's /rtas; ends with { NULL, 0 }. */
extern const struct rtas_token xics_rtas_tokens[];

/* Creates the controller, its sources (all masked; the lines
 * level-triggered, the MSIs edge-triggered) and RTAS tokens; returns its
 * fd or -errno after saying why. */
int xics_create(struct vm *vm);
/* Puts sources [first, first + n) back in their start state: masked,
 * nothing pending. */
int xics_reset_sources(int xics_fd, unsigned first, unsigned n, bool level);
/* Connects a vCPU to it as interrupt server number vcpu->id. */
int xics_connect_vcpu(int xics_fd, struct vcpu *vcpu);

#endif
