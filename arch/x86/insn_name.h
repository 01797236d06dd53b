/* The name of an x86 instruction from its bytes, for the one line that
 * reports a vCPU KVM could not emulate: "lock cmpxchg16b" says at once
 * what "f0 48 0f c7 4d 20" makes the reader look up. Only the system,
 * atomic and state-saving instructions a kernel runs into are named. */
#ifndef THPVM_ARCH_X86_INSN_NAME_H
#define THPVM_ARCH_X86_INSN_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the name (with "lock" or "rep" where prefixed) to out and
 * returns true, or returns false for bytes it does not name. */
bool x86_insn_name(const uint8_t *insn, size_t len, char *out,
		   size_t out_len);

#endif
