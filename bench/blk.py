#!/usr/bin/env python3
"""virtio-blk throughput and host CPU: the test guest's `blkbench`
(sequential 64 KiB reads over the whole disk, then 20000 random 4 KiB
reads, QD requests in flight) on a 256 MiB image, under thpvm and QEMU
with the same guest and image, runs interleaved, in one run of this
script, at queue depths 1, 16 and 64. Two cases, each VMM in its default
and its best setup:

  page cache  thpvm -d IMG (io_uring), -d IMG,aio=threads;
              QEMU default (aio=threads, no iothread) and tuned
              (iothread, aio=io_uring)
  direct      thpvm -d IMG,direct (io_uring), -d IMG,direct,aio=threads;
              QEMU cache=none default (aio=threads) and tuned
              (iothread, cache=none, aio=native)

With --format qcow2, the image is first converted to a qcow2 one, every
cluster allocated (64 KiB clusters), and the runs compare thpvm's qcow2
against QEMU tuned on the same qcow2 (its l2-cache-size covering the
image), and against thpvm's own raw figures on the raw image.

With --queues N, N vCPUs and N queues on the disk (thpvm -c N
-d IMG,queues=N; QEMU -smp N, num-queues=N, all served by its one
iothread in the tuned setup, as QEMU 7.2 has no per-queue iothreads), and
the guest drives them all at once, a ring-3 loop per CPU, each with QD
requests in flight (at most 64 over all queues).

Host CPU per request: the CPU time of the VMM's threads other than its
vCPUs (its I/O path: device thread, workers, iothread, io_uring's
kernel workers) over the run, divided by the requests; the guest polls,
so vCPU time is the run's length whoever serves it. Then each VMM's own
memory: resident memory minus resident guest RAM, one disk, after boot.

usage: bench/blk.py [RUNS] [--qd N,N] [--case page-cache|direct]
                    [--queues N] [--format raw|qcow2]
  (default 3 runs, queue depths 1,16,64, both cases; a build in ./build
  or BUILD=)"""
import argparse
import os
import subprocess
import tempfile

from common import (QEMU, THPVM, median, print_command, qemu_cmd,
                    require_build, start_serving, tg_fields)
from host import vmm_cpu_ns, vmm_overhead

MEM = "256M"
IMAGE_SIZE = 256 << 20
SEQ_REQS = IMAGE_SIZE // (64 << 10)
RAND_REQS = 20000                   # guest/blk_bench.c


