"""The share the test guest's `p9bench` works on (guest/p9_bench.c):
seq.bin to read, meta/ with the files to stat, new/ empty for the files
it creates and unlinks. Made by bench/9p.py and
tests/integration/test_9p.py."""
import os


def make_p9bench_share(path, seq_bytes, files):
    """path (a new directory) with seq.bin of seq_bytes random bytes,
    written and synced so that no writeback runs under the reads, and
    meta/f0 .. meta/f<files-1>, empty."""
    os.mkdir(path)
    os.mkdir(os.path.join(path, "new"))
    meta = os.path.join(path, "meta")
    os.mkdir(meta)
    for i in range(files):
        open(os.path.join(meta, f"f{i}"), "wb").close()
    chunk = os.urandom(min(seq_bytes, 1 << 20))
    with open(os.path.join(path, "seq.bin"), "wb") as f:
        left = seq_bytes
        while left:
            left -= f.write(chunk[:left])
        f.flush()
        os.fsync(f.fileno())
    return path
