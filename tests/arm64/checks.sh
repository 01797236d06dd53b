#!/bin/sh
# Runs in the emulated arm64 host (tests/hosts/arm64_host.py), in /work with
# thpvm, the unit tests (unit/), Debian's arm64 kernel (vmlinuz), the
# guest's initramfs (guest.cpio), disk images and 9p shares with what
# must be in them afterwards (test_arm64_host.py's p9_files). One line per
# check: "check: ok NAME" or "check: not ok NAME: WHY"; the test that
# made this image turns them into TAP. GIC (set before this script) is
# the host's GIC version: on 3 everything runs; on 2 (no GICv3, so no
# ITS and no MSIs) a boot with both disks, their PCI one on INTx, and
# the test guest with its PCI disk on INTx too.
ok() { echo "check: ok $1"; }
bad() { echo "check: not ok $1: $2"; }
expect() {	# NAME FILE PATTERN: PATTERN is a line of FILE
	if grep -q -- "$3" "$2"; then ok "$1"; else bad "$1" "no \"$3\" in $2"; fi
}
# NAME FILE STATUS PATTERN...: a test guest run that wrote FILE ended
# with STATUS 0 and printed a line of each PATTERN.
tg_passed() {
	local name=$1 file=$2 rc=$3 p
	shift 3
	for p; do
		grep -q -- "$p" "$file" || rc="$rc, no \"$p\""
	done
	[ "$rc" = 0 ] && ok "$name" ||
		bad "$name" "status $rc: $(grep -E 'FAIL|done' "$file" | head -n 3)"
}

export HOME=/tmp
# CI's cross build has UBSan: a report ends the program that made it,
# so the check it was part of fails.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# After thpvm's own "console=ttyS0 earlycon panic=-1".
params="quiet"

disks_written() {
	for disk in mmio pci; do
		mark=$(dd if=$disk.img bs=512 skip=1 count=1 2>/dev/null |
		       head -c 20)
		want="GUEST-WROTE-$(head -c 8 $disk.img)"
		[ "$mark" = "$want" ] && ok "$1$disk disk written by Linux" ||
			bad "$1$disk disk written by Linux" \
			    "sector 1 is \"$mark\""
	done
}

if [ "$GIC" = 2 ]; then
	timeout 300 ./thpvm run -k vmlinuz -i guest.cpio -m 256 -c 2 \
		-d mmio.img,mmio -d pci.img,pci \
		-p "$params guest.action=poweroff" >gicv2.out 2>&1
	rc=$?
	[ $rc = 0 ] && ok "GICv2: boot 2 vCPUs, exit status 0" ||
		bad "GICv2: boot 2 vCPUs, exit status 0" \
		    "status $rc: $(tail -n 3 gicv2.out)"
	expect "GICv2: user space, 2 CPUs" gicv2.out "guest: cpus 2"
	expect "GICv2: virtio-mmio interrupts" gicv2.out \
		"guest: irq .*GIC-0 .*virtio0"
	expect "GICv2: virtio-pci on INTx" gicv2.out \
		"guest: irq .*GIC-0 .*virtio1"
	disks_written "GICv2: "
	# The test guest, its virtio-blk driver on virtio-pci: no ITS, so
	# INTA through the GIC (the tree's interrupt-map).
	cp tg0.img tgv2.img
	timeout 300 ./thpvm run -m 256 -c 2 -d tgv2.img \
		-p "cpus=2 blk skip=vtimer,ptimer" >tgv2.out 2>&1
	tg_passed "GICv2: the test guest's checks pass, exit status 0" \
		tgv2.out $? "^tg: gic version=2 "
	expect "GICv2: the test guest's virtio-blk on virtio-pci, INTx through the GIC" \
		tgv2.out "^tg: ok blk0-irq "
	exit 0
fi

# The unit tests on a real arm64 kernel (the cross build's meson test
# runs them under qemu-user).
for t in unit/test_*; do
	name="unit ${t#unit/test_}"
	if "$t" >/tmp/unit.out 2>&1; then
		# Subtests that skipped here, named (a passing program
		# hides them otherwise).
		skipped=$(sed -n 's/^ok [0-9]* - \(.*\) # SKIP \(.*\)/\1 (\2)/p' \
			  /tmp/unit.out | tr '\n' ' ')
		ok "$name${skipped:+, skipped there: $skipped}"
	else
		bad "$name" "$(grep -E '^(# |not ok)' /tmp/unit.out | head -n 4 |
			      tr '\n' ' ')"
	fi
