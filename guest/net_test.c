/* virtio-net checks on the first virtio-net device (docs/test-guest.md):
 * real packets to and from what is behind the device (the host kernel
 * through a tap, or a user-mode network): with dhcp, the address asked
 * of a DHCP server; ARP for the host's address, ICMP echo to it, a UDP
 * datagram that an echo server answers; with net_ping_in=N, the host's
 * pings answered, and with net_udp_in=N, N datagrams to udp_port echoed
 * back to their senders. Every wait sleeps in `sti; hlt` with a
 * deadline. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "net.h"

#define ARP_TRIES		10
#define ARP_WAIT_MS		1000
#define PINGS			3
#define PING_ID			0x7467		/* "tg" */
#define PING_BYTES		56		/* what ping(8) sends */
#define PING_WAIT_MS		2000
/* Echoed with its 5-byte prefix, still under the 1500-byte MTU, and
 * longer than two receive buffers with MRG_RXBUF. */
#define UDP_BYTES		1400
#define UDP_WAIT_MS		3000
#define PING_IN_MS		30000
#define UDP_IN_MS		30000
#define DHCP_TRIES		3
#define DHCP_WAIT_MS		2000
#define DHCP_XID		0x74670001	/* "tg", 1 */

static const char echo_prefix[] = "echo:";
#define ECHO_PREFIX_LEN		(sizeof(echo_prefix) - 1)

__attribute__((section(".noinit"))) static struct net_dev dev;
__attribute__((section(".noinit"))) static uint8_t udp_data[UDP_BYTES];
/* A device error (not a lost packet) ended the last wait: the device is
 * started afresh before the next check (net_recover). */
bool net_broken;

static const char *mac_str(const uint8_t *m)
{
	static char s[3 * ETH_ALEN];

	for (unsigned i = 0; i < ETH_ALEN; i++) {
		s[3 * i] = "0123456789abcdef"[m[i] >> 4];
		s[3 * i + 1] = "0123456789abcdef"[m[i] & 15];
		s[3 * i + 2] = i + 1 < ETH_ALEN ? ':' : 0;
	}
	return s;
}

static const char *ip_str(uint32_t ip)
{
	static char s[4][16];
	static unsigned next;
	char *p = s[next++ % 4];

	sprint(p, 16, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255,
		 ip >> 8 & 255, ip & 255);
	return p;
}

/* Queues the frame built in slot and notifies the device. */
static const char *send(struct net_dev *n, int slot, uint32_t len)
{
	int rc = net_tx(n, slot, len, true);

	if (rc)
		return net_err_name(rc);
	vq_kick(&n->vd.vq[NET_TXQ]);
	return 0;
}

/* Sleeps until the next frame that net_serve did not answer by itself:
 * 1 with it in *p, 0 at the deadline (also under a stream of frames),
 * -1 with *why for a device error or a malformed frame. */
static int wait_pkt(struct net_dev *n, struct pkt *p, uint64_t deadline,
		    const char **why)
{
	unsigned cfg_irqs = virtio_config_irqs(&n->vd);
	int rc;

	for (;;) {
		if (cfg_irqs != virtio_config_irqs(&n->vd) ||
		    clock_now() > deadline) {
			cfg_irqs = virtio_config_irqs(&n->vd);
			if (virtio_status(&n->vd) & VIRTIO_S_NEEDS_RESET) {
				net_broken = true;
				*why = net_err_name(NET_ERR_NEEDS_RESET);
				return -1;
			}
			if (clock_now() > deadline)
				return 0;
		}
		rc = net_tx_reclaim(n);
		if (rc >= 0)
			rc = net_rx(n);
		if (rc < 0) {
			net_broken = true;
			*why = net_err_name(rc);
			return -1;
		}
		if (!rc) {
			virtio_idle(&n->vd);
			continue;
		}
		inet_parse(&n->self, n->frame, n->frame_len, p);
		if (p->kind == PKT_BAD) {
			*why = p->bad;
			return -1;
		}
		if (!net_serve(n, p))
			return 1;
	}
}

