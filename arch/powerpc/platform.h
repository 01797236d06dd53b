/* What the powerpc platform reads from the host. */
#ifndef THPVM_PPC_PLATFORM_H
#define THPVM_PPC_PLATFORM_H

#include <stdint.h>

/* Whether a line of /proc/cpuinfo is the "timebase : HZ" one a ppc64
 * host's kernel writes. Returns 0 with *hz set, or -ENOENT. */
int ppc_cpuinfo_timebase(const char *line, uint32_t *hz);

#endif
