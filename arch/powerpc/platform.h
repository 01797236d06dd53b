/* What the powerpc platform reads from the host. */
#ifndef THPVM_PPC_PLATFORM_H
#define THPVM_PPC_PLATFORM_H

#include <stdint.h>

/* The "timebase : HZ" line of /proc/cpuinfo's text, as a ppc64 host's
 * kernel writes it. Returns 0 with *hz set, or -ENOENT. */
int ppc_cpuinfo_timebase(const char *cpuinfo, uint32_t *hz);

#endif
