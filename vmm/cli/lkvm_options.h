/* lkvm's `run` options that thpvm does not implement. They are refused
 * by name ("lkvm's --vnc is not supported by thpvm") rather than as
 * unknown options, so that a user coming from kvmtool knows the option
 * was understood and that thpvm lacks it. */
#ifndef THPVM_LKVM_OPTIONS_H
#define THPVM_LKVM_OPTIONS_H

/* How lkvm spells the option ("--vnc", "-f/--firmware") when arg, an
 * argument getopt did not know ("--vfio-pci=...", "--vnc"; NULL for a
 * short option), or short_opt, an unknown short option's letter (0 for
 * none), is one of lkvm's; NULL otherwise. */
const char *lkvm_run_option_find(const char *arg, int short_opt);

#endif
