#!/usr/bin/env python3
"""qcow2 disks, judged by QEMU's own tools: images that qemu-img makes
(each cluster size, version 2 and 3, compressed, preallocated metadata, a
chain of backing files in both formats, an overlay larger than its
backing file) hold pattern A with known zero holes, and the test guest's
blk_verify reads every byte of each through thpvm, on io_uring, and on
worker threads with O_DIRECT. Writes: the guest's write, discard and
write-zeroes checks on images of each refcount width, version and kind
(compressed, an overlay), after which `qemu-img check` finds no error
and no leak and the bytes are what a raw image holds after the same
requests (`qemu-img compare` against one); thpvm killed with SIGKILL in
the middle of a stream of writes and flushes, after which `qemu-img
check` finds no corruption and every flushed write is there. Then what
thpvm must refuse at open, one line each, and corrupt tables met by a
running guest: an I/O error on its request, a message, and the VM goes
on."""
import os
import struct
import subprocess
import tempfile

import harness
import test_blk
import test_durability
from disk_images import (MIB, PATTERN_A, PATTERN_B, make_image, pattern,
                         write_region)
from harness import one_error, run, start, wait_for_line

SIZE = 4 * MIB
# Zero holes of the source image, in bytes: they become unallocated or
# zero clusters, or zeros inside allocated ones, by cluster size.
HOLES = ((512 << 10, 64 << 10), (3 * MIB, MIB))
ZERO_BLOCKS = sum(length for _, length in HOLES) // 4096
# Ranges the backing chain's lower images get wrong, which the images
# above them must hide.
WRONG_IN_BASE = ((0, 64 << 10), (2 * MIB, 192 << 10))
WRONG_IN_MID = ((1 * MIB, 128 << 10), (3 * MIB + (64 << 10), 64 << 10))


def qemu_img(*args, cwd=None):
    subprocess.run(["qemu-img"] + list(args), check=True, cwd=cwd,
                   stdout=subprocess.DEVNULL)


def write_raw(path, size=SIZE, holes=HOLES, wrong=()):
    data = bytearray(pattern(PATTERN_A, 0, size))
    for off, length in holes:
        data[off:off + length] = bytes(length)
    for off, length in wrong:
        data[off:off + length] = pattern(PATTERN_B, off, length)
    with open(path, "wb") as f:
        f.write(data)


def make_images(d):
    """{name: expected zero blocks} for images made in d by qemu-img."""
    src = os.path.join(d, "src.raw")
    write_raw(src)
    images = {}
    # Eight images in all, as many as the test guest drives in one boot.
    for name, opts in (("c512", ["-o", "cluster_size=512"]),
                       ("z4k", ["-c", "-o", "cluster_size=4096"]),
                       ("c64k", []),
                       ("c2m", ["-o", "cluster_size=2M"]),
                       ("v2", ["-o", "compat=0.10,cluster_size=16K"]),
                       ("meta", ["-o", "preallocation=metadata"])):
        qemu_img("convert", "-O", "qcow2", *opts, src,
                 os.path.join(d, name + ".qcow2"))
        images[name] = ZERO_BLOCKS
    # base.raw <- mid.qcow2 <- top.qcow2, relative names: each layer
    # holds what differs from the one below, so a lookup that falls
    # through to the wrong layer reads pattern B.
    write_raw(os.path.join(d, "base.raw"), holes=(), wrong=WRONG_IN_BASE)
    write_raw(os.path.join(d, "mid.raw"), holes=(), wrong=WRONG_IN_MID)
    qemu_img("convert", "-O", "qcow2", "-B", "base.raw", "-F", "raw",
             "mid.raw", "mid.qcow2", cwd=d)
    qemu_img("convert", "-O", "qcow2", "-B", "mid.qcow2", "-F", "qcow2",
             "src.raw", "top.qcow2", cwd=d)
    images["top"] = ZERO_BLOCKS
    # An overlay twice its backing file's size: zeros past its end.
    qemu_img("create", "-f", "qcow2", "-b", "src.raw", "-F", "raw",
             "big.qcow2", str(2 * SIZE), cwd=d)
    images["big"] = ZERO_BLOCKS + SIZE // 4096
    return images


def verify(d, images, opts=""):
    """blk_verify on every image in one boot."""
    disks = []
    for name in images:
        disks += ["-d", os.path.join(d, name + ".qcow2") +
                  ",ro,format=qcow2" + opts]
    r = harness.run_guest("skip=smp,lapic,pit blk_verify", disks,
                          timeout=300)
    harness.assert_guest_passed(r)
    for i, (name, zero) in enumerate(images.items()):
        got = r.tg["ok"].get(f"blk{i}-verify")
        assert got, f"{name}: blk{i}-verify missing\n{r}"
        assert got["zero_blocks"] == str(zero), (name, got, r)


