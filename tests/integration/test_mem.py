#!/usr/bin/env python3
"""thpvm mem against a running VM: the region a VM with --mem-hotplug
reports (placed above RAM and 4 GiB, nothing committed), requested sizes
set through the control socket, the figures in thpvm stat, and the errors
for a VM without the device, bad sizes and bad options, after which the
VM still runs. The guest runs without its virtio-mem driver here, so
nothing is plugged (test_mem_guest.py has the driver plug and unplug)."""
import harness
from harness import one_error, run, serving

def test_mem_status_and_requests():
    p = serving("hp", ["--mem-hotplug=1G,requested=64M"])
    st = harness.ctl_json(["mem", "hp"])
    assert st["addr"] == 4 << 30, st
    assert st["region_size"] == 1 << 30, st
    assert st["usable_region_size"] == 1 << 30, st
    assert st["block_size"] == 2 << 20, st
    assert st["requested_size"] == 64 << 20, st
    assert st["plugged_size"] == 0 and st["driver_ok"] is False, st
    # Reserved, not committed.
    assert st["resident"] == 0, st
    st = harness.ctl_json(["mem", "hp", "--set", "512M"])
    assert st["requested_size"] == 512 << 20, st
    st = harness.ctl_json(["mem", "hp", "--set", "0"])
    assert st["requested_size"] == 0, st
    st = harness.ctl_json(["mem", "hp", "--set", "1G"])
    assert st["requested_size"] == 1 << 30, st
    r = run(["mem", "hp"])
    assert r.rc == 0 and "Requested: 1 GiB" in r.out, r
    assert "Region: 1 GiB at 0x100000000, in blocks of 2 MiB" in r.out, r
    s = harness.ctl_json(["stat", "hp"])
    assert s["ram"] == 256 << 20, s
    assert s["hotplug_region"] == 1 << 30, s
    assert s["hotplug_requested"] == 1 << 30, s
    assert s["hotplug_plugged"] == 0 and s["hotplug_resident"] == 0, s
    r = run(["stat", "hp"])
    assert "Hotplug region: 1 GiB, 1 GiB requested, 0 B plugged" in r.out, r
    assert harness.stop_and_wait(p, "hp") == 0


def test_region_above_ram_past_4g():
    """RAM that runs past the 32-bit hole pushes the region up to the
    next 1 GiB boundary above it; a block of 4 MiB is kept."""
    p = serving("big", ["-m", "3584M", "--mem-hotplug=256M,block=4M"])
    st = harness.ctl_json(["mem", "big"])
    # 3 GiB below the hole, 512 MiB from 4 GiB: RAM ends at 4.5 GiB.
    assert st["addr"] == 5 << 30, st
    assert st["block_size"] == 4 << 20, st
    one_error(run(["mem", "big", "--set", "2M"]),
              "cannot plug 2 MiB: not a multiple of the 4 MiB block")
    assert harness.stop_and_wait(p, "big") == 0


def test_mem_errors_leave_the_vm_running():
    p = serving("plain")
    one_error(run(["mem", "plain"]), "has no virtio-mem device")
    one_error(run(["mem", "plain", "--set", "2M"]),
              "has no virtio-mem device")
    q = serving("withm", ["--mem-hotplug=128M"])
    for size, text in (
            ("lots", "--set lots: not a size"),
            ("-5", "--set -5: not a size"),
            ("256M", "cannot plug 256 MiB: the hotplug region holds "
                     "128 MiB"),
            ("1T", "cannot plug 1 TiB"),
            ("3M", "cannot plug 3 MiB: not a multiple of the 2 MiB "
                   "block")):
        one_error(run(["mem", "withm", "--set", size]), text)
    one_error(run(["mem", "nosuchvm"]), 'no VM named "nosuchvm"')
    assert p.poll() is None and q.poll() is None
    assert harness.ctl_json(["mem", "withm"])["requested_size"] == 0
    assert harness.stop_and_wait(p, "plain") == 0
    assert harness.stop_and_wait(q, "withm") == 0


def test_wait_timeout_says_why():
    p = serving("slow", ["--mem-hotplug=128M"])
    one_error(run(["mem", "slow", "--set", "8M", "--wait", "1"]),
              "did not reach the requested size of 8 MiB within 1 s "
              "(plugged 0 B): no virtio-mem driver has started in the "
              "guest", rc=1)
    assert run(["pause", "slow"]).rc == 0
    one_error(run(["mem", "slow", "--wait", "1"]),
              "the VM is paused (thpvm resume)", rc=1)
    assert run(["resume", "slow"]).rc == 0
    # Nothing asked for, nothing to wait for.
    assert run(["mem", "slow", "--set", "0", "--wait", "1"]).rc == 0
    assert harness.stop_and_wait(p, "slow") == 0


def test_mem_option_errors():
    harness.require_kvm()
    for bad, text in (
            ("", "missing value for --mem-hotplug"),
            ("=x", "SIZE must be a size"),
            ("=1G,block=3M", "block must be a power of two of at least "
                             "2 MiB"),
            ("=1G,block=1M", "block must be a power of two"),
            ("=1G,requested=2G", "requested at most SIZE"),
            ("=5M", "SIZE and requested must be whole blocks of 2 MiB"),
            ("=1G,transport=usb", "transport must be pci or mmio"),
            ("=1G,nosuch=1", 'unknown key "nosuch"')):
        one_error(run(["run", "--mem-hotplug" + bad]), text, rc=2)
    one_error(run(["run", "--mem-hotplug=1G", "--mem-hotplug=1G"]),
              "given twice", rc=2)
    # The region must end where every x86-64 guest can address it.
    one_error(run(["run", "--mem-hotplug=600G"]),
              "beyond the 512 GiB of guest-physical space", rc=1)


if __name__ == "__main__":
    harness.main(globals())