static uint8_t *tx_frame(struct net_dev *n, int *slot, const char **why)
{
	uint8_t *f = net_tx_frame(n, slot);

	if (!f)
		*why = net_err_name(NET_ERR_TX_FULL);
	return f;
}

/* Who has hostip? Up to ARP_TRIES requests, a second apart: the host
 * may still be bringing its side of the link up. */
static const char *arp(struct net_dev *n, unsigned *tries)
{
	const char *why = 0;
	struct pkt p;
	uint32_t len;
	uint8_t *f;
	int slot, rc;

	for (*tries = 1; *tries <= ARP_TRIES; ++*tries) {
		uint64_t deadline = clock_deadline(ARP_WAIT_MS);

		if (!(f = tx_frame(n, &slot, &why)))
			return why;
		len = arp_frame(f, ARP_REQUEST, &n->self, &n->host);
		if ((why = send(n, slot, len)))
			return why;
		while ((rc = wait_pkt(n, &p, deadline, &why)) > 0) {
			if (p.kind != PKT_ARP || p.arp_op != ARP_REPLY ||
			    p.src != n->host.ip)
				continue;
			if (memcmp(p.arp_tha, n->self.mac, ETH_ALEN))
				return "wrong-target-mac";
			memcpy(n->host.mac, p.arp_sha, ETH_ALEN);
			return 0;
		}
		if (rc < 0)
			return why;
	}
	*tries = ARP_TRIES;
	return "timeout";
}

/* Echo requests to hostip, one at a time; each reply must carry the
 * request's id, sequence number and payload (checksums: inet_parse). */
static const char *ping_out(struct net_dev *n, unsigned *replies)
{
	uint8_t data[PING_BYTES];
	const char *why = 0;
	struct pkt p;
	uint32_t len;
	uint8_t *f;
	int slot, rc;

	for (*replies = 0; *replies < PINGS; ++*replies) {
		uint16_t seq = *replies + 1;
		uint64_t deadline;

		for (unsigned i = 0; i < PING_BYTES; i++)
			data[i] = seq * 16 + i;
		if (!(f = tx_frame(n, &slot, &why)))
			return why;
		len = icmp_echo_frame(f, &n->self, &n->host, n->ip_id++,
				      ICMP_ECHO_REQUEST, PING_ID, seq, data,
				      PING_BYTES);
		if ((why = send(n, slot, len)))
			return why;
		deadline = clock_deadline(PING_WAIT_MS);
		while ((rc = wait_pkt(n, &p, deadline, &why)) > 0) {
			if (p.kind != PKT_ICMP ||
			    p.icmp_type != ICMP_ECHO_REPLY ||
			    p.src != n->host.ip || p.icmp_id != PING_ID ||
			    p.icmp_seq != seq)
				continue;
			if (p.len != PING_BYTES || memcmp(p.data, data, p.len))
				return "payload-mismatch";
			break;
		}
		if (rc <= 0)
			return rc ? why : "timeout";
	}
	return 0;
}

/* A datagram to hostip:udp_port from the same port; the echo server
 * sends back "echo:" and the payload. */
static const char *udp(struct net_dev *n, struct pkt *p)
{
	uint16_t port = params.udp_port;
	const char *why = 0;
	uint64_t deadline;
	uint32_t len;
	uint8_t *f;
	int slot, rc;

	for (unsigned i = 0; i < UDP_BYTES; i++)
		udp_data[i] = i * 7 + (i >> 8);
	if (!(f = tx_frame(n, &slot, &why)))
		return why;
	len = udp_frame(f, &n->self, &n->host, n->ip_id++, port, port,
			udp_data, UDP_BYTES);
	if ((why = send(n, slot, len)))
		return why;
	deadline = clock_deadline(UDP_WAIT_MS);
	while ((rc = wait_pkt(n, p, deadline, &why)) > 0) {
		if (p->kind != PKT_UDP || p->src != n->host.ip ||
		    p->sport != port || p->dport != port)
			continue;
		if (p->len != ECHO_PREFIX_LEN + UDP_BYTES ||
		    memcmp(p->data, echo_prefix, ECHO_PREFIX_LEN) ||
		    memcmp(p->data + ECHO_PREFIX_LEN, udp_data, UDP_BYTES))
			return "payload-mismatch";
		return 0;
	}
	return rc ? why : "timeout";
}

