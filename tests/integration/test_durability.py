#!/usr/bin/env python3
"""Durability: the test guest's blk_stream writes its disk over and over,
flushing each 256 KiB chunk and printing a line once the flush has
completed. thpvm is killed with SIGKILL right after the first such line,
or at a later one while the stream goes on, and the image must hold every
write whose completed flush the host saw: a word there may be newer (the
guest wrote on before the kill) but never older. Page-cache and O_DIRECT
disks alike, on io_uring (the default) and on worker threads.

A SIGKILL leaves the host's page cache whole, so on a page-cache disk
this shows that thpvm wrote everything before it answered a flush, not
that the flush reached the disk: unit-virtio-blk counts the fdatasync
calls for that. An O_DIRECT write has gone past the page cache to the
device by the time it completes."""
import array
import os
import re
import sys
import tempfile

import harness
from disk_images import MIB, PATTERN_B, make_image
from harness import start, wait_for_line

DISK = 8 * MIB
CHUNK = 256 << 10
PASSES = 256            # guest/blk_stream.c's STREAM_PASSES
FLUSHED = re.compile(r"tg: blk0-stream flushed pass=(\d+) end=(\d+)")


def last_flushed(p, lines):
    """The newest flush report among the lines read and those complete
    lines already buffered after them."""
    seen = lines + p.out_buf.decode(errors="replace").split("\n")[:-1]
    found = [FLUSHED.search(line) for line in seen]
    found = [m for m in found if m]
    assert found, lines
    return int(found[-1].group(1)), int(found[-1].group(2))


def oldest_allowed(off, passes, end):
    """The oldest pass whose data may be at off: the last flushed one."""
    return passes if off < end else passes - 1


def check_image(path, passes, end):
    words = array.array("Q")
    with open(path, "rb") as f:
        words.frombytes(f.read())
    if sys.byteorder != "little":
        words.byteswap()
    assert len(words) * 8 == DISK
    for i, w in enumerate(words):
        off = i * 8
        want = oldest_allowed(off, passes, end)
        got = (w ^ off) - PATTERN_B
        if want == 0 and not 1 <= got <= PASSES:
            continue            # never flushed: pattern A or any pass
        assert want <= got <= PASSES, (
            f"offset {off:#x}: pass {got if got <= PASSES else '?'} "
            f"(word {w:#x}), want pass {want} or newer; flushed up to "
            f"pass {passes} end {end}")


def kill_after_flush(nth, disk_opt=""):
    harness.require_kvm()
    with (harness.direct_tempdir() if "direct" in disk_opt else
          tempfile.TemporaryDirectory()) as d:
        img = os.path.join(d, "disk.img")
        make_image(img, DISK)
        p = start(["run", "-p", "skip=smp,lapic,pit blk_stream",
                   "-d", img + disk_opt])
        for _ in range(nth):
            lines = wait_for_line(p, FLUSHED.pattern)
        p.kill()
        p.wait()
        passes, end = last_flushed(p, lines)
        assert (passes - 1) * (DISK // CHUNK) + end // CHUNK >= nth
        check_image(img, passes, end)


def test_kill_right_after_first_flush():
    kill_after_flush(1)


def test_kill_during_write_stream():
    kill_after_flush(45)


def test_kill_right_after_first_flush_direct():
    kill_after_flush(1, ",direct")


def test_kill_during_write_stream_direct():
    kill_after_flush(45, ",direct")


def test_kill_during_write_stream_threads():
    kill_after_flush(45, ",aio=threads")


def test_kill_during_write_stream_direct_threads():
    kill_after_flush(45, ",direct,aio=threads")


if __name__ == "__main__":
    harness.main(globals())