def test_qemu_img_images_io_uring():
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        verify(d, make_images(d))


def test_qemu_img_images_threads_direct():
    """On worker threads with O_DIRECT: through the bounce buffer
    wherever a table, a compressed cluster or a 512-byte cluster is not
    a whole 4 KiB block, or runs up to the end of a file that is not.
    (io_uring with O_DIRECT takes the same turns as a raw disk's
    requests once a run is mapped: test_blk.)"""
    harness.require_kvm()
    with harness.direct_tempdir() as d:
        verify(d, make_images(d), ",aio=threads,direct")


def qemu_img_check(path, leaks_allowed=False):
    """qemu-img check: no corruption, and no leaked clusters unless
    allowed (exit status 3: leaks only)."""
    r = subprocess.run(["qemu-img", "check", path], capture_output=True,
                       text=True)
    assert r.returncode in ((0, 3) if leaks_allowed else (0,)), (
        path, r.stdout, r.stderr)


def as_raw(path, d):
    raw = os.path.join(d, os.path.basename(path) + ".raw")
    qemu_img("convert", "-O", "raw", path, raw)
    return raw


def same_but_discard(twin, path, d, size):
    """The image's bytes are the twin's but where the guest's discard
    covered only part of a 2 MiB cluster: advice, which qcow2 does not
    take there (raw punches a hole)."""
    off, length = write_region(size)
    lo, hi = off + length, off + length + (128 << 10)
    with open(twin, "rb") as f:
        want = f.read()
    with open(as_raw(path, d), "rb") as f:
        got = f.read()
    assert got[:lo] == want[:lo] and got[hi:] == want[hi:], path


def test_writes_match_raw():
    """The guest's write checks (pattern B over 1 MiB at the middle, a
    discard and a write-zeroes of 128 KiB after it, in requests of 512
    bytes up) on qcow2 images of every refcount width from 1 to 64 bits,
    v2, 512-byte clusters, compressed images written over and overlays
    on a raw base (copy-on-write of compressed clusters and of the
    base's bytes: with 2 MiB clusters, what the requests leave of a
    cluster must come through), and on a raw twin: each qcow2 image is
    clean by qemu-img check, identical to the twin by qemu-img compare
    (but where a discard was advice), and the base is untouched."""
    harness.require_kvm()
    size = test_blk.RW_SIZE
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src.raw")
        make_image(src, size)
        images = []
        for name, opts in (("c512-r2", ["-o", "cluster_size=512,"
                                        "refcount_bits=2"]),
                           ("c4k-r1", ["-o", "cluster_size=4096,"
                                       "refcount_bits=1"]),
                           ("r64", ["-o", "refcount_bits=64"]),
                           ("v2", ["-o", "compat=0.10"]),
                           ("z2m", ["-c", "-o", "cluster_size=2M"])):
            path = os.path.join(d, name + ".qcow2")
            qemu_img("convert", "-O", "qcow2", *opts, src, path)
            images.append(path)
        base = os.path.join(d, "base.raw")
        make_image(base, size)
        for name, opts in (("overlay", []),
                           ("overlay2m", ["-o", "cluster_size=2M"])):
            qemu_img("create", "-f", "qcow2", *opts, "-b", "base.raw",
                     "-F", "raw", name + ".qcow2", cwd=d)
            images.append(os.path.join(d, name + ".qcow2"))
        # An autoclear bit (the bitmaps extension's): thpvm does not
        # keep bitmaps, so it must clear the bit before writing.
        header_patch(images[2], 88, ">Q", 1)
        twin = os.path.join(d, "twin.raw")
        make_image(twin, size)
        args = ["-d", twin]
        for path in images:
            args += ["-d", path + ",format=qcow2"]
        r = harness.run_guest("skip=smp,lapic,pit blk", args, timeout=300)
        harness.assert_guest_passed(r)
        for i in range(len(images) + 1):
            assert f"blk{i}-write" in r.tg["ok"], (i, r)
        test_blk.check_rw_image(twin)
        for path in images:
            qemu_img_check(path)
            if "2m" in path:
                same_but_discard(twin, path, d, size)
            else:
                subprocess.run(["qemu-img", "compare", "-f", "raw", twin,
                                path], check=True, stdout=subprocess.DEVNULL)
        assert harness.crc32_file(base) == harness.crc32_file(src)
        with open(images[2], "rb") as f:
            f.seek(88)
            assert f.read(8) == bytes(8), images[2]


