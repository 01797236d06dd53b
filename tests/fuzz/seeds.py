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


# Formats by their enum compression order (boot/decompress.h).
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


main()
