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
import netns  # noqa: E402
from net_exchange import PARAMS as NET_PARAMS  # noqa: E402
from net_exchange import check_exchange, exchange  # noqa: E402
from p9_share import (HOSTILE_CHECKS, QEMU_LENIENT,  # noqa: E402
                      RO_CHECKS, SHARE_CHECKS, check_share_after,
                      make_share, snapshot)
from disk_images import (BLK_CHECKS, EVIL_CASES, MIB, PATTERN_A,  # noqa: E402
                         PATTERN_B, check_blkbench_queues, make_image,
                         pattern, write_region)

QEMU = "qemu-system-aarch64"
IMAGE = os.environ.get("TESTGUEST_IMAGE")
BASE_CHECKS = ("memory", "smp", "vtimer", "ptimer")
# virtio-mmio devices on the wired line: blkN-irq instead of blkN-msix.
MMIO_BLK_CHECKS = tuple(c.replace("-msix", "-irq") for c in BLK_CHECKS)
DISK0_SIZE = 16 * MIB
DISK1_SIZE = 8 * MIB


def tcg_qemu_cmd(machine, cpus, params, args=()):
    if not shutil.which(QEMU):
        harness.skip(f"{QEMU} not installed (apt-get install "
                     "qemu-system-arm)")
    return harness.qemu_cmd("256M", params, cpus, machine, kernel=IMAGE,
                            qemu=QEMU, accel=None, cpu="max",
                            exit_port=False) + list(args)


def run_qemu(machine, cpus, params, args=()):
    p = subprocess.run(tcg_qemu_cmd(machine, cpus, params, args),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace", timeout=300)
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


def blk_disks(tmp):
    """A writable disk 0 and a read-only disk 1 on virtio-mmio, modern
    (QEMU's default is legacy), and their paths. QEMU fills its 32
    transports from the last one down and the guest takes them from the
    first up, so disk 1's device comes first."""
    paths = [os.path.join(tmp, "d0.img"), os.path.join(tmp, "d1.img")]
    make_image(paths[0], DISK0_SIZE)
    make_image(paths[1], DISK1_SIZE)
    return paths, [
        "-global", "virtio-mmio.force-legacy=false",
        "-drive", f"file={paths[1]},if=none,id=d1,format=raw,readonly=on",
        "-device", "virtio-blk-device,drive=d1,serial=tgdisk1",
        "-drive", f"file={paths[0]},if=none,id=d0,format=raw",
        "-device", "virtio-blk-device,drive=d0,serial=tgdisk0"]


def test_virtio_mmio_blk():
    """The blk checks on both disks, on SPIs through the GIC; pattern B
    landed where the write check put it and nowhere else."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-blk-") as tmp:
        paths, args = blk_disks(tmp)
        r = run_qemu("virt,gic-version=3", 1, "blk skip=vtimer,ptimer",
                     args)
        with open(paths[0], "rb") as f:
            disk0 = f.read()
        with open(paths[1], "rb") as f:
            disk1 = f.read()
    passed(r, ("memory", "smp") + MMIO_BLK_CHECKS)
    assert r.tg["ok"]["blk0-irq"]["later"] == "0", r
    off, n = write_region(DISK0_SIZE)
    assert disk0[off:off + n] == pattern(PATTERN_B, off, n), "disk 0"
    assert disk0[:off] == pattern(PATTERN_A, 0, off), "disk 0"
    assert disk1 == pattern(PATTERN_A, 0, DISK1_SIZE), "disk 1"


def test_virtio_mmio_blk_evil():
    """Malformed requests: none hangs, the device still works after them,
    and QEMU's reset request for a descriptor loop comes with a config
    interrupt on the line, which QEMU then keeps high until the reset."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-evil-") as tmp:
        _, args = blk_disks(tmp)
        r = run_qemu("virt,gic-version=3", 1, "blk_evil skip=vtimer,ptimer",
                     args)
    results = dict(r.tg["ok"], **r.tg["fail"])
    for case in EVIL_CASES:
        assert results[f"evil-{case}"]["outcome"] != "hang", (case, r)
    assert "evil-survived" in r.tg["ok"], r
    assert r.tg["ok"]["evil-desc-loop"]["outcome"] == "needs_reset", r


def pci_blk_run(machine):
    """The blk checks on a writable and a read-only disk, both
    virtio-blk-pci, on machine; the result, and the first disk's bytes
    afterwards, which must hold what the guest wrote."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-pci-") as tmp:
        paths = [os.path.join(tmp, "d0.img"), os.path.join(tmp, "d1.img")]
        make_image(paths[0], DISK0_SIZE)
        make_image(paths[1], DISK1_SIZE)
        r = run_qemu(machine, 1, "blk skip=vtimer,ptimer", [
            "-drive", f"file={paths[0]},if=none,id=d0,format=raw",
            "-device", "virtio-blk-pci,drive=d0,disable-legacy=on",
            "-drive", f"file={paths[1]},if=none,id=d1,format=raw,"
            "readonly=on",
            "-device", "virtio-blk-pci,drive=d1,disable-legacy=on"])
        with open(paths[0], "rb") as f:
            disk0 = f.read()
    off, n = write_region(DISK0_SIZE)
    assert disk0[off:off + n] == pattern(PATTERN_B, off, n), ("disk 0", r)
    return r


def test_virtio_pci_blk_its():
    """The blk checks on both disks over virtio-pci: ECAM from the device
    tree, BARs placed by the guest in the tree's window (QEMU's virt has
    no firmware to do it), MSI-X through the ITS as LPIs."""
    r = pci_blk_run("virt,gic-version=3")
    passed(r, ("memory", "smp") + BLK_CHECKS)
    assert r.tg["ok"]["blk0-msix"]["vectors"] == "0x2000,0x2001", r


def test_virtio_pci_blk_gicv2_intx():
    """GICv2 has no ITS, so no MSIs: the blk checks over virtio-pci on
    the functions' INTA, which QEMU's interrupt-map (its slots swizzled
    onto four SPIs, matched through interrupt-map-mask) routes to the
    GIC; the device's ISR says what each interrupt was for."""
    r = pci_blk_run("virt")
    passed(r, ("memory", "smp") + MMIO_BLK_CHECKS)
    assert r.tg["gic"]["version"] == "2", r