done

# A compressed kernel that unpacks to more than guest RAM (bomb.gz: 300
# MiB of zeros) is unpacked straight into guest RAM and refused, in one
# line, where it reaches the device tree's block: no host copy of it.
./thpvm run -k bomb.gz -m 256 >bomb.out 2>&1
rc=$?
[ $rc = 1 ] && [ "$(wc -l <bomb.out)" = 1 ] &&
	grep -q "unpacks to more than the 254 MiB of RAM below the device tree" \
		bomb.out &&
	ok "a kernel that unpacks past guest RAM: one error" ||
	bad "a kernel that unpacks past guest RAM: one error" \
	    "status $rc: $(head -n 3 bomb.out)"

# One vCPU, nothing else: user space, then PSCI SYSTEM_OFF.
timeout 300 ./thpvm run -k vmlinuz -i guest.cpio -m 256 --json \
	-p "$params guest.action=poweroff" >boot1.out 2>&1
rc=$?
[ $rc = 0 ] && ok "boot 1 vCPU: exit status 0" ||
	bad "boot 1 vCPU: exit status 0" "status $rc: $(tail -n 3 boot1.out)"
expect "boot 1 vCPU: user space, 1 CPU" boot1.out "guest: cpus 1"
expect "boot 1 vCPU: power-off ends the VM as a reset" boot1.out \
	'"reason":"reset"'

# Two vCPUs (the second started by the guest through PSCI CPU_ON), a
# disk on each transport, the device tree written out.
timeout 300 ./thpvm run -k vmlinuz -i guest.cpio -m 256 -c 2 \
	-d mmio.img,mmio -d pci.img,pci --dump-dtb tree.dtb \
	-p "$params guest.action=reboot" --json >boot2.out 2>&1
rc=$?
[ $rc = 0 ] && ok "boot 2 vCPUs: exit status 0" ||
	bad "boot 2 vCPUs: exit status 0" "status $rc: $(tail -n 3 boot2.out)"
expect "boot 2 vCPUs: user space, 2 CPUs" boot2.out "guest: cpus 2"
expect "virtio-mmio disk read by Linux" boot2.out "guest: disk MMIO-DISK-012345"
expect "virtio-pci disk read by Linux" boot2.out "guest: disk PCI-DISK-0123456"
expect "virtio-mmio interrupts through the GIC" boot2.out \
	"guest: irq .*GICv3.*virtio"
expect "virtio-pci interrupts as MSIs through the ITS" boot2.out \
	"guest: irq .*ITS-MSI.*virtio.-req"
expect "reboot ends the VM as a reset" boot2.out '"reason":"reset"'
disks_written ""
if [ -s tree.dtb ]; then
	echo "dtb-begin"
	base64 tree.dtb
	echo "dtb-end"
fi

# Host huge pages behind guest RAM, with THP as on the project's own
# machines (madvise: only what thpvm asks for) and 200 MiB of the guest's
# 256 written by Linux; the control socket on the way (list, stat, stop).
echo madvise >/sys/kernel/mm/transparent_hugepage/enabled
fill_run() {	# NAME [thpvm options]: stat.NAME is its stat --json
	name=$1
	shift
	./thpvm run -k vmlinuz -i guest.cpio -m 256 --name "$name" "$@" \
		-p "$params guest.fill=200" >"$name.out" 2>&1 &
	pid=$!
	i=0
	while ! grep -q "guest: fill" "$name.out" && [ $i -lt 300 ]; do
		sleep 1
		i=$((i + 1))
	done
	./thpvm list >"list.$name"
	./thpvm stat "$name" --json >"stat.$name"
	./thpvm stop "$name" >/dev/null
	wait $pid
}
splits() {
	sed -n 's/^thp_split_pmd //p' /proc/vmstat
}
field() {	# FILE NAME: a number from a JSON line
	sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"
}
fill_run thp
rc=$?
expect "control socket: list shows the VM" list.thp "^thp .*running"
huge=$(field stat.thp huge)
ram=$(field stat.thp ram)
if [ -n "$huge" ] && [ $((huge * 100)) -ge $((ram * 99)) ]; then
	ok "THP: $((huge >> 20)) of $((ram >> 20)) MiB of guest RAM on host huge pages"
