/* Tap interface set-up (see tap.h). */
#include "backend/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/log.h"

#define TUN_PATH "/dev/net/tun"
#define DEFAULT_NAME "thpvm%d"

static int open_tun(void)
{
	int fd = open(TUN_PATH, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int err = errno;	/* before logging can change it */

	if (fd >= 0)
		return fd;
	if (err == ENOENT || err == ENODEV || err == ENXIO)
		pr_err("%s is missing: load the tun module (modprobe tun)",
		       TUN_PATH);
	else
		pr_err("cannot open %s: %s", TUN_PATH, strerror(err));
	return -err;
}

static int attach(int fd, const char *name, char ifname[IFNAMSIZ])
{
	struct ifreq ifr;
	int err;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) == 0) {
		memcpy(ifname, ifr.ifr_name, IFNAMSIZ);
		ifname[IFNAMSIZ - 1] = '\0';
		return 0;
	}
	err = errno;	/* before logging can change it */
	if (err == EPERM)
		pr_err("tap %s: permission denied (needs CAP_NET_ADMIN, or a "
		       "persistent tap owned by this user)", name);
	else if (err == EBUSY)
		pr_err("tap %s: busy, attached to another process", name);
	else if (err == EINVAL)
		pr_err("tap %s: invalid name, or an interface of that name "
		       "exists and is not a tap", name);
	else
		pr_err("tap %s: %s", name, strerror(err));
	return -err;
}

int tap_open(const char *name, char ifname[IFNAMSIZ])
{
	/* The header virtio 1.x uses with or without MRG_RXBUF. */
	int hdr_size = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	int fd, err;

	if (!name || !name[0])
		name = DEFAULT_NAME;
	fd = open_tun();
	if (fd < 0)
		return fd;
	err = attach(fd, name, ifname);
	if (err)
		goto fail;
	/* No offloads: the device offers none to the guest either. */
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr_size) < 0 ||
	    ioctl(fd, TUNSETOFFLOAD, 0) < 0) {
		err = -errno;
		pr_err("tap %s: cannot set up the virtio-net header: %s",
		       ifname, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}
