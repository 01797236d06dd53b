#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the fuzz targets into
corpus/<target>/seed-*: small well-formed inputs of each parser, from
which libFuzzer starts (docs/fuzzing.md). Inputs that libFuzzer found
since, and those of past findings (regress-*), are kept next to them.

Usage: seeds.py [CORPUS_DIR]   (default: corpus/ beside this script)
Needs gzip, xz, zstd and lz4 for the compressed seeds."""
import gzip
import lzma
import os
import struct
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def elf(notes_in_segment=True, with_section=False):
    """An ELF64 executable: one PT_LOAD, a Xen PVH entry note."""
    note = struct.pack("<III", 4, 8, 18) + b"Xen\0" + struct.pack("<Q", 0x1000000)
    nph = 2 if notes_in_segment else 1
    phoff = 64
    data_off = phoff + 56 * nph
    shoff = data_off + len(note) if with_section else 0
    shnum = 2 if with_section else 0
    eh = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) +
          struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x1000000, phoff, shoff,
                      0, 64, 56, nph, 64, shnum, 0))
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x1000000, 0x1000000,
                     data_off + len(note), 0x2000, 0x1000)
    if notes_in_segment:
        ph += struct.pack("<IIQQQQQQ", 4, 4, data_off, 0, 0, len(note),
                          len(note), 4)
    out = eh + ph + note
    if with_section:
        out += bytes(64) + struct.pack("<IIQQQQIIQQ", 0, 7, 0, 0, data_off,
                                       len(note), 0, 0, 4, 0)
    return out


def bzimage(payload):
    """A bzImage of protocol 2.15 with one setup sector and payload."""
    setup = bytearray(1024)
    setup[0x1f1] = 1                                   # setup_sects
    struct.pack_into("<H", setup, 0x1fe, 0xaa55)
    setup[0x200] = 0xeb
    setup[0x201] = 0x6a                                # header ends at 0x26c
    struct.pack_into("<IH", setup, 0x202, 0x53726448, 0x020f)
    setup[0x211] = 1                                   # LOADED_HIGH
    struct.pack_into("<I", setup, 0x22c, 0x37ffffff)   # initrd_addr_max
    struct.pack_into("<IB", setup, 0x230, 0x200000, 1)  # align, relocatable
    struct.pack_into("<H", setup, 0x236, 3)            # XLF_KERNEL_64
    struct.pack_into("<I", setup, 0x238, 2047)         # cmdline_size
    struct.pack_into("<II", setup, 0x248, 0x10, len(payload))
    struct.pack_into("<QI", setup, 0x258, 0x1000000, 0x100000)
    return bytes(setup) + bytes(16) + payload + bytes(16)


def tool(cmd, data):
    return subprocess.run(cmd, input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def compressed(data):
    return {
        "gzip": gzip.compress(data, mtime=0),
        "xz": lzma.compress(data, format=lzma.FORMAT_XZ,
                            check=lzma.CHECK_CRC32),
        "lzma": lzma.compress(data, format=lzma.FORMAT_ALONE),
        "zstd": tool(["zstd", "-q", "-c"], data),
        "lz4": tool(["lz4", "-q", "-l", "-c"], data),
    }


# Formats by their enum compression order (vmm/boot/decompress.h).
FORMATS = ["none", "gzip", "xz", "lzma", "zstd", "lz4"]


def virtqueue(size_log2, features, ops, descs, avail, extra=b""):
    """A ring image for fuzz_virtqueue: descriptor table, avail ring."""
    size = 1 << size_log2
    table = bytearray(16 * size)
    for i, (addr, length, flags, nxt) in enumerate(descs):
        struct.pack_into("<QIHH", table, 16 * i, addr, length, flags, nxt)
    ring = struct.pack("<HH", 0, len(avail)) + b"".join(
        struct.pack("<H", h) for h in avail).ljust(2 * size + 2, b"\0")
    head = bytes([size_log2, features, len(ops)]) + bytes(ops)
    return head + bytes(table) + ring + extra


def ram(size, writes):
    """A guest RAM image of size bytes with (gpa, bytes) written in."""
    out = bytearray(size)
    for gpa, data in writes:
        out[gpa:gpa + len(data)] = data
    return bytes(out)


def queue(q, descs, heads):
    """Queue q's descriptors and avail ring, where fuzz_virtio.h puts
    them: [(gpa, bytes)] for ram()."""
    table = b"".join(struct.pack("<QIHH", *d) for d in descs)
    ring = struct.pack("<HH", 0, len(heads)) + b"".join(
        struct.pack("<H", h) for h in heads)
    return [(0x800 * q, table), (0x800 * q + 0x400, ring)]


def device(kicks, image, host=b"", features=(1 << 64) - 1, qsize_log2=3):
    """An input of the device targets (fuzz_virtio.c)."""
    assert len(host) % 16 == 0
    return (struct.pack("<QBB", features, qsize_log2, len(kicks)) +
            bytes(kicks) + bytes([len(host) // 16]) + image + host)


NEXT, WRITE, INDIRECT = 1, 2, 4


def blk_request(kind, sector, data_len, data_writable):
    """A virtio-blk request on queue 0: header, data, status."""
    descs = [(0x1000, 16, NEXT, 1)]
    if data_len:
        descs.append((0x1100, data_len, NEXT | (WRITE if data_writable else 0), 2))
    descs.append((0x1400, 1, WRITE, 0))
    if not data_len:
        descs[0] = (0x1000, 16, NEXT, 1)
    return queue(0, descs, [0]) + [(0x1000, struct.pack("<IIQ", kind, 0, sector)),
                                   (0x1100, b"thpvm" * 8)]


# 9P2000.L (fuzz_p9_server.c): message types, and a message and a
# string as the wire has them.
P9 = dict(statfs=8, lopen=12, lcreate=14, symlink=16, mknod=18, rename=20,
          readlink=22, getattr=24, setattr=26, xattrwalk=30, readdir=40,
          fsync=50, lock=52, getlock=54, link=70, mkdir=72, renameat=74,
          unlinkat=76, version=100, attach=104, flush=108, walk=110,
          read=116, write=118, clunk=120, remove=122)
NOFID = 0xffffffff


def p9s(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<H", len(data)) + data


def p9(kind, *fields, tag=1):
    """A T-message of kind with tag: fields are (struct format, value)
    pairs, strings (str) or raw bytes, after size[4] type[1] tag[2]."""
    body = b""
    for f in fields:
        if isinstance(f, tuple):
            body += struct.pack("<" + f[0], f[1])
        elif isinstance(f, str):
            body += p9s(f)
        else:
            body += f
    return struct.pack("<IBH", 7 + len(body), P9[kind], tag) + body


def walk(fid, newfid, *names, tag=1):
    return p9("walk", ("I", fid), ("I", newfid), ("H", len(names)), *names,
              tag=tag)


def p9_session(mode, room, *msgs):
    """An input of fuzz_p9_server: mode (bit 0 read-only, bit 1 the
    harness opens the session, bits 2-7 the pieces' size), the reply's
    room in 64-byte steps, the messages."""
    return bytes([mode, room]) + b"".join(msgs)


def p9_seeds():
    version = p9("version", ("I", 8192), "9P2000.L")
    attach = p9("attach", ("I", 0), ("I", NOFID), "user", "", ("I", 0))
    write("p9_server", "read", p9_session(
        0, 255, version, attach, walk(0, 1, "d", "e"),
        p9("lopen", ("I", 1), ("I", 0)),
        p9("read", ("I", 1), ("Q", 0), ("I", 100)),
        p9("getattr", ("I", 1), ("Q", 0x7ff)), p9("clunk", ("I", 1))))
    write("p9_server", "create-write", p9_session(
        2, 64, walk(0, 1), p9("lcreate", ("I", 1), "new", ("I", 2),
                              ("I", 0o644), ("I", 0)),
        p9("write", ("I", 1), ("Q", 0), ("I", 5), b"hello"),
        p9("read", ("I", 1), ("Q", 1), ("I", 4)),
        p9("fsync", ("I", 1), ("I", 0)),
        p9("setattr", ("I", 1), ("I", 0x1 | 0x8 | 0x20 | 0x100),
           ("I", 0o600), ("I", 0), ("I", 0), ("Q", 2), ("Q", 0), ("Q", 0),
           ("Q", 1), ("Q", 2)),
        p9("statfs", ("I", 1)), p9("remove", ("I", 1))))
    write("p9_server", "readdir", p9_session(
        2, 4, walk(0, 1), p9("lopen", ("I", 1), ("I", 0o200000)),
        p9("readdir", ("I", 1), ("Q", 0), ("I", 120)),
        p9("readdir", ("I", 1), ("Q", 0), ("I", 0xffffffff))))
    write("p9_server", "dir-ops", p9_session(
        2, 16, p9("mkdir", ("I", 0), "m", ("I", 0o755), ("I", 0)),
        p9("symlink", ("I", 0), "s", "m/x", ("I", 0)),
        walk(0, 1, "s"), p9("readlink", ("I", 1)),
        walk(0, 2, "a"), p9("link", ("I", 0), ("I", 2), "h"),
        p9("rename", ("I", 2), ("I", 0), "a2"),
        p9("renameat", ("I", 0), "m", ("I", 0), "m2"),
        p9("mknod", ("I", 0), "p", ("I", 0o10644), ("I", 0), ("I", 0),
           ("I", 0)),
        p9("unlinkat", ("I", 0), "m2", ("I", 0x200)),
        p9("lock", ("I", 2), ("B", 1), ("I", 0), ("Q", 0), ("Q", 10),
           ("I", 5), "client"),
        p9("getlock", ("I", 2), ("B", 1), ("Q", 0), ("Q", 10), ("I", 5),
           "client"),
        p9("xattrwalk", ("I", 2), ("I", 3), "user.x"),
        p9("flush", ("H", 1)), p9("clunk", ("I", 2))))
    write("p9_server", "escape", p9_session(
        2, 255, walk(0, 1, "..", "..", "outside", "secret"),
        walk(0, 1, "dirlink", "secret"), walk(0, 2, "d", "up", "secret"),
        walk(0, 3, "abs"), p9("lopen", ("I", 3), ("I", 2 | 0o1000)),
        p9("setattr", ("I", 3), ("I", 0x9), ("I", 0o777), ("I", 0),
           ("I", 0), ("Q", 0), ("Q", 0), ("Q", 0), ("Q", 0), ("Q", 0)),
        walk(0, 4, "dirlink"),
        p9("lcreate", ("I", 4), "new", ("I", 2), ("I", 0o644), ("I", 0)),
        p9("unlinkat", ("I", 4), "secret", ("I", 0)),
        p9("renameat", ("I", 4), "secret", ("I", 0), "stolen"),
        p9("mkdir", ("I", 0), "../x", ("I", 0o755), ("I", 0)),
        p9("symlink", ("I", 0), "..", "/", ("I", 0)),
        p9("mknod", ("I", 0), "null", ("I", 0o20666), ("I", 1), ("I", 3),
           ("I", 0))))
    write("p9_server", "read-only", p9_session(
        3, 255, walk(0, 1, "a"), p9("lopen", ("I", 1), ("I", 2)),
        p9("lopen", ("I", 1), ("I", 0)),
        p9("write", ("I", 1), ("Q", 0), ("I", 1), b"x"),
        p9("unlinkat", ("I", 0), "a", ("I", 0)),
        p9("setattr", ("I", 1), ("I", 0x8), ("I", 0), ("I", 0), ("I", 0),
           ("Q", 0), ("Q", 0), ("Q", 0), ("Q", 0), ("Q", 0))))
    # Requests and replies cut into 3-byte pieces.
    write("p9_server", "pieces", p9_session(
        2 | 3 << 2, 8, walk(0, 1, "a"), p9("lopen", ("I", 1), ("I", 2)),
        p9("write", ("I", 1), ("Q", 3), ("I", 9), b"fragments"),
        p9("read", ("I", 1), ("Q", 0), ("I", 0xffffffff))))
    # Sizes that lie: past the input, below the header, strings past
    # the message.
    write("p9_server", "truncated", p9_session(
        2, 1, struct.pack("<IBH", 5, P9["clunk"], 1),
        struct.pack("<IBHIH", 40, P9["mkdir"], 1, 0, 300) + b"ab",
        struct.pack("<IBHIIHH", 21, P9["walk"], 1, 0, 1, 1, 20) + b"xy",
        struct.pack("<IBHIQI", 0x7fffffff, P9["write"], 1, 0, 0, 100)))


def main():
    kernel = elf()
    write("elf", "pvh-note", kernel)
    write("elf", "section-note", elf(False, True))
    write("arm64_image", "header",
          struct.pack("<IIQQQQQQII", 0x91005a4d, 0, 0, 0x1000000, 0xa,
                      0, 0, 0, 0x644d5241, 0) + bytes(64))
    for i, (name, data) in enumerate(compressed(kernel).items()):
        write("decompress", name, bytes([FORMATS.index(name), 12]) + data)
        write("bzimage", name, bzimage(data))
    # The IOAPIC: select pin 16's low dword, write it unmasked and
    # level-triggered (vector 0x41), raise its line, EOI, lower it; then
    # the version register read through a byte access.
    def ioapic_reg(reg, value):
        return (bytes([0, 3]) + struct.pack("<HQ", 0, reg) +
                bytes([0, 3]) + struct.pack("<HQ", 0x10, value))
    write("ioapic", "level", ioapic_reg(0x21, 0) +
          ioapic_reg(0x20, 0x8041) + bytes([2, 33, 3, 0x41, 2, 32]) +
          bytes([0, 0]) + struct.pack("<HQ", 0, 1) +
          bytes([1, 0]) + struct.pack("<H", 0x12))
    write("ioapic", "edge-kvm-refuses", bytes([4, 3]) +
          ioapic_reg(0x18, 0x30) + bytes([2, 9, 2, 8, 4, 0, 2, 9]))
    # -n mode=user's values: kind byte 0 a hostfwd, 1 a net.
    write("net_user_config", "forwards",
          b"\x00tcp::2222-:22\n\x00udp:127.0.0.1:5353-10.0.2.20:53\n"
          b"\x00tcp::2222-:23")
    write("net_user_config", "network",
          b"\x01192.168.76.0/24\n\x00::80-192.168.76.9:8080")
    write("decompress", "detect-gzip", b"\x80\x0c" + gzip.compress(kernel, mtime=0))
    for name, text in [
            ("status", b'{"cmd":"status"}'),
            ("balloon", b'{"cmd":"balloon","bytes":1073741824,"force":true}'),
            ("nested", b'[1,-2.5e-3,"\\u00e9\\ud83d\\ude00",{"a":[null,false]}]')]:
        write("json", name, text)
    # One chain of a readable and a writable buffer; one through an
    # indirect table; with EVENT_IDX.
    write("virtqueue", "direct",
          virtqueue(2, 0, [0], [(0x1000, 16, 1, 1), (0x1100, 16, 2, 0)], [0]))
    write("virtqueue", "indirect",
          virtqueue(2, 2, [0, 3], [(0x200, 32, 4, 0)], [0],
                    bytes(0x200 - 3 - 3 - 64 - 12) +
                    struct.pack("<QIHHQIHH", 0x1000, 8, 1, 1, 0x1100, 8, 2, 0)))
    write("virtqueue", "event-idx",
          virtqueue(3, 1, [1, 1, 2, 3], [(0x1000, 8, 2, 0), (0x1100, 8, 2, 0)],
                    [0, 1]))
    # Devices (fuzz_virtio.c): guest RAM of 0x1500 bytes holds the rings
    # and buffers.
    for name, (kind, sector, n, w) in {
            "read": (0, 0, 512, True), "write": (1, 1, 512, False),
            "flush": (4, 0, 0, False), "get-id": (8, 0, 20, True),
            "discard": (11, 0, 16, False)}.items():
        write("virtio_blk", name,
              device([0], ram(0x1500, blk_request(kind, sector, n, w))))
    packet = bytes(12) + bytes.fromhex("ffffffffffff5254001234560800") + bytes(46)
    write("virtio_net", "tx-rx", device(
        [1, 0x40], ram(0x2000, queue(1, [(0x1000, len(packet), 0, 0)], [0]) +
                       queue(0, [(0x1800, 1526, WRITE, 0)], [0]) +
                       [(0x1000, packet)]), host=bytes(range(256)) * 2))
    pfns = struct.pack("<4I", 0x100, 0x101, 0x102, 0x1ff)
    for policy in (0, 1):
        write("virtio_balloon", "inflate-deflate-%d" % policy, bytes([policy]) + device(
            [0, 1], ram(0x1100, queue(0, [(0x1000, 16, 0, 0)], [0]) +
                        queue(1, [(0x1000, 8, 0, 0)], [0]) + [(0x1000, pfns)]),
            features=1 << 32))
    write("virtio_balloon", "target", b"\0" + device(
        [0x80], ram(0x1100, queue(0, [(0x1000, 16, 0, 0)], [0]) +
                    [(0x1000, pfns)]), host=struct.pack("<I", 1 << 20) + bytes(12),
        features=1 << 32))
    write("virtio_rng", "read", device(
        [0], ram(0x1100, queue(0, [(0x1000, 64, WRITE, 0)], [0]))))
    # Tversion, Tattach, a Twalk to "file", Tlopen and Tread, then a
    # Tflush of the read (answered after it, or at once) and of a tag
    # not in flight: request i's message at 0x1000 + 0x80 * i, its
    # reply at 0x2000 + 0x200 * i.
    msgs = [p9("version", ("I", 8192), "9P2000.L", tag=0xffff),
            p9("attach", ("I", 0), ("I", NOFID), "", "", ("I", 0), tag=1),
            walk(0, 1, "file", tag=2),
            p9("lopen", ("I", 1), ("I", 0), tag=3),
            p9("read", ("I", 1), ("Q", 0), ("I", 64), tag=4),
            p9("flush", ("H", 4), tag=5),
            p9("flush", ("H", 77), tag=6)]
    descs, writes = [], []
    for i, m in enumerate(msgs):
        descs += [(0x1000 + 0x80 * i, len(m), NEXT, 2 * i + 1),
                  (0x2000 + 0x200 * i, 0x200, WRITE, 0)]
        writes.append((0x1000 + 0x80 * i, m))
    write("virtio_p9", "session", device(
        [0], ram(0x3000, queue(0, descs, [2 * i for i in range(len(msgs))]) +
                 writes), qsize_log2=4))
    write("virtio_console", "tx-rx", device(
        [1, 8], ram(0x1200, queue(1, [(0x1000, 5, 0, 0)], [0]) +
                    queue(0, [(0x1100, 16, WRITE, 0)], [0]) +
                    [(0x1000, b"hello")]), host=b"typed input here"))
    regs = [(0x70, 1), (0x70, 3), (0x24, 1), (0x20, 1), (0x24, 0),
            (0x20, 0), (0x70, 0xb), (0x30, 0), (0x38, 8), (0x80, 0),
            (0x90, 0x400), (0xa0, 0x8000), (0x44, 1), (0x70, 0xf),
            (0x50, 0), (-0x60, 0), (0x64, 1)]
    ops = b"".join(struct.pack("<HIH", abs(off) | 2 << 12 | (0x8000 if off > 0 else 0), v, 0)
                   for off, v in regs)
    # (kind: 0 config space, 1 BAR0, 2 BAR2, +0x80 a write; offset;
    # log2 of the size; value)
    pci = [(0x80, 0x04, 1, 6), (0, 0x10, 2, 0), (0x80, 0x10, 2, 0xffffffff),
           (0, 0x10, 2, 0), (0, 0x34, 0, 0),
           (0x81, 0x14, 0, 1), (0x81, 0x14, 0, 3), (0x81, 0x08, 2, 1),
           (0x81, 0x0c, 2, 1), (0x81, 0x08, 2, 0), (0x81, 0x0c, 2, 0),
           (0x81, 0x14, 0, 0xb), (0x81, 0x16, 1, 0), (0x81, 0x18, 1, 8),
           (0x81, 0x20, 3, 0), (0x81, 0x28, 3, 0x400), (0x81, 0x30, 3, 0x8000),
           (0x81, 0x1c, 1, 1), (0x81, 0x14, 0, 0xf),
           (0x82, 0x0, 2, 0xfee00000), (0x82, 0x8, 2, 0x41), (0x82, 0xc, 2, 0),
           (0x81, 0x1a, 1, 0), (0x81, 0x3000, 1, 0), (1, 0x1000, 0, 0),
           (2, 0x800, 3, 0)]
    write("virtio_pci", "blk-read", bytes([len(pci)]) + b"".join(
        struct.pack("<BHBI", *op) for op in pci) +
        ram(0x1500, blk_request(0, 0, 512, True)))
    write("virtio_mmio", "blk-read", bytes([len(regs)]) + ops +
          ram(0x1500, blk_request(0, 0, 512, True)))
    p9_seeds()


main()