else
	bad "THP: at least 99% of guest RAM on host huge pages" \
	    "$(cat stat.thp) $(tail -n 2 thp.out)"
fi
[ $rc = 0 ] && ok "thpvm stop ends the VM with status 0" ||
	bad "thpvm stop ends the VM with status 0" "status $rc"
fill_run nothp --no-thp
huge=$(field stat.nothp huge)
[ "$huge" = 0 ] && ok "--no-thp: no host huge pages" ||
	bad "--no-thp: no host huge pages" "$(cat stat.nothp)"

# The bundled test guest (no -k), with THP as above: all of RAM written
# from EL0 must end up on host huge pages.
./thpvm run -m 256 --name tg -p "touch=all serve skip=vtimer,ptimer" \
	>tgthp.out 2>&1 &
pid=$!
i=0
while ! grep -q "^tg: serving" tgthp.out && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
./thpvm stat tg --json >stat.tg
./thpvm stop tg >/dev/null
wait $pid
huge=$(field stat.tg huge)
ram=$(field stat.tg ram)
if grep -q "^tg: touch bytes=" tgthp.out && [ -n "$huge" ] &&
   [ $((huge * 100)) -ge $((ram * 99)) ]; then
	ok "test guest: touch from EL0, $((huge >> 20)) of $((ram >> 20)) MiB of guest RAM on host huge pages"
else
	bad "test guest: touch from EL0, at least 99% of guest RAM on host huge pages" \
	    "$(cat stat.tg) $(tail -n 2 tgthp.out)"
fi

# The test guest's checks with 2 vCPUs (the second through PSCI CPU_ON),
# the timers' interrupts through the GIC, RAM written from EL0; a failed
# check and exit_status= reach thpvm's status through the exit register.
# The guest waits until both timers reach 10 ticks, so whichever led may
# have ticked once or twice more: 'ok' already means at least 10.
timeout 120 ./thpvm run -m 256 -c 2 -p "ram=256M cpus=2 touch=all" \
	>tg.out 2>&1
tg_passed "test guest: 2 vCPUs, every check passed, exit status 0" \
	tg.out $? "^tg: done passed=[0-9]* failed=0"
expect "test guest: the second CPU up through PSCI" tg.out \
	"^tg: ok smp cpus=2 "
expect "test guest: virtual timer interrupts through the GIC" tg.out \
	"^tg: ok vtimer ticks=[0-9]* "
expect "test guest: physical timer interrupts through the GIC" tg.out \
	"^tg: ok ptimer ticks=[0-9]* "
expect "test guest: RAM written from EL0" tg.out "^tg: touch bytes="
timeout 120 ./thpvm run -m 256 -p "cpus=2 skip=vtimer,ptimer" \
	>tgfail.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q "^tg: FAIL smp " tgfail.out &&
	ok "test guest: a failed check ends the VM with status 1" ||
	bad "test guest: a failed check ends the VM with status 1" \
	    "status $rc: $(tail -n 2 tgfail.out)"
timeout 120 ./thpvm run -m 256 -p "exit_status=7 skip=vtimer,ptimer" \
	>/dev/null 2>&1
rc=$?
[ $rc = 7 ] && ok "test guest: exit_status=7 is thpvm's exit status" ||
	bad "test guest: exit_status=7 is thpvm's exit status" "status $rc"

# The test guest's virtio-blk driver against thpvm's, on virtio-mmio
# (SPIs through the GIC): a writable and a read-only disk, then
# malformed requests against the first; and its virtio-rng check.
cp tg0.img tgp0.img	# for virtio-pci, still all pattern A
timeout 300 ./thpvm run -m 256 -d tg0.img,mmio -d tg1.img,ro,mmio \
	--rng=transport=mmio -p "blk blk_evil rng skip=vtimer,ptimer" \
	>tgblk.out 2>&1
tg_passed "test guest: virtio-blk on virtio-mmio, every check passed" \
	tgblk.out $? "^tg: ok blk0-irq " "^tg: ok blk1-ro "
expect "test guest: malformed virtio-blk requests, the device survives" \
	tgblk.out "^tg: ok evil-survived "
expect "test guest: virtio-rng on virtio-mmio, its SPI through the GIC" \
	tgblk.out "^tg: ok rng mmio=.* bytes=4096 .* irq=gic "
