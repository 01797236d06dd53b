#!/bin/sh
# /init of the ppc64le Linux guest that tests/ppc64/checks.sh boots under
# thpvm: says it reached user space and what the kernel made of the
# machine and how many CPUs it runs, loads the virtio modules, reads and
# writes /dev/vda if there is one; with guest.9p=TAG, mounts the 9p
# share TAG and changes it (below); with waitballoon on its command line,
# addresses eth0, fills 200 MiB and frees it, and waits for the host's
# pings and balloon; else fills
# 200 MiB of its memory (a file in its rootfs; not with nofill), waits
# for the host to count huge pages, and powers off.
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox mount -t sysfs sys /sys
echo "ppc-guest: user space"
/bin/busybox grep -E '^(MMU|platform|timebase)' /proc/cpuinfo |
	/bin/busybox sed 's/^/ppc-guest: /'
echo "ppc-guest: online CPUs $(/bin/busybox cat /sys/devices/system/cpu/online)"
# A second CPU goes offline (RTAS stop-self) and back (start-cpu).
if [ -e /sys/devices/system/cpu/cpu1/online ]; then
	echo 0 > /sys/devices/system/cpu/cpu1/online
	echo "ppc-guest: after offline $(/bin/busybox cat /sys/devices/system/cpu/online)"
	echo 1 > /sys/devices/system/cpu/cpu1/online
	echo "ppc-guest: after online $(/bin/busybox cat /sys/devices/system/cpu/online)"
	/bin/busybox grep -c ^processor /proc/cpuinfo |
		/bin/busybox sed 's/^/ppc-guest: processors /'
fi
# With contballoon, thpvm's cont_balloon.ko in place of virtio_balloon.
balloon=virtio_balloon.ko
/bin/busybox grep -q contballoon /proc/cmdline && balloon=cont_balloon.ko
while read -r ko; do
	[ "$ko" = virtio_balloon.ko ] && ko=$balloon
	/bin/busybox insmod "/lib/modules/$ko" || echo "ppc-guest: insmod $ko failed"
done </lib/modules/load-order
# The hwrng pseries-rng gives: 16 bytes of H_RANDOM.
echo "ppc-guest: hwrng $(/bin/busybox cat /sys/class/misc/hw_random/rng_current)" \
	"$(/bin/busybox head -c 16 /dev/hwrng | /bin/busybox od -An -tx1 | /bin/busybox tr -d ' \n')"
if [ -b /dev/vda ]; then
	# The disk's first bytes, then the guest's own at 4 KiB.
	echo "ppc-guest: disk says $(/bin/busybox head -c 14 /dev/vda)"
	echo -n "guest-wrote-this" |
		/bin/busybox dd of=/dev/vda bs=4096 seek=1 conv=notrunc,fsync \
			2>/dev/null
fi
# guest.9p=TAG: the 9p modules (9p-order, apart, so that other boots do
# without them), then the share mounted as docs/9p.md mounts one; the
# host's hello.txt printed, data.bin copied to copy.bin, made.txt
# written and old.txt moved into a new directory, for the host to find;
# the device's interrupts; then unmounted, which waits for the server's
# last answers.
share=$(/bin/busybox sed -n 's/.*guest\.9p=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$share" ]; then
	while read -r ko; do
		/bin/busybox insmod "/lib/modules/$ko" ||
			echo "ppc-guest: insmod $ko failed"
	done </lib/modules/9p-order
	/bin/busybox mkdir -p /share
	if /bin/busybox mount -t 9p \
		-o trans=virtio,version=9p2000.L,msize=524288 "$share" /share; then
		echo "ppc-guest: 9p mount $(/bin/busybox grep ' /share 9p ' /proc/mounts)"
		echo "ppc-guest: 9p hello $(/bin/busybox cat /share/hello.txt)"
		/bin/busybox cp /share/data.bin /share/copy.bin &&
			echo "written by Linux" > /share/made.txt &&
			/bin/busybox mkdir /share/newdir &&
			/bin/busybox mv /share/old.txt /share/newdir/renamed.txt &&
			echo "ppc-guest: 9p wrote" || echo "ppc-guest: 9p writing failed"
		/bin/busybox grep 'virtio.*requests' /proc/interrupts |
			/bin/busybox sed 's/^/ppc-guest: 9p irq /'
		/bin/busybox umount /share && echo "ppc-guest: 9p unmounted" ||
			echo "ppc-guest: 9p umount failed"
	else
		echo "ppc-guest: 9p mount $share failed"
	fi
fi
# How the virtio devices interrupt: MSI-X vectors (edge, one per queue)
# or INTx (level, one per device).
/bin/busybox grep virtio /proc/interrupts | /bin/busybox sed 's/^/ppc-guest: irq /' 
if /bin/busybox grep -q waitballoon /proc/cmdline; then
	/bin/busybox ip addr add 10.0.2.2/24 dev eth0 &&
		/bin/busybox ip link set eth0 up
	# Touched and freed: what the balloon then takes is host-resident.
	/bin/busybox head -c 209715200 /dev/zero > /fill
	/bin/busybox rm /fill
	# The host's checks take as long as the emulation makes them,
	# then it stops the VM; the power-off only ends one it forgot.
	echo "ppc-guest: ready"
	/bin/busybox sleep 3600
	/bin/busybox poweroff -f
fi
if /bin/busybox grep -q nofill /proc/cmdline; then
	/bin/busybox poweroff -f
fi
/bin/busybox head -c 209715200 /dev/zero > /fill
/bin/busybox ls -l /fill | /bin/busybox sed 's/^/ppc-guest: /'
echo "ppc-guest: filled"
/bin/busybox sleep 3600
/bin/busybox poweroff -f
