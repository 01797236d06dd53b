/* CPUID as the guest sees it: what KVM supports, adjusted per vCPU. */
#ifndef THPVM_X86_CPUID_H
#define THPVM_X86_CPUID_H

#include <linux/kvm.h>

/* KVM_GET_SUPPORTED_CPUID into a malloc'd table, with the TSC-deadline
 * timer where KVM emulates it. */
int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out);
/* Rewrites the table for vCPU apic_id of nr_vcpus: APIC IDs, topology
 * (one package, one thread per core), the hypervisor bit, KVM hints. */
void cpuid_filter(struct kvm_cpuid2 *cpuid, unsigned apic_id,
		  unsigned nr_vcpus);

#endif
