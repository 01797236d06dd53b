/* User-mode networking (-n mode=user; docs/networking.md): libslirp, the
 * TCP/IP stack behind QEMU's -netdev user, on a thread of its own. The
 * guest gets DHCP, a gateway that reaches the host's network through
 * ordinary sockets, DNS forwarding and the host ports forwarded to it,
 * with no privilege but /dev/kvm.
 *
 * The virtio-net device sees what a tap would give it: the device's end
 * of a SOCK_SEQPACKET socketpair, one frame with its 12-byte virtio-net
 * header per message. The pair's socket buffers bound both directions: a
 * guest sending faster than the stack takes frames waits (its transmit
 * queue backs up, as on a tap), and frames for a guest that takes none
 * are dropped and counted. */
#ifndef THPVM_NET_USER_H
#define THPVM_NET_USER_H

#include <stdint.h>

#include "backend/net_user_config.h"

struct net_user;

struct net_user_stats {
	uint64_t frames_in;	/* from the guest, handed to the stack */
	uint64_t frames_out;	/* from the stack, to the guest */
	uint64_t dropped;	/* for the guest, its queue full */
	/* libslirp's sockets now (forwards' own listeners not counted). */
	unsigned tcp, udp, icmp;
};

/* Makes the stack for cfg (copied), binds the forwards' host sockets
 * and starts its thread. Returns 0 with the device's end of the pair in
 * *dev_fd (the caller closes it), or -errno after one message naming
 * what failed: a forward's port in use, for one. */
int net_user_open(struct net_user **out, const struct net_user_config *cfg,
		  int *dev_fd);
/* Stops the thread and closes the stack's sockets. NULL: nothing. */
void net_user_close(struct net_user *nu);
const struct net_user_config *net_user_config(const struct net_user *nu);
/* From any thread. 0, or -ENOMEM. */
int net_user_stats(struct net_user *nu, struct net_user_stats *st);

#endif