def kill_during_stream(d, image, nth, opts=""):
    """blk_stream on image, SIGKILL once nth flushes were reported: no
    corruption (leaks allowed, as QEMU allows them), every flushed write
    there."""
    p = start(["run", "-p", "skip=smp,lapic,pit blk_stream",
               "-d", image + ",format=qcow2" + opts])
    for _ in range(nth):
        lines = wait_for_line(p, test_durability.FLUSHED.pattern)
    p.kill()
    p.wait()
    passes, end = test_durability.last_flushed(p, lines)
    qemu_img_check(image, leaks_allowed=True)
    test_durability.check_image(as_raw(image, d), passes, end)


def test_kill_during_writes():
    """Fresh images allocating as they go (64 KiB clusters; 512-byte ones,
    whose refcount table grows past its first cluster on the way), an
    overlay copying its raw base's bytes on write, and a compressed
    image rewritten cluster by cluster, each killed in the middle of its
    second pass or its first."""
    harness.require_kvm()
    size = test_durability.DISK
    with tempfile.TemporaryDirectory() as d:
        fresh = os.path.join(d, "fresh.qcow2")
        qemu_img("create", "-f", "qcow2", fresh, str(size))
        kill_during_stream(d, fresh, 40)
        small = os.path.join(d, "small.qcow2")
        qemu_img("create", "-f", "qcow2", "-o", "cluster_size=512", small,
                 str(size))
        kill_during_stream(d, small, 40, ",aio=threads")
        make_image(os.path.join(d, "base.raw"), size)
        qemu_img("create", "-f", "qcow2", "-b", "base.raw", "-F", "raw",
                 "overlay.qcow2", cwd=d)
        kill_during_stream(d, os.path.join(d, "overlay.qcow2"), 9)
        packed = os.path.join(d, "packed.qcow2")
        qemu_img("convert", "-c", "-O", "qcow2",
                 os.path.join(d, "base.raw"), packed)
        kill_during_stream(d, packed, 9)


def header_patch(path, offset, fmt, value):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(struct.pack(fmt, value))


def test_refused_at_open():
    """What thpvm does not read, each one error line before any guest
    runs."""
    with tempfile.TemporaryDirectory() as d:
        def img(name, *opts, size="1M"):
            path = os.path.join(d, name)
            qemu_img("create", "-f", "qcow2", *opts, path, size)
            return path

        def refused(path, text, opts=",ro,format=qcow2"):
            one_error(run(["run", "-d", path + opts]), text)

        plain = img("plain.qcow2")
        raw = os.path.join(d, "raw.img")
        write_raw(raw, MIB, holes=())
        refused(raw, "not a qcow2 image")
        over = img("over.qcow2", "-b", "plain.qcow2", "-F", "qcow2")
        refused(over, "names a backing file (plain.qcow2)", ",ro")
        snap = img("snap.qcow2")
        qemu_img("snapshot", "-c", "s1", snap)
        refused(snap, "1 internal snapshot(s)")
        refused(img("l2.qcow2", "-o", "extended_l2=on"),
                "extended L2 entries")
        refused(img("data.qcow2", "-o",
                    "data_file=" + os.path.join(d, "data.raw")),
                "an external data file")
        refused(img("zstd.qcow2", "-o", "compression_type=zstd"),
                "compression type other than zlib")
        with open(plain, "rb") as f:
            plain_bytes = f.read()
        for name, at, fmt, value, text in (
                # qemu-img's own LUKS images need a PBKDF benchmark that
                # fails on a loaded machine ("Unable to get accurate CPU
                # usage"): the header's method field is what is read.
                ("aes", 32, ">I", 1, "encrypted qcow2 images (AES)"),
                ("luks", 32, ">I", 2, "encrypted qcow2 images (LUKS)"),
                ("dirty", 72, ">Q", 1, "dirty: it was not closed"),
                ("corrupt", 72, ">Q", 2, "marked corrupt"),
                ("unknown", 72, ">Q", 1 << 20, "feature bit 20"),
                ("v4", 4, ">I", 4, "qcow2 version 4"),
                ("c4m", 20, ">I", 22, "cluster size 2^22"),
                ("l1", 40, ">Q", 1 << 40,
                 "L1 or refcount table is not at a cluster inside")):
            path = os.path.join(d, name + ".qcow2")
            with open(path, "wb") as f:
                f.write(plain_bytes)
            header_patch(path, at, fmt, value)
            refused(path, text)
        header_patch(img("l1size.qcow2", size="1G"), 36, ">I", 1)
        refused(os.path.join(d, "l1size.qcow2"),
                "L1 table of 1 entries does not fit")


