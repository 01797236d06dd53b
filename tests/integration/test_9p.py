#!/usr/bin/env python3
"""thpvm run --9p DIR,TAG[,ro]: the test guest's 9P2000.L client
(guest/p9*.c) against thpvm's virtio-9p device and its server over a
host directory, on virtio-pci and virtio-mmio: what Linux's v9fs does
(walk, read, create and write, setattr, mkdir, symlink, rename, unlink,
readdir, statfs, fsync, flush), then the hostile requests (`..` past the
root, symbolic links out of the share, names with '/', reads and writes
over the msize, fid exhaustion, clunked fids), then a read-only share.
The host checks what the guest changed, that the files it made are this
user's, and that nothing outside the share (a sentinel in its parent,
the targets of the links) or in a read-only share changed. The QEMU
peer of these checks is in test_qemu.py. And the benchmark's workload,
p9bench, with small counts."""
import os
import re
import subprocess
import tempfile

import harness
from harness import (assert_guest_passed, run, run_guest, start,
                     wait_for_line)
from p9_share import (HOSTILE_CHECKS, RO_CHECKS, SHARE_CHECKS,
                      check_share_after, make_share, snapshot)
from p9bench_share import make_p9bench_share

BASE = "skip=smp,lapic,pit"
# thpvm's server: fids a guest may hold (backend/p9_server.h).
MAX_FIDS = 16384
P9_PCI_ID = "1af4:1049"
# A p9bench small enough for one short boot under emulation: more than
# two msize reads and a short last one.
BENCH_SEQ = 2 * (512 * 1024 - 11) + 4096 * 3
BENCH_READS, BENCH_FILES, BENCH_CREATES = 50, 20, 10
BENCH_PARTS = ["seq", "rand4k", "stat", "create"]


def boot_share(tmp, params, args=(), ro_share=False, checks=()):
    """The guest's checks on tmp/share (tag "share"), and on tmp/ro (tag
    "ro", read-only) when asked; asserts what they leave outside the
    share and in the read-only one."""
    share = make_share(tmp, "share")
    opts = ["--9p", f"{share},share"]
    if ro_share:
        ro = make_share(tmp, "ro")
        opts += ["--9p", f"{ro},ro,ro"]
        ro_before = snapshot(ro)
    outside = snapshot(tmp, leave_out=("share", "ro"))
    r = run_guest(f"{params} {BASE}", opts + list(args), timeout=300)
    assert_guest_passed(r, checks)
    assert snapshot(tmp, leave_out=("share", "ro")) == outside, r
    if ro_share:
        assert snapshot(ro) == ro_before, r
    return r, share


def check_hostile_outcomes(r, share):
    """thpvm's server refuses where QEMU's is lenient: the write over the
    msize left bigwrite.bin empty, and the fids ran out at its limit."""
    assert os.path.getsize(os.path.join(share, "bigwrite.bin")) == 0, r
    fids = r.tg["ok"]["9p-evil-fids"]
    assert fids["ecode"] != "0" and int(fids["made"]) < MAX_FIDS, r
    for check in HOSTILE_CHECKS:
        assert r.tg["ok"][check].get("outcome") != "needs-reset", r
    # `..` at the root walked to the root, not refused (which QEMU's
    # checks let pass).
    assert "qid" in r.tg["ok"]["9p-evil-dotdot-root"], r


def test_9p_pci():
    """The share's checks and the hostile ones on virtio-pci, MSI-X."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        r, share = boot_share(tmp, "9p 9p_hostile 9p_tag=share",
                              checks=SHARE_CHECKS + HOSTILE_CHECKS)
        check_share_after(share)
        check_hostile_outcomes(r, share)
    dev = r.tg["9p"]
    assert dev["tag"] == "share" and dev["irq"] == "msix", r
    assert f"tg: pci bdf={dev['bdf']} id={P9_PCI_ID} " in r.out, r
    assert r.tg["ok"]["9p-session"]["msize"] == str(512 * 1024), r
    assert r.tg["ok"]["9p-create"]["uid"] == str(os.getuid()), r


def test_9p_mmio():
    """The share's checks on virtio-mmio, the device found in the DSDT
    and its interrupt on an IOAPIC line. The hostile ones run on PCI
    alone: they test the server, whatever the transport, and their 32k
    requests are the longest part of this file in the emulated host CI
    runs it in, whose stops grow with the time it runs."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        r, share = boot_share(tmp, "9p", ["--virtio-transport", "mmio"],
                              checks=SHARE_CHECKS)
        check_share_after(share)
    dev = r.tg["9p"]
    assert "mmio" in dev and dev["irq"] == "ioapic", r
    assert "virtio_mmio.device" not in r.tg["cmdline"], r
    assert P9_PCI_ID not in r.out, r


