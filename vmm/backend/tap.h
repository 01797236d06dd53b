/* The host end of a guest network link: a Linux tap interface whose
 * packets carry a 12-byte virtio-net header (the virtio 1.x layout) and
 * no offloads. Link state and addresses are left to the user, as with
 * QEMU's ifname: thpvm only attaches to the interface. */
#ifndef THPVM_TAP_H
#define THPVM_TAP_H

#include <net/if.h>

/* Attaches to tap name, creating it if missing (name NULL or "": the
 * kernel picks thpvmN). Returns a non-blocking fd and the interface's name
 * in ifname, or -errno after one message saying what went wrong. */
int tap_open(const char *name, char ifname[IFNAMSIZ]);

#endif
