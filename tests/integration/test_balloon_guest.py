#!/usr/bin/env python3
"""The test guest's balloon driver against thpvm's device: a running VM,
its RAM made resident by touch=all, inflated to leave the guest 128 MiB
and deflated again through `thpvm balloon`, with continuous pages and
with 4 KiB pages (vfeat=nocont), under both release policies. Guest and
host must agree: the guest reaches the target and says so, the host
releases what was ballooned and the VM's resident RAM falls with it.
With free page reporting the host releases the free 2 MiB blocks the
guest reports while `actual` stays 0.

With a usemem workload that leaves its memory fragmented, continuous
pages compact guest memory (migrating the workload's pages, whose data
must survive) and keep the host's huge pages, where 4 KiB pages split
them; and a guest out of memory takes pages back from the balloon when
DEFLATE_ON_OOM is negotiated."""
import json
import re
import time

import harness
from harness import run, start, wait_for_line

MIB = 1 << 20
RAM = 256 * MIB
GUEST = "serve balloon touch=all skip=smp,lapic,pit"


def move_balloon(p, name, change, target_pages, mode):
    """thpvm balloon NAME CHANGE --wait, then the guest's line saying it
    reached target_pages."""
    r = run(["balloon", name] + change + ["--wait=60", "--json"],
            timeout=90)
    assert r.rc == 0, r
    wait_for_line(p, rf"tg: balloon target={target_pages} "
                  rf"actual={target_pages} mode={mode}$", timeout=30)


def cycle(name, mode, policy, options=""):
    """Inflate to 128 MiB of guest memory and back, checking the device's
    and the host's figures; skips at the end (all else checked) when the
    host gave the guest too few huge pages to check that none split."""
    harness.require_kvm()
    unchecked = None
    params = GUEST + (" vfeat=nocont" if mode == "std" else "")
    p = start(["run", "--name", name, f"--balloon=policy={policy}{options}",
               "-m", "256M", "-p", params])
    lines = wait_for_line(p, "tg: serving", timeout=120)
    dev = [l for l in lines if l.startswith("tg: balloon-dev ")]
    assert dev and f"mode={mode}" in dev[0], lines
    before = harness.ctl_json(["stat", name])
    st0 = harness.ctl_json(["balloon", name])
    assert st0["driver_ok"] is True and st0["policy"] == policy, st0
    if "stats=0" in options:
        assert "stats" not in st0, st0
    else:
        # The driver posts its statistics at start, without waiting
        # for the device to take them.
        st0 = harness.wait_until(lambda: harness.ctl_json(["balloon", name]),
                                 lambda st: "stats" in st)
        assert "stats" in st0, st0
        stats = st0["stats"]
        assert 200 * MIB <= stats["total-memory"] <= RAM, st0
        assert stats["free-memory"] <= stats["total-memory"], st0

    move_balloon(p, name, ["--set", "128M"], 32768, mode)
    st = harness.ctl_json(["balloon", name])
    ballooned = RAM - 128 * MIB
    assert st["target"] == ballooned and st["actual"] == ballooned, st
    assert st["ballooned"] == ballooned and st["ignored"] == 0, st
    released = st["released"] - st0["released"]
    assert released >= 0.95 * ballooned, (released, st)
    after = harness.ctl_json(["stat", name])
    fell = before["resident"] - after["resident"]
    assert fell >= 0.95 * ballooned, (before, after)
    if mode == "cont":
        # Whole 2 MiB runs: nothing is left in partial blocks, and the
        # RAM the guest kept is still all on host huge pages (no split).
        assert st["partial_blocks"] == 0 and st["held"] == 0, st
        if before["huge"] >= 0.95 * before["resident"]:
            assert after["huge"] >= 0.95 * after["resident"], (before,
                                                               after)
        else:
            unchecked = (f"host THP gave {before['huge']} of "
                         f"{before['resident']} resident bytes: the "
                         "huge-page check could not run")

    move_balloon(p, name, ["--deflate", "128M"], 0, mode)
    st = harness.ctl_json(["balloon", name])
    assert st["target"] == 0 and st["actual"] == 0, st
    assert st["ballooned"] == 0 and st["held"] == 0, st
    assert p.poll() is None
    assert harness.stop_and_wait(p, name) == 0
    if unchecked:
        harness.skip(unchecked)


def test_pause_stops_the_guest():
    """A paused VM makes no progress: a new balloon target reaches the
    guest (its config interrupt is queued in KVM) but the guest neither
    answers nor prints until resume, then it does."""
    harness.require_kvm()
    name = "bpause"
    p = start(["run", "--name", name, "--balloon", "-m", "256M", "-p",
               GUEST])
    wait_for_line(p, "tg: serving", timeout=120)
    assert run(["pause", name]).rc == 0
    assert run(["balloon", name, "--set", "128M"]).rc == 0
    try:
        lines = wait_for_line(p, "tg: ", timeout=3)
        raise AssertionError(f"a paused guest printed: {lines}")
    except AssertionError as e:
        assert "no line matching" in str(e), e
    st = harness.ctl_json(["balloon", name])
    assert st["target"] == RAM - 128 * MIB and st["actual"] == 0, st
    assert run(["resume", name]).rc == 0
    wait_for_line(p, r"tg: balloon target=32768 actual=32768 mode=cont$",
                  timeout=60)
    assert harness.stop_and_wait(p, name) == 0