def test_9p_read_only():
    """Two shares: the checks on the writable one, and on the read-only
    one every change refused (EROFS) and the tree as it was."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        r, share = boot_share(tmp, "9p 9p_tag=share 9p_ro=ro",
                              ro_share=True, checks=SHARE_CHECKS + RO_CHECKS)
        check_share_after(share)
    assert sorted(re.findall(r"^tg: 9p dev=\d .* tag=(\S+) ", r.out,
                             re.M)) == ["ro", "share"], r
    for check in RO_CHECKS[2:]:
        assert r.tg["ok"][check]["ecode"] == "30", (check, r)


def test_9p_bench():
    """p9bench (bench/9p.py's workload) with small counts, each part
    started by a line from the host as bench/9p.py starts it: every part
    ran to its end with the requests it should have made, and left the
    share as it found it."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        share = make_p9bench_share(os.path.join(tmp, "bench"), BENCH_SEQ,
                                   BENCH_FILES)
        p = start(["run", "--9p", f"{share},bench", "-p",
                   f"p9bench p9bench_wait p9bench_reads={BENCH_READS} "
                   f"p9bench_files={BENCH_FILES} "
                   f"p9bench_creates={BENCH_CREATES} {BASE}"],
                  stdin=subprocess.PIPE)
        lines = []
        for part in BENCH_PARTS:
            lines += wait_for_line(p, f"^tg: p9bench {part} ready",
                                   timeout=120)
            p.stdin.write(b"\n")
        lines += wait_for_line(p, "^tg: done ", timeout=120)
        out = "\n".join(lines)
        assert p.wait(timeout=30) == 0, out
        assert os.listdir(os.path.join(share, "new")) == [], out
        assert len(os.listdir(os.path.join(share, "meta"))) == BENCH_FILES
    tg = harness.parse_tg(out)
    assert tg["done"]["failed"] == "0" and not tg["fail"], out
    assert "p9bench-session" in tg["ok"], out
    seq, rand = tg["p9bench seq"], tg["p9bench rand4k"]
    stat, create = tg["p9bench stat"], tg["p9bench create"]
    msize = int(seq["msize"])
    assert msize == 512 * 1024, out
    assert int(seq["bytes"]) == BENCH_SEQ, out
    assert int(seq["reqs"]) == -(-BENCH_SEQ // (msize - 11)), out
    assert int(rand["reqs"]) == BENCH_READS and rand["qd"] == "1", out
    assert int(stat["files"]) == BENCH_FILES, out
    assert int(stat["reqs"]) == 3 * BENCH_FILES, out
    assert int(create["files"]) == BENCH_CREATES, out
    assert int(create["reqs"]) == 4 * BENCH_CREATES, out
    assert 0 < int(create["create_ns"]) < int(create["ns"]), out
    for part in (seq, rand, stat, create):
        assert int(part["ns"]) > 0, out


def test_9p_tag_not_found():
    """A tag no device has fails the checks, naming it."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        share = make_share(tmp, "share")
        r = run_guest(f"9p 9p_tag=other {BASE}", ["--9p", f"{share},share"])
    assert r.rc == 1, r
    assert r.tg["fail"]["9p"] == {"tag": "other", "reason": "no-device"}, r


def test_9p_missing_directory():
    """A share that does not exist stops thpvm before the guest runs."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-") as tmp:
        r = run(["run", "--9p", os.path.join(tmp, "none") + ",share",
                 "-p", f"9p {BASE}"])
    assert r.rc != 0 and "tg: boot" not in r.out, r
    assert "none" in r.err, r


if __name__ == "__main__":
    harness.main(globals())