/* Answers ARP and echo requests (net_serve) until want echo requests
 * were answered, for at most PING_IN_MS. */
static const char *ping_in(struct net_dev *n, unsigned want,
			   unsigned *answered)
{
	uint64_t deadline = clock_deadline(PING_IN_MS);
	unsigned base = n->echo_answered;
	const char *why;
	struct pkt p;
	int rc;

	while ((*answered = n->echo_answered - base) < want)
		if ((rc = wait_pkt(n, &p, deadline, &why)) <= 0)
			return rc ? why : "timeout";
	return 0;
}

/* Sends a DHCP message of type and waits for the answer of want's type:
 * 0 with it in *r, or why not. A NAK is a failure. */
static const char *dhcp_step(struct net_dev *n, uint8_t type, uint8_t want,
			     struct dhcp_reply *r)
{
	uint32_t req_ip = r->yiaddr, server = r->server, len;
	const char *why = 0;
	struct pkt p;
	uint8_t *f;
	int slot, rc;

	for (unsigned tries = 0; tries < DHCP_TRIES; tries++) {
		uint64_t deadline = clock_deadline(DHCP_WAIT_MS);

		if (!(f = tx_frame(n, &slot, &why)))
			return why;
		len = dhcp_frame(f, n->self.mac, DHCP_XID, type, req_ip,
				 server);
		if ((why = send(n, slot, len)))
			return why;
		while ((rc = wait_pkt(n, &p, deadline, &why)) > 0) {
			if ((why = dhcp_parse(&p, n->self.mac, DHCP_XID, r)))
				return why;
			if (r->type == DHCP_NAK)
				return "dhcp-nak";
			if (r->type == want)
				return 0;
		}
		if (rc < 0)
			return why;
	}
	return "timeout";
}

/* DISCOVER, OFFER, REQUEST, ACK: the guest then uses the address it was
 * given and the router, if the server named one (a restricted network
 * has none), as its host. */
static void dhcp(struct net_dev *n)
{
	struct dhcp_reply r = { .type = 0 };
	const char *why;

	n->self.ip = 0;
	why = dhcp_step(n, DHCP_DISCOVER, DHCP_OFFER, &r);
	if (!why)
		why = dhcp_step(n, DHCP_REQUEST, DHCP_ACK, &r);
	if (!why && !r.yiaddr)
		why = "dhcp-no-address";
	if (why) {
		report(false, "net-dhcp", "reason=%s", why);
		n->self.ip = params.ip;
		return;
	}
	n->self.ip = r.yiaddr;
	if (r.router)
		n->host.ip = r.router;
	report(true, "net-dhcp", "ip=%s mask=%s router=%s dns=%s server=%s "
	       "lease=%u", ip_str(r.yiaddr), ip_str(r.mask), ip_str(r.router),
	       ip_str(r.dns), ip_str(r.server), r.lease);
}

/* Echoes want datagrams to udp_port back to their senders, prefixed as
 * the host's echo server does, for at most UDP_IN_MS. */
static const char *udp_in(struct net_dev *n, unsigned want,
			  unsigned *answered)
{
	uint64_t deadline = clock_deadline(UDP_IN_MS);
	struct inet_addr peer;
	const char *why = 0;
	struct pkt p;
	uint32_t len;
	uint8_t *f;
	int slot, rc;

	for (*answered = 0; *answered < want;) {
		if ((rc = wait_pkt(n, &p, deadline, &why)) <= 0)
			return rc ? why : "timeout";
		if (p.kind != PKT_UDP || p.dport != params.udp_port)
			continue;
		/* udp_data holds the answer (and so it fits one frame). */
		if (ECHO_PREFIX_LEN + p.len > sizeof(udp_data))
			return "too-long";
		memcpy(udp_data, echo_prefix, ECHO_PREFIX_LEN);
		memcpy(udp_data + ECHO_PREFIX_LEN, p.data, p.len);
		memcpy(peer.mac, p.eth_src, ETH_ALEN);
		peer.ip = p.src;
		if (!(f = tx_frame(n, &slot, &why)))
			return why;
		len = udp_frame(f, &n->self, &peer, n->ip_id++, p.dport,
				p.sport, udp_data, ECHO_PREFIX_LEN + p.len);
		if ((why = send(n, slot, len)))
			return why;
		++*answered;
	}
	return 0;
}