def make_image(path):
    """Written and synced: dirty page-cache pages would make every
    O_DIRECT read of the direct case wait for their writeback."""
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(IMAGE_SIZE >> 20):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def set_cache(path, case):
    """The image all in the page cache for the page-cache case, none of
    it for the direct one."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if case == "direct":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        else:
            while os.read(fd, 1 << 20):
                pass
    finally:
        os.close(fd)


def qemu_disk(img, drive="", iothread=False, queues=1, fmt="raw"):
    """QEMU's disk; and debug-threads, which names its vCPU threads
    "CPU N/KVM" so that host.vmm_cpu_ns tells them apart."""
    dev = f"virtio-blk-pci,drive=d0,disable-legacy=on,num-queues={queues}"
    obj = ["-name", "bench,debug-threads=on"]
    if iothread:
        obj += ["-object", "iothread,id=io0"]
        dev += ",iothread=io0"
    return obj + ["-drive", f"file={img},if=none,id=d0,format={fmt}{drive}",
                  "-device", dev]


def configs(img, case, queues):
    """(name, a function of the guest's params giving the command)."""
    direct = case == "direct"
    disk = img + (",direct" if direct else "") + f",queues={queues}"
    thpvm = [THPVM, "run", "-m", MEM, "-c", str(queues), "-d"]
    out = [("thpvm io_uring", lambda p: thpvm + [disk, "-p", p]),
           ("thpvm threads", lambda p: thpvm + [disk + ",aio=threads",
                                                "-p", p])]
    if QEMU:
        cache = ",cache=none" if direct else ""
        tuned = ",cache=none,aio=native" if direct else ",aio=io_uring"
        out += [("QEMU default", lambda p: qemu_cmd(MEM, p, queues) +
                 qemu_disk(img, cache, queues=queues)),
                ("QEMU tuned", lambda p: qemu_cmd(MEM, p, queues) +
                 qemu_disk(img, tuned, iothread=True, queues=queues))]
    return out


def qcow2_configs(raw, img, case, queues):
    """thpvm on the qcow2 image and on the raw one, QEMU tuned on the
    qcow2 one with an L2 cache covering all of it (256 MiB of 64 KiB
    clusters: 32 KiB of tables)."""
    direct = ",direct" if case == "direct" else ""
    thpvm = [THPVM, "run", "-m", MEM, "-c", str(queues), "-d"]
    tail = f"{direct},queues={queues}"
    out = [("thpvm qcow2", lambda p: thpvm + [img + ",format=qcow2" + tail,
                                              "-p", p]),
           ("thpvm raw", lambda p: thpvm + [raw + tail, "-p", p])]
    if QEMU:
        tuned = (",cache=none,aio=native" if direct else ",aio=io_uring") + \
            ",l2-cache-size=1M"
        out.append(("QEMU tuned qcow2", lambda p: qemu_cmd(MEM, p, queues) +
                    qemu_disk(img, tuned, iothread=True, queues=queues,
                              fmt="qcow2")))
    return out


def measure(cmd):
    """(seq MB/s, rand IOPS, I/O-path CPU µs per request) of one run."""
    p = start_serving(cmd)
    try:
        out = "".join(p.out_lines)
        _, dev_ns = vmm_cpu_ns(p.pid)
    finally:
        p.kill()
        p.wait()
    seq = tg_fields(out, "blkbench seq64k")
    rnd = tg_fields(out, "blkbench rand4k")
    return (float(seq["MBps"]), float(rnd["iops"]),
            dev_ns / 1e3 / (SEQ_REQS + RAND_REQS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="?", type=int, default=3)
    ap.add_argument("--qd", default="1,16,64")
    ap.add_argument("--case", choices=["page-cache", "direct"])
    ap.add_argument("--queues", type=int, default=1, choices=range(1, 9),
                    metavar="N")
    ap.add_argument("--format", choices=["raw", "qcow2"], default="raw")
    args = ap.parse_args()
    require_build()
    print_command()
    cases = [args.case] if args.case else ["page-cache", "direct"]
    qds = [int(q) for q in args.qd.split(",")]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        img = os.path.join(d, "bench.img")
        make_image(img)
        qcow2 = os.path.join(d, "bench.qcow2")
        if args.format == "qcow2":
            subprocess.run(["qemu-img", "convert", "-O", "qcow2", img, qcow2],
                           check=True)
            print(f"qcow2: {qcow2}, converted from the raw image, every "
                  f"cluster allocated")
        print(f"image 256 MiB in {d}, synced (in the page cache for the "
              f"page-cache case, dropped from it for direct), -m {MEM}, "
              f"{args.queues} vCPU(s) and queue(s), "
              f"{args.runs} runs each, medians; seq MB/s / rand IOPS / "
              f"I/O-path CPU µs per request")
        # The APs start only where there is work for them.
        skip = "skip=smp,lapic,pit" if args.queues == 1 else "skip=lapic,pit"
        for case in cases:
            set_cache(img, case)
            if args.format == "qcow2":
                set_cache(qcow2, case)
                cfgs = qcow2_configs(img, qcow2, case, args.queues)
            else:
                cfgs = configs(img, case, args.queues)
            for qd in qds:
                params = (f"{skip} blkbench blkbench_qd={qd} "
                          f"blkbench_queues={args.queues} serve")
                res = {name: [] for name, _ in cfgs}
                for _ in range(args.runs):
                    for name, cmd in cfgs:
                        res[name].append(measure(cmd(params)))
                print(f"\n{case}, qd {qd}")
                med = {}
                for name, rs in res.items():
                    med[name] = [median([r[i] for r in rs])
                                 for i in range(3)]
                    print(f"  {name:<16} {med[name][0]:>8.0f} MB/s "
                          f"{med[name][1]:>9.0f} IOPS "
                          f"{med[name][2]:>7.2f} µs/req   runs: " +
                          ", ".join(f"{a:.0f}/{b:.0f}/{c:.1f}"
                                    for a, b, c in rs))
                for a, b in (("thpvm io_uring", "QEMU tuned"),
                             ("thpvm qcow2", "QEMU tuned qcow2"),
                             ("thpvm qcow2", "thpvm raw")):
                    if a not in med or b not in med:
                        continue
                    t, q = med[a], med[b]
                    print(f"  {a} / {b}: seq {t[0] / q[0]:.2f}, rand "
                          f"{t[1] / q[1]:.2f}, CPU per request "
                          f"{t[2] / q[2]:.2f} (lower is less)")
        serve = "serve skip=smp,lapic,pit"
        mem = {"thpvm": vmm_overhead(start_serving(
            [THPVM, "run", "-m", MEM, "-d", img, "-p", serve]))}
        if QEMU:
            mem["QEMU"] = vmm_overhead(start_serving(
                qemu_cmd(MEM, serve) + qemu_disk(img)))
        print("\nVMM memory (resident minus resident guest RAM), one disk: "
              + ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in mem.items()))


if __name__ == "__main__":
    main()
