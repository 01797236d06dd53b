#!/usr/bin/env python3
"""The same test guest under Debian's QEMU: its drivers and checks
(virtio-blk, -net, -balloon, -mem, -rng, -9p) against an implementation
we did not write, over virtio-pci (pc, q35)
and over virtio-mmio (microvm), and the guest's ACPI check on QEMU's own
tables (pc, q35: the RSDP, checksums and lengths, a LAPIC per CPU, COM1
in the DSDT; microvm here has none). QEMU's isa-debug-exit exits with
(status << 1) | 1, so a passing guest gives 1.

On KVM where /dev/kvm works, else on QEMU's TCG (-cpu max): what is
checked is the guest's drivers against QEMU's devices, which need no
KVM, and TCG on the machine itself costs a fraction of KVM nested in an
emulated host."""
import os
import re
import shutil
import subprocess
import tempfile

import harness
import netns
from balloon import hmp  # bench/balloon.py, on harness's path
from harness import start_cmd, wait_for_line
from disk_images import (BLK_CHECKS, EVIL_CASES, MIB, PATTERN_A, PATTERN_B,
                         make_image, pattern, write_region)
from net_exchange import (F_EVENT_IDX, F_INDIRECT_DESC, check_exchange,
                          exchange, require_netns)
from net_exchange import PARAMS as NET_PARAMS
from p9_share import (HOSTILE_CHECKS, QEMU_LENIENT, RO_CHECKS, SHARE_CHECKS,
                      check_share_after, make_share, snapshot)

QEMU = "qemu-system-x86_64"

DISK0_SIZE = 16 * MIB
DISK1_SIZE = 8 * MIB
DZ_BYTES = 128 << 10
# Modern-only virtio-net-pci on the tap of a netns.NetNS; vhost off, so
# that QEMU's own device model is what the guest talks to.
TAP_ARGS = ["-netdev", f"tap,id=n0,ifname={netns.TAP},script=no,"
            "downscript=no,vhost=off"]
NET_ARGS = TAP_ARGS + ["-device", "virtio-net-pci,netdev=n0,disable-legacy=on"]
BLK_PCI = "virtio-blk-pci,disable-legacy=on"
BASE_CHECKS = ("e820", "smp", "lapic-timer", "pit-timer", "acpi")

# QEMU's microvm: no PCI, devices on virtio-mmio transports, eight at
# 0xfeb00000 + 512 * n, filled from the last one down. Without ACPI (the
# guest reads no DSDT) QEMU 7.2 announces the ones in use on the kernel
# command line itself, virtio_mmio.device=512@<base>:<5 + n>, GSIs on
# the one IOAPIC whatever ioapic2= says (microvm's second IOAPIC, GSIs
# 24-47, serves 24 transports only with ACPI, and then nothing is put on
# the command line). Its virtio-mmio is legacy (version 1) unless
# force-legacy is off. Its firmware, qboot, hands over a memory map that
# is not sorted and ends in an empty entry, which the e820 check rejects:
# skipped there.
MICROVM = ["-M", "microvm,acpi=off",
           "-global", "virtio-mmio.force-legacy=false"]
MICROVM_PARAMS = "skip=e820 acpi=no "
MICROVM_CHECKS = ("smp", "lapic-timer", "pit-timer", "acpi")
BLK_MMIO = "virtio-blk-device"
NET_MMIO_ARGS = TAP_ARGS + ["-device", "virtio-net-device,netdev=n0"]
P9_PCI = "virtio-9p-pci,disable-legacy=on"
P9_MMIO = "virtio-9p-device"
# QEMU's 9p device breaks off (needs reset) at a Tread larger than the
# reply buffer, which the guest counts as refused; p9_share.QEMU_LENIENT
# is the hostile check its server fails.


def guest_qemu_cmd(kernel, cpus, params, args=()):
    if not shutil.which(QEMU):
        harness.skip(f"{QEMU} not installed (apt-get install qemu-system-x86)")
    if harness.kvm_available():
        accel = {}
    else:
        accel = {"accel": "tcg", "cpu": "max"}
    return harness.qemu_cmd("256M", params, cpus, kernel=kernel, qemu=QEMU,
                            **accel) + list(args)


