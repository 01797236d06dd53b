#!/usr/bin/env python3
"""hackbench in a Linux guest, guest RAM on host huge pages against 4 KiB
pages (issue 5).

Boots Debian's kernel with the initramfs of guest/linux/mkinitramfs.py
twice, in a 2 GiB, 4-vCPU VM: once as thpvm runs by default (guest RAM
2 MiB-aligned and MADV_HUGEPAGE) and once with --no-thp; each guest runs
`hackbench 50 process 1000` (`-P -g 50 -l 1000`; --groups and --loops
change it) RUNS times (`thpvm.run=hackbench`). Prints
both series, their means and standard deviations, the difference, and
the host's AnonHugePages of guest RAM at the end of each run, which shows
whether THP was in effect. The published kvmtool figures on arm64 are
printed as context only; they were not measured here.

Needs a host whose KVM can run a stock Linux guest to user space
(VT-x/AMD-V); elsewhere, such as on PVM, it prints one line saying why
and exits with status 77 (skipped), printing no figures.

usage: bench/hackbench.py [--runs N] [--groups N] [--loops N]
                          [--mem SIZE] [--cpus N]
                          [--kernel VERSION] [--timeout SECONDS]
       (as root, with a build in ./build, or BUILD=DIR)"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import THPVM, quote
from host import guest_ram_usage
from linux_guest import (STOP_TIMEOUT, RunError, begin, build_initramfs,
                         end_vmm, kernel_version, start_vmm, vmlinuz)

SCRIPT = "bench/hackbench.py"
MIB = 1 << 20
BOOT_TIMEOUT = 300           # kernel, modules and init up
# (label, extra thpvm options) of the two configurations, in run order.
CONFIGS = [("thpvm (THP)", []), ("thpvm --no-thp", ["--no-thp"])]
THP_LABEL = CONFIGS[0][0]
# Published for kvmtool on arm64 (the THP patch series): mean hackbench
# time with guest RAM not 2 MiB-aligned (no host huge pages) and aligned,
# THP-backed. Context, not a target: other architecture, other VMM.
PUBLISHED_NO_THP_S = 113
PUBLISHED_THP_S = 98


def hackbench_args(args):
    """What the guest's script runs (guest/linux/run/hackbench)."""
    return f"-P -g {args.groups} -l {args.loops}"


def vm_command(name, kernel, initrd, args, extra):
    # The kernel hands VAR=value words to /init as its environment.
    # --nodefaults: this line alone, as measured and published.
    params = (f"console=ttyS0 quiet thpvm.run=hackbench "
              f"thpvm.runs={args.runs} "
              f'THPVM_HACKBENCH_ARGS="{hackbench_args(args)}"')
    return [THPVM, "run", "--name", name, "-k", kernel, "-i", initrd,
            "-m", args.mem, "-c", str(args.cpus), "--nodefaults",
            "-p", params,
            "--json"] + extra


def run_config(cmd, name, version, args, thp):
    """One VM: the guest's hackbench times (s) and the host's
    (AnonHugePages, Rss) of guest RAM (bytes) read at the end of each
    run. A THP run without host huge pages, or a --no-thp run with them,
    is an error: its times would not be what they are labelled."""
    p, con = start_vmm(cmd)
    grace = 0                   # a failed guest is stopped at once
    try:
        con.wait_ready(version, BOOT_TIMEOUT)
        con.wait(r"run hackbench begin", BOOT_TIMEOUT)
        times, huge = [], []
        for i in range(args.runs):
            m = con.wait(r"hackbench run=(\d+) seconds=([0-9.]+)",
                         args.timeout)
            if int(m.group(1)) != i + 1:
                con.fail(f"guest reported run {m.group(1)}, expected {i + 1}")
            times.append(float(m.group(2)))
            # Read between runs: the next one has just begun, and one
            # walk of smaps (milliseconds) is nothing next to a run.
            huge.append(guest_ram_usage(p.pid))
        con.wait_end("hackbench", args.timeout)
        most = max(h for h, _ in huge)
        if thp and not most:
            raise RunError("no host huge pages behind guest RAM in the "
                             "THP run (is /sys/kernel/mm/"
                             "transparent_hugepage/enabled 'never'?)")
        if not thp and most:
            raise RunError(f"{most / MIB:.0f} MiB of host huge pages "
                             f"behind guest RAM in the --no-thp run")
        grace = STOP_TIMEOUT
        return times, huge
    finally:
        end_vmm(p, con, lambda: stop_vm(name), grace)


