/* The VM of `thpvm run`, for the commands that boot one from run's
 * options (thpvm sandbox). */
#ifndef THPVM_RUN_VM_H
#define THPVM_RUN_VM_H

#include "cli/run_options.h"

/* Runs the VM until it ends, cleaning up on every way out: thpvm run's
 * exit status. Confines the calling thread (seccomp) as it goes: a
 * caller with more to do afterwards calls it in a child process. */
int run_vm(struct run_options *opts);

#endif