# The same disks on virtio-pci, MSI-X through the ITS, and the rng.
timeout 300 ./thpvm run -m 256 -c 2 -d tgp0.img -d tg1.img,ro --rng \
	-p "cpus=2 blk rng skip=vtimer,ptimer" >tgpci.out 2>&1
tg_passed "test guest: virtio-blk on virtio-pci, MSI-X through the ITS" \
	tgpci.out $? "^tg: ok blk0-msix vectors=0x2000,0x2001 " \
	"^tg: ok blk1-ro "
expect "test guest: virtio-rng on virtio-pci, MSI-X through the ITS" \
	tgpci.out "^tg: ok rng bdf=.* bytes=4096 .* irq=msix "
# blkbench from both vCPUs at once on a disk with a queue per vCPU (the
# default): each CPU's EL0 loop finishes its share only if its own queue
# is served.
timeout 300 ./thpvm run -m 256 -c 2 -d tg1.img,ro \
	-p "cpus=2 blkbench blkbench_queues=2 skip=vtimer,ptimer" \
	>tgmq.out 2>&1
tg_passed "test guest: blkbench on two queues from two vCPUs at once" \
	tgmq.out $? "^tg: blk dev=0 .* queues=2 " \
	"^tg: blkbench rand4k reqs=20000 .* queues=2$"

# The test guest's balloon driver (continuous pages) on virtio-mmio:
# half its RAM taken and given back by the host, through the control
# socket, the target first given while the VM is paused (and resumed).
./thpvm run -m 256 --name tgb --balloon=transport=mmio \
	-p "balloon serve touch=all skip=vtimer,ptimer" >tgb.out 2>&1 &
pid=$!
i=0
while ! grep -q "^tg: serving" tgb.out && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
# Paused, the guest makes no progress: the new target reaches the
# device, but the guest neither answers it nor prints until resumed.
./thpvm pause tgb >/dev/null
./thpvm balloon tgb --set 128M >/dev/null
lines=$(grep -c "^tg: " tgb.out)
sleep 3
./thpvm stat tgb --json >stat.tgb
./thpvm balloon tgb --json >tgb-paused.json
[ "$(grep -c "^tg: " tgb.out)" = "$lines" ] &&
	grep -q '"state":"paused"' stat.tgb &&
	[ "$(field tgb-paused.json actual)" = 0 ] &&
	ok "pause: the guest makes no progress" ||
	bad "pause: the guest makes no progress" \
	    "$(cat stat.tgb tgb-paused.json) $(tail -n 2 tgb.out)"
./thpvm resume tgb >/dev/null
./thpvm balloon tgb --set 128M --wait=120 --json >tgb-in.json 2>&1
rc=$?
[ $rc = 0 ] && [ "$(field tgb-in.json actual)" = $((128 << 20)) ] &&
	[ "$(field tgb-in.json released)" -ge $((128 << 20)) ] &&
	grep -q "^tg: balloon-dev .* mode=cont .* irq=gic " tgb.out &&
	ok "test guest: balloon on virtio-mmio, 128 MiB in 2 MiB runs, released by the host" ||
	bad "test guest: balloon on virtio-mmio, 128 MiB in 2 MiB runs, released by the host" \
	    "status $rc: $(cat tgb-in.json) $(grep balloon tgb.out | tail -n 2)"
./thpvm balloon tgb --set 256M --wait=120 --json >tgb-out.json 2>&1
rc=$?
[ $rc = 0 ] && [ "$(field tgb-out.json actual)" = 0 ] &&
	ok "test guest: balloon deflated back to 0" ||
	bad "test guest: balloon deflated back to 0" \
	    "status $rc: $(cat tgb-out.json)"
./thpvm stop tgb >/dev/null
wait $pid

# The test guest's net checks on virtio-pci (MSI-X through the ITS) over
# a tap thpvm creates, addressed as soon as it appears: ARP and ICMP echo
# both ways, and UDP to udp_echo, whose log shows the datagram arrived.
./udp_echo 0.0.0.0 7777 >echo.log 2>&1 &
echo_pid=$!
./thpvm run -m 256 -n mode=tap,tapif=thpvm-t1 -p "net ip=10.0.3.2 \
hostip=10.0.3.1 udp_port=7777 net_ping_in=3 skip=vtimer,ptimer" \
	>tgnet.out 2>&1 &
