/* DHCP (RFC 2131) as a client needs it: DISCOVER and REQUEST built, the
 * server's OFFER and ACK parsed with the options a client configures
 * itself from (mask, router, DNS server, lease, server id). Frames go
 * from 0.0.0.0 to the broadcast address, as a client has no address yet
 * and asks for broadcast answers. */
#include "guest.h"
#include "lib.h"
#include "net.h"

#define OP_REQUEST	1
#define OP_REPLY	2
#define HTYPE_ETHER	1
#define FLAG_BROADCAST	0x8000
#define COOKIE		0x63825363
#define FIXED_LEN	240	/* BOOTP fields and the magic cookie */
#define OFF_XID		4
#define OFF_FLAGS	10
#define OFF_YIADDR	16
#define OFF_CHADDR	28
#define OFF_COOKIE	236
#define OPT_PAD		0
#define OPT_MASK	1
#define OPT_ROUTER	3
#define OPT_DNS		6
#define OPT_REQ_IP	50
#define OPT_LEASE	51
#define OPT_TYPE	53
#define OPT_SERVER	54
#define OPT_PARAMS	55
#define OPT_END		255

static uint8_t msg[FIXED_LEN + 32];

uint32_t dhcp_frame(uint8_t *f, const uint8_t *mac, uint32_t xid,
		    uint8_t type, uint32_t req_ip, uint32_t server)
{
	static const struct inet_addr all = {
		.mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		.ip = IP_BROADCAST,
	};
	struct inet_addr none = { .ip = 0 };
	uint8_t *o = msg + FIXED_LEN;

	memcpy(none.mac, mac, ETH_ALEN);
	memset(msg, 0, sizeof(msg));
	msg[0] = OP_REQUEST;
	msg[1] = HTYPE_ETHER;
	msg[2] = ETH_ALEN;
	put32(msg + OFF_XID, xid);
	put16(msg + OFF_FLAGS, FLAG_BROADCAST);
	memcpy(msg + OFF_CHADDR, mac, ETH_ALEN);
	put32(msg + OFF_COOKIE, COOKIE);
	*o++ = OPT_TYPE;
	*o++ = 1;
	*o++ = type;
	if (type == DHCP_REQUEST) {
		*o++ = OPT_REQ_IP;
		*o++ = 4;
		put32(o, req_ip);
		o += 4;
		*o++ = OPT_SERVER;
		*o++ = 4;
		put32(o, server);
		o += 4;
	}
	*o++ = OPT_PARAMS;
	*o++ = 3;
	*o++ = OPT_MASK;
	*o++ = OPT_ROUTER;
	*o++ = OPT_DNS;
	*o++ = OPT_END;
	return udp_frame(f, &none, &all, 0, DHCP_CLIENT_PORT, DHCP_SERVER_PORT,
			 msg, o - msg);
}

/* A 4-byte option's value (the first address of a list). */
static bool opt_u32(const uint8_t *v, unsigned len, uint32_t *out)
{
	if (len < 4)
		return false;
	*out = get32(v);
	return true;
}

/* The options from off to the end of the message; false if one runs
 * past it. */
static bool parse_options(const uint8_t *d, uint32_t len,
			  struct dhcp_reply *r)
{
	uint32_t i = FIXED_LEN;

	while (i < len) {
		uint8_t code = d[i], olen;
		const uint8_t *v;

		if (code == OPT_END)
			return true;
		if (code == OPT_PAD) {
			i++;
			continue;
		}
		if (i + 2 > len || i + 2 + d[i + 1] > len)
			return false;
		olen = d[i + 1];
		v = d + i + 2;
		if (code == OPT_TYPE && olen == 1)
			r->type = v[0];
		else if (code == OPT_MASK)
			opt_u32(v, olen, &r->mask);
		else if (code == OPT_ROUTER)
			opt_u32(v, olen, &r->router);
		else if (code == OPT_DNS)
			opt_u32(v, olen, &r->dns);
		else if (code == OPT_LEASE)
			opt_u32(v, olen, &r->lease);
		else if (code == OPT_SERVER)
			opt_u32(v, olen, &r->server);
		i += 2 + olen;
	}
	return false;
}

const char *dhcp_parse(const struct pkt *p, const uint8_t *mac, uint32_t xid,
		       struct dhcp_reply *r)
{
	const uint8_t *d = p->data;

	memset(r, 0, sizeof(*r));
	if (p->kind != PKT_UDP || p->sport != DHCP_SERVER_PORT ||
	    p->dport != DHCP_CLIENT_PORT || p->len < FIXED_LEN ||
	    d[0] != OP_REPLY || get32(d + OFF_XID) != xid)
		return 0;	/* not ours: not an error */
	if (memcmp(d + OFF_CHADDR, mac, ETH_ALEN))
		return "dhcp-chaddr";
	if (get32(d + OFF_COOKIE) != COOKIE)
		return "dhcp-cookie";
	if (!parse_options(d, p->len, r))
		return "dhcp-options";
	r->yiaddr = get32(d + OFF_YIADDR);
	return 0;
}
