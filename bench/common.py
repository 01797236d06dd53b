"""Shared helpers of the benchmark scripts: running thpvm and QEMU on the
test guest and reading its "tg:" result lines."""
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
THPVM = os.path.join(BUILD, "thpvm")
BZIMAGE = os.path.join(BUILD, "guest", "testguest.bzImage")
QEMU = shutil.which("qemu-system-x86_64")


def require_build():
    for f in (THPVM, BZIMAGE):
        if not os.path.exists(f):
            sys.exit(f"{f} is missing: build first (meson setup build && "
                     f"ninja -C build), or set BUILD")


def qemu_cmd(mem, params, cpus=1, machine=None):
    cmd = [QEMU, "-accel", "kvm", "-m", mem, "-smp", str(cpus),
           "-kernel", BZIMAGE, "-append", params, "-nographic",
           "-nodefaults", "-no-user-config", "-serial", "stdio",
           "-no-reboot", "-device", "isa-debug-exit,iobase=0x501,iosize=1"]
    if machine:
        cmd[1:1] = ["-M", machine]
    return cmd


def tg_fields(out, key):
    """Fields of the guest's `tg: KEY a=1 b=2` line."""
    for line in out.splitlines():
        i = line.find("tg: " + key + " ")
        if i >= 0:
            return dict(w.split("=", 1) for w in line[i:].split()[2:]
                        if "=" in w)
    raise RuntimeError(f"no 'tg: {key}' line in:\n{out}")


def check_passed(cmd, out, err=""):
    """A run whose guest reported a failure is not a figure."""
    if "tg: done passed=" not in out or "failed=0" not in out:
        raise RuntimeError(f"guest failed: {' '.join(cmd)}\n{out}\n{err}")


def run_guest(cmd, timeout=600):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace", timeout=timeout)
    check_passed(cmd, p.stdout, p.stderr)
    return p.stdout


def start_serving(cmd):
    """Starts a VMM on the test guest in serve mode and returns once the
    guest says it is serving."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         text=True)
    for line in p.stdout:
        if "tg: serving" in line:
            return p
    p.kill()
    raise RuntimeError(f"{' '.join(cmd)} ended before serving")


def median(xs):
    return statistics.median(xs)


def anon_huge_of_largest_mapping(pid):
    """(size, AnonHugePages) in bytes of a process's largest mapping: the
    guest RAM of a VMM."""
    best = (0, 0)
    size = huge = 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                best = max(best, (size, huge))
                size = int(m.group(2), 16) - int(m.group(1), 16)
                huge = 0
            elif line.startswith("AnonHugePages:"):
                huge = int(line.split()[1]) * 1024
    return max(best, (size, huge))


def vmm_overhead(p):
    """Resident memory of a serving VMM other than its guest RAM (its
    largest mapping), in bytes; stops the VMM."""
    try:
        total = 0
        largest = (0, 0)    # (size, rss) of the largest mapping
        size = 0
        with open(f"/proc/{p.pid}/smaps") as f:
            for line in f:
                m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
                if m:
                    size = int(m.group(2), 16) - int(m.group(1), 16)
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                    total += rss
                    largest = max(largest, (size, rss))
        return total - largest[1]
    finally:
        p.kill()
        p.wait()