pid=$!
i=0
while ! ip link show thpvm-t1 >/dev/null 2>&1 && [ $i -lt 400 ]; do
	sleep 0.05
	i=$((i + 1))
done
ip addr add 10.0.3.1/24 dev thpvm-t1 && ip link set thpvm-t1 up
i=0
while ! grep -q "^tg: net ping-in waiting" tgnet.out && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
ping -c 3 -W 5 10.0.3.2 >tgping.out 2>&1
wait $pid
rc=$?
kill $echo_pid
[ $rc = 0 ] && grep -q "^tg: done passed=[0-9]* failed=0" tgnet.out &&
	grep -q "^tg: ok net-arp " tgnet.out &&
	grep -q "^tg: ok net-ping-out " tgnet.out &&
	grep -q "^tg: ok net-udp " tgnet.out &&
	grep -q "^tg: ok net-ping-in answered=3" tgnet.out &&
	ok "test guest: net on virtio-pci over a tap: ARP, pings both ways, UDP echo" ||
	bad "test guest: net on virtio-pci over a tap: ARP, pings both ways, UDP echo" \
	    "status $rc: $(grep -E 'FAIL|net|done' tgnet.out | tail -n 4) $(tail -n 2 tgping.out)"
expect "test guest: the host's echo server got the guest's datagram" \
	echo.log "^from 10.0.3.2:7777 "

# virtio-9p: the test guest's 9P2000.L client against thpvm's server on
# p9/, made by test_arm64_host.py as tests/integration/p9_share.py makes
# it for test_9p.py: the share's checks on virtio-pci (MSI-X through
# the ITS), the read-only checks on a second share on virtio-mmio (an
# SPI). Then, as test_9p.py does, the host finds the guest's changes in
# the share, and nothing else changed: not beside it (the sentinel),
# not the read-only share. The hostile requests (9p_hostile) are left
# to test_9p.py on x86: they passed here too (2026-12-07), but their
# 33,000 requests took 73 of this boot's 76 s on an idle machine, with
# CI near its bound, and what they test is the server's code, the same
# on every arch.
tree_sums() {	# find(1)'s ARGS: each path it prints, links not followed,
		# with its kind, mode, owner and content's SHA-256 or target
	find "$@" | sort | while read -r p; do
		if [ -L "$p" ]; then
			what=$(readlink "$p")
		elif [ -f "$p" ]; then
			what=$(sha256sum <"$p")
			what=${what%% *}
		else
			what=-
		fi
		echo "$(stat -c '%F %a %u' "$p") $p $what"
	done
}
outside() {
	tree_sums p9 \( -path p9/share -o -path p9/ro \) -prune -o -print
}
outside >p9-outside.before
tree_sums p9/ro >p9-ro.before
timeout 600 ./thpvm run -m 256 --9p p9/share,share --9p p9/ro,ro,ro,mmio \
	-p "9p 9p_tag=share 9p_ro=ro skip=vtimer,ptimer" >tgp9.out 2>&1
tg_passed "test guest: virtio-9p on virtio-pci with MSI-X, a read-only share on virtio-mmio, every check passed" \
	tgp9.out $? "^tg: done passed=[0-9]* failed=0" \
	"^tg: 9p dev=[0-9] .* tag=share .* irq=msix" \
	"^tg: 9p dev=[0-9] .* tag=ro .* irq=gic" \
	"^tg: ok 9p-session dev=[0-9] msize=524288 " \
	"^tg: ok 9p-create dev=[0-9] .*uid=$(id -u)[^0-9]*$"
# p9-lines.txt: a line for each check, and what each must say.
missing=
while IFS= read -r line; do
	grep -Eq -- "$line" tgp9.out || missing="$missing \"$line\""
done <p9-lines.txt
[ -z "$missing" ] &&
	ok "test guest: each 9p check reported, the read-only share's changes refused with EROFS" ||
	bad "test guest: each 9p check reported, the read-only share's changes refused with EROFS" \
	    "no line$missing"
# p9-after.sha256: the files the checks leave (and the sentinel);
# p9-after.txt: the link they make, what they remove.
why=$(cd p9 && sha256sum -c ../p9-after.sha256 2>&1 | grep -v ': OK$' |
	tr '\n' ' ')
