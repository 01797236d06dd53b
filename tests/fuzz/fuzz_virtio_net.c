/* virtio-net transmit and receive (virtio/net.c) with a socketpair where
 * the tap goes: transmit chains the input's driver builds
 * (fuzz_virtio.h) go out through it, and before each notification of
 * the receive queue a packet of the input's bytes arrives on it. Both
 * ends are drained after each input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "fuzz_virtio.h"
#include "virtio/net.h"

#define PACKET_MAX 2048

static struct virtio_net net;
static int fds[2] = { -1, -1 };	/* the device's end, the host's */
static uint8_t packet[70000];

static void net_setup(void)
{
	static const uint8_t mac[ETH_ALEN] = { 0x52, 0x54, 0, 0x12, 0x34,
					       0x56 };

	fuzz_ram_load(NULL, 0);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, fds) ||
	    virtio_net_create(&net, fds[0], mac, &fuzz_ram)) {
		fprintf(stderr, "fuzz_virtio_net: cannot set up\n");
		abort();
	}
	fuzz_virtio_attach(&net.vdev);
}

/* A packet of kick's length, from the input's host bytes, arrives. */
static void net_host(struct virtio_device *vdev, unsigned q, uint8_t kick,
		     struct fuzz_input *in)
{
	size_t len = (kick >> 1) * (PACKET_MAX / 128), i;

	if (q != NET_RXQ)
		return;
	for (i = 0; i < len; i++)
		packet[i] = fuzz_u8(in) ^ i;
	/* Interrupted (by libFuzzer's timeout alarm) or full: no packet. */
	if (send(fds[1], packet, len, 0) < 0 && errno != EAGAIN &&
	    errno != EINTR)
		abort();
	vdev->ops->watch_event(vdev, 0, EPOLLIN);
}

static void drain(int fd)
{
	while (recv(fd, packet, sizeof(packet), 0) >= 0 || errno == EINTR)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fds[0] < 0)
		net_setup();
	fuzz_virtio_run(&net.vdev, data, size, net_host);
	drain(fds[0]);
	drain(fds[1]);
	return 0;
}
