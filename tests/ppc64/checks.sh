# Run by tests/hosts/ppc64_host.py in the emulated POWER9 host (busybox sh, in
# /work with thpvm, vmlinux, initrd, kit.cpio.gz and lshare/, a 9p
# share from test_ppc64_linux.py): one
# "check: ok|fail NAME" line per check, read by test_ppc64_linux.py.
check() {
	if [ "$1" = 0 ]; then echo "check: ok $2"; else echo "check: fail $2"; fi
}
# CI's cross build has UBSan: a report ends the program that made it,
# so the check it was part of fails.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Stops VM NAME, started in the background as $pid, and waits for it;
# killed if the stop fails, as its guest waits an hour. Sets stop and
# status (thpvm stop's and thpvm run's exit statuses).
stop_vm() {
	./thpvm stop "$1" > "$1.stop" 2>&1
	stop=$?
	[ $stop = 0 ] || kill $pid
	wait $pid
	status=$?
}

# Linux to user space; thpvm's guest RAM counted while it is full.
./thpvm run --name ppc0 -k vmlinux -i initrd -m 512 -c 1 \
	-p 'console=hvc0 panic=-1 quiet' > boot.log 2>&1 &
pid=$!
i=0
while ! grep -q 'ppc-guest: filled' boot.log && [ $i -lt 300 ]; do
	kill -0 $pid 2>/dev/null || break
	sleep 1
	i=$((i + 1))
done
huge=$(awk '/^AnonHugePages:/ { print $2 }' /proc/$pid/smaps_rollup)
rss=$(awk '/^Rss:/ { print $2 }' /proc/$pid/smaps_rollup)
# The control socket, while the guest waits for the stop.
./thpvm list > list.log 2>&1; list=$?
./thpvm stat ppc0 > stat.log 2>&1; stat=$?
./thpvm pause ppc0 > pause.log 2>&1 && ./thpvm resume ppc0 >> pause.log 2>&1
pause=$?
stop_vm ppc0
sed 's/^/control: /' list.log stat.log pause.log ppc0.stop
sed 's/^/boot: /' boot.log
grep -q 'ppc-guest: user space' boot.log; check $? "Linux reaches user space"
! grep -q 'hypercall .* not offered' boot.log
check $? "Linux's boot makes no hypercall thpvm does not know"
grep -q 'ppc-guest: MMU.*: Radix' boot.log; check $? "the guest runs the radix MMU"
grep -q 'ppc-guest: platform.*: pSeries' boot.log; check $? "the guest is a pSeries LPAR"
[ $stop = 0 ] && [ $status = 0 ]
check $? "thpvm stop ends the VM, thpvm's status 0 (was $status)"
grep -Eq 'ppc-guest: hwrng pseries_rng [0-9a-f]{32}([^0-9a-f]|$)' boot.log
check $? "the guest's hwrng (pseries_rng) reads 16 bytes of H_RANDOM"
echo "host: thpvm Rss ${rss:-none} kB, AnonHugePages ${huge:-none} kB"
# The guest filled 200 MiB (its kernel and initrd come on top); the
# rest of thpvm's memory (its heap, stacks) is a few MiB of small pages.
[ "${huge:-0}" -ge 204800 ]; check $? "the guest's 200 MiB are in host huge pages (${huge:-0} kB)"
[ $((${huge:-0} * 100)) -ge $((${rss:-1} * 98)) ]
check $? "98% or more of thpvm's resident memory is huge pages"
[ $list = 0 ] && grep -q ppc0 list.log; check $? "thpvm list names the VM"
[ $stat = 0 ] && grep -q '^Huge pages: .*% of RAM' stat.log
check $? "thpvm stat reports its huge pages"
[ $pause = 0 ]; check $? "thpvm pause and resume"

# Two vCPUs: the second started by the guest through RTAS start-cpu.
./thpvm run -k vmlinux -i initrd -m 512 -c 2 -p 'console=hvc0 panic=-1 nofill' \
	> smp.log 2>&1
status=$?
sed 's/^/smp: /' smp.log
[ $status = 0 ] && grep -q 'ppc-guest: online CPUs 0-1' smp.log
check $? "with -c 2 both vCPUs come online; the guest's power-off ends thpvm with status 0 (was $status)"
grep -Eq 'ppc-guest: after offline 0([^-]|$)' smp.log &&
	grep -q 'ppc-guest: after online 0-1' smp.log
check $? "the second CPU goes offline (stop-self) and back (start-cpu)"

