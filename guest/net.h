/* virtio-net (virtio spec 5.1) and a tiny IPv4 stack over it: the driver
 * (net.c), frames in and out (inet.c), the checks (net_test.c) and the
 * benchmark (net_bench.c). Nothing in net.c's packet paths or in inet.c
 * is privileged, so ring 3 runs them too. */
#ifndef TG_NET_H
#define TG_NET_H

#include "virtio.h"

#define VIRTIO_ID_NET			1
#define VIRTIO_NET_F_MAC		5
#define VIRTIO_NET_F_MRG_RXBUF		15
#define VIRTIO_NET_F_STATUS		16
#define VIRTIO_NET_S_LINK_UP		1

#define NET_RXQ				0
#define NET_TXQ				1

/* struct virtio_net_hdr_v1: 12 bytes with VERSION_1, MRG_RXBUF or not. */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
} __attribute__((packed));

#define NET_HDR_LEN			sizeof(struct virtio_net_hdr)

#define ETH_ALEN			6
#define ETH_HLEN			14
#define ETH_TYPE_IP			0x0800
#define ETH_TYPE_ARP			0x0806
#define IP_HLEN				20
#define UDP_HLEN			8
#define ICMP_HLEN			8
#define IPPROTO_ICMP			1
#define IPPROTO_UDP			17
#define ICMP_ECHO_REPLY			0
#define ICMP_ECHO_REQUEST		8
#define ARP_REQUEST			1
#define ARP_REPLY			2
#define ARP_LEN				28
#define IP_BROADCAST			0xffffffffu

/* The largest frame a device may deliver without offloads (5.1.6.3.1
 * sizes buffers for it at 65562 bytes with the header). */
#define NET_FRAME_MAX			65550
/* The largest frame the guest sends: Ethernet II at a 1500-byte MTU. */
#define NET_TX_FRAME_MAX		1514

/* Receive buffers: with MRG_RXBUF small ones, so that a full-sized frame
 * spans three and the reassembly is exercised; without it each must take
 * a whole frame (at least 1526 bytes, 5.1.6.3.1). */
#define NET_RX_BUF_MRG			512
#define NET_RX_BUF			2048
#define NET_TX_BUF			2048
#define NET_RAM				(2ULL << 20)

/* Failures other than a lost packet. */
#define NET_ERR_BAD_ID			(-1)	/* used id not in flight */
#define NET_ERR_USED_LEN		(-2)	/* too short or too long */
#define NET_ERR_NUM_BUFFERS		(-3)	/* 0, or more than were used */
#define NET_ERR_HDR			(-4)	/* offload fields set */
#define NET_ERR_TOO_BIG			(-5)	/* over NET_FRAME_MAX */
#define NET_ERR_NEEDS_RESET		(-6)
#define NET_ERR_TX_FULL			(-7)	/* transmit buffers not used */

/* One end of a frame. */
struct inet_addr {
	uint8_t mac[ETH_ALEN];
	uint32_t ip;			/* host byte order */
};

struct net_dev {
	struct virtio_dev vd;
	struct inet_addr self, host;
	bool link;
	uint32_t rx_buf_size;
	uint64_t rx_bufs;		/* one per receive descriptor */
	uint64_t tx_bufs;		/* NET_TX_BUF each: header, frame */
	struct vring_desc *tx_tables;	/* two entries per transmit slot */
	uint16_t tx_free[VQ_MAX_SIZE];	/* free transmit slots, a stack */
	unsigned tx_nfree;
	uint16_t ip_id;
	/* The last frame received, reassembled, and how many buffers it
	 * came in. */
	uint8_t *frame;
	uint32_t frame_len;
	unsigned frame_bufs;
	unsigned echo_answered;		/* ICMP echo requests answered */
};

bool net_alloc(struct net_dev *n);
bool net_start(struct net_dev *n, const char **why);
int net_rx(struct net_dev *n);
int net_tx_reclaim(struct net_dev *n);
uint8_t *net_tx_frame(struct net_dev *n, int *slot);
int net_tx(struct net_dev *n, int slot, uint32_t len, bool split);
const char *net_err_name(int rc);

/* A received frame, parsed (inet.c). */
enum pkt_kind { PKT_OTHER, PKT_ARP, PKT_ICMP, PKT_UDP, PKT_BAD };

struct pkt {
	enum pkt_kind kind;
	const char *bad;		/* PKT_BAD: what was wrong */
	const uint8_t *eth_src;
	uint32_t src;			/* IPv4 source, or ARP sender */
	/* ARP */
	uint16_t arp_op;
	const uint8_t *arp_sha, *arp_tha;
	uint32_t arp_tpa;
	/* ICMP and UDP */
	uint8_t icmp_type;
	uint16_t icmp_id, icmp_seq;
	uint16_t sport, dport;
	bool udp_csum;			/* the sender gave a checksum */
	const uint8_t *data;		/* echo or UDP payload */
	uint32_t len;
};

extern const uint8_t eth_broadcast[ETH_ALEN];
/* Big-endian fields. */
uint16_t get16(const uint8_t *p);
uint32_t get32(const uint8_t *p);
void put16(uint8_t *p, uint16_t v);
void put32(uint8_t *p, uint32_t v);

void inet_parse(const struct inet_addr *self, const uint8_t *f,
		uint32_t len, struct pkt *p);
uint32_t arp_frame(uint8_t *f, uint16_t op, const struct inet_addr *from,
		   const struct inet_addr *to);
uint32_t icmp_echo_frame(uint8_t *f, const struct inet_addr *from,
			 const struct inet_addr *to, uint16_t ip_id,
			 uint8_t type, uint16_t id, uint16_t seq,
			 const uint8_t *data, uint32_t len);
uint32_t udp_frame(uint8_t *f, const struct inet_addr *from,
		   const struct inet_addr *to, uint16_t ip_id, uint16_t sport,
		   uint16_t dport, const uint8_t *data, uint32_t len);
bool net_serve(struct net_dev *n, const struct pkt *p);

/* DHCP, the client's side (dhcp.c). */
#define DHCP_SERVER_PORT		67
#define DHCP_CLIENT_PORT		68
#define DHCP_DISCOVER			1
#define DHCP_OFFER			2
#define DHCP_REQUEST			3
#define DHCP_ACK			5
#define DHCP_NAK			6

/* What a server's answer said; 0 for what it left out. */
struct dhcp_reply {
	uint8_t type;
	uint32_t yiaddr, server, mask, router, dns, lease;
};

/* A DISCOVER, or a REQUEST for req_ip from server, broadcast. */
uint32_t dhcp_frame(uint8_t *f, const uint8_t *mac, uint32_t xid,
		    uint8_t type, uint32_t req_ip, uint32_t server);
/* Fills r from p when p answers transaction xid (r->type 0 if it does
 * not); a reason when it does but is malformed. */
const char *dhcp_parse(const struct pkt *p, const uint8_t *mac, uint32_t xid,
		       struct dhcp_reply *r);

/* The checks (net_test.c) and the benchmark (net_bench.c). */
extern bool net_broken;
bool net_recover(struct net_dev *n);
void net_bench(struct net_dev *n);

#endif
