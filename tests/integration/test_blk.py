#!/usr/bin/env python3
"""virtio-blk end to end: the test guest's driver against thpvm's device
on real image files (read, write, flush, discard, write-zeroes,
read-only, out-of-range and unsupported requests), over virtio-pci and
virtio-mmio, with and without event index and indirect descriptors, with
O_DIRECT, and the guest's malformed-descriptor mode; then the image files
are checked from the host. Also the disk errors a user can make."""
import os
import subprocess
import tempfile

import harness
from disk_images import (BLK_CHECKS, EVIL_CASES, MIB, PATTERN_A, PATTERN_B,
                         check_blkbench_queues, make_image, pattern, read_at,
                         write_region)
from harness import one_error, run, start, wait_for_line

RW_SIZE = 16 * MIB
RO_SIZE = 8 * MIB


def check_rw_image(path):
    off, length = write_region(RW_SIZE)
    assert read_at(path, off, length) == pattern(PATTERN_B, off, length)
    # discard and write-zeroes cover the 256 KiB after it
    assert read_at(path, off + length, 256 << 10) == bytes(256 << 10)
    for o in (0, 4096, off - 4096, off + length + (256 << 10),
              RW_SIZE - 4096):
        assert read_at(path, o, 4096) == pattern(PATTERN_A, o, 4096), o


def mmio_checks(checks):
    """The checks' names over virtio-mmio, whose interrupt check is
    blkN-irq where PCI's is blkN-msix."""
    return tuple(c.replace("-msix", "-irq") for c in checks)


def boot_with_disks(params, disk_opts=("", ",ro"), checks=BLK_CHECKS):
    harness.require_kvm()
    direct = any("direct" in o for o in disk_opts)
    with (harness.direct_tempdir() if direct else
          tempfile.TemporaryDirectory()) as d:
        rw, ro = os.path.join(d, "rw.img"), os.path.join(d, "ro.img")
        make_image(rw, RW_SIZE)
        make_image(ro, RO_SIZE)
        before = harness.crc32_file(ro)
        r = harness.run_guest("skip=smp,lapic,pit blk " + params,
                              ["-d", rw + disk_opts[0],
                               "-d", ro + disk_opts[1]])
        harness.assert_guest_passed(r, checks)
        # thpvm punches holes, so discarded sectors read back as zeros.
        assert r.tg["ok"]["blk0-discard"]["zeroed"] == "1", r
        check_rw_image(rw)
        assert harness.crc32_file(ro) == before
        return r


def test_blk_read_write_ro():
    r = boot_with_disks("")
    assert "blk" in r.tg, r


def test_blk_without_event_idx_and_indirect_over_ecam():
    r = boot_with_disks("vfeat=noevent,noindirect ecam=0xe0000000")
    assert int(r.tg["blk"]["features"], 16) & (3 << 28) == 0, r


def test_blk_direct():
    boot_with_disks("", (",direct", ",ro,direct"))


def test_blk_over_mmio():
    """Both disks on virtio-mmio: the guest finds them in the DSDT
    (LNRO0005 devices, their windows and lines), and every check passes
    with their interrupts on level-triggered IOAPIC lines, lowered once
    acknowledged (blkN-irq wants no interrupt after that)."""
    r = boot_with_disks("", (",mmio", ",ro,mmio"), mmio_checks(BLK_CHECKS))
    assert r.tg["ok"]["acpi"]["mmio"] == "2", r
    assert "virtio_mmio.device" not in r.tg["cmdline"], r
    for i in range(2):
        assert (f"tg: blk dev={i} mmio=0x{0xfe000000 + i * 0x1000:x} "
                f"gsi={16 + i} ") in r.out, r


def test_blk_mixed_transports_without_event_idx():
    """One disk on PCI, one on MMIO (PCI's come first in the guest), and
    the ring features off."""
    checks = BLK_CHECKS[:-1] + ("blk1-irq",)
    r = boot_with_disks("vfeat=noevent,noindirect", ("", ",ro,mmio"),
                        checks)
    assert int(r.tg["blk"]["features"], 16) & (3 << 28) == 0, r


def hostile_descriptors(disk_opt):
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "evil.img")
        make_image(img, RW_SIZE)
        r = harness.run_guest("skip=smp,lapic,pit blk_evil",
                              ["-d", img + disk_opt])
        harness.assert_guest_passed(r, ("evil-survived",))
        cases = [c for c in r.tg["ok"] if c.startswith("evil-")]
        for case in EVIL_CASES:
            assert "evil-" + case in cases, f"{case} missing\n{r}"
        # Each broken chain is one warning line at most, and thpvm said
        # why the device needs a reset.
        assert "needs a reset" in r.err, r
        assert len(r.err.splitlines()) <= 2 * len(cases), r


def test_blk_hostile_descriptors():
    hostile_descriptors("")


def test_blk_hostile_descriptors_over_mmio():
    """The same malformed chains through the MMIO transport, whose reset
    after each must also lower the device's line."""
    hostile_descriptors(",mmio")


