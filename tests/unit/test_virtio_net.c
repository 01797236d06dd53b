/* virtio-net without KVM: guest RAM mapped as in test_virtqueue.c, rings
 * built by hand, the device driven through the transport-side calls and
 * its own thread. Most cases put a socketpair where the tap goes: it
 * passes one packet per call as a tap does, and its send buffer can be
 * filled to make the device meet EAGAIN. The last case uses a real tap
 * and is skipped without /dev/net/tun or CAP_NET_ADMIN. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backend/tap.h"
#include "core/guest_ram.h"
#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/net.h"

#define BUF_GPA(q, i) (0x100000 + (q) * 0x80000 + (i) * 0x4000)
#define PROTECT_START 0x10000		/* rings and buffers */
#define PROTECT_END 0x200000
#define HDR 12
#define ETH_P_TEST 0x88b5		/* IEEE local experimental */

#define BASE_FEATURES (1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTIO_NET_F_MAC | \
		       1ULL << VIRTIO_NET_F_STATUS)
#define MRG_FEATURES (BASE_FEATURES | 1ULL << VIRTIO_NET_F_MRG_RXBUF)

static const uint8_t mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static struct virtio_net net;
static int peer = -1;		/* the host's end of the link */
static int dev_end = -1;	/* a second fd on the device's end */

/* Posts a one-descriptor receive buffer in slot i. */
static void post_rx(unsigned i, uint32_t len)
{
	set_desc(NET_RXQ, i, BUF_GPA(NET_RXQ, i), len, VRING_DESC_F_WRITE, 0);
	publish(NET_RXQ, i);
}

/* Reads device state the device thread changes under its lock. */
static uint64_t locked_read(const void *field, size_t size)
{
	uint64_t v = 0;

	pthread_mutex_lock(&net.vdev.lock);
	memcpy(&v, field, size);
	pthread_mutex_unlock(&net.vdev.lock);
	return v;
}

#define LOCKED(field) locked_read(&(field), sizeof(field))

static void net_driver_start(uint64_t features)
{
	driver_start(&net.vdev, features, 2);
}

/* A device on tap_fd (a socketpair end unless given), not started. */
static bool setup_on(int tap_fd, uint64_t features)
{
	int sv[2];

	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	if (tap_fd < 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			       SOCK_CLOEXEC, 0, sv)) {
			CHECK(!"socketpair");
			return false;
		}
		tap_fd = sv[0];
		peer = sv[1];
		dev_end = dup(sv[0]);
	}
	if (virtio_net_create(&net, tap_fd, mac, &ram)) {
		CHECK(!"virtio_net_create");
		return false;
	}
	net.vdev.notify = count_irq;
	net.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&net.vdev), 0);
	net_driver_start(features);
	return true;
}

static bool setup(uint64_t features)
{
	return setup_on(-1, features);
}

static void teardown(void)
{
	virtio_net_destroy(&net);
	if (peer >= 0)
		close(peer);
	if (dev_end >= 0)
		close(dev_end);
	peer = dev_end = -1;
	guest_ram_unmap(&ram);
}

/* A frame: broadcast destination, our MAC as source, a marker byte. */
static size_t make_frame(uint8_t *f, size_t len, uint8_t marker)
{
	size_t i;

	memset(f, 0xff, ETH_ALEN);
	memcpy(f + ETH_ALEN, mac, ETH_ALEN);
	f[12] = ETH_P_TEST >> 8;
	f[13] = ETH_P_TEST & 0xff;
	for (i = 14; i < len; i++)
		f[i] = marker + i;
	return len;
}

/* A packet from the host: a junk header the device must not pass on. */
static void host_send(size_t frame_len, uint8_t marker)
{
	uint8_t pkt[HDR + 2048];

	memset(pkt, 0xee, HDR);
	make_frame(pkt + HDR, frame_len, marker);
	CHECK_EQ(send(peer, pkt, HDR + frame_len, 0), HDR + frame_len);
}

