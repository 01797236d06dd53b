/* A tiny IPv4 stack: Ethernet II, ARP, IPv4 without options or
 * fragments, ICMP echo and UDP. Frames are built into and parsed from
 * plain buffers, checksums computed and verified; net_serve answers what
 * a peer may ask at any time. All of it is unprivileged (ring 3 runs it in
 * netbench). Multi-byte fields are big-endian on the wire. */
#include "guest.h"
#include "lib.h"
#include "net.h"

#define IP_DF		0x4000
#define IP_FRAG		0x3fff		/* MF and the fragment offset */
#define IP_TTL		64
#define ARP_HW_ETHER	1

const uint8_t eth_broadcast[ETH_ALEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff
};

uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* The Internet checksum (RFC 1071): a 32-bit sum of 16-bit words, which
 * cannot overflow for a frame, folded at the end. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += get16(p);
	if (len)
		sum += p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* The pseudo header the UDP checksum covers. */
static uint32_t pseudo_sum(uint32_t src, uint32_t dst, uint32_t len)
{
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
	       IPPROTO_UDP + len;
}

static uint8_t *eth_hdr(uint8_t *f, const uint8_t *dst, const uint8_t *src,
			uint16_t type)
{
	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	put16(f + 2 * ETH_ALEN, type);
	return f + ETH_HLEN;
}

/* A request is broadcast and leaves the target hardware address zero. */
uint32_t arp_frame(uint8_t *f, uint16_t op, const struct inet_addr *from,
		   const struct inet_addr *to)
{
	bool req = op == ARP_REQUEST;
	uint8_t *a = eth_hdr(f, req ? eth_broadcast : to->mac, from->mac,
			     ETH_TYPE_ARP);

	put16(a, ARP_HW_ETHER);
	put16(a + 2, ETH_TYPE_IP);
	a[4] = ETH_ALEN;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, from->mac, ETH_ALEN);
	put32(a + 14, from->ip);
	if (req)
		memset(a + 18, 0, ETH_ALEN);
	else
		memcpy(a + 18, to->mac, ETH_ALEN);
	put32(a + 24, to->ip);
	return ETH_HLEN + ARP_LEN;
}

/* Ethernet and IPv4 headers for len bytes of payload; returns where the
 * payload goes. */
static uint8_t *ip_hdr(uint8_t *f, const struct inet_addr *from,
		       const struct inet_addr *to, uint16_t id, uint8_t proto,
		       uint32_t len)
{
	uint8_t *ip = eth_hdr(f, to->mac, from->mac, ETH_TYPE_IP);

	ip[0] = 0x45;		/* version 4, 5 words: no options */
	ip[1] = 0;
	put16(ip + 2, IP_HLEN + len);
	put16(ip + 4, id);
	put16(ip + 6, IP_DF);
	ip[8] = IP_TTL;
	ip[9] = proto;
	put16(ip + 10, 0);
	put32(ip + 12, from->ip);
	put32(ip + 16, to->ip);
	put16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));
	return ip + IP_HLEN;
}

uint32_t icmp_echo_frame(uint8_t *f, const struct inet_addr *from,
			 const struct inet_addr *to, uint16_t ip_id,
			 uint8_t type, uint16_t id, uint16_t seq,
			 const uint8_t *data, uint32_t len)
{
	uint8_t *ic = ip_hdr(f, from, to, ip_id, IPPROTO_ICMP,
			     ICMP_HLEN + len);

	ic[0] = type;
	ic[1] = 0;
	put16(ic + 2, 0);
	put16(ic + 4, id);
	put16(ic + 6, seq);
	memcpy(ic + ICMP_HLEN, data, len);
	put16(ic + 2, csum_fold(csum_add(0, ic, ICMP_HLEN + len)));
	return ETH_HLEN + IP_HLEN + ICMP_HLEN + len;
}

uint32_t udp_frame(uint8_t *f, const struct inet_addr *from,
		   const struct inet_addr *to, uint16_t ip_id, uint16_t sport,
		   uint16_t dport, const uint8_t *data, uint32_t len)
{
	uint32_t ulen = UDP_HLEN + len;
	uint8_t *u = ip_hdr(f, from, to, ip_id, IPPROTO_UDP, ulen);
	uint16_t c;

	put16(u, sport);
	put16(u + 2, dport);
	put16(u + 4, ulen);
	put16(u + 6, 0);
	memcpy(u + UDP_HLEN, data, len);
	c = csum_fold(csum_add(pseudo_sum(from->ip, to->ip, ulen), u, ulen));
	/* 0 would say "no checksum". */
	put16(u + 6, c ? c : 0xffff);
	return ETH_HLEN + IP_HLEN + ulen;
}

static void bad(struct pkt *p, const char *why)
{
	p->kind = PKT_BAD;
	p->bad = why;
}

static void parse_arp(const struct inet_addr *self, const uint8_t *a,
		      uint32_t len, struct pkt *p)
{
	if (len < ARP_LEN || get16(a) != ARP_HW_ETHER ||
	    get16(a + 2) != ETH_TYPE_IP || a[4] != ETH_ALEN || a[5] != 4)
		return;
	p->arp_op = get16(a + 6);
	p->arp_sha = a + 8;
	p->src = get32(a + 14);
	p->arp_tha = a + 18;
	p->arp_tpa = get32(a + 24);
	if (p->arp_tpa == self->ip)
		p->kind = PKT_ARP;
}

