#!/usr/bin/env python3
"""thpvm balloon against a running VM: the status a VM with a balloon
reports, targets set through the control socket, and the errors for a VM
without a balloon and for bad sizes, after which the VM still runs. The
guest runs without its balloon driver here, so `actual` stays 0
(test_balloon_guest.py has the driver inflate and deflate)."""
import harness
from harness import one_error, run, serving

def test_balloon_status_and_target():
    p = serving("bal", ["--balloon"])
    st = harness.ctl_json(["balloon", "bal"])
    assert st["ram"] == 256 << 20, st
    assert st["target"] == 0 and st["actual"] == 0, st
    assert st["policy"] == "eager", st
    assert st["driver_ok"] is False, st
    st = harness.ctl_json(["balloon", "bal", "--set", "200M"])
    assert st["target"] == 56 << 20, st
    st = harness.ctl_json(["balloon", "bal", "--inflate", "8"])
    assert st["target"] == 64 << 20, st
    st = harness.ctl_json(["balloon", "bal", "--deflate", "64M"])
    assert st["target"] == 0, st
    r = run(["balloon", "bal"])
    assert r.rc == 0 and "Target:" in r.out, r
    # What Released counts frees host memory only where the guest had
    # touched it, and the line says so.
    assert ("Released to the host: 0 B in 0 calls (pages the guest never "
            "touched free no host memory)") in r.out, r
    assert harness.stop_and_wait(p, "bal") == 0


def test_balloon_errors_leave_the_vm_running():
    p = serving("plain")
    one_error(run(["balloon", "plain"]), "has no balloon")
    q = serving("withb", ["--balloon"])
    for opt, size, text in (
            ("--set", "lots", "--set lots: expected the memory to leave "
             "the guest (its size, not the balloon's), above 0"),
            ("--set", "0", "--set 0: expected the memory to leave the "
             "guest (its size, not the balloon's), above 0"),
            ("--inflate", "-5", "--inflate -5: expected the memory to take "
             "from the guest, above 0"),
            ("--set", "1T", "cannot set guest memory to 1 TiB"),
            ("--deflate", "1M", "cannot deflate by 1 MiB"),
            ("--inflate", "6K",
             '"inflate" must be a multiple of 4 KiB')):
        one_error(run(["balloon", "withb", opt, size]), text)
    one_error(run(["balloon", "nosuchvm"]), 'no VM named "nosuchvm"')
    assert p.poll() is None and q.poll() is None
    assert harness.ctl_json(["balloon", "withb"])["target"] == 0
    assert harness.stop_and_wait(p, "plain") == 0
    assert harness.stop_and_wait(q, "withb") == 0


def test_wait_timeout_says_why():
    """--wait SECONDS (with a space) that runs out names what holds the
    balloon back: no driver in this guest, then a paused VM."""
    p = serving("slow", ["--balloon"])
    one_error(run(["balloon", "slow", "--inflate", "8", "--wait", "1"]),
              "within 1 s (actual 0 B): no balloon driver has started "
              "in the guest", rc=1)
    assert run(["pause", "slow"]).rc == 0
    one_error(run(["balloon", "slow", "--wait", "1"]),
              "the VM is paused (thpvm resume)", rc=1)
    assert run(["resume", "slow"]).rc == 0
    assert harness.stop_and_wait(p, "slow") == 0


def test_balloon_option_errors():
    harness.require_kvm()
    for bad, text in (("policy=lazy", "policy must be eager or preserve"),
                      ("stats=x", "stats must be seconds"),
                      ("nosuch=1", 'unknown key "nosuch"')):
        one_error(run(["run", "--balloon=" + bad]), text, rc=2)


if __name__ == "__main__":
    harness.main(globals())
