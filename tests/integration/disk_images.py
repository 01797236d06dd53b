"""Disk images with the patterns the test guest's virtio-blk checks use
(docs/test-guest.md): pattern A is what the host writes, pattern B what the
guest writes over the 1 MiB at sector capacity/2.

Run by hand, it makes such images for the examples in docs/test-guest.md:

    python3 tests/integration/disk_images.py IMAGE SIZE   (SIZE: 8M, 1G, bytes)
"""
import argparse
import array
import sys

# What the guest's `blk` checks print for a writable disk 0 and a
# read-only disk 1, and the malformed-chain cases of `blk_evil`
# (docs/test-guest.md); the same for every VMM.
BLK_CHECKS = ("blk0-read", "blk0-write", "blk0-flush", "blk0-discard",
              "blk0-write-zeroes", "blk0-beyond-end", "blk0-unsupp",
              "blk0-msix", "blk1-read", "blk1-ro", "blk1-beyond-end",
              "blk1-unsupp", "blk1-msix")
EVIL_CASES = ("desc-loop", "chain-too-long", "addr-outside-ram", "len-wraps",
              "header-writable", "status-readonly", "head-out-of-range",
              "avail-idx-jump", "indirect-with-next", "nested-indirect",
              "indirect-bad-len", "indirect-zero-len", "buffer-in-mmio-hole",
              "zero-status-len")

PATTERN_A = 0x5448505654455354
PATTERN_B = 0x5752495445544754
MIB = 1 << 20


def pattern(key, start, length):
    """Bytes of a pattern: the 64-bit little-endian word at byte offset o
    is o ^ key."""
    words = array.array("Q", range(start, start + length, 8))
    for i, o in enumerate(words):
        words[i] = o ^ key
    if sys.byteorder != "little":
        words.byteswap()
    return words.tobytes()


def make_image(path, size):
    with open(path, "wb") as f:
        for off in range(0, size, MIB):
            f.write(pattern(PATTERN_A, off, min(MIB, size - off)))


def read_at(path, off, length):
    with open(path, "rb") as f:
        f.seek(off)
        return f.read(length)


def write_region(size):
    """(offset, length) of the guest's pattern-B write."""
    return size // 2 // 512 * 512, MIB


def check_blkbench_queues(r, size, queues):
    """What the test guest printed for `blkbench blkbench_queues=N` on a
    disk of size bytes: blk0 got N queues, and both runs completed on all
    of them (each CPU's share of the reads done, the same for every
    VMM)."""
    assert r.tg["blk"]["queues"] == str(queues), r
    seq, rand = r.tg["blkbench seq64k"], r.tg["blkbench rand4k"]
    assert int(seq["bytes"]) == size and seq["queues"] == str(queues), r
    assert rand["reqs"] == "20000" and rand["queues"] == str(queues), r


def parse_size(text):
    units = {"K": 1 << 10, "M": MIB, "G": 1 << 30}
    unit = units.get(text[-1:].upper(), 1)
    number = text[:-1] if unit > 1 else text
    if not number.isdigit() or int(number) == 0 or int(number) * unit % 512:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size of one or more whole 512-byte sectors")
    return int(number) * unit


def main():
    ap = argparse.ArgumentParser(
        description="Write a disk image of pattern A, as the test guest's "
                    "virtio-blk checks expect it.")
    ap.add_argument("image")
    ap.add_argument("size", type=parse_size, help="8M, 1G or bytes")
    args = ap.parse_args()
    make_image(args.image, args.size)


if __name__ == "__main__":
    main()