static ssize_t host_recv(uint8_t *buf, size_t len)
{
	struct pollfd p = { .fd = peer, .events = POLLIN };

	if (poll(&p, 1, TIMEOUT_MS) != 1)
		return -1;
	return recv(peer, buf, len, MSG_DONTWAIT);
}

/* Queues a transmit packet in slot i: the header and the first bytes of
 * the frame in one descriptor, the rest in another. */
static void guest_send(unsigned i, size_t frame_len, uint8_t marker)
{
	uint64_t buf = BUF_GPA(NET_TXQ, i);
	unsigned d = 2 * i;

	memset(gpa(buf), 0xaa, HDR);	/* junk: no offloads negotiated */
	make_frame(gpa(buf + HDR), frame_len, marker);
	set_desc(NET_TXQ, d, buf, HDR + 20, VRING_DESC_F_NEXT, d + 1);
	set_desc(NET_TXQ, d + 1, buf + HDR + 20, frame_len - 20, 0, 0);
	publish(NET_TXQ, d);
}

static bool frame_ok(const uint8_t *f, size_t len, uint8_t marker)
{
	uint8_t want[2048];

	make_frame(want, len, marker);
	return !memcmp(f, want, len);
}

static bool header_ok(const uint8_t *h, uint16_t num_buffers)
{
	static const uint8_t zero[HDR - 2];

	return !memcmp(h, zero, sizeof(zero)) &&
	       get_le16(h + HDR - 2) == num_buffers;
}

static void test_config(void)
{
	struct virtio_device *vdev = &net.vdev;
	uint64_t f;
	uint8_t cfg[8], junk[2] = { 0, 0 };

	if (!setup(BASE_FEATURES))
		return;
	f = virtio_get_device_features(vdev, 0) |
	    (uint64_t)virtio_get_device_features(vdev, 1) << 32;
	CHECK_EQ(vdev->device_id, VIRTIO_ID_NET);
	CHECK_EQ(f, MRG_FEATURES | 1ULL << VIRTIO_RING_F_EVENT_IDX |
		    1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	virtio_config_access(vdev, 6, junk, 2, true);	/* read-only */
	virtio_config_access(vdev, 0, cfg, 8, false);
	CHECK(!memcmp(cfg, mac, ETH_ALEN));
	CHECK_EQ(get_le16(cfg + 6), VIRTIO_NET_S_LINK_UP);
	teardown();
}

static void test_tx(void)
{
	uint8_t pkt[2048];
	unsigned i;

	if (!setup(BASE_FEATURES))
		return;
	guest_send(0, 60, 1);
	guest_send(1, 1514, 2);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK(WAIT_FOR(used_idx(NET_TXQ) == 2));
	for (i = 0; i < 2; i++) {
		CHECK_EQ(used_id(NET_TXQ, i), 2 * i);
		CHECK_EQ(used_len(NET_TXQ, i), 0);
	}
	CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 60);
	CHECK(header_ok(pkt, 0));
	CHECK(frame_ok(pkt + HDR, 60, 1));
	CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 1514);
	CHECK(frame_ok(pkt + HDR, 1514, 2));
	CHECK(WAIT_FOR(irq_count(NET_TXQ) >= 1));
	CHECK_EQ(LOCKED(net.tx_dropped), 0);
	teardown();
}

/* The tap cannot take more: the device keeps the packet, waits for the
 * tap to be writable, and then sends everything in order. */
static void test_tx_eagain(void)
{
	uint8_t pkt[2048];
	int sndbuf = 4096;
	unsigned i, fillers = 0;

	if (!setup(BASE_FEATURES))
		return;
	setsockopt(dev_end, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	memset(pkt, 0, HDR + 60);
	while (send(dev_end, pkt, HDR + 60, 0) > 0)
		fillers++;
	CHECK_EQ(errno, EAGAIN);
	for (i = 0; i < 3; i++)
		guest_send(i, 60, 10 + i);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK(WAIT_FOR(LOCKED(net.tx_pending)));
	CHECK_EQ(used_idx(NET_TXQ), 0);
	for (i = 0; i < fillers; i++)
		CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 60);
	CHECK(WAIT_FOR(used_idx(NET_TXQ) == 3));
	for (i = 0; i < 3; i++) {
		CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 60);
		CHECK(frame_ok(pkt + HDR, 60, 10 + i));
	}
	CHECK_EQ(LOCKED(net.tx_dropped), 0);
	teardown();
}

