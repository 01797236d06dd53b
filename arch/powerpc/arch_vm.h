/* The powerpc state of a VM (vm->arch), made by arch_vm_init. */
#ifndef THPVM_PPC_ARCH_VM_H
#define THPVM_PPC_ARCH_VM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/powerpc/vty.h"
#include "core/pci.h"

struct arch_vm {
	struct spapr_vty vty;
	int xics_fd;			/* the interrupt controller */
	uint32_t timebase_hz;		/* the host's, as the guest sees it */
	uint32_t dcache_block, icache_block;	/* bytes */
	bool ail_mode_3;		/* KVM lets the guest ask for AIL 3 */
	/* The host CPU's speculation characteristics, as KVM reports them
	 * for H_GET_CPU_CHARACTERISTICS; all-zero masks: unknown. */
	struct kvm_ppc_cpu_char cpu_char;
	/* MSIs ibm,change-msi gave each PCI slot's function (its first
	 * that many of the slot's XICS MSI sources). */
	pthread_mutex_t msi_lock;
	uint8_t msis[PCI_MAX_SLOTS];
};

#endif