/* After a device error the next check gets a freshly started device. */
bool net_recover(struct net_dev *n)
{
	const char *why;

	if (!net_broken)
		return true;
	net_broken = false;
	if (net_start(n, &why))
		return true;
	report(false, "net-restart", "reason=%s", why);
	return false;
}

/* A check that answers what the host sends: want of them within its
 * own deadline. */
static void check_in(struct net_dev *n, const char *name, unsigned want,
		     const char *(*answer)(struct net_dev *, unsigned,
					   unsigned *))
{
	unsigned count;
	const char *why = answer(n, want, &count);

	if (why)
		report(false, name, "answered=%u expected=%u reason=%s", count,
		       want, why);
	else
		report(true, name, "answered=%u", count);
}

static void net_checks(struct net_dev *n)
{
	unsigned count;
	const char *why;
	struct pkt p;

	why = ping_out(n, &count);
	if (why)
		report(false, "net-ping-out", "replies=%u expected=%u "
		       "reason=%s", count, PINGS, why);
	else
		report(true, "net-ping-out", "replies=%u", count);
	if (!net_recover(n))
		return;
	why = udp(n, &p);
	if (why)
		report(false, "net-udp", "bytes=%u reason=%s", UDP_BYTES, why);
	else
		report(true, "net-udp", "bytes=%u reply_bytes=%u "
		       "reply_buffers=%u checksum=%u", UDP_BYTES, p.len,
		       n->frame_bufs, p.udp_csum);
	if (!net_recover(n))
		return;
	if (params.net_ping_in) {
		print("tg: net ping-in waiting\n");
		check_in(n, "net-ping-in", params.net_ping_in, ping_in);
		if (!net_recover(n))
			return;
	}
	if (params.net_udp_in) {
		print("tg: net udp-in waiting port=%u\n", params.udp_port);
		check_in(n, "net-udp-in", params.net_udp_in, udp_in);
	}
}

void run_net(void)
{
	const struct virtio_cand *c = 0;
	struct net_dev *n = &dev;
	const char *why;
	unsigned tries;

	for (unsigned i = 0; i < virtio_ncands && !c; i++)
		if (virtio_cands[i].id == VIRTIO_ID_NET)
			c = &virtio_cands[i];
	if (!c) {
		report(false, "net", "reason=no-device");
		return;
	}
	memset(n, 0, sizeof(*n));
	n->self.ip = params.ip;
	n->host.ip = params.hostip;
	if (!net_alloc(n)) {
		report(false, "net", "reason=no-free-ram");
		return;
	}
	if (!virtio_probe(&n->vd, c, 2, &why) || !net_start(n, &why)) {
		report(false, "net-init", "%s reason=%s", c->where, why);
		return;
	}
	print("tg: net dev=0 %s mac=%s link=%u features=0x%lx\n", c->where,
	      mac_str(n->self.mac), n->link, n->vd.features);
	watchdog_start();
	net_broken = false;
	if (n->link && params.dhcp)
		dhcp(n);
	if (!n->link) {
		report(false, "net-link", "reason=down");
	} else if ((why = arp(n, &tries))) {
		report(false, "net-arp", "tries=%u reason=%s", tries, why);
	} else {
		report(true, "net-arp", "host_mac=%s tries=%u",
		       mac_str(n->host.mac), tries);
		if (params.net)
			net_checks(n);
		if (params.netbench && net_recover(n))
			net_bench(n);
	}
	/* Quiet the device for whatever runs next. */
	virtio_reset(&n->vd);
	watchdog_stop();
}
