/* The user-mode network's settings (-n mode=user; docs/networking.md):
 * its IPv4 network, libslirp's restrict switch and the ports forwarded
 * from the host to the guest, in QEMU's spellings. No libslirp here, so
 * that the parsers are unit-tested and fuzzed on their own. */
#ifndef THPVM_NET_USER_CONFIG_H
#define THPVM_NET_USER_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_USER_MAX_FWDS 16
/* The network's smallest and largest prefix: the 16 DHCP addresses from
 * .15 must fit below the broadcast address. */
#define NET_USER_MIN_PREFIX 8
#define NET_USER_MAX_PREFIX 27
/* Host numbers in the network, as QEMU places them. */
#define NET_USER_GATEWAY 2
#define NET_USER_DNS 3
#define NET_USER_DHCP_FIRST 15

/* hostfwd=tcp|udp:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT */
struct net_user_fwd {
	bool udp;
	struct in_addr host_addr;	/* INADDR_ANY: every host address */
	uint16_t host_port;
	struct in_addr guest_addr;	/* INADDR_ANY: the first DHCP address */
	uint16_t guest_port;
};

struct net_user_config {
	struct in_addr net;	/* network byte order, host bits zero */
	unsigned prefix;
	bool restricted;	/* restrict=on: libslirp's own meaning */
	struct net_user_fwd fwds[NET_USER_MAX_FWDS];
	unsigned nr_fwds;
};

/* 10.0.2.0/24, unrestricted, no forwards: QEMU's defaults. */
void net_user_config_init(struct net_user_config *c);

/* Each parser returns NULL, or why the text is refused (a phrase for
 * "expected ..." messages); nothing is changed on refusal. */
/* net=A.B.C.D/N */
const char *net_user_parse_net(const char *s, struct net_user_config *c);
/* One hostfwd value, appended to c->fwds. */
const char *net_user_parse_fwd(const char *s, struct net_user_config *c);

/* Host number n of the network (NET_USER_GATEWAY...). */
struct in_addr net_user_addr(const struct net_user_config *c, unsigned n);
/* Where a forward ends in the guest: its address, or the first DHCP
 * address when it names none. */
struct in_addr net_user_fwd_guest(const struct net_user_config *c,
				  const struct net_user_fwd *f);
/* Checks what only the whole list shows (called once every key is
 * parsed): guest addresses inside the network, no host port forwarded
 * twice. NULL or why not, with the offending forward in *bad. */
const char *net_user_config_check(const struct net_user_config *c,
				  unsigned *bad);
/* "tcp:127.0.0.1:2222-10.0.2.15:22", as stat shows a forward. */
void net_user_fwd_format(const struct net_user_config *c,
			 const struct net_user_fwd *f, char *buf, size_t size);

#endif
