#!/usr/bin/env python3
"""virtio-9p throughput, metadata rate and host CPU: the test guest's
`p9bench` (guest/p9_bench.c) on a host directory shared with tag
"bench", under thpvm (`--9p DIR,bench`), QEMU (`-fsdev local,...,
security_model=none` and `virtio-9p-pci`) and kvmtool (`--9p DIR,bench`)
where a build of it is found (LKVM= or lkvm on PATH), the same guest and
share, runs interleaved, in one run of this script. Four parts, in one
boot:

  seq     a 256 MiB file read from start to end, msize 512 KiB (reads
          of msize - 11 bytes, or the server's smaller msize's)
  rand4k  20000 reads of 4 KiB at 4 KiB-aligned offsets of that file,
          drawn from a fixed seed
  stat    Twalk, Tgetattr and Tclunk of each of 10,000 empty files
  create  1,000 files created (Twalk clone, Tlcreate, Tclunk), then
          unlinked (Tunlinkat)

One request at a time (queue depth 1): the guest's 9P client is
synchronous. The share is written and synced first, and read into the
host page cache. The guest times each part with its own clock.

Host CPU per request: the CPU time of the VMM's threads other than its
vCPUs (thpvm's 9p workers, QEMU's main loop and its thread pool,
kvmtool's 9p thread) from the part's start to its figures line, divided
by its requests. The guest waits for a line on its console before each
part (p9bench_wait), so that the time is read where the part starts;
what lies between the two readings besides the part's requests is the
figures line's output and the next part's few set-up requests. The
console is a terminal (kvmtool takes input from no pipe).

usage: bench/9p.py [RUNS] [--quick]
  (default 3 runs, medians; --quick: a 4 MiB file, 200 random reads,
  100 files to stat, 50 to create, for checking that the script works;
  a build in ./build or BUILD=)"""
import argparse
import os
import pty
import subprocess
import tempfile
import tty

from common import (LKVM, QEMU, THPVM, Console, RunError, lkvm_cmd, median,
                    print_command, qemu_cmd, quote, require_build,
                    tg_fields)
from host import vmm_cpu_ns
from p9bench_share import make_p9bench_share

MEM = "256M"
TAG = "bench"
BASE = "skip=smp,lapic,pit 9p_tag=" + TAG
# For any one part, the guest's line or its boot (QEMU's, on an emulated
# host, is slow).
TIMEOUT = 600
FULL = {"seq": 256 << 20, "reads": 20000, "files": 10000, "creates": 1000}
QUICK = {"seq": 4 << 20, "reads": 200, "files": 100, "creates": 50}
# (part, what its figure is, how it is computed from its line, the
# least thpvm / QEMU the issue asks for: higher is better for all).
PARTS = (
    ("seq", "MB/s", lambda f: int(f["bytes"]) * 1e3 / int(f["ns"]), 1.5),
    ("rand4k", "IOPS", lambda f: int(f["reqs"]) * 1e9 / int(f["ns"]), 1.5),
    ("stat", "files/s", lambda f: int(f["files"]) * 1e9 / int(f["ns"]), 1.0),
    ("create", "files/s", lambda f: int(f["files"]) * 1e9 / int(f["ns"]),
     1.0),
)


def qemu_share(share):
    """QEMU's 9p device on share; and debug-threads, which names its vCPU
    threads "CPU N/KVM" so that host.vmm_cpu_ns tells them apart."""
    return ["-name", "bench,debug-threads=on",
            "-fsdev", f"local,id=fs0,path={share},security_model=none",
            "-device", f"virtio-9p-pci,disable-legacy=on,fsdev=fs0,"
            f"mount_tag={TAG}"]


def configs(share):
    """(name, a function of the guest's params giving the command)."""
    out = [("thpvm", lambda p: [THPVM, "run", "-m", MEM, "--9p",
                                f"{share},{TAG}", "-p", p])]
    if QEMU:
        out.append(("QEMU", lambda p: qemu_cmd(MEM, p) + qemu_share(share)))
    if LKVM:
        out.append(("kvmtool", lambda p: lkvm_cmd(int(MEM[:-1]), p) +
                    ["--9p", f"{share},{TAG}"]))
    else:
        print("kvmtool: no build found (LKVM= or lkvm on PATH), skipped")
    return out


def guest_params(sizes):
    """serve: the VM stays up while the last part's CPU time is read."""
    return (f"{BASE} p9bench p9bench_wait "
            f"p9bench_reads={sizes['reads']} "
            f"p9bench_files={sizes['files']} "
            f"p9bench_creates={sizes['creates']} serve")


