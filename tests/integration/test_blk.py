#!/usr/bin/env python3
"""virtio-blk end to end: the test guest's virtio-pci driver against
thpvm's device on real image files (read, write, flush, discard,
write-zeroes, read-only, out-of-range and unsupported requests), with and
without event index and indirect descriptors, with O_DIRECT, and the
guest's malformed-descriptor mode; then the image files are checked from
the host. Also the disk errors a user can make."""
import os
import tempfile

import harness
from disk_images import (BLK_CHECKS, EVIL_CASES, MIB, PATTERN_A, PATTERN_B,
                         make_image, pattern, read_at, write_region)
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


def boot_with_disks(params, disk_opts=("", ",ro")):
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        rw, ro = os.path.join(d, "rw.img"), os.path.join(d, "ro.img")
        make_image(rw, RW_SIZE)
        make_image(ro, RO_SIZE)
        before = harness.crc32_file(ro)
        r = harness.run_guest("skip=smp,lapic,pit blk " + params,
                              ["-d", rw + disk_opts[0],
                               "-d", ro + disk_opts[1]])
        harness.assert_guest_passed(r, BLK_CHECKS)
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


def test_blk_hostile_descriptors():
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "evil.img")
        make_image(img, RW_SIZE)
        r = harness.run_guest("skip=smp,lapic,pit blk_evil", ["-d", img])
        harness.assert_guest_passed(r, ("evil-survived",))
        cases = [c for c in r.tg["ok"] if c.startswith("evil-")]
        for case in EVIL_CASES:
            assert "evil-" + case in cases, f"{case} missing\n{r}"
        # Each broken chain is one warning line at most, and thpvm said
        # why the device needs a reset.
        assert "needs a reset" in r.err, r
        assert len(r.err.splitlines()) <= 2 * len(cases), r


def test_disk_errors():
    harness.require_kvm()
    one_error(run(["run", "-d", "/nonexistent.img"]),
              "/nonexistent.img: No such file or directory")
    one_error(run(["run", "-d", ",ro"]), "expected PATH[,ro][,direct]")
    with tempfile.TemporaryDirectory() as d:
        small = os.path.join(d, "small.img")
        with open(small, "wb") as f:
            f.write(b"x" * 100)
        one_error(run(["run", "-d", small]), "smaller than one 512-byte")
        one_error(run(["run", "-d", d]), "Is a directory")
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
