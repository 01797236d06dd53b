#!/usr/bin/env python3
"""Scripts written for lkvm run against thpvm unchanged: each invocation
below is one kvmtool documents (its man page, Documentation/kvmtool.1,
and the usage lines of builtin-*.c, at kvmtool b48735e; the stat -p form
from its former Documentation/kvm-stat.txt), with only `lkvm` and the
placeholders (<name>, <pid>, <kernel-image>) filled in. The VMs are the
bundled test guest, kept running by its `serve` key and following the
balloon with its driver (docs/test-guest.md). Results and exit statuses
are checked; lkvm options thpvm lacks must be refused by name."""
import shlex

import harness
from harness import ctl_json, one_error, run, start, wait_for_line

MIB = 1 << 20
GUEST = "serve balloon skip=smp,lapic,pit"


def lkvm(line, **subst):
    """The documented line, its placeholders filled, as thpvm's
    arguments ("lkvm" is thpvm)."""
    for key, value in subst.items():
        line = line.replace(f"<{key}>", str(value))
    argv = shlex.split(line)
    assert argv[0] == "lkvm" and "<" not in line, line
    return argv[1:]


def boot(name):
    """A serving VM, started the way an lkvm script starts one."""
    harness.require_kvm()
    p = start(lkvm("lkvm run -k <kernel-image> --name <name> -m 256 -c 1 "
                   "--balloon --console serial --loglevel info "
                   f"-p '{GUEST}'", name=name,
                   **{"kernel-image": harness.GUEST_BZIMAGE}))
    wait_for_line(p, "tg: serving", timeout=120)
    return p


def state(name):
    return ctl_json(["stat", name])["state"]


def ok(line, **subst):
    """Runs a documented line that must succeed; returns its result."""
    r = run(lkvm(line, **subst), timeout=60)
    assert r.rc == 0, (line, r)
    return r


def test_balloon_inflate_deflate():
    # kvmtool.1: balloon --name <guest name> --inflate|--deflate <amount
    # in MB>; builtin-balloon.c: lkvm balloon [-n name] [-p pid]
    # [-i amount] [-d amount].
    p = boot("vm1")
    ok("lkvm balloon --name <name> --inflate 100", name="vm1")
    assert ctl_json(["balloon", "vm1"])["target"] == 100 * MIB
    ok("lkvm balloon --name <name> --deflate 36", name="vm1")
    assert ctl_json(["balloon", "vm1"])["target"] == 64 * MIB
    ok("lkvm balloon -n <name> -i 16", name="vm1")
    ok("lkvm balloon -n <name> -d 8", name="vm1")
    ok("lkvm balloon -p <pid> -i 8", pid=p.pid)
    st = ctl_json(["balloon", "vm1", "--wait", "60"])
    assert st["target"] == 80 * MIB and st["actual"] == 80 * MIB, st
    wait_for_line(p, r"tg: balloon target=20480 actual=20480 ")
    assert harness.stop_and_wait(p, "vm1") == 0


def test_pause_resume_stat_list():
    # kvmtool.1: pause --all|--name <name>, resume --all|--name <name>,
    # stat --all|--name <name> [-m], list [-i]; kvm-stat.txt: -p <pid>.
    p = boot("vm1")
    q = boot("vm2")
    ok("lkvm pause --name <name>", name="vm1")
    assert (state("vm1"), state("vm2")) == ("paused", "running")
    ok("lkvm resume --name <name>", name="vm1")
    ok("lkvm pause -n <name>", name="vm2")
    ok("lkvm resume -n <name>", name="vm2")
    ok("lkvm pause --all")
    assert (state("vm1"), state("vm2")) == ("paused", "paused")
    ok("lkvm resume --all")
    assert (state("vm1"), state("vm2")) == ("running", "running")
    # As in lkvm, --all passes over the VMs already in that state.
    ok("lkvm pause -n <name>", name="vm1")
    ok("lkvm pause -a")
    assert (state("vm1"), state("vm2")) == ("paused", "paused")
    ok("lkvm pause -a")
    ok("lkvm resume -a")
    ok("lkvm resume -a")
    assert (state("vm1"), state("vm2")) == ("running", "running")
    r = ok("lkvm stat --name <name> -m", name="vm1")
    assert "Name: vm1" in r.out and "RAM: 256 MiB" in r.out, r
    r = ok("lkvm stat -n <name> --memory", name="vm2")
    assert "Name: vm2" in r.out, r
    r = ok("lkvm stat --all -m")
    assert "Name: vm1" in r.out and "Name: vm2" in r.out, r
    r = ok("lkvm stat -p <pid> -m", pid=q.pid)
    assert "Name: vm2" in r.out and "Name: vm1" not in r.out, r
    for line in ("lkvm list", "lkvm list -i", "lkvm list --run"):
        r = ok(line)
        assert "vm1" in r.out and "vm2" in r.out, (line, r)
    one_error(run(lkvm("lkvm list -r")), "lkvm's -r/--rootfs is not "
              "supported by thpvm", 2)
    assert harness.stop_and_wait(p, "vm1") == 0
    assert harness.stop_and_wait(q, "vm2") == 0