def test_backing_chains_refused():
    """Missing backing files, chains that loop and chains too deep."""
    with tempfile.TemporaryDirectory() as d:
        def create(name, backing, fmt="qcow2"):
            qemu_img("create", "-f", "qcow2", "-b", backing, "-F", fmt,
                     name, "1M", cwd=d)
            return os.path.join(d, name)

        def refused(path, text):
            one_error(run(["run", "-d", path + ",ro,format=qcow2"]), text)

        qemu_img("create", "-f", "qcow2", "a.qcow2", "1M", cwd=d)
        create("b.qcow2", "a.qcow2")
        # a.qcow2 now names b.qcow2 below it: a loop of two.
        qemu_img("rebase", "-u", "-b", "b.qcow2", "-F", "qcow2", "a.qcow2",
                 cwd=d)
        refused(os.path.join(d, "a.qcow2"), "backing chain comes back")
        write_raw(os.path.join(d, "gone.raw"), MIB, holes=())
        missing = create("missing.qcow2", "gone.raw", "raw")
        os.unlink(os.path.join(d, "gone.raw"))
        refused(missing, "gone.raw: No such file or directory")
        # l17 <- l16 <- ... <- l00: one image made, copied with the
        # name it holds patched (names of one length).
        qemu_img("create", "-f", "qcow2", "l00.qcow2", "1M", cwd=d)
        layer = create("l01.qcow2", "l00.qcow2")
        with open(layer, "rb") as f:
            image = f.read()
        at = struct.unpack(">Q", image[8:16])[0]
        for i in range(2, 18):
            with open(os.path.join(d, f"l{i:02}.qcow2"), "wb") as f:
                f.write(image[:at] + f"l{i - 1:02}.qcow2".encode() +
                        image[at + 9:])
        refused(os.path.join(d, "l17.qcow2"), "more than 16 backing files")
        qemu_img("create", "-f", "qcow2", "-u", "-b", "l00.qcow2", "-F",
                 "vmdk", "vmdk.qcow2", "1M", cwd=d)
        refused(os.path.join(d, "vmdk.qcow2"), 'backing file format "vmdk"')


def l2_entry_offset(path, index=0):
    """Where L2 entry index of the first L2 table is in the file."""
    with open(path, "rb") as f:
        head = f.read(48)
        l1_offset = struct.unpack(">Q", head[40:48])[0]
        f.seek(l1_offset)
        l2 = struct.unpack(">Q", f.read(8))[0] & 0x00fffffffffffe00
    return l2 + 8 * index


def test_corrupt_tables_fail_requests():
    """Entries that point nowhere sensible: the guest's read of them
    fails with an I/O error and a message names the entry; the VM runs
    on and reads the other disk."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src.raw")
        write_raw(src, MIB, holes=())
        paths = []
        # Entry 3 of the first L2 table: a reserved bit set, a cluster
        # past the end of the file, an offset within a cluster.
        for name, change in (("reserved", lambda e: e | 0x2),
                             ("past-end", lambda e: 1 << 40),
                             ("unaligned", lambda e: e + 0x200)):
            path = os.path.join(d, name + ".qcow2")
            qemu_img("convert", "-O", "qcow2", src, path)
            at = l2_entry_offset(path, 3)
            with open(path, "rb") as f:
                f.seek(at)
                entry = struct.unpack(">Q", f.read(8))[0]
            header_patch(path, at, ">Q", change(entry))
            paths.append(path)
        # A compressed cluster whose bytes are not deflate's.
        path = os.path.join(d, "deflate.qcow2")
        qemu_img("convert", "-c", "-O", "qcow2", src, path)
        entry_at = l2_entry_offset(path)
        with open(path, "rb") as f:
            f.seek(entry_at)
            entry = struct.unpack(">Q", f.read(8))[0]
        host = entry & ((1 << 54) - 1)     # 64 KiB clusters: 54 bits
        header_patch(path, host, ">Q", 0xffffffffffffffff)
        paths.append(path)
        args = []
        for p in paths + [src]:
            args += ["-d", p + ",ro" + (",format=qcow2" if p != src else "")]
        r = harness.run_guest("skip=smp,lapic,pit blk_verify", args,
                              timeout=300)
        for i in range(4):
            assert f"tg: FAIL blk{i}-verify offset=0 reason=ioerr" \
                in r.out, (i, r)
        assert r.tg["ok"]["blk4-verify"]["zero_blocks"] == "0", r
        assert "corrupt qcow2 L2 entry 0x" in r.err, r
        assert "corrupt qcow2 L2 entry (unaligned cluster)" in r.err, r
        assert "corrupt qcow2 compressed cluster" in r.err, r


if __name__ == "__main__":
    harness.main(globals())
