#!/usr/bin/env python3
"""Debian's kernel (linux-image-amd64) booted by thpvm through the default
path: payload unpacked on the host, PVH entry. On PVM hosts (no hardware
virtualization) the kernel stops early on an instruction KVM cannot
emulate; the test asserts what it reaches there, and that thpvm reports
the stop in one line. On a capable host the kernel panics without a root
file system and reboots, which ends the VM."""
import glob
import re

import harness
from harness import run

PARAMS = "thpvm.test=a,b"
MIB = 512


def vmlinuz():
    images = sorted(glob.glob("/boot/vmlinuz-*"))
    if not images:
        harness.skip("no /boot/vmlinuz-* (install linux-image-amd64)")
    return images[-1]


def check_boot_log(r):
    assert re.search(r"\] Linux version \d", r.out), r
    # -p comes after thpvm's defaults.
    assert (f"] Command line: {harness.LINUX_DEFAULT_PARAMS} {PARAMS}\n"
            in r.out), r
    usable = re.findall(r"BIOS-e820: \[mem (0x[0-9a-f]+)-(0x[0-9a-f]+)\] "
                        r"usable", r.out)
    assert usable == [("0x0000000000000000", "0x000000000009fbff"),
                      ("0x0000000000100000", f"{(MIB << 20) - 1:#018x}")], r


def boot(mode, args=()):
    """Returns the run, on a capable host one that reached the panic."""
    harness.require_kvm()
    r = run(["run", "-k", vmlinuz(), "-m", f"{MIB}M", "-p", PARAMS,
             "--boot", mode] + list(args), timeout=900)
    check_boot_log(r)
    failure = [l for l in r.err.splitlines() if "emulation failure" in l]
    if failure:
        # PVM: one line with the reason, RIP and instruction bytes.
        assert r.rc == 1, r
        assert len(failure) == 1, r
        assert re.search(r"vCPU 0: emulation failure at RIP 0x[0-9a-f]+ .*"
                         r"instruction bytes: [0-9a-f]{2}( [0-9a-f]{2})*"
                         r"( \([a-z0-9 ]+\))?$",
                         failure[0]), r
    else:
        assert "Kernel panic" in r.out and r.rc == 0, r
    return r


def test_linux_pvh_host_decompression():
    boot("auto")


def test_linux_no_acpi():
    """Without ACPI tables Linux looks for the 8259s and the PIT itself,
    which the split irqchip leaves out: it must find no PIC, keep its
    LAPIC timer (TSC-deadline, which thpvm's CPUID offers: verified
    against a PIT that never ticks it would be turned off, and the boot
    hang) and reach the panic."""
    r = boot("auto", ["--no-acpi"])
    if "Kernel panic" in r.out:
        assert "Using NULL legacy PIC" in r.out, r
        assert "APIC timer disabled" not in r.out, r


if __name__ == "__main__":
    harness.main(globals())