while read -r what path target; do
	case $what in
	link) [ "$(readlink "p9/share/$path")" = "$target" ] ||
		why="$why $path -> $(readlink "p9/share/$path")" ;;
	gone) ! [ -e "p9/share/$path" ] && ! [ -L "p9/share/$path" ] ||
		why="$why $path still there" ;;
	esac
done <p9-after.txt
[ -d p9/share/newdir ] || why="$why no newdir"
[ "$(stat -c %u p9/share/created.bin)" = "$(id -u)" ] ||
	why="$why created.bin is $(stat -c %u p9/share/created.bin)'s"
[ -z "$why" ] && ok "virtio-9p: the host finds the test guest's changes in the share" ||
	bad "virtio-9p: the host finds the test guest's changes in the share" "$why"
outside >p9-outside.after
tree_sums p9/ro >p9-ro.after
cmp -s p9-outside.before p9-outside.after && cmp -s p9-ro.before p9-ro.after &&
	ok "virtio-9p: nothing outside the share changed, nor the read-only share" ||
	bad "virtio-9p: nothing outside the share changed, nor the read-only share" \
	    "$({ diff p9-outside.before p9-outside.after
		diff p9-ro.before p9-ro.after; } | grep '^[-+][^-+]' |
		tr '\n' ' ')"

# Debian's kernel mounts a share (lshare/, from test_arm64_host.py) on
# virtio-pci, its 9p modules loaded by guest.init, and changes it there:
# what the host then finds is what Linux wrote.
cp lshare/old.txt lshare-old.txt
timeout 300 ./thpvm run -k vmlinuz -i guest.cpio -m 256 --9p lshare,lshare \
	-p "$params guest.9p=lshare" >lp9.out 2>&1
rc=$?
[ $rc = 0 ] && ! grep -q "guest: insmod" lp9.out &&
	grep -q "guest: 9p mount lshare /share 9p .*trans=virtio" lp9.out &&
	grep -q "guest: 9p hello $(cat lshare/hello.txt)" lp9.out &&
	grep -q "guest: 9p irq .*ITS-MSI.*virtio.-requests" lp9.out &&
	grep -q "guest: 9p unmounted" lp9.out &&
	ok "Linux: mounts a virtio-9p share, MSIs through the ITS, reads the host's file" ||
	bad "Linux: mounts a virtio-9p share, MSIs through the ITS, reads the host's file" \
	    "status $rc: $(grep -E 'guest: (9p|insmod)' lp9.out | head -n 6 |
		tr '\n' ' ')"
why=
cmp -s lshare/data.bin lshare/copy.bin || why="$why copy.bin differs"
[ "$(cat lshare/made.txt 2>&1)" = "written by Linux" ] ||
	why="$why made.txt: $(head -c 40 lshare/made.txt 2>&1)"
cmp -s lshare-old.txt lshare/newdir/renamed.txt ||
	why="$why newdir/renamed.txt differs"
[ -e lshare/old.txt ] && why="$why old.txt still there"
[ "$(stat -c %u lshare/made.txt 2>&1)" = "$(id -u)" ] ||
	why="$why made.txt is not thpvm's user's"
[ -z "$why" ] && ok "Linux: what it wrote through 9p, the host finds" ||
	bad "Linux: what it wrote through 9p, the host finds" \
	    "$why; in lshare: $(ls lshare | tr '\n' ' ')"

# virtio-net on a tap and the balloon, on one VM that waits for the host:
# the host pings Linux over the tap, then takes 64 MiB back through the
# balloon and gives it again.
./thpvm run -k vmlinuz -i guest.cpio -m 256 --name dev \
	-n mode=tap,tapif=thpvm-t0 --balloon \
	-p "$params guest.ip=10.0.2.2/24 guest.action=wait" >dev.out 2>&1 &
pid=$!
i=0
while ! grep -q "guest: waiting" dev.out && [ $i -lt 300 ]; do
	sleep 1
	i=$((i + 1))
done
ip addr add 10.0.2.1/24 dev thpvm-t0 && ip link set thpvm-t0 up
ping -c 3 -W 5 10.0.2.2 >ping.out 2>&1 &&
	ok "virtio-net: the host pings Linux over the tap" ||
	bad "virtio-net: the host pings Linux over the tap" \
	    "$(tail -n 2 ping.out) $(grep eth0 dev.out)"