class GuestConsole(Console):
    """The guest's console on a terminal's master side. A failed check
    ends the wait: its part will print no figures."""

    def _read(self):
        # The master reads EIO, not an end of file, once the VMM is gone.
        try:
            for line in self.proc.stdout:
                self.q.put(line.rstrip("\r\n"))
        except OSError:
            pass
        self.q.put(None)

    def check(self, line, pattern):
        if "tg: FAIL" in line:
            self.fail(f"the guest failed: {line}")


def start_on_terminal(cmd, err):
    """cmd with a terminal for its stdin and stdout, the master side as
    p.stdout: kvmtool passes console input to the guest only from a
    terminal, so every VMM gets one. Raw, so that nothing is echoed
    before the VMM sets its own mode."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    try:
        p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=err)
    finally:
        os.close(slave)
    p.stdout = open(master, "r", errors="replace")
    return p


def boot(cmd):
    """{part: (figure, requests, non-vCPU CPU ns)} of one boot: the
    host's CPU time read at each part's start and at its figures line."""
    out = {}
    with tempfile.TemporaryFile() as err:
        p = start_on_terminal(cmd, err)
        con = GuestConsole(p, err, "tg: ")
        try:
            for part, _, figure, _ in PARTS:
                con.wait(f"p9bench {part} ready$", TIMEOUT)
                before = vmm_cpu_ns(p.pid)[1]
                os.write(p.stdout.fileno(), b"\n")
                line = con.wait(f"p9bench {part} \\S+=.*",
                                TIMEOUT).group(0)
                dev_ns = vmm_cpu_ns(p.pid)[1] - before
                f = tg_fields(line, "p9bench " + part)
                out[part] = (figure(f), int(f["reqs"]), dev_ns)
        finally:
            p.kill()
            p.wait()
            con.close()
    return out


def warm_page_cache(share):
    """seq.bin in the host page cache: the reads measure the VMM, not
    the disk."""
    with open(os.path.join(share, "seq.bin"), "rb") as f:
        while f.read(1 << 20):
            pass


def run_all(share, cfgs, sizes, runs):
    """{name: {part: [(figure, reqs, dev_ns)]}}, the VMMs interleaved
    within each run."""
    res = {name: {part: [] for part, _, _, _ in PARTS} for name, _ in cfgs}
    for _ in range(runs):
        warm_page_cache(share)
        for name, cmd in cfgs:
            try:
                parts = boot(cmd(guest_params(sizes)))
            except RunError as e:
                raise SystemExit(f"{name}: {e}") from None
            for part, r in parts.items():
                res[name][part].append(r)
    return res


def report(res):
    """Medians per part and VMM, the single runs, thpvm / QEMU."""
    med = {}
    for part, unit, _, target in PARTS:
        counts = sorted({n for r in res.values() for _, n, _ in r[part]})
        print(f"\n{part}, {'/'.join(map(str, counts))} requests ({unit} / "
              f"host CPU µs per request)")
        for name, r in res.items():
            rows = [(fig, dev / 1e3 / reqs) for fig, reqs, dev in r[part]]
            med[name, part] = (median([a for a, _ in rows]),
                               median([b for _, b in rows]))
            print(f"  {name:<8} {med[name, part][0]:>10.0f} "
                  f"{med[name, part][1]:>8.2f}   runs: " +
                  ", ".join(f"{a:.0f}/{b:.2f}" for a, b in rows))
        if ("QEMU", part) in med:
            t, q = med["thpvm", part], med["QEMU", part]
            print(f"  thpvm / QEMU: {t[0] / q[0]:.2f} (target >= "
                  f"{target}), CPU per request {t[1] / q[1]:.2f} (lower "
                  f"is less)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="?", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    require_build()
    print_command()
    sizes = QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        share = make_p9bench_share(os.path.join(d, "share"), sizes["seq"],
                                   sizes["files"])
        cfgs = configs(share)
        for name, cmd in cfgs:
            print(f"{name}: {quote(cmd(guest_params(sizes)))}")
        print(f"share in {d}: seq.bin {sizes['seq'] >> 20} MiB (synced, "
              f"in the page cache), {sizes['files']} files to stat, "
              f"{sizes['creates']} to create; {sizes['reads']} random "
              f"reads; -m {MEM}, queue depth 1, {args.runs} runs each, "
              f"medians")
        report(run_all(share, cfgs, sizes, args.runs))


if __name__ == "__main__":
    main()
