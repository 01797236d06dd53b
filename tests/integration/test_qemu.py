#!/usr/bin/env python3
"""The same test guest under Debian's QEMU (-accel kvm): its drivers and
checks against an implementation we did not write. QEMU's isa-debug-exit
exits with (status << 1) | 1, so a passing guest gives 1."""
import shutil
import subprocess

import harness

QEMU = "qemu-system-x86_64"


def qemu(kernel, cpus, params):
    harness.require_kvm()
    if not shutil.which(QEMU):
        harness.skip(f"{QEMU} not installed (apt-get install qemu-system-x86)")
    cmd = [QEMU, "-accel", "kvm", "-m", "256M", "-smp", str(cpus),
           "-kernel", kernel, "-append", params, "-nographic",
           "-no-reboot", "-nodefaults", "-serial", "stdio",
           "-device", "isa-debug-exit,iobase=0x501,iosize=1"]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace", timeout=300)
    r = harness.Result(p.returncode, p.stdout, p.stderr)
    assert r.rc == 1, r
    harness.assert_guest_passed(harness.Result(0, r.out, r.err),
                                ("e820", "smp", "lapic-timer", "pit-timer"))
    assert r.tg["ok"]["smp"]["cpus"] == str(cpus), r
    return r


def test_qemu_bzimage_1cpu():
    r = qemu(harness.GUEST_BZIMAGE, 1, "ram=256M cpus=1")
    assert r.tg["boot"]["entry"] == "16", r


def test_qemu_bzimage_2cpus():
    qemu(harness.GUEST_BZIMAGE, 2, "ram=256M cpus=2 touch=all")


def test_qemu_pvh_2cpus():
    r = qemu(harness.GUEST_ELF, 2, "ram=256M cpus=2")
    assert r.tg["boot"]["entry"] == "pvh", r


if __name__ == "__main__":
    harness.main(globals())