static void parse_icmp(const uint8_t *ic, uint32_t len, struct pkt *p)
{
	if (len < ICMP_HLEN) {
		bad(p, "icmp-length");
		return;
	}
	if (csum_fold(csum_add(0, ic, len))) {
		bad(p, "icmp-checksum");
		return;
	}
	p->kind = PKT_ICMP;
	p->icmp_type = ic[0];
	p->icmp_id = get16(ic + 4);
	p->icmp_seq = get16(ic + 6);
	p->data = ic + ICMP_HLEN;
	p->len = len - ICMP_HLEN;
}

static void parse_udp(uint32_t dst, const uint8_t *u, uint32_t len,
		      struct pkt *p)
{
	uint32_t ulen = len >= UDP_HLEN ? get16(u + 4) : 0;

	if (ulen < UDP_HLEN || ulen > len) {
		bad(p, "udp-length");
		return;
	}
	p->udp_csum = get16(u + 6) != 0;
	if (p->udp_csum && csum_fold(csum_add(pseudo_sum(p->src, dst, ulen),
					      u, ulen))) {
		bad(p, "udp-checksum");
		return;
	}
	p->kind = PKT_UDP;
	p->sport = get16(u);
	p->dport = get16(u + 2);
	p->data = u + UDP_HLEN;
	p->len = ulen - UDP_HLEN;
}

/* IPv4 to self->ip or to every host (a DHCP server's answers to a
 * client with no address yet); options and fragments are outside the
 * scope and ignored like other traffic. The total length, not the
 * frame's, bounds the payload: short frames may come padded. */
static void parse_ip(const struct inet_addr *self, const uint8_t *ip,
		     uint32_t len, struct pkt *p)
{
	uint32_t tot, dst = len >= IP_HLEN ? get32(ip + 16) : 0;

	if (len < IP_HLEN || ip[0] != 0x45 ||
	    (dst != self->ip && dst != IP_BROADCAST) ||
	    get16(ip + 6) & IP_FRAG)
		return;
	if (csum_fold(csum_add(0, ip, IP_HLEN))) {
		bad(p, "ip-checksum");
		return;
	}
	tot = get16(ip + 2);
	if (tot < IP_HLEN || tot > len) {
		bad(p, "ip-length");
		return;
	}
	p->src = get32(ip + 12);
	if (ip[9] == IPPROTO_ICMP)
		parse_icmp(ip + IP_HLEN, tot - IP_HLEN, p);
	else if (ip[9] == IPPROTO_UDP)
		parse_udp(dst, ip + IP_HLEN, tot - IP_HLEN, p);
}

/* What a frame is to self: ARP about its address, ICMP or UDP to it,
 * PKT_BAD for those with a wrong length or checksum, else PKT_OTHER. */
void inet_parse(const struct inet_addr *self, const uint8_t *f,
		uint32_t len, struct pkt *p)
{
	uint16_t type;

	memset(p, 0, sizeof(*p));
	if (len < ETH_HLEN) {
		bad(p, "short-frame");
		return;
	}
	if (memcmp(f, self->mac, ETH_ALEN) && memcmp(f, eth_broadcast, ETH_ALEN))
		return;
	p->eth_src = f + ETH_ALEN;
	type = get16(f + 2 * ETH_ALEN);
	if (type == ETH_TYPE_ARP)
		parse_arp(self, f + ETH_HLEN, len - ETH_HLEN, p);
	else if (type == ETH_TYPE_IP)
		parse_ip(self, f + ETH_HLEN, len - ETH_HLEN, p);
}

/* Answers what a peer may ask of the guest at any time: ARP requests
 * for its address and ICMP echo requests. True if p was one of those
 * (answered unless every transmit slot is busy: the peer asks again). */
bool net_serve(struct net_dev *n, const struct pkt *p)
{
	struct inet_addr peer;
	uint32_t len;
	uint8_t *f;
	int slot;

	if (p->kind == PKT_ARP && p->arp_op == ARP_REQUEST) {
		memcpy(peer.mac, p->arp_sha, ETH_ALEN);
		peer.ip = p->src;
		if (!(f = net_tx_frame(n, &slot)))
			return true;
		len = arp_frame(f, ARP_REPLY, &n->self, &peer);
	} else if (p->kind == PKT_ICMP && p->icmp_type == ICMP_ECHO_REQUEST) {
		if (ETH_HLEN + IP_HLEN + ICMP_HLEN + p->len > NET_TX_FRAME_MAX)
			return true;
		memcpy(peer.mac, p->eth_src, ETH_ALEN);
		peer.ip = p->src;
		if (!(f = net_tx_frame(n, &slot)))
			return true;
		len = icmp_echo_frame(f, &n->self, &peer, n->ip_id++,
				      ICMP_ECHO_REPLY, p->icmp_id, p->icmp_seq,
				      p->data, p->len);
	} else {
		return false;
	}
	if (net_tx(n, slot, len, true))
		return true;
	vq_kick(&n->vd.vq[NET_TXQ]);
	n->echo_answered += p->kind == PKT_ICMP;
	return true;
}
