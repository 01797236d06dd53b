#!/usr/bin/env python3
"""When a Linux guest's random number generator is ready, with and
without thpvm's virtio-rng (--rng).

Boots Debian's kernel with the initramfs of guest/linux/mkinitramfs.py
(whose /init loads virtio_rng) to /init and back out
(`thpvm.run=nothing`), with the kernel's whole log on the console, in
four configurations: no --rng and --rng, each with the kernel trusting
the CPU's RDRAND (its default) and with `random.trust_cpu=off`, where
the kernel must gather entropy from elsewhere. For each boot it reads
the kernel's own timestamps: when `random: crng init done` came, when
/init started, and how many `random:` warnings (reads of an
uninitialised generator) came before. --runs N boots each N times.

Needs a host whose KVM can run a stock Linux guest to user space
(VT-x/AMD-V); elsewhere, such as on PVM, it prints one line saying why
and exits with status 77 (skipped). On an emulated host the times are
the guest's own clock under emulation: only their order says anything.

usage: bench/rng_boot.py [--runs N] [--kernel VERSION]
       (as root, with a build in ./build, or BUILD=DIR)"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from common import THPVM, RunError
from linux_guest import begin, build_initramfs, kernel_version, vmlinuz

SCRIPT = "bench/rng_boot.py"
BOOT_TIMEOUT = 300
# (label, thpvm options, kernel parameters)
CONFIGS = [("no rng", [], ""),
           ("--rng", ["--rng"], ""),
           ("no rng, trust_cpu=off", [], "random.trust_cpu=off"),
           ("--rng, trust_cpu=off", ["--rng"], "random.trust_cpu=off")]
STAMP = r"^\[\s*(\d+\.\d+)\] "


def boot(kernel, initrd, extra, params):
    """One boot: (crng ready at, /init at, warnings), in guest seconds;
    None for a line that never came."""
    cmd = [THPVM, "run", "-k", kernel, "-i", initrd, "-m", "512M",
           "-p", f"thpvm.run=nothing {params}".strip()] + extra
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           errors="replace", timeout=BOOT_TIMEOUT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise RunError(f"no end within {BOOT_TIMEOUT} s: {' '.join(cmd)}") \
            from e
    out = p.stdout.replace("\r", "")
    if "thpvm-guest: run nothing end" not in out:
        tail = "\n".join((out + p.stderr).splitlines()[-15:])
        raise RunError(f"the guest did not get through /init "
                       f"(status {p.returncode}):\n{tail}")
    crng = re.search(STAMP + r"random: crng init done", out, re.M)
    init = re.search(STAMP + r"Run /init as init process", out, re.M)
    warnings = len(re.findall(STAMP + r"random: .*uninitiali[sz]ed", out,
                              re.M))
    return (float(crng[1]) if crng else None,
            float(init[1]) if init else None, warnings)


def shown(t):
    return "never" if t is None else f"{t:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--kernel", metavar="VERSION")
    args = ap.parse_args()
    begin(SCRIPT)
    try:
        version = kernel_version(args.kernel)
        with tempfile.TemporaryDirectory(prefix="thpvm-rng-") as tmp:
            initrd = build_initramfs(os.path.join(tmp, "initrd.cpio.gz"),
                                     version)
            rows = []
            for i in range(args.runs):
                for label, extra, params in CONFIGS:
                    rows.append((label, boot(vmlinuz(version), initrd,
                                             extra, params)))
    except RunError as e:
        sys.exit(f"{SCRIPT}: {e}")
    print(f"kernel {version}, 512 MiB, 1 vCPU, {args.runs} boot(s) each "
          f"({time.strftime('%Y-%m-%d')}); guest seconds")
    print(f"{'config':<24}{'crng ready':>11}{'/init':>8}{'warnings':>10}")
    for label, (crng, init, warnings) in rows:
        print(f"{label:<24}{shown(crng):>11}{shown(init):>8}{warnings:>10}")


if __name__ == "__main__":
    main()