def net_run(device):
    """The net checks against QEMU's virtio-net (device on its transport)
    on the tap of a fresh network namespace, the host pinging the guest
    meanwhile (tests/integration/net_exchange.py)."""
    why = netns.usable()
    if why:
        harness.skip(why)
    r, log, ping = exchange(tcg_qemu_cmd(
        "virt,gic-version=3", 1, "skip=vtimer,ptimer " + NET_PARAMS, [
            "-global", "virtio-mmio.force-legacy=false",
            "-netdev", f"tap,id=n0,ifname={netns.TAP},script=no,"
            "downscript=no,vhost=off",
            "-device", f"{device},netdev=n0"]))
    check_exchange(r, log, ping)
    return r


def test_virtio_pci_blkbench_multiqueue():
    """blkbench on two queues at once from two CPUs, against QEMU's
    multiqueue virtio-blk-pci: the secondary, woken from WFE, runs its
    share at EL0 beside the boot CPU's, and both complete."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-mq-") as tmp:
        path = os.path.join(tmp, "d0.img")
        make_image(path, DISK0_SIZE)
        r = run_qemu("virt,gic-version=3", 2,
                     "cpus=2 blkbench blkbench_queues=2 skip=vtimer,ptimer",
                     ["-drive", f"file={path},if=none,id=d0,format=raw",
                      "-device", "virtio-blk-pci,drive=d0,disable-legacy=on,"
                      "num-queues=2"])
    passed(r, ("memory", "smp"))
    check_blkbench_queues(r, DISK0_SIZE, 2)


def test_virtio_net_mmio():
    r = net_run("virtio-net-device")
    assert "mmio" in r.tg["net"], r


def test_virtio_net_pci():
    r = net_run("virtio-net-pci,disable-legacy=on")
    assert "bdf" in r.tg["net"], r


def p9_run(device, machine="virt,gic-version=3"):
    """The 9p checks on a writable share (tag "share", the hostile ones
    too) and on a read-only one (tag "ro"), both QEMU's device, as
    tests/integration/test_qemu.py runs them on x86: all pass but
    QEMU_LENIENT; then the share as the checks left it, its parent and
    the read-only share unchanged."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-9p-") as tmp:
        share, ro = make_share(tmp, "share"), make_share(tmp, "ro")
        outside = snapshot(tmp, leave_out=("share", "ro"))
        ro_before = snapshot(ro)
        args = ["-global", "virtio-mmio.force-legacy=false"]
        for i, (path, tag, flags) in enumerate(((share, "share", ""),
                                                (ro, "ro", ",readonly=on"))):
            args += ["-fsdev", f"local,id=fs{i},path={path},"
                     f"security_model=none{flags}",
                     "-device", f"{device},fsdev=fs{i},mount_tag={tag}"]
        r = run_qemu(machine, 1, "skip=vtimer,ptimer 9p 9p_hostile "
                     "9p_tag=share 9p_ro=ro", args)
        check_share_after(share)
        assert snapshot(tmp, leave_out=("share", "ro")) == outside, r
        assert snapshot(ro) == ro_before, r
    assert set(r.tg["fail"]) == set(QEMU_LENIENT), r
    assert r.tg["done"]["failed"] == str(len(QEMU_LENIENT)), r
    for c in SHARE_CHECKS + HOSTILE_CHECKS + RO_CHECKS:
        assert c in r.tg["ok"] or c in QEMU_LENIENT, (c, r)
    return r


def test_virtio_9p_mmio():
    """The 9p checks over virtio-9p-device, its interrupt on a wired
    line of the GIC."""
    r = p9_run("virtio-9p-device")
    assert "mmio" in r.tg["9p"] and r.tg["9p"]["irq"] == "gic", r


def test_virtio_9p_pci():
    """The same over virtio-9p-pci, MSIs through the ITS."""
    r = p9_run("virtio-9p-pci,disable-legacy=on")
    assert "bdf" in r.tg["9p"] and r.tg["9p"]["irq"] == "msix", r


def test_virtio_mmio_legacy_refused():
    """QEMU's default virtio-mmio is the legacy layout (version 1), which
    the driver does not speak: refused with the reason."""
    with tempfile.TemporaryDirectory(prefix="arm64-qemu-legacy-") as tmp:
        path = os.path.join(tmp, "d0.img")
        make_image(path, DISK1_SIZE)
        r = run_qemu("virt", 1, "blk skip=vtimer,ptimer",
                     ["-drive", f"file={path},if=none,id=d0,format=raw",
                      "-device", "virtio-blk-device,drive=d0"])
    assert r.tg["fail"]["blk0-init"]["reason"] == "legacy-version-1", r


if __name__ == "__main__":
    if not IMAGE:
        print("1..0 # SKIP TESTGUEST_IMAGE not set")
        sys.exit(0)
    harness.main(globals())