static void test_rx(void)
{
	uint8_t *buf;

	if (!setup(BASE_FEATURES))
		return;
	post_rx(0, 1526);
	post_rx(1, 1526);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(100, 3);
	host_send(1514, 4);
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 2));
	CHECK_EQ(used_id(NET_RXQ, 0), 0);
	CHECK_EQ(used_len(NET_RXQ, 0), HDR + 100);
	buf = gpa(BUF_GPA(NET_RXQ, 0));
	CHECK(header_ok(buf, 1));
	CHECK(frame_ok(buf + HDR, 100, 3));
	CHECK_EQ(used_len(NET_RXQ, 1), HDR + 1514);
	CHECK(frame_ok(gpa(BUF_GPA(NET_RXQ, 1)) + HDR, 1514, 4));
	/* The interrupt follows the used entries: wait for it too. */
	CHECK(WAIT_FOR(irq_count(NET_RXQ) >= 1));
	teardown();
}

/* Packets wait in the tap while the receive queue is empty. */
static void test_rx_waits_for_buffers(void)
{
	if (!setup(BASE_FEATURES))
		return;
	host_send(200, 5);
	virtio_queue_kick(&net.vdev, NET_RXQ);	/* nothing to take yet */
	post_rx(0, 1526);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 1));
	CHECK_EQ(used_len(NET_RXQ, 0), HDR + 200);
	CHECK(frame_ok(gpa(BUF_GPA(NET_RXQ, 0)) + HDR, 200, 5));
	CHECK_EQ(LOCKED(net.rx_dropped), 0);
	teardown();
}

/* A paused device takes nothing, neither from the guest's queues nor from
 * the tap, and carries on where it was when resumed. */
static void test_pause(void)
{
	uint8_t pkt[2048];

	if (!setup(BASE_FEATURES))
		return;
	virtio_device_pause(&net.vdev);
	guest_send(0, 60, 6);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	post_rx(0, 1526);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(100, 7);
	usleep(200 * 1000);
	CHECK_EQ(used_idx(NET_TXQ), 0);
	CHECK_EQ(used_idx(NET_RXQ), 0);
	virtio_device_resume(&net.vdev);
	CHECK(WAIT_FOR(used_idx(NET_TXQ) == 1));
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 1));
	CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 60);
	CHECK(frame_ok(pkt + HDR, 60, 6));
	CHECK(frame_ok(gpa(BUF_GPA(NET_RXQ, 0)) + HDR, 100, 7));
	/* Stopping a paused device does not hang. */
	virtio_device_pause(&net.vdev);
	teardown();
}

/* Reassembles a packet spread over used entries first..first+n-1. */
static bool merged_ok(unsigned first, unsigned n, size_t frame_len,
		      uint8_t marker)
{
	uint8_t pkt[HDR + 2048];
	size_t off = 0;
	unsigned i;

	for (i = first; i < first + n; i++) {
		uint32_t len = used_len(NET_RXQ, i);

		if (off + len > sizeof(pkt))
			return false;
		memcpy(pkt + off, gpa(BUF_GPA(NET_RXQ, used_id(NET_RXQ, i))),
		       len);
		off += len;
	}
	return off == HDR + frame_len && header_ok(pkt, n) &&
	       frame_ok(pkt + HDR, frame_len, marker);
}

