#!/bin/sh
# The host side of bench/arm64_balloon.py, run in the emulated arm64 host
# (tests/hosts/arm64_host.py) in /work, with thpvm, Debian's arm64 kernel
# (vmlinuz) and guest/linux's initramfs (initrd). MODES (set before this
# script) names the modes. Per mode, as bench/linux_balloon.py does on
# x86: the guest fragments 800 of its 1024 MiB (thpvm.run=balloon-frag),
# the balloon (or virtio-mem's unplug) leaves it 600 MiB, then all of it
# again, and the guest
# reuses 800 MiB; host huge pages and resident memory of guest RAM are
# read at each step, and the guest's compaction counters passed on as
# "note MODE ..." lines. With free page reporting there is no target: the
# second reading is taken once reporting has settled, and the VM ends. One line per mode: "result MODE key=value ...", or
# "result MODE error=WHY".
export HOME=/tmp
# As on the project's own machines: huge pages only where asked for.
echo madvise >/sys/kernel/mm/transparent_hugepage/enabled

field() {	# FILE NAME: a number from a JSON reply
	sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"
}
splits() {
	sed -n 's/^thp_split_pmd //p' /proc/vmstat
}
wait_line() {	# FILE PATTERN SECONDS
	i=0
	while ! grep -q "$2" "$1"; do
		[ $i -ge "$3" ] && return 1
		if grep -q "balloon-frag.*\(failed\|timed out\)" "$1"; then
			return 1
		fi
		sleep 1
		i=$((i + 1))
	done
}
give_up() {	# MODE STEP: its result line says why, the VM is stopped
	echo "result $1 error=$2: $(tail -n 3 "$1.out" | tr '\n' ' ')"
	./thpvm stop "$1" >/dev/null 2>&1
	wait $pid
}
usage() {	# NAME STEP: huge and resident MiB of guest RAM (boot RAM
		# and any hotplug region), as k=v
	./thpvm stat --json "$1" >stat.json
	huge=$(field stat.json hotplug_huge)
	rss=$(field stat.json hotplug_resident)
	echo "huge$2=$((($(field stat.json huge) + ${huge:-0}) >> 20))" \
	     "rss$2=$((($(field stat.json resident) + ${rss:-0}) >> 20))"
}
# Giving back and taking back: the balloon's target, or with virtio-mem
# (no balloon) what stays plugged of the 424 MiB plugged at boot.
set_guest_mem() {	# MODE MIB
	if [ "$1" = virtio_mem ]; then
		plug=$(($2 - 600))
		[ $plug = 0 ] || plug=${plug}M	# a bare 0 unplugs all
		./thpvm mem "$1" --set "$plug" >/dev/null
	else
		./thpvm balloon --set "$2M" "$1" >/dev/null
	fi
}
settle() {	# MODE
	if [ "$1" = virtio_mem ]; then
		./thpvm mem --wait=600 "$1" >/dev/null
	else
		./thpvm balloon --wait=600 "$1" >/dev/null
	fi
}
# Free page reporting asks nothing of the host's target: Linux reports
# free blocks of 2 MiB and more on its own. Settled once the bytes
# released stood still for 20 s (at most 600 s).
reports_settle() {	# MODE
	last=-1
	still=0
	i=0
	while [ $still -lt 10 ]; do
		[ $i -ge 300 ] && return 1
		sleep 2
		i=$((i + 1))
		./thpvm balloon --json "$1" >rep.json || return 1
		now=$(field rep.json released)
		if [ "$now" = "$last" ]; then
			still=$((still + 1))
		else
			still=0
			last=$now
		fi
	done
}
calls() {	# MODE FILE
	if [ "$1" = virtio_mem ]; then
		./thpvm mem --json "$1" >"$2"
	else
		./thpvm balloon --json "$1" >"$2"
	fi
}

for mode in $MODES; do
	case $mode in
	virtio_balloon)
		opts=cont_pages=off,deflate_on_oom=off driver=virtio_balloon ;;
	virtio_balloon_preserve)
		opts=cont_pages=off,deflate_on_oom=off,policy=preserve
		driver=virtio_balloon ;;
	cont_balloon)
		opts=deflate_on_oom=off driver=cont_balloon ;;
	reporting)
		opts=cont_pages=off,deflate_on_oom=off,reporting=on
		driver=virtio_balloon ;;
	virtio_mem)
		# As bench/linux_balloon.py's: 600 MiB of boot RAM and 424
		# plugged at boot from a 512 MiB region, onlined movable.
		opts=none driver=none ;;
	*)
		echo "result $mode error=unknown mode"
		continue ;;
	esac
	out=$mode.out
	if [ "$mode" = virtio_mem ]; then
		set -- -m 600M --mem-hotplug=512M,requested=424M
		extra=memhp_default_state=online_movable
	else
		set -- -m 1024M --balloon="$opts"
		extra=
	fi
	./thpvm run --name "$mode" -k vmlinuz -i initrd -c 1 "$@" \
		--nodefaults -p "console=ttyS0 quiet $extra \
thpvm.run=balloon-frag thpvm.balloon=$driver thpvm.hold=1" >"$out" 2>&1 &
	pid=$!
	if ! wait_line "$out" "balloon-frag fragmented" 1800; then
		give_up "$mode" "no fragmented line"
		continue
	fi
	s0=$(usage "$mode" 0)
	calls "$mode" b0.json
	sp0=$(splits)
	if [ "$mode" = reporting ]; then
		# No target, so no deflate or reuse either: the guest's
		# script would wait for an inflate; the VM ends here.
		if ! reports_settle "$mode"; then
			give_up "$mode" "reporting never settled"
			continue
		fi
		s1=$(usage "$mode" 1)
		calls "$mode" b1.json
		sp1=$(splits)
		./thpvm stop "$mode" >/dev/null 2>&1
		wait $pid
		echo "result $mode $s0 $s1" \
		     "rel1=$(($(field b1.json released) >> 20))" \
		     "calls=$(($(field b1.json release_calls) - \
			$(field b0.json release_calls)))" \
		     "spl_i=$((sp1 - sp0))"
		continue
	fi
	set_guest_mem "$mode" 600
	if ! wait_line "$out" "balloon-frag inflated" 1800 ||
	   ! settle "$mode"; then
		give_up "$mode" inflate
		continue
	fi
	s1=$(usage "$mode" 1)
	calls "$mode" b1.json
	sp1=$(splits)
	set_guest_mem "$mode" 1024
	if ! wait_line "$out" "run balloon-frag end" 1800; then
		give_up "$mode" "deflate or reuse"
		continue
	fi
	s2=$(usage "$mode" 2)
	sp2=$(splits)
	calls=$(($(field b1.json release_calls) - $(field b0.json release_calls)))
	./thpvm stop "$mode" >/dev/null 2>&1
	wait $pid
	sed -n "s/.*balloon-frag compaction /note $mode /p" "$out"
	echo "result $mode $s0 $s1 $s2" \
	     "rel1=$(($(field b1.json released) >> 20)) calls=$calls" \
	     "spl_i=$((sp1 - sp0)) splits=$((sp2 - sp0))"
done
exit 0