def test_stop():
    # kvmtool.1: stop --all|--name <name>; builtin-stop.c: lkvm stop
    # [--all] [-n name].
    vms = {n: boot(n) for n in ("a", "b", "c")}
    ok("lkvm stop --name <name>", name="a")
    assert vms["a"].wait(timeout=30) == 0
    ok("lkvm stop -n <name>", name="b")
    assert vms["b"].wait(timeout=30) == 0
    ok("lkvm stop --all")
    assert vms["c"].wait(timeout=30) == 0
    assert ctl_json(["list"]) == []
    ok("lkvm stop -a")		# nothing left: nothing to do
    one_error(run(lkvm("lkvm stop --name <name>", name="a")),
              'no VM named "a"', 1)


def test_run():
    # kvmtool.1's example, and the lkvm line of docs/test-guest.md.
    harness.require_kvm()
    kernel = {"kernel-image": harness.GUEST_BZIMAGE}
    r = run(lkvm("lkvm run -k <kernel-image>", **kernel), timeout=120)
    harness.assert_guest_passed(r)
    assert r.tg["cmdline"].startswith(harness.LINUX_DEFAULT_PARAMS), r
    r = run(lkvm("lkvm run --nodefaults --network mode=none "
                 "-k <kernel-image> -m 256 -c 1 -p 'ram=256M cpus=1'",
                 **kernel), timeout=120)
    harness.assert_guest_passed(r)
    assert r.tg["cmdline"] == "ram=256M cpus=1", r
    # kvmtool.1: --rng, the virtio random number generator (the test
    # guest's rng key reads it).
    r = run(lkvm("lkvm run --rng -k <kernel-image> -p rng", **kernel),
            timeout=120)
    harness.assert_guest_passed(r, ("rng",))
    r = run(lkvm("lkvm run --loglevel debug -k <kernel-image> -p exit",
                 **kernel))
    assert r.rc == 0 and "thpvm: debug: kernel command line: " in r.err, r


def test_run_options_thpvm_lacks():
    """Refused by name, with status 2, before any guest runs."""
    kernel = {"kernel-image": harness.GUEST_BZIMAGE}
    for option, message in (
            ("--vnc", "lkvm's --vnc is not supported"),
            ("--sdl", "lkvm's --sdl is not supported"),
            ("--gtk", "lkvm's --gtk is not supported"),
            ("--sandbox init.sh", "lkvm's --sandbox is not supported"),
            ("--tty 0", "lkvm's --tty is not supported"),
            ("--dev /dev/kvm", "lkvm's --dev is not supported"),
            ("--vfio-pci 0000:00:01.0",
             "lkvm's --vfio-pci is not supported"),
            ("-f fw.bin", "lkvm's -f/--firmware is not supported"),
            ("--firmware=fw.bin", "lkvm's -f/--firmware is not supported"),
            ("--vsock 3", "lkvm's --vsock is not supported"),
            ("--no-dhcp", "lkvm's --no-dhcp is not supported"),
            ("--debug-ioport", "lkvm's --debug-ioport is not supported"),
            ("--virtio-legacy", "lkvm's --virtio-legacy is not supported")):
        r = run(lkvm(f"lkvm run -k <kernel-image> {option}", **kernel))
        one_error(r, message, 2)


if __name__ == "__main__":
    harness.main(globals())
