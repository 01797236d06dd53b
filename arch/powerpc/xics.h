/* The in-kernel XICS interrupt controller (KVM_DEV_TYPE_XICS): KVM
 * serves the presentation hypercalls (H_XIRR, H_EOI, H_CPPR, H_IPI...)
 * and, through the tokens defined here, the source RTAS calls
 * (ibm,set-xive and friends), so interrupts never leave the kernel.
 * thpvm's wired lines are XICS sources from XICS_IRQ_BASE. */
#ifndef THPVM_PPC_XICS_H
#define THPVM_PPC_XICS_H

#include <stdint.h>

#include "arch/powerpc/rtas.h"

struct vm;
struct vcpu;

/* Source numbers: 0 is none and 2 the IPI; PAPR platforms start at
 * 4096 for devices. */
#define XICS_IRQ_BASE	0x1000
#define XICS_NR_LINES	64

/* The source calls KVM serves: their names and thpvm's tokens for them,
 * for the device tree's /rtas; ends with { NULL, 0 }. */
extern const struct rtas_token xics_rtas_tokens[];

/* Creates the controller, its sources (masked, level-triggered) and
 * RTAS tokens; returns its fd or -errno after saying why. */
int xics_create(struct vm *vm);
/* Connects a vCPU to it as interrupt server number vcpu->id. */
int xics_connect_vcpu(int xics_fd, struct vcpu *vcpu);

#endif