./thpvm stat --json dev >before.json
./thpvm balloon --inflate 64 --wait=120 --json dev >inflate.json 2>&1
rc=$?
./thpvm stat --json dev >after.json
actual=$(field inflate.json actual)
released=$(field inflate.json released)
# Linux's own driver gives 4 KiB pages back one by one: the figures
# show what that costs the host's huge pages (docs/arm64.md).
huge0=$(($(field before.json huge) >> 20))
huge1=$(($(field after.json huge) >> 20))
[ $rc = 0 ] && [ "$actual" = $((64 << 20)) ] &&
	[ "$released" -ge $((64 << 20)) ] &&
	ok "virtio-balloon: Linux gives 64 MiB back, the host releases it (host huge pages $huge0 -> $huge1 MiB)" ||
	bad "virtio-balloon: Linux gives 64 MiB back, the host releases it" \
	    "status $rc: $(cat inflate.json)"
./thpvm balloon --deflate 64 --wait=120 --json dev >deflate.json 2>&1
rc=$?
[ $rc = 0 ] && [ "$(field deflate.json actual)" = 0 ] &&
	ok "virtio-balloon: deflated back to 0" ||
	bad "virtio-balloon: deflated back to 0" "status $rc: $(cat deflate.json)"
./thpvm stop dev >/dev/null
wait $pid

# guest/linux's own initramfs, built for arm64 (kit.cpio.gz): the
# hackbench run bench/hackbench.py measures, at a small size, on 2 vCPUs.
timeout 600 ./thpvm run -k vmlinuz -i kit.cpio.gz -m 256 -c 2 --json \
	-p "$params thpvm.run=hackbench thpvm.runs=1 \
THPVM_HACKBENCH_ARGS=\"-P -g 2 -l 10\"" >kit.out 2>&1
rc=$?
[ $rc = 0 ] && grep -q "thpvm-guest: hackbench run=1 seconds=" kit.out &&
	ok "guest/linux's initramfs: hackbench runs on 2 vCPUs" ||
	bad "guest/linux's initramfs: hackbench runs on 2 vCPUs" \
	    "status $rc: $(grep thpvm-guest kit.out | tail -n 3)"

# Free page reporting: the guest writes 200 MiB and deletes them; Linux
# reports the free memory in blocks of 2 MiB or more, which the host
# releases without splitting a huge page.
sp0=$(splits)
./thpvm run -k vmlinuz -i guest.cpio -m 256 --name rep \
	--balloon=reporting=on \
	-p "$params guest.fill=200 guest.free=1" >rep.out 2>&1 &
pid=$!
i=0
while ! grep -q "guest: freed" rep.out && [ $i -lt 300 ]; do
	sleep 1
	i=$((i + 1))