static void test_rx_mergeable(void)
{
	unsigned i;

	if (!setup(MRG_FEATURES))
		return;
	for (i = 0; i < 4; i++)
		post_rx(i, 256);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(588, 6);			/* 600 bytes: 3 buffers */
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 3));
	CHECK_EQ(used_len(NET_RXQ, 0), 256);
	CHECK_EQ(used_len(NET_RXQ, 2), 600 - 512);
	CHECK(merged_ok(0, 3, 588, 6));

	/* 700 bytes with one 256-byte buffer left: it waits for more. */
	host_send(688, 7);
	CHECK(WAIT_FOR(LOCKED(net.rx_len) == HDR + 688));
	CHECK_EQ(used_idx(NET_RXQ), 3);
	post_rx(4, 256);
	post_rx(5, 256);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 6));
	CHECK_EQ(used_id(NET_RXQ, 3), 3);
	CHECK(merged_ok(3, 3, 688, 7));
	CHECK_EQ(LOCKED(net.rx_dropped), 0);
	teardown();
}

/* Without MRG_RXBUF a packet larger than the buffer is dropped; the
 * buffer stays for the next one. */
static void test_rx_buffer_too_small(void)
{
	if (!setup(BASE_FEATURES))
		return;
	post_rx(0, 64);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(200, 8);
	CHECK(WAIT_FOR(LOCKED(net.rx_dropped) == 1));
	host_send(40, 9);
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 1));
	CHECK_EQ(used_id(NET_RXQ, 0), 0);
	CHECK_EQ(used_len(NET_RXQ, 0), HDR + 40);
	CHECK(frame_ok(gpa(BUF_GPA(NET_RXQ, 0)) + HDR, 40, 9));
	teardown();
}

/* With MRG_RXBUF, a packet larger than the whole queue's buffers is
 * dropped, and the buffers held for it serve the next packets. */
static void test_rx_larger_than_queue(void)
{
	unsigned i;

	if (!setup(MRG_FEATURES))
		return;
	for (i = 0; i < QSIZE; i++)
		post_rx(i, 24);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(500, 10);
	CHECK(WAIT_FOR(LOCKED(net.rx_dropped) == 1));
	CHECK_EQ(used_idx(NET_RXQ), 0);
	host_send(60, 11);			/* 72 bytes: 3 buffers */
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 3));
	CHECK(merged_ok(0, 3, 60, 11));
	teardown();
}

/* Chains the device cannot frame: a reset is needed, nothing is sent,
 * and the device works again after the reset. */
static void test_hostile_chains(void)
{
	uint8_t pkt[2048];

	if (!setup(BASE_FEATURES))
		return;
	set_desc(NET_TXQ, 0, BUF_GPA(NET_TXQ, 0), HDR - 4, 0, 0);
	publish(NET_TXQ, 0);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK(WAIT_FOR(needs_reset(&net.vdev)));
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) == 1));

	virtio_set_status(&net.vdev, 0);
	net_driver_start(BASE_FEATURES);
	set_desc(NET_TXQ, 0, BUF_GPA(NET_TXQ, 0), HDR + 60, VRING_DESC_F_NEXT,
		 1);
	set_desc(NET_TXQ, 1, BUF_GPA(NET_TXQ, 1), 16, VRING_DESC_F_WRITE, 0);
	publish(NET_TXQ, 0);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK(WAIT_FOR(needs_reset(&net.vdev)));
	CHECK_EQ(used_idx(NET_TXQ), 0);
	CHECK_EQ(recv(peer, pkt, sizeof(pkt), MSG_DONTWAIT), -1);

	virtio_set_status(&net.vdev, 0);
	net_driver_start(BASE_FEATURES);
	set_desc(NET_RXQ, 0, BUF_GPA(NET_RXQ, 0), 16, VRING_DESC_F_NEXT, 1);
	set_desc(NET_RXQ, 1, BUF_GPA(NET_RXQ, 1), 1500, VRING_DESC_F_WRITE, 0);
	publish(NET_RXQ, 0);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	CHECK(WAIT_FOR(needs_reset(&net.vdev)));

	virtio_set_status(&net.vdev, 0);
	net_driver_start(MRG_FEATURES);
	post_rx(0, HDR - 1);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	CHECK(WAIT_FOR(needs_reset(&net.vdev)));

	virtio_set_status(&net.vdev, 0);
	net_driver_start(BASE_FEATURES);
	guest_send(0, 60, 12);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK(WAIT_FOR(used_idx(NET_TXQ) == 1));
	CHECK_EQ(host_recv(pkt, sizeof(pkt)), HDR + 60);
	CHECK(frame_ok(pkt + HDR, 60, 12));
	teardown();
}