def test_disk_errors():
    harness.require_kvm()
    one_error(run(["run", "-d", "/nonexistent.img"]),
              "/nonexistent.img: No such file or directory")
    one_error(run(["run", "-d", ",ro"]), "expected PATH[,ro][,direct]")
    # A misspelt option, not a missing file "img,rw".
    one_error(run(["run", "-d", "img,rw"]), 'unknown disk option "rw"', rc=2)
    one_error(run(["run", "-d", "img,aio=posix"]),
              'unknown disk option "aio=posix"', rc=2)
    with tempfile.TemporaryDirectory() as d:
        small = os.path.join(d, "small.img")
        with open(small, "wb") as f:
            f.write(b"x" * 100)
        one_error(run(["run", "-d", small]), "smaller than one 512-byte")
        # A directory is a 9p root (lkvm's -d DIR), not an image: a
        # disk image's options are refused for it.
        one_error(run(["run", "-d", d + ",direct"]),
                  "direct, format, aio and queues are for disk images", rc=2)
        one_error(run(["run", "-d", "/dev/null"]), "not a regular file")


def test_disk_locked_by_running_vm():
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "shared.img")
        make_image(img, MIB)
        first = start(["run", "--name", "holder", "-d", img, "-p",
                       "serve skip=smp,lapic,pit"])
        wait_for_line(first, "tg: serving")
        one_error(run(["run", "-d", img]), "in use by another process")
        one_error(run(["run", "-d", img + ",ro"]),
                  "in use by another process")
        assert first.poll() is None
        assert harness.stop_and_wait(first, "holder") == 0


def test_engines_in_stat():
    """Each disk's engine: io_uring by default (this kernel has it), the
    one -d names otherwise; its queues: one per vCPU by default, as many
    as -d names otherwise; its format, raw or qcow2. thpvm stat says
    which, and all serve the
    guest's checks (the test guest's driver uses queue 0 alone unless
    blkbench_queues asks for more)."""
    harness.require_kvm()
    with harness.direct_tempdir() as d:
        imgs = [os.path.join(d, f"{i}.img") for i in range(4)]
        for img in imgs:
            make_image(img, RW_SIZE)
        qcow2 = imgs.pop() + ".qcow2"
        subprocess.run(["qemu-img", "convert", "-O", "qcow2",
                        qcow2[:-len(".qcow2")], qcow2], check=True)
        p = start(["run", "--name", "engines", "-d", imgs[0],
                   "-d", imgs[1] + ",aio=threads",
                   "-d", imgs[2] + ",direct,aio=io_uring,queues=3",
                   "-d", qcow2, "-p", "skip=smp,lapic,pit blk serve"])
        lines = wait_for_line(p, "tg: serving")
        disks = harness.ctl_json(["stat", "engines"])["disks"]
        assert [(x["engine"], x["direct"], x["queues"], x["format"])
                for x in disks] == [
            ("io_uring", False, 1, "raw"), ("threads", False, 1, "raw"),
            ("io_uring", True, 3, "raw"), ("io_uring", False, 1, "qcow2")
        ], disks
        text = run(["stat", "engines"]).out
        assert f"Disk virtio-blk1: {imgs[1]} (threads)\n" in text, text
        assert (f"Disk virtio-blk2: {imgs[2]} (io_uring, 3 queues, "
                "direct)\n") in text, text
        assert f"Disk virtio-blk3: {qcow2} (qcow2, io_uring)\n" in text, text
        assert harness.stop_and_wait(p, "engines") == 0
        tg = harness.parse_tg("\n".join(lines))
        assert not tg["fail"], lines
        for i in range(4):
            assert f"blk{i}-write" in tg["ok"], lines
        subprocess.run(["qemu-img", "convert", "-O", "raw", qcow2,
                        qcow2 + ".raw"], check=True)
        for img in imgs + [qcow2 + ".raw"]:
            check_rw_image(img)


def test_blkbench_multiqueue():
    """Two vCPUs get a disk with two queues by default, and the test
    guest's blkbench drives both at once, a ring-3 loop on each CPU: each
    loop's share of the reads completes only if its queue is served."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "bench.img")
        make_image(img, RW_SIZE)
        r = harness.run_guest("skip=lapic,pit blkbench blkbench_queues=2",
                              ["-c", "2", "-d", img])
    harness.assert_guest_passed(r, ("smp",))
    check_blkbench_queues(r, RW_SIZE, 2)


def test_disk_free_once_vm_exits():
    """A VM started right after one that used the disk ended, or was
    killed, finds it unlocked: the kernel frees an io_uring in the
    background, and the file it holds must not be the one with the
    lock."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "again.img")
        make_image(img, MIB)
        args = ["run", "-d", img, "-p", "skip=smp,lapic,pit"]
        for _ in range(4):
            harness.assert_guest_passed(run(args))
        for _ in range(4):
            p = start(args[:-1] + [args[-1] + " serve"])
            wait_for_line(p, "tg: serving")
            p.kill()
            p.wait()
            harness.assert_guest_passed(run(args))


def test_shared_read_only_disk():
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "shared.img")
        make_image(img, MIB)
        first = start(["run", "--name", "reader", "-d", img + ",ro", "-p",
                       "serve skip=smp,lapic,pit"])
        wait_for_line(first, "tg: serving")
        r = harness.run_guest("skip=smp,lapic,pit", ["-d", img + ",ro"])
        harness.assert_guest_passed(r)
        assert harness.stop_and_wait(first, "reader") == 0


if __name__ == "__main__":
    harness.main(globals())
