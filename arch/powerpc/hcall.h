/* The PAPR hypercalls KVM leaves to user space (KVM_EXIT_PAPR_HCALL):
 * the console, RTAS, the radix MMU's process table, H_SET_MODE, the
 * CPU's speculation characteristics and random numbers.
 * Anything else gets H_FUNCTION, as PAPR says for a call the platform
 * does not offer, with a rate-limited warning unless Linux is known to
 * probe it. */
#ifndef THPVM_PPC_HCALL_H
#define THPVM_PPC_HCALL_H

#include <stdint.h>

struct vcpu;

/* PAPR return codes. */
#define H_SUCCESS		0
#define H_HARDWARE		(-1)
#define H_FUNCTION		(-2)
#define H_PARAMETER		(-4)
#define H_P2			(-55)
#define H_P3			(-56)
#define H_P4			(-57)
#define H_UNSUPPORTED_FLAG	(-256)

/* Hypercall numbers (r3). */
#define H_GET_TERM_CHAR		0x54
#define H_GET_CPU_CHARACTERISTICS 0x1c8
#define H_PUT_TERM_CHAR		0x58
#define H_RANDOM		0x300
#define H_SET_MODE		0x31c
#define H_REGISTER_PROC_TBL	0x37c
#define H_RTAS			0xf000	/* KVM's, made by the RTAS blob */
/* Not offered, but probed by Linux at every boot (it copes). */
#define H_QUERY_VAS_CAPABILITIES 0x398
#define H_GET_PERF_COUNTER_INFO	0xf080

/* Serves hypercall nr with its arguments args[0..8] (r4..r12), which it
 * may overwrite with its results (r4.. on return). Returns r3. */
int64_t spapr_hcall(struct vcpu *vcpu, uint64_t nr, uint64_t *args);

#endif