def reported(lines):
    """The bytes of the last `tg: balloon reported=` line among lines."""
    m = re.search(r"tg: balloon reported=(\d+) blocks=(\d+)$", lines[-1])
    assert m and int(m.group(2)) > 0, lines[-5:]
    return int(m.group(1))


def reporting(name, mode):
    harness.require_kvm()
    params = GUEST + (" vfeat=nocont" if mode == "std" else "")
    p = start(["run", "--name", name, "--balloon=reporting=on",
               "-m", "256M", "-p", params])
    first = reported(wait_for_line(p, "tg: balloon reported=", timeout=120))
    # Everything but the guest's own area and the driver's pages is free
    # in whole blocks after touch=all.
    assert first >= 200 * MIB, first
    st = harness.ctl_json(["balloon", name])
    assert st["actual"] == 0 and st["ballooned"] == 0, st
    assert st["released"] >= 0.95 * first, st
    assert harness.ctl_json(["stat", name])["resident"] <= \
        RAM - 0.95 * first, st
    # The inflate and deflate queues, numbered around the reporting one,
    # still work, and pages that come back from the balloon are reported
    # again.
    r = run(["balloon", name, "--set", "128M", "--wait=60"], timeout=90)
    assert r.rc == 0, r
    before = harness.ctl_json(["balloon", name])["released"]
    r = run(["balloon", name, "--deflate", "128M", "--wait=60"],
            timeout=90)
    assert r.rc == 0, r
    second = reported(wait_for_line(p, "tg: balloon reported=", timeout=30))
    st = harness.ctl_json(["balloon", name])
    assert st["actual"] == 0 and st["target"] == 0, st
    assert st["released"] - before >= 0.95 * second, st
    assert harness.stop_and_wait(p, name) == 0


def test_reporting_cont():
    reporting("brepc", "cont")


def test_reporting_std():
    reporting("breps", "std")


def test_cont_eager():
    cycle("bcont", "cont", "eager")


def test_cont_preserve():
    cycle("bcontp", "cont", "preserve")


def test_std_eager():
    cycle("bstd", "std", "eager")


def test_std_preserve():
    cycle("bstdp", "std", "preserve")


def test_cont_eager_over_mmio():
    """The balloon on virtio-mmio: the same cycle, its configuration
    interrupts on a level-triggered line."""
    cycle("bcontm", "cont", "eager", ",transport=mmio")


def test_no_stats_queue():
    # Without STATS_VQ the cont queues move down to 2 and 3.
    cycle("bnost", "cont", "eager", ",stats=0")


FRAGMENTED = GUEST + " usemem=128M punch_holes reuse=128M"


def reached(p, target_pages, timeout=60):
    """The fields of the guest's `tg: balloon reached` line for target."""
    lines = wait_for_line(p, rf"tg: balloon reached target={target_pages} ",
                          timeout=timeout)
    return dict(w.split("=", 1) for w in lines[-1].split()[3:])


def fragmented(name, mode):
    """usemem leaves 64 MiB in use in every other page of 128 MiB; the
    balloon then takes 160 MiB, more than the free 2 MiB blocks hold.
    Returns (stat before, stat after inflating, guest's reached fields)."""
    harness.require_kvm()
    params = FRAGMENTED + (" vfeat=nocont" if mode == "std" else "")
    p = start(["run", "--name", name, "--balloon", "-m", "256M",
               "-p", params])
    lines = wait_for_line(p, "tg: serving", timeout=120)
    assert any(re.search(r"tg: usemem punched=67108864 kept=67108864 ", l)
               for l in lines), lines
    before = harness.ctl_json(["stat", name])
    r = run(["balloon", name, "--set", "96M", "--wait=60"], timeout=90)
    assert r.rc == 0, r
    moved = reached(p, 40960)
    after = harness.ctl_json(["stat", name])
    st = harness.ctl_json(["balloon", name])
    assert st["actual"] == 160 * MIB, st
    assert before["resident"] - after["resident"] >= 0.95 * 160 * MIB, \
        (before, after)
    # Deflating lets usemem run again: the pages it kept, migrated or
    # not, still hold what it wrote.
    r = run(["balloon", name, "--set", "256M", "--wait=60"], timeout=90)
    assert r.rc == 0, r
    wait_for_line(p, r"tg: ok usemem-verify pages=16384 bad=0$", timeout=60)
    wait_for_line(p, r"tg: usemem phase=reuse bytes=134217728 .* "
                  r"oom_deflated=0$", timeout=60)
    assert harness.stop_and_wait(p, name) == 0
    return before, after, moved


