#!/usr/bin/env python3
"""The test guest's virtio-mem driver against thpvm's device: a running
VM plugs what `thpvm mem --set` requests and unplugs down to it again,
its allocator growing and shrinking with the blocks and the usemem
workload's pages migrating out of the blocks it gives back, with their
data. Guest and host must agree: the guest's line says what it holds,
the device's plugged size says the same, and the host backs exactly the
plugged blocks, with huge pages that no resize splits. On both
transports; and a hostile guest's requests get the spec's answers."""
import re

import harness
from harness import run, start, wait_for_line

MIB = 1 << 20
GUEST = "mem skip=smp,lapic,pit"


def reached(p, requested, timeout=60):
    """The guest's line for a move to requested bytes, as a dict."""
    lines = wait_for_line(p, rf"tg: mem reached requested={requested} ",
                          timeout=timeout)
    return dict(w.split("=", 1) for w in lines[-1].split()[3:])


def move(p, name, size, requested):
    r = run(["mem", name, "--set", size, "--wait=60", "--json"], timeout=90)
    assert r.rc == 0, r
    return reached(p, requested)


def test_resize_keeps_huge_pages_whole():
    harness.require_kvm()
    p = start(["run", "--name", "hpg", "-m", "256M",
               "--mem-hotplug=256M,requested=64M", "-p",
               "serve usemem=128M punch_holes " + GUEST])
    lines = wait_for_line(p, "tg: serving", timeout=120)
    dev = [l for l in lines if l.startswith("tg: mem-dev ")]
    assert dev and "addr=0x100000000 region=268435456 block=2097152" \
        in dev[0], lines
    first = [l for l in lines if l.startswith("tg: mem reached")]
    assert first and "plugged=67108864 " in first[0], lines
    st = harness.ctl_json(["mem", "hpg"])
    assert st["driver_ok"] is True and st["plugged_size"] == 64 * MIB, st

    up = move(p, "hpg", "192M", 192 * MIB)
    assert int(up["plugged"]) == 192 * MIB, up
    # The guest's memory grew by what it plugged.
    assert int(up["total"]) - int(first[0].split("total=")[1].split()[0]) \
        == 128 * MIB, (up, first)
    st = harness.ctl_json(["mem", "hpg"])
    assert st["plugged_size"] == 192 * MIB and st["plugs"] == 96, st
    # The driver touched every plugged page: all of it resident, none
    # of the region beyond.
    assert st["resident"] == 192 * MIB, st
    unchecked = None
    if st["huge"] != st["resident"]:
        unchecked = (f"host THP gave {st['huge']} of {st['resident']} "
                     "resident bytes: the huge-page check could not run")

    down = move(p, "hpg", "32M", 32 * MIB)
    assert int(down["plugged"]) == 32 * MIB, down
    assert int(up["total"]) - int(down["total"]) == 160 * MIB, (up, down)
    # usemem's pages in the blocks that went moved out, intact.
    assert int(down["migrated"]) > 0, down
    wait_for_line(p, r"tg: ok usemem-verify pages=\d+ bad=0")
    st = harness.ctl_json(["mem", "hpg"])
    assert st["plugged_size"] == 32 * MIB and st["refused"] == 0, st
    if not unchecked:
        # Whole blocks went: what stays is still all huge pages.
        assert st["huge"] == 32 * MIB, st
    assert st["resident"] == 32 * MIB, st
    assert st["released"] == 160 * MIB and st["release_calls"] == 80, st
    s = harness.ctl_json(["stat", "hpg"])
    assert s["hotplug_plugged"] == 32 * MIB, s
    assert s["hotplug_resident"] == 32 * MIB, s

    # And up again: freed blocks come back whole.
    move(p, "hpg", "96M", 96 * MIB)
    st = harness.ctl_json(["mem", "hpg"])
    assert st["plugged_size"] == 96 * MIB and st["resident"] == 96 * MIB
    if not unchecked:
        assert st["huge"] == 96 * MIB, st
    assert harness.stop_and_wait(p, "hpg") == 0
    if unchecked:
        harness.skip(unchecked)


def test_mmio_transport():
    harness.require_kvm()
    r = run(["run", "-m", "128M", "--mem-hotplug=64M,requested=32M,"
             "transport=mmio", "-p", GUEST])
    harness.assert_guest_passed(r)
    assert re.search(r"tg: mem-dev mmio=0x\S+ gsi=\d+ .*irq=ioapic", r.out), r
    assert "tg: mem reached requested=33554432 plugged=33554432 " in r.out, r


def test_block_of_4m():
    harness.require_kvm()
    r = run(["run", "-m", "128M", "--mem-hotplug=64M,block=4M,"
             "requested=16M", "-p", GUEST])
    harness.assert_guest_passed(r)
    assert "block=4194304 " in r.out, r
    assert "tg: mem reached requested=16777216 plugged=16777216 " in r.out, r


def test_hostile_guest():
    """mem_evil: each request a driver may not send is answered as
    virtio 1.2 says and counted as refused; a restarted driver finds the
    block left plugged; the device then works as before."""
    harness.require_kvm()
    p = start(["run", "--name", "evil", "-m", "128M",
               "--mem-hotplug=64M,requested=8M", "-p",
               "serve mem_evil " + GUEST])
    lines = wait_for_line(p, "tg: serving", timeout=120)
    text = "\n".join(lines)
    assert "tg: ok mem-evil requests=13 refused=11" in text, text
    assert "tg: ok mem-restart plugged=2097152 state=1" in text, text
    assert "tg: mem reached requested=8388608 plugged=8388608 " in text, text
    st = harness.ctl_json(["mem", "evil"])
    assert st["refused"] == 11 and st["plugged_size"] == 8 * MIB, st
    assert harness.stop_and_wait(p, "evil") == 0
    # One line each at most, and at a limited rate.
    err = harness.read_stderr(p)
    assert 1 <= err.count("virtio-mem0: refused") <= 11, err


if __name__ == "__main__":
    harness.main(globals())