# guest/linux's own initramfs, built for ppc64el (kit.cpio.gz): the
# hackbench run bench/hackbench.py measures, at a small size, on 2 vCPUs.
timeout 300 ./thpvm run -k vmlinux -i kit.cpio.gz -m 512 -c 2 \
	-p "console=hvc0 panic=-1 quiet thpvm.run=hackbench thpvm.runs=1 \
THPVM_HACKBENCH_ARGS=\"-P -g 2 -l 10\"" > kit.log 2>&1
status=$?
grep thpvm-guest kit.log | sed 's/^/kit: /'
[ $status = 0 ] && grep -q 'thpvm-guest: hackbench run=1 seconds=' kit.log
check $? "guest/linux's initramfs: hackbench runs on 2 vCPUs"

# A virtio disk on the PCI host bridge (MSI-X through XICS): the guest
# reads what was written here and writes at 4 KiB.
dd if=/dev/zero of=disk.img bs=1M count=8 2>/dev/null
echo -n 'thpvm-ppc-disk' | dd of=disk.img conv=notrunc 2>/dev/null
./thpvm run -k vmlinux -i initrd -m 512 -d disk.img --dump-dtb tree.dtb \
	-p 'console=hvc0 panic=-1 quiet nofill' > disk.log 2>&1
status=$?
# The device tree goes back to test_ppc64_linux.py, which runs dtc.
if [ -s tree.dtb ]; then
	echo "dtb-begin"
	base64 tree.dtb
	echo "dtb-end"
fi
sed 's/^/disk: /' disk.log
[ $status = 0 ] && grep -q 'ppc-guest: disk says thpvm-ppc-disk' disk.log
check $? "the guest reads a virtio-pci disk"
[ "$(dd if=disk.img bs=4096 skip=1 count=1 2>/dev/null | head -c 16)" = \
	guest-wrote-this ]
check $? "the guest's write reached the disk image"
# Its requests completed through an MSI-X vector that ibm,change-msi
# gave it (Linux's pSeries MSI domain, edge-triggered), interrupts
# counted there.
grep -Eq 'ppc-guest: irq +[0-9]+: +[1-9][0-9]* +pSeries-PCI-MSI +[0-9]+ +Edge +virtio0-req' disk.log
check $? "virtio-blk completes through an MSI-X vector"

# Debian's kernel mounts a virtio-9p share (lshare/) on the PCI host
# bridge, its 9p modules loaded by guest_init.sh, and changes it there:
# what the host then finds is what Linux wrote.
cp lshare/old.txt lshare-old.txt
timeout 300 ./thpvm run -k vmlinux -i initrd -m 512 --9p lshare,lshare \
	-p 'console=hvc0 panic=-1 quiet nofill guest.9p=lshare' > p9.log 2>&1
status=$?
sed 's/^/9p: /' p9.log
[ $status = 0 ] && ! grep -q 'ppc-guest: insmod' p9.log &&
	grep -q 'ppc-guest: 9p mount lshare /share 9p .*trans=virtio' p9.log &&
	grep -q "ppc-guest: 9p hello $(cat lshare/hello.txt)" p9.log &&
	grep -Eq 'ppc-guest: 9p irq .*pSeries-PCI-MSI.*virtio[0-9]+-requests' p9.log &&
	grep -q 'ppc-guest: 9p unmounted' p9.log
check $? "Linux mounts a virtio-9p share, MSI-X through RTAS, and reads the host's file (thpvm's status $status)"
cmp -s lshare/data.bin lshare/copy.bin &&
	[ "$(cat lshare/made.txt)" = "written by Linux" ] &&
	cmp -s lshare-old.txt lshare/newdir/renamed.txt &&
	[ ! -e lshare/old.txt ] &&
	[ "$(stat -c %u lshare/made.txt)" = "$(id -u)" ]
check $? "what Linux wrote through 9p, the host finds"
ls -lR lshare | sed 's/^/9p host: /'

