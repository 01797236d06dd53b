/* Parsing and checking the user-mode network's settings (net_user_config.h).
 * Addresses go through inet_pton, which takes dotted quads only (not
 * inet_aton's "10.2" or octal forms), so that what stat shows is what
 * the user wrote. */
#include "backend/net_user_config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"

/* Longest dotted quad, with its NUL. */
#define ADDR_MAX 16

void net_user_config_init(struct net_user_config *c)
{
	memset(c, 0, sizeof(*c));
	c->net.s_addr = htonl(0x0a000200);	/* 10.0.2.0 */
	c->prefix = 24;
}

static uint32_t prefix_mask(unsigned prefix)
{
	return prefix ? ~0u << (32 - prefix) : 0;
}

/* Copies s[0..len) into a NUL-terminated address and parses it; empty
 * is INADDR_ANY when any_ok. */
static bool parse_addr(const char *s, size_t len, bool any_ok,
		       struct in_addr *out)
{
	char buf[ADDR_MAX];

	if (!len) {
		out->s_addr = htonl(INADDR_ANY);
		return any_ok;
	}
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return inet_pton(AF_INET, buf, out) == 1;
}

/* A decimal port from 1 to 65535, s[0..len) exactly. */
static bool parse_port(const char *s, size_t len, uint16_t *out)
{
	unsigned v = 0;
	size_t i;

	if (!len || len > 5)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (!v || v > 65535)
		return false;
	*out = v;
	return true;
}

const char *net_user_parse_net(const char *s, struct net_user_config *c)
{
	static const char *const why = "an IPv4 network such as 10.0.2.0/24 "
		"(prefix from " STRINGIFY(NET_USER_MIN_PREFIX) " to "
		STRINGIFY(NET_USER_MAX_PREFIX) ", no host bits set)";
	const char *slash = strchr(s, '/');
	struct in_addr net;
	uint16_t prefix;

	if (!slash || !parse_addr(s, slash - s, false, &net) ||
	    !parse_port(slash + 1, strlen(slash + 1), &prefix) ||
	    prefix < NET_USER_MIN_PREFIX || prefix > NET_USER_MAX_PREFIX ||
	    ntohl(net.s_addr) & ~prefix_mask(prefix))
		return why;
	c->net = net;
	c->prefix = prefix;
	return NULL;
}

const char *net_user_parse_fwd(const char *s, struct net_user_config *c)
{
	static const char *const why = "tcp|udp:[HOSTADDR]:HOSTPORT-"
		"[GUESTADDR]:GUESTPORT, such as tcp::2222-:22";
	struct net_user_fwd f = { .udp = false };
	const char *colon, *dash, *gcolon;

	if (c->nr_fwds == NET_USER_MAX_FWDS)
		return "at most " STRINGIFY(NET_USER_MAX_FWDS) " forwards";
	/* QEMU takes an empty protocol as tcp. */
	colon = strchr(s, ':');
	if (!colon)
		return why;
	if (colon - s == 3 && !strncmp(s, "udp", 3))
		f.udp = true;
	else if (colon != s && (colon - s != 3 || strncmp(s, "tcp", 3)))
		return why;
	s = colon + 1;
	colon = strchr(s, ':');
	dash = colon ? strchr(colon, '-') : NULL;
	if (!dash || !parse_addr(s, colon - s, true, &f.host_addr) ||
	    !parse_port(colon + 1, dash - colon - 1, &f.host_port))
		return why;
	s = dash + 1;
	gcolon = strchr(s, ':');
	if (!gcolon || !parse_addr(s, gcolon - s, true, &f.guest_addr) ||
	    !parse_port(gcolon + 1, strlen(gcolon + 1), &f.guest_port))
		return why;
	c->fwds[c->nr_fwds++] = f;
	return NULL;
}

struct in_addr net_user_addr(const struct net_user_config *c, unsigned n)
{
	struct in_addr a = { htonl(ntohl(c->net.s_addr) | n) };

	return a;
}

struct in_addr net_user_fwd_guest(const struct net_user_config *c,
				  const struct net_user_fwd *f)
{
	return f->guest_addr.s_addr != htonl(INADDR_ANY) ? f->guest_addr :
	       net_user_addr(c, NET_USER_DHCP_FIRST);
}

/* Both forwards take the same host socket: same protocol and port, and
 * addresses that overlap (either is every address, or both the same). */
static bool fwds_clash(const struct net_user_fwd *a,
		       const struct net_user_fwd *b)
{
	return a->udp == b->udp && a->host_port == b->host_port &&
	       (a->host_addr.s_addr == htonl(INADDR_ANY) ||
		b->host_addr.s_addr == htonl(INADDR_ANY) ||
		a->host_addr.s_addr == b->host_addr.s_addr);
}

const char *net_user_config_check(const struct net_user_config *c,
				  unsigned *bad)
{
	uint32_t mask = prefix_mask(c->prefix), net = ntohl(c->net.s_addr);
	unsigned i, j;

	for (i = 0; i < c->nr_fwds; i++) {
		uint32_t g = ntohl(net_user_fwd_guest(c, &c->fwds[i]).s_addr);

		*bad = i;
		if ((g & mask) != net || !(g & ~mask) || (g | mask) == ~0u)
			return "its guest address is not a host of the "
			       "user-mode network";
		if ((g & ~mask) == NET_USER_GATEWAY ||
		    (g & ~mask) == NET_USER_DNS)
			return "its guest address is the gateway's or the "
			       "DNS server's";
		for (j = 0; j < i; j++)
			if (fwds_clash(&c->fwds[j], &c->fwds[i]))
				return "an earlier forward has its host port";
	}
	return NULL;
}

void net_user_fwd_format(const struct net_user_config *c,
			 const struct net_user_fwd *f, char *buf, size_t size)
{
	char host[ADDR_MAX], guest[ADDR_MAX];
	struct in_addr g = net_user_fwd_guest(c, f);

	inet_ntop(AF_INET, &f->host_addr, host, sizeof(host));
	inet_ntop(AF_INET, &g, guest, sizeof(guest));
	snprintf(buf, size, "%s:%s:%u-%s:%u", f->udp ? "udp" : "tcp", host,
		 f->host_port, guest, f->guest_port);
}
