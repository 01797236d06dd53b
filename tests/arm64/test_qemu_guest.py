#!/usr/bin/env python3
"""The arm64 test guest under QEMU's virt machine (TCG, no KVM needed):
its boot, device tree reader, GIC (v3 and v2), timers, PSCI and EL0
workloads checked against an implementation we did not write. QEMU's
virt has no exit register, so the guest ends with PSCI SYSTEM_OFF and
its output says how it went."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import harness  # noqa: E402

QEMU = "qemu-system-aarch64"
IMAGE = os.environ.get("TESTGUEST_IMAGE")
BASE_CHECKS = ("memory", "smp", "vtimer", "ptimer")


def run_qemu(machine, cpus, params, args=()):
    if not shutil.which(QEMU):
        harness.skip(f"{QEMU} not installed (apt-get install "
                     "qemu-system-arm)")
    cmd = [QEMU, "-M", machine, "-cpu", "max", "-smp", str(cpus),
           "-m", "256M", "-kernel", IMAGE, "-append", params,
           "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio"]
    p = subprocess.run(cmd + list(args), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, errors="replace",
                       timeout=300)
    return harness.Result(p.returncode, p.stdout, p.stderr)


def passed(r, checks=BASE_CHECKS):
    assert r.rc == 0, r
    assert "done" in r.tg and r.tg["done"]["failed"] == "0", r
    for c in checks:
        assert c in r.tg["ok"], (c, r)


def test_gicv3_two_cpus_el0_touch():
    r = run_qemu("virt,gic-version=3", 2,
                 "ram=256M cpus=2 touch=all rand=10000")
    passed(r)
    assert r.tg["gic"]["version"] == "3", r
    assert r.tg["ok"]["smp"]["mpidrs"] == "0x0,0x1", r
    # QEMU loads the Image 2 MiB above the start of RAM (thpvm at it):
    # the guest relocated itself.
    assert r.tg["boot"]["base"] == "0x40200000", r
    assert int(r.tg["touch"]["bytes"]) > 240 << 20, r
    assert r.tg["rand"]["reads"] == "10000", r


def test_gicv2_pl011():
    r = run_qemu("virt", 1, "ram=256M")
    passed(r)
    assert r.tg["gic"]["version"] == "2", r
    assert r.tg["platform"]["uart"].startswith("pl011@"), r


def test_failed_check_counted():
    r = run_qemu("virt,gic-version=3", 1, "cpus=3 skip=vtimer,ptimer")
    assert r.tg["fail"]["smp"]["expected"] == "3", r
    assert r.tg["done"]["failed"] == "1", r


def test_malformed_device_tree_reported():
    """A /cpus whose #address-cells the guest cannot read: said, the CPU
    count then wrong, and the guest carries on to the end."""
    if not shutil.which("fdtput"):
        harness.skip("fdtput not installed (apt-get install "
                     "device-tree-compiler)")
    with tempfile.TemporaryDirectory() as tmp:
        dtb = os.path.join(tmp, "virt.dtb")
        run_qemu(f"virt,gic-version=3,dumpdtb={dtb}", 1, "")
        subprocess.run(["fdtput", "-t", "x", dtb, "/cpus",
                        "#address-cells", "3"], check=True)
        r = run_qemu("virt,gic-version=3", 1, "", ["-dtb", dtb])
    assert r.tg["fail"]["dt"] == {"node": "cpus",
                                  "reason": "bad-address-cells"}, r
    assert "smp" in r.tg["fail"], r
    assert r.tg["done"]["failed"] == "2", r


if __name__ == "__main__":
    if not IMAGE:
        print("1..0 # SKIP TESTGUEST_IMAGE not set")
        sys.exit(0)
    harness.main(globals())
