#!/usr/bin/env python3
"""Host huge pages and guest speed: the test guest (user mode, 2 MiB guest
pages) first-touches 1 GiB at a 4 KiB stride, then does 50 M random
8-byte reads over it. Guest RAM on THP (thpvm's default), with --no-thp,
and the same guest under QEMU and, where a build of it is found (LKVM= or
lkvm on PATH), kvmtool; several runs each, in one run of this script.
Then host THP coverage after the guest touches all of a 1 GiB guest.

usage: bench/thp.py [RUNS]   (default 3; needs a build in ./build)"""
import json
import subprocess
import sys
import time

from common import (BZIMAGE, LKVM, QEMU, THPVM, lkvm_cmd, median,
                    print_command, qemu_cmd, require_build, run_guest,
                    start_serving, tg_fields)
from host import guest_ram

PARAMS = "touch=1G rand=50000000 skip=smp,lapic,pit"
MEM = "1536M"


def measure(cmd):
    out = run_guest(cmd)
    return (int(tg_fields(out, "touch")["ns"]) / 1e9,
            int(tg_fields(out, "rand")["ns"]) / 1e9)


SERVE = "serve touch=all skip=smp,lapic,pit"


def coverage_thpvm():
    name = "bench-thp-coverage"
    p = start_serving([THPVM, "run", "--name", name, "-m", "1G", "-p",
                       SERVE])
    try:
        st = json.loads(subprocess.check_output(
            [THPVM, "stat", name, "--json"]))
        return st["huge"] / st["ram"]
    finally:
        subprocess.run([THPVM, "stop", name])
        p.wait()


def coverage_of(cmd):
    """Huge-page share of the largest mapping of a VMM serving the guest
    (its guest RAM), for VMMs without thpvm's stat command."""
    p = start_serving(cmd)
    try:
        ram = guest_ram(p.pid)
        return ram["huge"] / ram["size"]
    finally:
        p.kill()
        p.wait()


def main():
    require_build()
    print_command()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    configs = [("thpvm (THP)", [THPVM, "run", "-m", MEM, "-p", PARAMS]),
               ("thpvm --no-thp", [THPVM, "run", "--no-thp", "-m", MEM,
                                   "-p", PARAMS])]
    if QEMU:
        configs.append(("QEMU 7.2 -accel kvm", qemu_cmd(MEM, PARAMS)))
    if LKVM:
        configs.append(("kvmtool (lkvm)", lkvm_cmd(1536, PARAMS)))
    results = {name: [] for name, _ in configs}
    for _ in range(runs):
        # Interleaved, so drift on the host affects every config alike.
        for name, cmd in configs:
            results[name].append(measure(cmd))
    print(f"guest: {BZIMAGE}, -m {MEM}, -p '{PARAMS}', {runs} runs each "
          f"({time.strftime('%Y-%m-%d')})")
    print(f"{'config':<22} {'first touch 1 GiB (s)':>22} "
          f"{'50M random reads (s)':>22}")
    med = {}
    for name, rs in results.items():
        t = median([r[0] for r in rs])
        r = median([r[1] for r in rs])
        med[name] = (t, r)
        print(f"{name:<22} {t:>14.3f} {'':7} {r:>14.3f}   "
              f"runs: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in rs)}")
    thp, nothp = med["thpvm (THP)"], med["thpvm --no-thp"]
    print(f"THP speed-up: first touch {nothp[0] / thp[0]:.2f}x, "
          f"random reads {nothp[1] / thp[1]:.2f}x")
    for name, label in (("QEMU 7.2 -accel kvm", "QEMU"),
                        ("kvmtool (lkvm)", "kvmtool")):
        if name in med:
            o = med[name]
            print(f"thpvm / {label} time: first touch {thp[0] / o[0]:.2f}, "
                  f"random reads {thp[1] / o[1]:.2f}")
    coverage = [f"thpvm {coverage_thpvm():.1%}"]
    if QEMU:
        coverage.append(f"QEMU {coverage_of(qemu_cmd('1G', SERVE)):.1%}")
    if LKVM:
        coverage.append(f"kvmtool {coverage_of(lkvm_cmd(1024, SERVE)):.1%}")
    print("host THP coverage after touching all of a 1 GiB guest: " +
          ", ".join(coverage))


if __name__ == "__main__":
    main()