def test_fragmented_cont_compacts_and_keeps_huge_pages():
    before, after, moved = fragmented("bfragc", "cont")
    assert int(moved["compactions"]) > 0, moved
    assert int(moved["migrated"]) > 0, moved
    if before["huge"] < 0.95 * before["resident"]:
        harness.skip(f"host THP gave {before['huge']} of "
                     f"{before['resident']} resident bytes")
    assert after["huge"] >= 0.95 * after["resident"], (before, after)


def test_fragmented_std_splits_huge_pages():
    # The contrast: 4 KiB pages come from the holes first and the host
    # splits the huge pages around them (about 64 of ~96 MiB kept).
    before, after, _ = fragmented("bfrags", "std")
    if before["huge"] < 0.95 * before["resident"]:
        harness.skip(f"host THP gave {before['huge']} of "
                     f"{before['resident']} resident bytes")
    assert after["huge"] <= 0.5 * after["resident"], (before, after)


def oom(name, deflate_on_oom):
    """usemem keeps 64 MiB, the balloon takes 160 MiB, then gives 16 MiB
    back, and usemem asks for 200 MiB: more than the guest has."""
    harness.require_kvm()
    p = start(["run", "--name", name, "-m", "256M",
               f"--balloon=deflate_on_oom={deflate_on_oom}",
               "-p", GUEST + " usemem=64M reuse=200M"])
    wait_for_line(p, "tg: serving", timeout=120)
    r = run(["balloon", name, "--set", "96M", "--wait=60"], timeout=90)
    assert r.rc == 0, r
    # No --wait: the guest may take pages back before it could see the
    # target reached.
    r = run(["balloon", name, "--set", "112M"], timeout=90)
    assert r.rc == 0, r
    reached(p, 36864)
    lines = wait_for_line(p, r"tg: (usemem phase=reuse|FAIL usemem)",
                          timeout=120)
    st = harness.ctl_json(["balloon", name])
    assert harness.stop_and_wait(p, name) == 0
    return lines[-1], st


def test_deflate_on_oom():
    line, st = oom("boom", "on")
    m = re.search(r"phase=reuse bytes=209715200 .* oom_deflated=(\d+)$",
                  line)
    assert m and int(m.group(1)) > 0, line
    # The guest took the pages back without the host asking: actual
    # falls below the target, which stays, and the host knows.
    assert st["target"] == 144 * MIB, st
    assert st["actual"] == 144 * MIB - int(m.group(1)) * 4096, (line, st)
    assert st["ballooned"] == st["actual"], st


def test_no_deflate_on_oom():
    line, st = oom("bnooom", "off")
    assert "tg: FAIL usemem phase=reuse" in line, line
    assert "reason=out-of-memory" in line, line
    assert st["actual"] == st["target"] == 144 * MIB, st


def answers(args, within=10):
    """A control command's --json reply; it must come within `within`
    seconds (a client stuck behind the device is killed and fails)."""
    r = run(args + ["--json"], timeout=within)
    assert r.rc == 0, r
    return json.loads(r.out)


def test_control_answers_while_the_guest_floods():
    """A guest that keeps its inflate queue full (balloon_flood: every
    chain put back as soon as the device used it): the device does a
    budget's worth per pass and lets its lock go, and the control socket
    never waits for it: `thpvm balloon`, a new target, stat and list
    answer at once all the while, and the VM stops. (Before, the device
    drained the queue for ever under its lock: `thpvm balloon` hung, every
    client behind it, and `thpvm stop` too.)"""
    harness.require_kvm()
    name = "flood"
    p = start(["run", "--name", name, "--balloon", "-m", "256M", "-p",
               "serve balloon balloon_flood skip=smp,lapic,pit"])
    wait_for_line(p, r"^tg: balloon flooding chains=\d+ ", timeout=120)
    # The device works all the while: the same 2 MiB, refused again and
    # again as already ballooned, and the replies show its progress.
    st0 = harness.wait_until(lambda: answers(["balloon", name]),
                             lambda st: st["ignored"] > 0, interval=0.2)
    time.sleep(1)
    st1 = answers(["balloon", name])
    assert st0["ballooned"] == st1["ballooned"] == 2 * MIB, (st0, st1)
    assert st1["ignored"] > st0["ignored"] > 0, (st0, st1)
    st = answers(["balloon", name, "--set", "200M"])
    assert st["target"] == RAM - 200 * MIB, st
    st = answers(["stat", name])
    assert st["state"] == "running", st
    vms = answers(["list"])
    assert [v["name"] for v in vms] == [name], vms
    st = answers(["balloon", name])
    assert st["ignored"] > st1["ignored"], (st1, st)
    assert p.poll() is None, harness.read_stderr(p)
    rc = harness.stop_and_wait(p, name, timeout=10)
    assert rc == 0, (rc, harness.read_stderr(p)[-3000:])


if __name__ == "__main__":
    harness.main(globals())