def run_qemu(kernel, cpus, params, args=()):
    p = subprocess.run(guest_qemu_cmd(kernel, cpus, params, args),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace", timeout=300)
    return harness.Result(p.returncode, p.stdout, p.stderr)


def qemu(kernel, cpus, params, args=(), checks=(), base=BASE_CHECKS):
    """A passing run; on pc and q35 the ACPI tables are required and must
    list the CPUs (the RSDT and FADT QEMU 7.2 writes are ACPI 1.0's and
    3.0's, which the guest's check takes as it takes thpvm's)."""
    if base is BASE_CHECKS:
        params += " acpi=yes"
    r = run_qemu(kernel, cpus, params, args)
    assert r.rc == 1, r
    harness.assert_guest_passed(harness.Result(0, r.out, r.err),
                                tuple(base) + tuple(checks))
    assert r.tg["ok"]["smp"]["cpus"] == str(cpus), r
    if "acpi=yes" in params.split():
        assert r.tg["ok"]["acpi"]["lapics"] == str(cpus), r
        assert r.tg["ok"]["acpi"]["rsdp"] == r.tg["acpi"]["scanned"], r
    elif "acpi=no" in params.split():
        assert r.tg["ok"]["acpi"] == {"rsdp": "none"}, r
    return r


def microvm(kernel, cpus, params, args=(), checks=()):
    """qemu() on microvm without ACPI, modern virtio-mmio."""
    return qemu(kernel, cpus, MICROVM_PARAMS + params, MICROVM + list(args),
                checks, MICROVM_CHECKS)


def on_mmio(r, lines):
    """Every device line names a virtio-mmio transport that QEMU put on
    the command line, with its GSI on the first IOAPIC (5-12)."""
    for d in lines:
        assert "mmio" in d and "bdf" not in d, r
        assert f"virtio_mmio.device=512@{d['mmio']}:{d['gsi']}" in \
            r.tg["cmdline"], r
        assert 5 <= int(d["gsi"]) <= 12, r


def tg_lines(r, word):
    """Every "tg: WORD ..." line as a dict, in order (parse_tg keeps only
    the last line of a kind); a word without "=" maps to ""."""
    found = []
    for line in r.out.splitlines():
        start = line.find("tg: ")
        words = line[start + 4:].rstrip("\r").split(" ")
        if start >= 0 and words[0] == word:
            found.append(dict(w.split("=", 1) if "=" in w else (w, "")
                              for w in words[1:]))
    return found


def make_disks(tmp, devices=(BLK_PCI, BLK_PCI)):
    """A writable and a read-only image holding pattern A; the QEMU
    arguments that attach them as the given devices, modern-only
    virtio-blk-pci unless told otherwise."""
    paths = []
    for i, size in enumerate((DISK0_SIZE, DISK1_SIZE)):
        paths.append(os.path.join(tmp, f"disk{i}.img"))
        make_image(paths[-1], size)
    args = []
    for i, path in enumerate(paths):
        ro = ",readonly=on" if i else ""
        args += ["-drive", f"file={path},if=none,id=d{i},format=raw{ro}",
                 "-device", f"{devices[i]},drive=d{i},serial=tgdisk{i}"]
    return paths, args


def check_disks(paths):
    """After a blk run: pattern B over the MiB from the middle of disk 0,
    the discard range after it zeros or pattern A, the write-zeroes range
    after that zeros, pattern A everywhere else; disk 1 untouched."""
    with open(paths[0], "rb") as f:
        d0 = f.read()
    a = pattern(PATTERN_A, 0, DISK0_SIZE)
    w, length = write_region(DISK0_SIZE)
    dz = w + length
    assert d0[w:dz] == pattern(PATTERN_B, w, length), "write range"
    for o in range(dz, dz + DZ_BYTES, 4096):
        assert d0[o:o + 4096] in (a[o:o + 4096], bytes(4096)), hex(o)
    assert d0[dz + DZ_BYTES:dz + 2 * DZ_BYTES] == bytes(DZ_BYTES)
    assert d0[:w] == a[:w], "before the write range"
    assert d0[dz + 2 * DZ_BYTES:] == a[dz + 2 * DZ_BYTES:], "after it"
    with open(paths[1], "rb") as f:
        assert f.read() == pattern(PATTERN_A, 0, DISK1_SIZE), "read-only disk"


def mmio_checks(checks):
    """The blk checks' names on virtio-mmio: the interrupt check is
    blkN-irq (a wired line) instead of blkN-msix."""
    return tuple(c.replace("-msix", "-irq") for c in checks)


def check_blk_lines(r, irq_checks=("msix", "msix")):
    blk = tg_lines(r, "blk")
    assert [d["serial"] for d in blk] == ["tgdisk0", "tgdisk1"], r
    assert [d["ro"] for d in blk] == ["0", "1"], r
    assert [int(d["capacity"]) for d in blk] == [DISK0_SIZE // 512,
                                                 DISK1_SIZE // 512], r
    assert all(int(r.tg["ok"][f"blk{i}-{c}"]["queue_irqs"]) > 0
               for i, c in enumerate(irq_checks)), r
    return blk


def blk_run(kernel, params, machine=()):
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        paths, args = make_disks(tmp)
        r = qemu(kernel, 1, params, list(machine) + args, BLK_CHECKS)
        check_disks(paths)
    blk = check_blk_lines(r)
    return r, [int(d["features"], 16) for d in blk]


def microvm_blk_run(kernel, params):
    """blk_run over virtio-blk-device on microvm's virtio-mmio."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        paths, args = make_disks(tmp, (BLK_MMIO, BLK_MMIO))
        r = microvm(kernel, 1, params, args, mmio_checks(BLK_CHECKS))
        check_disks(paths)
    blk = check_blk_lines(r, ("irq", "irq"))
    on_mmio(r, blk)
    return r, [int(d["features"], 16) for d in blk]


def check_blkbench(r, queues=1):
    lines = tg_lines(r, "blkbench")
    assert len(lines) == 2 and "seq64k" in lines[0] and "rand4k" in lines[1], r
    seq, rand = lines
    assert int(seq["bytes"]) == DISK0_SIZE and int(seq["ns"]) > 0, r
    assert int(seq["MBps"]) > 0 and seq["qd"] == "16", r
    assert int(rand["reqs"]) == 20000 and int(rand["iops"]) > 0, r
    assert seq["queues"] == rand["queues"] == str(queues), r


def check_evil(r):
    """Every blk_evil case ended without a hang, the device still works,
    and a descriptor loop made QEMU ask for a reset (with a config
    interrupt, or the outcome would say so)."""
    results = dict(r.tg["ok"], **r.tg["fail"])
    for case in EVIL_CASES:
        assert f"evil-{case}" in results, f"{case} missing\n{r}"
        assert results[f"evil-{case}"]["outcome"] != "hang", r
    assert "evil-survived" in r.tg["ok"], r
    assert r.tg["ok"]["evil-desc-loop"]["outcome"] == "needs_reset", r


def test_qemu_bzimage_1cpu():
    r = qemu(harness.GUEST_BZIMAGE, 1, "ram=256M cpus=1")
    assert r.tg["boot"]["entry"] == "16", r


def test_qemu_setup_past_header():
    """The image of test_boot.py's test_entry_16_leaves_setup_code_alone,
    whose setup code lies past its header, boots through QEMU's loader and
    SeaBIOS's int 0x15 too."""
    r = run_qemu(harness.SETUP_PAST_HEADER_BZIMAGE, 1, "x=1")
    assert r.rc == 1, r
    assert re.search(r"setup16: e820 entries=[1-9] cmdline=x=1\r?\n",
                     r.out), r


def test_qemu_bzimage_2cpus():
    qemu(harness.GUEST_BZIMAGE, 2, "ram=256M cpus=2 touch=all")


def test_qemu_pvh_2cpus():
    r = qemu(harness.GUEST_ELF, 2, "ram=256M cpus=2")
    assert r.tg["boot"]["entry"] == "pvh", r


def test_qemu_virtio_blk():
    """The virtio-blk checks against QEMU's virtio-blk-pci (modern only),
    ring features taken, then the images checked from the host."""
    r, features = blk_run(harness.GUEST_BZIMAGE, "ram=256M cpus=1 blk")
    assert all(f & F_INDIRECT_DESC and f & F_EVENT_IDX for f in features), r
    assert len(tg_lines(r, "pci")) >= 2, r


def test_qemu_virtio_blk_noevent_noindirect():
    """The same without indirect descriptors and event indices (flags for
    notification suppression instead), through the PVH entry."""
    r, features = blk_run(harness.GUEST_ELF,
                          "ram=256M cpus=1 blk vfeat=noevent,noindirect")
    assert not any(f & (F_INDIRECT_DESC | F_EVENT_IDX) for f in features), r


def test_qemu_virtio_blk_q35_ecam():
    """Configuration space through ECAM: q35 puts MMCONFIG at 0xb0000000."""
    blk_run(harness.GUEST_BZIMAGE, "ram=256M cpus=1 blk ecam=0xb0000000",
            ("-M", "q35"))


def test_qemu_blkbench():
    """blkbench prints sane figures (no timing assertions)."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        _, args = make_disks(tmp)
        r = qemu(harness.GUEST_BZIMAGE, 1, "ram=256M cpus=1 blkbench", args)
    check_blkbench(r)


def test_qemu_blkbench_multiqueue():
    """blkbench on two queues at once from two CPUs, against QEMU's
    multiqueue virtio-blk-pci: both CPUs' ring-3 loops complete their
    share, and the device's queue count shows in the blk line."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        _, args = make_disks(tmp, (BLK_PCI + ",num-queues=2", BLK_PCI))
        r = qemu(harness.GUEST_BZIMAGE, 2,
                 "ram=256M cpus=2 blkbench blkbench_queues=2", args)
    check_blkbench(r, queues=2)
    assert [d["queues"] for d in tg_lines(r, "blk")] == ["2", "1"], r


def test_qemu_blk_evil():
    """The malformed-request cases are meant for thpvm; QEMU tolerates
    some (it bounce-buffers DMA to addresses that are not RAM and ignores
    NEXT next to INDIRECT), so only this is required here: every case
    ends with an outcome other than a hang and the device still works."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        paths, args = make_disks(tmp)
        r = run_qemu(harness.GUEST_BZIMAGE, 1, "ram=256M cpus=1 blk_evil",
                     args)
        with open(paths[0], "rb") as f:
            assert f.read() == pattern(PATTERN_A, 0, DISK0_SIZE), "disk 0"
    check_evil(r)


def net_run(kernel, params, mmio=False):
    """The net checks against QEMU's virtio-net-pci (or with mmio
    virtio-net-device on microvm), the host pinging the guest meanwhile;
    returns the negotiated features."""
    require_netns()
    args = MICROVM + NET_MMIO_ARGS if mmio else NET_ARGS
    first = MICROVM_PARAMS if mmio else ""
    r, log, ping = exchange(guest_qemu_cmd(
        kernel, 1, first + "ram=256M cpus=1 " + NET_PARAMS + params, args))
    check_exchange(r, log, ping, guest_ok_rc=1)
    assert r.tg["net"]["mac"] == "52:54:00:12:34:56", r
    if mmio:
        on_mmio(r, [r.tg["net"]])
    else:
        assert "bdf" in r.tg["net"], r
    return int(r.tg["net"]["features"], 16)


def test_qemu_virtio_net():
    """ARP, ICMP echo both ways and UDP through QEMU's device and a tap,
    ring features taken."""
    features = net_run(harness.GUEST_BZIMAGE, "")
    assert features & F_INDIRECT_DESC and features & F_EVENT_IDX, hex(features)


def test_qemu_virtio_net_noevent_noindirect():
    """The same without indirect descriptors and event indices, through
    the PVH entry."""
    features = net_run(harness.GUEST_ELF, " vfeat=noevent,noindirect")
    assert not features & (F_INDIRECT_DESC | F_EVENT_IDX), hex(features)



def balloon_run(params, args, irq):
    """HMP `balloon 128` takes 128 MiB, `balloon 256` gives them back,
    and QEMU's `info balloon` agrees with the guest, whose driver takes
    the device's interrupts as irq says."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-bl-") as tmp:
        mon = os.path.join(tmp, "monitor")
        p = start_cmd(guest_qemu_cmd(
            harness.GUEST_BZIMAGE, 1,
            params + "serve balloon touch=all skip=smp,lapic,pit",
            list(args) + ["-monitor", f"unix:{mon},server=on,wait=off"]))
        lines = wait_for_line(p, "tg: serving", timeout=120)
        dev = [l for l in lines if "tg: balloon-dev " in l]
        assert dev and "mode=std" in dev[0] and f"irq={irq}" in dev[0], \
            lines
        hmp(mon, "balloon 128")
        wait_for_line(p, r"tg: balloon reached target=32768 actual=32768 ",
                      timeout=60)
        assert "actual=128" in hmp(mon, "info balloon")
        hmp(mon, "balloon 256")
        wait_for_line(p, r"tg: balloon reached target=0 actual=0 ",
                      timeout=60)
        assert "actual=256" in hmp(mon, "info balloon")
        hmp(mon, "quit")
        p.wait(timeout=30)
    return dev[0]


def test_qemu_virtio_balloon():
    """The balloon driver against QEMU 7.2's virtio-balloon-pci, which has
    no MSI-X (the driver polls its ISR) and no continuous pages."""
    balloon_run("", ["-device", "virtio-balloon-pci"], "polled")


def test_qemu_virtio_mem():
    """The virtio-mem driver against QEMU 7.2's virtio-mem-pci (its
    device memory above 4 GiB, unplugged-inaccessible on): it plugs the
    64 MiB requested at start, then follows qom-set requested-size up and
    down, and QEMU's plugged size agrees with the guest's."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-mem-") as tmp:
        mon = os.path.join(tmp, "monitor")
        p = start_cmd(guest_qemu_cmd(
            harness.GUEST_BZIMAGE, 1, "serve mem skip=smp,lapic,pit",
            ["-m", "256M,maxmem=512M",
             "-object", "memory-backend-ram,id=hp,size=256M",
             "-device", "virtio-mem-pci,id=vm0,memdev=hp,block-size=2M,"
             "requested-size=64M",
             "-monitor", f"unix:{mon},server=on,wait=off"]))
        lines = wait_for_line(p, "tg: serving", timeout=120)
        dev = [l for l in lines if "tg: mem-dev " in l]
        assert dev and "region=268435456 block=2097152" in dev[0], lines
        assert [l for l in lines if "tg: mem reached requested=67108864 "
                "plugged=67108864 " in l], lines
        for size, plugged in (("128M", 128 * MIB), ("32M", 32 * MIB)):
            hmp(mon, f"qom-set vm0 requested-size {size}")
            wait_for_line(p, rf"tg: mem reached requested={plugged} "
                          rf"plugged={plugged} ", timeout=60)
            info = hmp(mon, "info memory-devices")
            # "size" is what is plugged ("requested-size" the request).
            assert re.search(rf"^\s*size: {plugged}\s*$", info, re.M), info
        hmp(mon, "quit")
        p.wait(timeout=30)


def rng_run(kernel, params, args, base=BASE_CHECKS):
    """The rng check against QEMU's device fed by its default backend
    (the host's getrandom()); returns the check's fields."""
    r = qemu(kernel, 1, params + "rng", args, ("rng",), base)
    ok = r.tg["ok"]["rng"]
    assert ok["bytes"] == "4096" and int(ok["values"]) >= 64, r
    return ok


def test_qemu_virtio_rng():
    """The rng check against QEMU's virtio-rng-pci, modern only (no
    device configuration structure: the type has none)."""
    ok = rng_run(harness.GUEST_BZIMAGE, "",
                 ["-device", "virtio-rng-pci,disable-legacy=on"])
    assert "bdf" in ok and ok["irq"] == "msix", ok


def test_qemu_microvm_virtio_rng():
    """The rng check over virtio-rng-device, its interrupt on the wired
    line."""
    ok = rng_run(harness.GUEST_BZIMAGE, MICROVM_PARAMS,
                 MICROVM + ["-device", "virtio-rng-device"],
                 MICROVM_CHECKS)
    assert ok["irq"] == "ioapic" and "mmio" in ok, ok


def test_qemu_microvm_virtio_blk():
    """The virtio-blk checks and blkbench (whose ring-3 loop writes
    QueueNotify) on microvm's virtio-mmio, through the PVH entry, ring
    features taken. An empty transport announced ahead of QEMU's own
    entries (DeviceID 0) is listed and skipped."""
    empty = "virtio_mmio.device=0x200@0xfeb00000:5 "
    r, features = microvm_blk_run(harness.GUEST_ELF,
                                  empty + "ram=256M cpus=1 blk blkbench")
    assert r.tg["boot"]["entry"] == "pvh", r
    assert all(f & F_INDIRECT_DESC and f & F_EVENT_IDX for f in features), r
    slots = tg_lines(r, "virtio-mmio")
    assert slots[0]["mmio"] == "0xfeb00000" and slots[0]["id"] == "0", r
    assert [d["id"] for d in slots[1:]] == ["2", "2"], r
    assert all(d["version"] == "2" for d in slots), r
    check_blkbench(r)


def test_qemu_microvm_virtio_blk_noevent_noindirect():
    """The same without indirect descriptors and event indices, through
    qboot's run of the real-mode setup."""
    r, features = microvm_blk_run(
        harness.GUEST_BZIMAGE, "ram=256M cpus=1 blk vfeat=noevent,noindirect")
    assert r.tg["boot"]["entry"] == "16", r
    assert not any(f & (F_INDIRECT_DESC | F_EVENT_IDX) for f in features), r


def test_qemu_microvm_blk_evil():
    """blk_evil over virtio-mmio: as on PCI, no case hangs and the device
    survives; the descriptor loop's DEVICE_NEEDS_RESET comes with a config
    interrupt on the device's wired line."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        paths, args = make_disks(tmp, (BLK_MMIO, BLK_MMIO))
        r = run_qemu(harness.GUEST_ELF, 1,
                     MICROVM_PARAMS + "ram=256M cpus=1 blk_evil",
                     MICROVM + args)
        with open(paths[0], "rb") as f:
            assert f.read() == pattern(PATTERN_A, 0, DISK0_SIZE), "disk 0"
    check_evil(r)


def test_qemu_microvm_virtio_net():
    """The net checks over virtio-net-device on microvm."""
    features = net_run(harness.GUEST_ELF, "", mmio=True)
    assert features & F_INDIRECT_DESC and features & F_EVENT_IDX, hex(features)


def test_qemu_microvm_virtio_net_noevent_noindirect():
    """The same without indirect descriptors and event indices, through
    the real-mode setup."""
    features = net_run(harness.GUEST_BZIMAGE, " vfeat=noevent,noindirect",
                       mmio=True)
    assert not features & (F_INDIRECT_DESC | F_EVENT_IDX), hex(features)


def test_qemu_microvm_virtio_balloon():
    """The balloon over virtio-balloon-device: its interrupts, config
    changes included, come on the wired line."""
    dev = balloon_run(MICROVM_PARAMS, MICROVM +
                      ["-device", "virtio-balloon-device"], "ioapic")
    assert "mmio=0xfeb00e00 gsi=12 " in dev, dev


def test_qemu_microvm_legacy_and_bad_entries():
    """QEMU's default virtio-mmio is legacy (version 1): refused with its
    reason, and the guest goes on to its end. A malformed entry fails
    the command line; entries in other notations (decimal, a K suffix, an
    id) are taken."""
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        _, args = make_disks(tmp, (BLK_MMIO, BLK_MMIO))
        r = run_qemu(harness.GUEST_ELF, 1,
                     MICROVM_PARAMS + "ram=256M cpus=1 blk "
                     "virtio_mmio.device=512@4272947200:5 "
                     "virtio_mmio.device=1K@0xfeb00400:7:3 "
                     "virtio_mmio.device=512@0xfeb00200",
                     ["-M", "microvm,acpi=off"] + args)
    assert r.rc == 3, r
    assert r.tg["fail"]["cmdline"]["param"] == \
        "virtio_mmio.device=512@0xfeb00200", r
    slots = tg_lines(r, "virtio-mmio")
    assert [(d["mmio"], d["gsi"], d["size"]) for d in slots[:2]] == \
        [("0xfeb00000", "5", "0x200"), ("0xfeb00400", "7", "0x400")], r
    assert [d["version"] for d in slots] == ["1"] * 4, r
    for i in (0, 1):
        assert r.tg["fail"][f"blk{i}-init"]["reason"] == "legacy-version-1", r
    assert r.tg["done"]["failed"] == "3", r


def test_qemu_microvm_pci_and_mmio():
    """Both transports at once: microvm with PCIe (which needs its ACPI,
    so QEMU announces nothing on the command line: the guest finds the
    transport in use in QEMU's DSDT, as it does in thpvm's, an LNRO0005
    device; with ioapic2=off the transports' GSIs are 16-23 on the first
    IOAPIC). PCI devices come first: disk 0 on PCI is blk0, disk 1
    on virtio-mmio blk1; virtio=mmio leaves PCI alone. The MADT has no
    ISA IRQ0 override while the PIT is on pin 2: pit skipped."""
    params = "skip=e820,pit ecam=0xe0000000 acpi=yes ram=256M cpus=1 blk "
    machine = ["-M", "microvm,pcie=on,ioapic2=off",
               "-global", "virtio-mmio.force-legacy=false"]
    base = ("smp", "lapic-timer", "acpi")
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-blk-") as tmp:
        paths, args = make_disks(tmp, (BLK_PCI, BLK_MMIO))
        r = qemu(harness.GUEST_ELF, 1, params, machine + args,
                 BLK_CHECKS[:-1] + ("blk1-irq",), base)
        check_disks(paths)
        blk = check_blk_lines(r, ("msix", "irq"))
        assert blk[0]["bdf"] and blk[1]["mmio"] == "0xfeb00e00", r
        assert blk[1]["gsi"] == "23", r
        assert r.tg["ok"]["acpi"]["mmio"] == "1", r
        assert "virtio_mmio.device" not in r.tg["cmdline"], r
        r = qemu(harness.GUEST_ELF, 1, params + "virtio=mmio",
                 machine + args, ("blk0-read", "blk0-ro", "blk0-irq"),
                 base)
    assert [d["serial"] for d in tg_lines(r, "blk")] == ["tgdisk1"], r
    assert not tg_lines(r, "pci"), r


def p9_shares(tmp, device):
    """A writable share (tag "share") and a read-only one (tag "ro") in
    tmp, and the QEMU arguments that attach them as the given device:
    files made as QEMU's user (security_model=none, as thpvm's)."""
    share, ro = make_share(tmp, "share"), make_share(tmp, "ro")
    args = []
    for i, (path, tag, flags) in enumerate(((share, "share", ""),
                                            (ro, "ro", ",readonly=on"))):
        args += ["-fsdev", f"local,id=fs{i},path={path},"
                 f"security_model=none{flags}",
                 "-device", f"{device},fsdev=fs{i},mount_tag={tag}"]
    return share, ro, args


def p9_run(device, mmio=False):
    """The share's and the read-only checks against QEMU's virtio-9p
    (one boot, all passing), then the hostile ones (another, all refused
    but QEMU_LENIENT); from the host: what the checks changed, and
    nothing outside the shares nor in the read-only one changed. Returns
    both runs."""
    params = "ram=256M cpus=1 9p_tag=share "
    with tempfile.TemporaryDirectory(prefix="thpvm-qemu-9p-") as tmp:
        share, ro, args = p9_shares(tmp, device)
        outside = snapshot(tmp, leave_out=("share", "ro"))
        ro_before = snapshot(ro)
        boot = microvm if mmio else qemu
        r = boot(harness.GUEST_BZIMAGE, 1, params + "9p 9p_ro=ro", args,
                 SHARE_CHECKS + RO_CHECKS)
        check_share_after(share)
        if mmio:
            evil = run_qemu(harness.GUEST_BZIMAGE, 1, MICROVM_PARAMS +
                            params + "9p_hostile", MICROVM + args)
        else:
            evil = run_qemu(harness.GUEST_BZIMAGE, 1, params + "9p_hostile",
                            args)
        assert snapshot(tmp, leave_out=("share", "ro")) == outside, evil
        assert snapshot(ro) == ro_before, evil
    assert evil.rc == 3 and set(evil.tg["fail"]) == set(QEMU_LENIENT), \
        evil
    for check in HOSTILE_CHECKS:
        assert check in evil.tg["ok"] or check in QEMU_LENIENT, evil
    assert evil.tg["ok"]["9p-evil-big-read"]["outcome"] == "needs-reset", \
        evil
    assert [d["tag"] for d in tg_lines(r, "9p")] == ["share", "ro"], r
    return r, evil


def test_qemu_virtio_9p():
    """The 9p checks against QEMU's virtio-9p-pci, modern only, MSI-X."""
    r, _ = p9_run(P9_PCI)
    assert all("bdf" in d and d["irq"] == "msix"
               for d in tg_lines(r, "9p")), r


def test_qemu_microvm_virtio_9p():
    """The same over virtio-9p-device on microvm's virtio-mmio."""
    r, _ = p9_run(P9_MMIO, mmio=True)
    on_mmio(r, tg_lines(r, "9p"))


if __name__ == "__main__":
    harness.main(globals())