# Starts VM NAME, with PARAMS on the guest's command line and OPTIONS
# (its balloon, a network) for thpvm; returns once the guest says it
# is ready (or is gone).
start_balloon_vm() {	# NAME PARAMS OPTIONS...
	name=$1
	params=$2
	shift 2
	./thpvm run --name "$name" -k vmlinux -i initrd -m 512 "$@" \
		-p "console=hvc0 panic=-1 quiet waitballoon $params" \
		> "$name.log" 2>&1 &
	pid=$!
	i=0
	while ! grep -q 'ppc-guest: ready' "$name.log" && [ $i -lt 300 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 1
		i=$((i + 1))
	done
}

host_splits() {
	awk '/^thp_split_pmd / { print $2 }' /proc/vmstat
}

# Inflates VM NAME's balloon by 128 MiB, printing the counts
# docs/benchmarks.md records (host huge pages split, thpvm's huge pages
# before and after); the balloon's report goes to NAME.shown.
inflate_128() {
	splits=$(host_splits)
	./thpvm stat "$1" | grep '^Huge pages' | sed "s/^/$1: before: /"
	./thpvm balloon "$1" -i 128M --wait=120 > "$1.inflate" 2>&1
	inflate=$?
	./thpvm balloon "$1" > "$1.shown" 2>&1
	./thpvm stat "$1" | grep '^Huge pages' | sed "s/^/$1: after: /"
	echo "$1: host huge pages split: $(($(host_splits) - splits))"
	sed "s/^/$1: /" "$1.inflate" "$1.shown"
}

# virtio-net on a tap and the balloon, with Debian's drivers: the host
# pings the guest, then inflates and deflates its balloon.
start_balloon_vm ppcb '' --balloon -n mode=tap,tapif=thpvm-t0
ip addr add 10.0.2.1/24 dev thpvm-t0 && ip link set thpvm-t0 up &&
	ping -c 3 -W 5 10.0.2.2 > ping.log 2>&1
check $? "the host pings the guest over virtio-net on a tap"
sed 's/^/ping: /' ping.log
inflate_128 ppcb
[ $inflate = 0 ] && grep -q '^Actual: 128 MiB in the balloon' ppcb.shown
check $? "the guest's balloon takes 128 MiB"
grep -q '^Released to the host: 128 MiB' ppcb.shown
check $? "the 128 MiB go back to the host"
./thpvm balloon ppcb -d 64M --wait=120 > deflate.log 2>&1; deflate=$?
./thpvm balloon ppcb >> deflate.log 2>&1
stop_vm ppcb
sed 's/^/ppcb: /' deflate.log
[ $deflate = 0 ] && grep -q '^Actual: 64 MiB in the balloon' deflate.log
check $? "deflating gives 64 MiB back to the guest"

# The same with thpvm's cont_balloon.ko (continuous pages, 64 KiB guest
# pages counted in the protocol's 4 KiB units).
start_balloon_vm ppcc contballoon --balloon
inflate_128 ppcc
stop_vm ppcc
[ $inflate = 0 ] && grep -q '^Actual: 128 MiB in the balloon' ppcc.shown &&
	grep -q '^Released to the host: 128 MiB' ppcc.shown
check $? "cont_balloon takes 128 MiB, all of it back to the host"

# Free page reporting: the guest wrote 200 MiB and deleted them before
# it said it was ready; Linux reports free memory in 2 MiB blocks (32
# of its 64 KiB pages), which thpvm releases whole, splitting no host
# huge page.
splits=$(host_splits)
start_balloon_vm ppcr '' --balloon=reporting=on
released=0
i=0
while [ "$released" -lt $((128 << 20)) ] && [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
	./thpvm balloon --json ppcr > ppcr.json 2>&1
	released=$(sed -n 's/.*"released":\([0-9]*\).*/\1/p' ppcr.json)
	released=${released:-0}
done
split=$(($(host_splits) - splits))
stop_vm ppcr
echo "ppcr: released $((released >> 20)) MiB, host huge pages split: $split"
[ "$released" -ge $((128 << 20)) ] && [ $split = 0 ]
check $? "free page reporting: 128 MiB or more released, no host huge page split"

# A kernel that is not a ppc64 vmlinux: one clear error, non-zero.
./thpvm run -k initrd -m 512 > bad.log 2>&1
status=$?
sed 's/^/bad kernel: /' bad.log
[ $status != 0 ] && grep -q 'not an ELF64 vmlinux' bad.log
check $? "a kernel that is no vmlinux is refused"
# A big-endian ELF64 header (ppc64, not ppc64le): refused as such.
{ printf '\177ELF\002\002\001'; head -c 57 /dev/zero; } > be.elf
./thpvm run -k be.elf -m 512 > be.log 2>&1
status=$?
sed 's/^/big-endian: /' be.log
[ $status != 0 ] && grep -q 'a big-endian kernel; thpvm runs little-endian' be.log
check $? "a big-endian kernel is refused as one"

# virtio-mmio, which powerpc lacks: a usage error as the options are
# read, naming the arch, not a placement failure later.
./thpvm run -m 512 -d be.elf,mmio > mmio.log 2>&1
status=$?
sed 's/^/mmio: /' mmio.log
[ $status = 2 ] && grep -q 'powerpc has no virtio-mmio; use pci' mmio.log
check $? "a virtio-mmio device is refused, naming the arch"

# No kernel: powerpc has no bundled test guest yet, and says so.
./thpvm run -m 512 > none.log 2>&1
status=$?
sed 's/^/no kernel: /' none.log
[ $status != 0 ] && grep -q 'give a kernel with -k' none.log
check $? "without -k thpvm asks for a kernel"
