/* RTAS, the firmware calls a PAPR guest makes through a small entry in
 * its memory: the entry (spapr_rtas_blob) turns the call into the
 * H_RTAS hypercall, which lands in spapr_rtas_call with the address of
 * the guest's argument block. Tokens are thpvm's own; the device tree's
 * /rtas node names them (spapr_rtas_tokens). */
#ifndef THPVM_PPC_RTAS_H
#define THPVM_PPC_RTAS_H

#include <stddef.h>
#include <stdint.h>

struct vcpu;

/* The status a call leaves in its first result. */
#define RTAS_SUCCESS		0
#define RTAS_HW_ERROR		(-1)
#define RTAS_PARAM_ERROR	(-3)

/* The entry's code (big-endian: RTAS runs big-endian) and its size. */
extern const uint8_t spapr_rtas_blob[];
extern const size_t spapr_rtas_blob_size;

struct rtas_token {
	const char *name;
	uint32_t token;
};
/* The calls thpvm implements; ends with { NULL, 0 }. */
extern const struct rtas_token spapr_rtas_tokens[];

/* Runs the call whose argument block is at guest-physical args_gpa.
 * Returns the hypercall's status: H_SUCCESS once the call ran (its own
 * status is in the block), H_PARAMETER for a block outside RAM or
 * malformed. */
int64_t spapr_rtas_call(struct vcpu *vcpu, uint64_t args_gpa);

#endif