def stop_vm(name):
    subprocess.run([THPVM, "stop", name], capture_output=True, timeout=60)


def mean_stdev(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1
                                 else 0.0)


def print_results(results, errors, args, version):
    print(f"kernel {version}, guest {args.mem}, {args.cpus} vCPUs, "
          f"`hackbench {hackbench_args(args)}` x{args.runs} per VM "
          f"({time.strftime('%Y-%m-%d')})")
    print(f"{'config':<18}{'mean (s)':>10}{'stdev (s)':>11}  runs (s)")
    for label, _ in CONFIGS:
        if label in errors:
            first = errors[label].splitlines()[0].split("; last output")[0]
            print(f"{label:<18}error: {first}")
            continue
        times, _ = results[label]
        m, sd = mean_stdev(times)
        print(f"{label:<18}{m:>10.2f}{sd:>11.2f}  "
              + ", ".join(f"{t:.2f}" for t in times))
    for label, _ in CONFIGS:
        if label in results:
            print(f"host AnonHugePages/Rss of guest RAM after each run, "
                  f"{label}: " + ", ".join(f"{h / MIB:.0f}/{r / MIB:.0f}"
                                           for h, r in results[label][1])
                  + " MiB")
    thp, nothp = (results.get(label) for label, _ in CONFIGS)
    if thp and nothp:
        t, n = statistics.mean(thp[0]), statistics.mean(nothp[0])
        print(f"THP against --no-thp: mean time {100 * (t - n) / n:+.1f}% "
              f"(--no-thp / THP = {n / t:.3f})")
    pub = 100 * (PUBLISHED_THP_S - PUBLISHED_NO_THP_S) / PUBLISHED_NO_THP_S
    print(f"context, published for kvmtool on arm64, not measured here: "
          f"~{PUBLISHED_NO_THP_S} s guest RAM not 2 MiB-aligned, "
          f"~{PUBLISHED_THP_S} s aligned and THP-backed ({pub:+.1f}%)")


def main():
    ap = argparse.ArgumentParser(
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\nusage:")[0])
    ap.add_argument("--runs", type=int, default=5, metavar="N",
                    help="hackbench runs per VM (default 5)")
    ap.add_argument("--groups", type=int, default=50, metavar="N",
                    help="hackbench groups of 40 processes (default 50)")
    ap.add_argument("--loops", type=int, default=1000, metavar="N",
                    help="messages each sender sends (default 1000)")
    ap.add_argument("--mem", default="2G", metavar="SIZE",
                    help="guest RAM (default 2G)")
    ap.add_argument("--cpus", type=int, default=4, metavar="N",
                    help="vCPUs (default 4)")
    ap.add_argument("--kernel", metavar="VERSION",
                    help="guest kernel, /boot/vmlinuz-VERSION (default: "
                    "the newest /lib/modules/* with virtio modules)")
    ap.add_argument("--timeout", type=int, default=900, metavar="SECONDS",
                    help="longest wait for one hackbench run (default 900)")
    args = ap.parse_args()
    if min(args.runs, args.cpus, args.timeout, args.groups, args.loops) < 1:
        ap.error("--runs, --cpus, --timeout, --groups and --loops must be "
                 ">= 1")
    begin(SCRIPT)
    try:
        version = kernel_version(args.kernel)
    except RunError as e:
        sys.exit(f"{SCRIPT}: {e}")
    results, errors = {}, {}
    with tempfile.TemporaryDirectory(prefix="thpvm-hackbench-") as tmp:
        initrd = os.path.join(tmp, "initramfs.cpio.gz")
        try:
            build_initramfs(initrd, version)
        except RunError as e:
            sys.exit(f"{SCRIPT}: {e}")
        for i, (label, extra) in enumerate(CONFIGS):
            name = f"hb-{os.getpid()}-{i}"
            cmd = vm_command(name, vmlinuz(version), initrd, args, extra)
            print(f"  {label}: {quote(cmd)}", flush=True)
            t = time.monotonic()
            try:
                results[label] = run_config(cmd, name, version, args,
                                            label == THP_LABEL)
                why = "ok"
            except (RunError, OSError, ValueError) as e:
                errors[label] = str(e)
                why = f"error: {e}"
            print(f"{label}: {time.monotonic() - t:.0f} s, {why}",
                  file=sys.stderr, flush=True)
    print_results(results, errors, args, version)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