done
released=0
i=0
while [ "$released" -lt $((128 << 20)) ] && [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
	./thpvm balloon --json rep >rep.json 2>&1
	released=$(field rep.json released)
	released=${released:-0}
done
sp1=$(splits)
./thpvm stop rep >/dev/null
wait $pid
[ "$released" -ge $((128 << 20)) ] && [ "$sp1" = "$sp0" ] &&
	ok "free page reporting: $((released >> 20)) MiB released, no host huge page split" ||
	bad "free page reporting: at least 128 MiB released, no host huge page split" \
	    "released $released, thp_split_pmd $sp0 -> $sp1: $(cat rep.json) $(grep guest: rep.out | tail -n 2)"

# virtio-mem with Linux's own driver (guest/linux's initramfs and its
# mem script), 512 MiB of hotplug region above 256 MiB of RAM: `thpvm mem
# --set 256M` adds exactly 256 MiB to the guest's MemTotal, `--set 64M`
# takes 192 MiB away again, which the host releases in whole 2 MiB
# blocks, splitting no host huge page.
wait_line() {	# FILE PATTERN SECONDS: PATTERN is a line of FILE in time
	i=0
	while ! grep -q -- "$2" "$1" && [ $i -lt "$3" ]; do
		kill -0 $pid 2>/dev/null || return 1
		sleep 1
		i=$((i + 1))
	done
	grep -q -- "$2" "$1"
}
sp0=$(splits)
./thpvm run -k vmlinuz -i kit.cpio.gz -m 256 --name vmem \
	--mem-hotplug=512M \
	-p "$params memhp_default_state=online_movable thpvm.run=mem" \
	>vmem.out 2>&1 &
pid=$!
wait_line vmem.out "thpvm-guest: mem ready driver=virtio_mem" 300
base=$(sed -n 's/.*mem ready driver=virtio_mem total=\([0-9]*\).*/\1/p' vmem.out)
rc=1
if [ -n "$base" ] &&
	./thpvm mem vmem --set 256M --wait=300 >vmem.set 2>&1 &&
	wait_line vmem.out "thpvm-guest: mem total=$((base + 262144))" 120 &&
	./thpvm mem vmem --set 64M --wait=300 >>vmem.set 2>&1 &&
	wait_line vmem.out "thpvm-guest: mem total=$((base + 65536))" 120; then
	rc=0
fi
./thpvm mem --json vmem >vmem.json 2>&1
sp1=$(splits)
echo "vmem: base MemTotal ${base:-none} kB; $(cat vmem.json)"
./thpvm stop vmem >/dev/null
wait $pid
[ $rc = 0 ] && ok "virtio-mem: Linux's MemTotal follows thpvm mem --set 256M, then 64M" ||
	bad "virtio-mem: Linux's MemTotal follows thpvm mem --set 256M, then 64M" \
	    "base ${base:-none}: $(grep 'thpvm-guest: mem' vmem.out | tail -n 3) $(cat vmem.set)"
[ "$(field vmem.json plugged_size)" = $((64 << 20)) ] &&
	[ "$(field vmem.json released)" = $((192 << 20)) ] &&
	[ "$sp1" = "$sp0" ] &&
	ok "virtio-mem: 192 MiB unplugged and released, no host huge page split" ||
	bad "virtio-mem: 192 MiB unplugged and released, no host huge page split" \
	    "thp_split_pmd $sp0 -> $sp1: $(cat vmem.json)"

# Pause stops a guest that never exits to thpvm: the test guest reading
# its RAM at random at EL0, for good, takes vcpu0's CPU time until
# paused, none while paused, and again once resumed (clock ticks: USER_HZ
# is 100 on arm64).
vcpu0_ticks() {	# PID
	local t
	for t in /proc/$1/task/*; do
		[ "$(cat $t/comm 2>/dev/null)" = vcpu0 ] || continue
		sed 's/.*) //' $t/stat | awk '{ print $12 + $13 }'
		return
	done
	echo 0
}
ticks_in() {	# PID SECONDS: vcpu0's ticks in the next SECONDS
	local a=$(vcpu0_ticks $1)
	sleep $2
	echo $(($(vcpu0_ticks $1) - a))
}
./thpvm run -m 256 --name spin \
	-p "touch=16M rand=1000000000000000 skip=vtimer,ptimer" >spin.out 2>&1 &
pid=$!
hz=100
busy=0 paused=-1 resumed=0
if wait_line spin.out "^tg: touch bytes=16777216 " 120; then
	busy=$(ticks_in $pid 2)
	timeout 30 ./thpvm pause spin >/dev/null &&
		paused=$(ticks_in $pid 2) &&
		./thpvm resume spin >/dev/null &&
		resumed=$(ticks_in $pid 2)
fi
./thpvm stop spin >/dev/null
wait $pid
rc=$?
# Busy: at least a fifth of the time; paused: under 0.1 s in 2 s.
[ $rc = 0 ] && [ $busy -ge $((2 * hz / 5)) ] &&
	[ $paused -ge 0 ] && [ $paused -lt $((hz / 10)) ] &&
	[ $resumed -ge $((2 * hz / 5)) ] &&
	ok "pause stops a guest busy at EL0: no CPU time while paused" ||
	bad "pause stops a guest busy at EL0: no CPU time while paused" \
	    "status $rc, ticks of $hz/s in 2 s: busy $busy, paused $paused, resumed $resumed: $(tail -n 2 spin.out)"

# What is not an arm64 Image is refused with a reason.
./thpvm run -k guest.cpio -m 256 >bad.out 2>&1
rc=$?
[ $rc != 0 ] && grep -q "not an arm64 Linux Image" bad.out &&
	ok "a non-Image kernel is refused" ||
	bad "a non-Image kernel is refused" "status $rc: $(cat bad.out)"
exit 0