/* After a reset returns the device must not touch guest memory: take
 * the rings and buffers away and give it every reason to. */
static void expect_quiet_after_reset(void)
{
	uint8_t *p = gpa(PROTECT_START);
	size_t len = PROTECT_END - PROTECT_START;

	CHECK_EQ(mprotect(p, len, PROT_NONE), 0);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	host_send(60, 0x40);
	poll(NULL, 0, 20);	/* room for a wrong access to crash us */
	CHECK_EQ(mprotect(p, len, PROT_READ | PROT_WRITE), 0);
}

static void test_reset_midway(void)
{
	uint8_t pkt[2048];
	int sndbuf = 4096;
	unsigned i;

	if (!setup(MRG_FEATURES))
		return;
	/* A transmit packet waiting for the tap. */
	setsockopt(dev_end, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	memset(pkt, 0, HDR + 60);
	while (send(dev_end, pkt, HDR + 60, 0) > 0)
		;
	guest_send(0, 60, 13);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	/* A received packet waiting for more buffers. */
	post_rx(0, 256);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(688, 14);
	CHECK(WAIT_FOR(LOCKED(net.tx_pending) &&
		       LOCKED(net.rx_len) == HDR + 688));

	virtio_set_status(&net.vdev, 0);
	CHECK_EQ(LOCKED(net.rx_dropped), 1);
	CHECK(!LOCKED(net.tx_pending));
	while (recv(peer, pkt, sizeof(pkt), MSG_DONTWAIT) > 0)
		;	/* the tap is writable again */
	expect_quiet_after_reset();
	CHECK_EQ(used_idx(NET_TXQ), 0);
	CHECK_EQ(used_idx(NET_RXQ), 0);
	CHECK_EQ(recv(peer, pkt, sizeof(pkt), MSG_DONTWAIT), -1);

	/* A new driver sees the packets sent after the reset only. */
	net_driver_start(MRG_FEATURES);
	for (i = 0; i < 4; i++)
		post_rx(i, 256);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	host_send(100, 15);
	CHECK(WAIT_FOR(used_idx(NET_RXQ) >= 1));
	/* The packet sent while the device was reset, then ours. */
	CHECK(merged_ok(0, 1, 60, 0x40));
	CHECK(WAIT_FOR(used_idx(NET_RXQ) == 2));
	CHECK(merged_ok(1, 1, 100, 15));
	/* The transmit packet taken before the reset is gone for good. */
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK_EQ(recv(peer, pkt, sizeof(pkt), MSG_DONTWAIT), -1);
	teardown();
}

/* Resets racing with traffic in both directions. */
static void test_reset_races(void)
{
	uint8_t pkt[2048];
	unsigned round, i;

	if (!setup(MRG_FEATURES))
		return;
	for (round = 0; round < 50; round++) {
		for (i = 0; i < 4; i++) {
			post_rx(i, 512);
			guest_send(i, 200, i);
			host_send(700, i);
		}
		virtio_queue_kick(&net.vdev, NET_RXQ);
		virtio_queue_kick(&net.vdev, NET_TXQ);
		if (round % 2)
			poll(NULL, 0, 1);
		virtio_set_status(&net.vdev, 0);
		expect_quiet_after_reset();
		/* What either side left unread. */
		while (recv(peer, pkt, sizeof(pkt), MSG_DONTWAIT) > 0 ||
		       recv(dev_end, pkt, sizeof(pkt), MSG_DONTWAIT) > 0)
			;
		net_driver_start(MRG_FEATURES);
	}
	teardown();
}

static bool link_up(const char *ifname)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", ifname);
	ok = s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ok = ok && !ioctl(s, SIOCSIFFLAGS, &ifr);
	if (s >= 0)
		close(s);
	return ok;
}

