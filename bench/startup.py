#!/usr/bin/env python3
"""Start-up time: from starting the VMM on the test guest with `-p exit`
(the guest ends at its first instruction that can) to the VMM's exit.
thpvm against QEMU's microvm machine on the same image, kvmtool where a
build of it is found (LKVM= or lkvm on PATH), and against
bench/bare_vm, which only creates a VM and runs one vCPU to its first
exit (with --irqchip, also the in-kernel interrupt controllers and PIT
that QEMU and kvmtool use; with --split-irqchip, only the in-kernel
LAPICs, as thpvm's default); thpvm also with --irqchip=kernel --pit
(KVM's IOAPIC, 8259s and PIT, as before 2026-12-07), with --no-acpi
(what writing the ACPI tables costs) and with --seccomp=off (what
building and loading a seccomp filter in each thread costs). Several runs each, interleaved; medians and ratios.

usage: bench/startup.py [RUNS]   (default 20; needs a build in ./build)"""
import os
import subprocess
import sys
import time

from common import (BUILD, LKVM, QEMU, THPVM, lkvm_cmd, median,
                    print_command, qemu_cmd, require_build)

MEM = "128M"


def wall(cmd, expect_rc):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t = time.perf_counter() - t0
    if p.returncode != expect_rc:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n"
                           f"{p.stderr.decode(errors='replace')}")
    return t


def main():
    require_build()
    print_command()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    bare = os.path.join(BUILD, "bench", "bare_vm")
    configs = [
        ("bare_vm (floor)", [bare], 0),
        ("bare_vm --irqchip", [bare, "--irqchip"], 0),
        ("bare_vm --split-irqchip", [bare, "--split-irqchip"], 0),
        ("thpvm", [THPVM, "run", "-m", MEM, "-p", "exit"], 0),
        ("thpvm --irqchip=kernel --pit", [THPVM, "run", "-m", MEM,
                                          "--irqchip=kernel", "--pit", "-p",
                                          "exit"], 0),
        ("thpvm --no-acpi", [THPVM, "run", "-m", MEM, "--no-acpi", "-p",
                             "exit"], 0),
        ("thpvm --seccomp=off", [THPVM, "run", "-m", MEM, "--seccomp=off",
                                 "-p", "exit"], 0),
    ]
    if QEMU:
        # isa-debug-exit: status 0 from the guest is exit code 1.
        configs.append(("QEMU 7.2 -M microvm",
                        qemu_cmd(MEM, "exit", machine="microvm"), 1))
    if LKVM:
        configs.append(("kvmtool (lkvm)", lkvm_cmd(128, "exit"), 0))
    times = {name: [] for name, _, _ in configs}
    for _ in range(runs):
        for name, cmd, rc in configs:
            times[name].append(wall(cmd, rc))
    print(f"start to exit, -m {MEM}, test guest with -p exit, {runs} runs "
          f"each ({time.strftime('%Y-%m-%d')})")
    med = {name: median(ts) for name, ts in times.items()}
    for name, ts in times.items():
        print(f"{name:<30} median {med[name] * 1e3:8.2f} ms   "
              f"min {min(ts) * 1e3:8.2f} ms   max {max(ts) * 1e3:8.2f} ms")
    print(f"thpvm / bare_vm: {med['thpvm'] / med['bare_vm (floor)']:.2f}")
    print(f"thpvm / thpvm --no-acpi: "
          f"{med['thpvm'] / med['thpvm --no-acpi']:.3f}")
    print(f"thpvm / thpvm --seccomp=off: "
          f"{med['thpvm'] / med['thpvm --seccomp=off']:.3f}")
    print(f"thpvm / bare_vm --split-irqchip: "
          f"{med['thpvm'] / med['bare_vm --split-irqchip']:.2f}")
    print(f"thpvm / thpvm --irqchip=kernel --pit: "
          f"{med['thpvm'] / med['thpvm --irqchip=kernel --pit']:.3f}")
    if QEMU:
        print(f"thpvm / QEMU microvm: "
              f"{med['thpvm'] / med['QEMU 7.2 -M microvm']:.3f}")
    if LKVM:
        print(f"thpvm / kvmtool: {med['thpvm'] / med['kvmtool (lkvm)']:.3f}")


if __name__ == "__main__":
    main()
