#!/usr/bin/env python3
"""virtio-blk throughput: the test guest's `blkbench` (sequential 64 KiB
reads over the whole disk, then random 4 KiB reads, 16 requests in
flight) on a 256 MiB image, under thpvm and under QEMU's virtio-blk-pci
with the same guest and image, runs interleaved, in one run of this
script. Both VMMs use the host page cache (thpvm's default, QEMU's
cache=writeback). Then each VMM's own memory: resident memory minus
resident guest RAM, with one disk attached, after boot.

usage: bench/blk.py [RUNS]   (default 3; needs a build in ./build)"""
import os
import sys
import tempfile
import time

from common import (QEMU, THPVM, median, print_command, qemu_cmd,
                    require_build, run_guest, start_serving, tg_fields)
from host import vmm_overhead

PARAMS = "skip=smp,lapic,pit blkbench"
MEM = "256M"
IMAGE_SIZE = 256 << 20


def make_image(path):
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(IMAGE_SIZE >> 20):
            f.write(chunk)


def qemu_disk(img):
    return ["-drive", f"file={img},if=none,id=d0,format=raw",
            "-device", "virtio-blk-pci,drive=d0,disable-legacy=on"]


def measure(cmd):
    out = run_guest(cmd)
    seq = tg_fields(out, "blkbench seq64k")
    rnd = tg_fields(out, "blkbench rand4k")
    return float(seq["MBps"]), float(rnd["iops"])


def main():
    require_build()
    print_command()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "bench.img")
        make_image(img)
        configs = [("thpvm", [THPVM, "run", "-m", MEM, "-d", img, "-p",
                              PARAMS])]
        if QEMU:
            configs.append(("QEMU 7.2 -accel kvm",
                            qemu_cmd(MEM, PARAMS) + qemu_disk(img)))
        results = {name: [] for name, _ in configs}
        for _ in range(runs):
            for name, cmd in configs:
                results[name].append(measure(cmd))
        print(f"image 256 MiB (page cache warm), -m {MEM}, -p '{PARAMS}', "
              f"{runs} runs each ({time.strftime('%Y-%m-%d')})")
        print(f"{'config':<22} {'seq 64 KiB MB/s':>16} {'rand 4 KiB IOPS':>16}")
        med = {}
        for name, rs in results.items():
            med[name] = (median([r[0] for r in rs]),
                         median([r[1] for r in rs]))
            print(f"{name:<22} {med[name][0]:>16.1f} {med[name][1]:>16.0f}"
                  f"   runs: {', '.join(f'{a:.0f}/{b:.0f}' for a, b in rs)}")
        serve = "serve skip=smp,lapic,pit"
        mem = {"thpvm": vmm_overhead(start_serving(
            [THPVM, "run", "-m", MEM, "-d", img, "-p", serve]))}
        if QEMU:
            q = med["QEMU 7.2 -accel kvm"]
            t = med["thpvm"]
            print(f"thpvm / QEMU: seq {t[0] / q[0]:.2f}, "
                  f"rand {t[1] / q[1]:.2f} (higher is better)")
            mem["QEMU"] = vmm_overhead(start_serving(
                qemu_cmd(MEM, serve) + qemu_disk(img)))
        print("VMM memory (resident minus resident guest RAM), one disk: " +
              ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in mem.items()))


if __name__ == "__main__":
    main()