static int packet_socket(const char *ifname, struct sockaddr_ll *sll)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	memset(sll, 0, sizeof(*sll));
	sll->sll_family = AF_PACKET;
	sll->sll_protocol = htons(ETH_P_ALL);
	sll->sll_ifindex = if_nametoindex(ifname);
	if (s >= 0 && bind(s, (struct sockaddr *)sll, sizeof(*sll))) {
		close(s);
		return -1;
	}
	return s;
}

/* The first frame of ours that arrives on s from the guest's side. */
static ssize_t packet_recv(int s, uint8_t *buf, size_t len)
{
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	while (poll(&p, 1, TIMEOUT_MS) == 1) {
		fl = sizeof(from);
		n = recvfrom(s, buf, len, 0, (struct sockaddr *)&from, &fl);
		if (n >= 14 && from.sll_pkttype != PACKET_OUTGOING &&
		    get_le16(buf + 12) == htons(ETH_P_TEST))
			return n;
	}
	return -1;
}

/* Finds the used receive buffer that holds frame marker. */
static bool rx_has_frame(size_t frame_len, uint8_t marker)
{
	unsigned i;

	for (i = 0; i < used_idx(NET_RXQ); i++) {
		uint8_t *b = gpa(BUF_GPA(NET_RXQ, used_id(NET_RXQ, i)));

		if (used_len(NET_RXQ, i) == HDR + frame_len &&
		    header_ok(b, 1) && frame_ok(b + HDR, frame_len, marker))
			return true;
	}
	return false;
}

static void test_real_tap(void)
{
	char ifname[IFNAMSIZ], path[64];
	struct sockaddr_ll sll;
	uint8_t frame[2048];
	int fd, s;
	unsigned i;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		SKIP("cannot open /dev/net/tun");
		return;
	}
	close(fd);
	fd = tap_open("thpvmtest%d", ifname);
	if (fd == -EPERM) {
		SKIP("creating a tap needs CAP_NET_ADMIN");
		return;
	}
	CHECK(fd >= 0);
	if (fd < 0 || !setup_on(fd, BASE_FEATURES))
		return;
	/* Best effort: keep the host's IPv6 chatter off the link. */
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 ifname);
	s = open(path, O_WRONLY | O_CLOEXEC);
	if (s >= 0) {
		CHECK_EQ(write(s, "1", 1), 1);
		close(s);
	}
	CHECK(link_up(ifname));
	s = packet_socket(ifname, &sll);
	CHECK(s >= 0);
	if (s < 0) {
		teardown();
		return;
	}

	guest_send(0, 100, 20);
	virtio_queue_kick(&net.vdev, NET_TXQ);
	CHECK_EQ(packet_recv(s, frame, sizeof(frame)), 100);
	CHECK(frame_ok(frame, 100, 20));

	for (i = 0; i < 8; i++)
		post_rx(i, 1526);
	virtio_queue_kick(&net.vdev, NET_RXQ);
	make_frame(frame, 200, 21);
	CHECK_EQ(sendto(s, frame, 200, 0, (struct sockaddr *)&sll,
			sizeof(sll)), 200);
	CHECK(WAIT_FOR(rx_has_frame(200, 21)));
	close(s);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_config),
		UNIT_TEST(test_tx),
		UNIT_TEST(test_tx_eagain),
		UNIT_TEST(test_rx),
		UNIT_TEST(test_rx_waits_for_buffers),
		UNIT_TEST(test_pause),
		UNIT_TEST(test_rx_mergeable),
		UNIT_TEST(test_rx_buffer_too_small),
		UNIT_TEST(test_rx_larger_than_queue),
		UNIT_TEST(test_hostile_chains),
		UNIT_TEST(test_reset_midway),
		UNIT_TEST(test_reset_races),
		UNIT_TEST(test_real_tap),
	};

	return UNIT_RUN(tests);
}
