#!/usr/bin/env python3
"""virtio-balloon fragmentation benchmark (issue 4).

Each mode boots a fresh 1 GiB, 1-vCPU VM on the test guest, whose
`usemem` workload fragments guest memory (it writes 800 MiB of 4 KiB
pages, then frees every other one) before the balloon takes 424 MiB
away, leaving the guest 600 MiB; the balloon then gives them back and
the guest frees its pages and writes 800 MiB again (reuse). Measured
per mode: host huge pages and resident memory of guest RAM before and
after, the guest's inflate and deflate times, host CPU of the VMM (all
threads, and its non-vCPU threads alone) per ballooned page, release
calls, host PMD splits, and the guest's reuse speed.

Modes: eager and preserve (thpvm, 4 KiB balloon pages), cont (thpvm,
continuous pages), reporting (thpvm, eager with free page reporting),
qemu (QEMU's virtio-balloon-pci, HMP `balloon`).

usage: bench/balloon.py [--modes eager,preserve,cont,reporting,qemu]
                        [--repeat N]   (needs root and a build in ./build,
                                        or BUILD=DIR)"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import common
from host import guest_ram_usage, snapshot, thp_split_pmd
from common import (QEMU, THPVM, RunError, print_command, print_table, quote,
                    qemu_cmd, require_build, summarise)

MIB = 1 << 20
PAGE = 4096
RAM_MIB = 1024
KEEP_MIB = 600                                   # what the guest keeps
BALLOONED = (RAM_MIB - KEEP_MIB) * MIB
TARGET_PAGES = BALLOONED // PAGE                 # 108544
GUEST = ("serve balloon touch=all usemem=800M punch_holes reuse=800M "
         "skip=smp,lapic,pit")
NOCONT = " vfeat=nocont"

# name: (balloon options for thpvm or None for QEMU, guest params)
MODES = {
    "eager": ("policy=eager", GUEST + NOCONT),
    "preserve": ("policy=preserve", GUEST + NOCONT),
    "cont": ("policy=eager", GUEST),
    "reporting": ("policy=eager,reporting=on", GUEST + NOCONT),
    "qemu": (None, GUEST + NOCONT),
}

BOOT_TIMEOUT = 300        # touch=all plus usemem of 800 MiB, kernel emulated
MOVE_TIMEOUT = 300        # an inflate or deflate of 424 MiB in 4 KiB pages
REUSE_TIMEOUT = 300
STOP_TIMEOUT = 60

# Issue 4's targets for continuous pages: host huge pages (MiB) of guest
# RAM after inflate and after the reuse phase.
TARGET_HUGE_INFLATED = 616
TARGET_HUGE_REUSED = 907


# ---- the guest's console ----------------------------------------------

def tg_line_fields(line):
    """{'key': ..., 'a': '1', ...} of a `tg: KEY... a=1 b=2` line."""
    words = line[line.find("tg: ") + 4:].split()
    fields = dict(w.split("=", 1) for w in words if "=" in w)
    fields["key"] = " ".join(w for w in words if "=" not in w)
    return fields


class Console(common.Console):
    """The test guest's console: a `tg: FAIL` line fails the wait."""

    def __init__(self, proc, errfile):
        super().__init__(proc, errfile, "tg: ")

    def check(self, line, pattern):
        if "tg: FAIL" in line:
            self.fail(f"guest failed: {line[line.find('tg: '):]}")

    def fields(self, pattern, timeout):
        """The key=value fields of the awaited `tg:` line."""
        return tg_line_fields(self.wait(pattern, timeout).string)


# ---- the two VMMs ------------------------------------------------------

def hmp(path, command):
    """Sends one HMP command to QEMU's monitor socket and returns what it
    printed. Connects per command: the monitor takes one client at a time
    and greets each with a prompt."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    try:
        buf = b""
        while b"(qemu) " not in buf:
            chunk = s.recv(4096)
            if not chunk:
                raise RunError("QEMU monitor closed before its prompt")
            buf += chunk
        s.sendall(command.encode() + b"\n")
        reply = b""
        while b"(qemu) " not in reply:
            try:
                chunk = s.recv(4096)
            except socket.timeout:
                break
            if not chunk:
                break                           # quit closes it
            reply += chunk
    finally:
        s.close()
    # The monitor echoes the command (with terminal escapes) up to the
    # first CRLF; then come its output and the next prompt.
    out = reply.decode(errors="replace").split("\r\n", 1)[1:]
    return "".join(out).replace("(qemu) ", "").strip()


class Thpvm:
    def __init__(self, name, balloon, params):
        self.name = name
        self.cmd = [THPVM, "run", "--name", name, "-m", f"{RAM_MIB}M",
                    "-c", "1", f"--balloon={balloon}", "-p", params]

    def ctl(self, *args):
        r = subprocess.run([THPVM] + list(args), capture_output=True,
                           text=True, timeout=60)
        if r.returncode:
            raise RunError(f"thpvm {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def set_guest_mem(self, mib):
        self.ctl("balloon", self.name, "--set", f"{mib}M")

    def release_calls(self):
        return json.loads(self.ctl("balloon", self.name,
                                   "--json"))["release_calls"]

    def stop(self):
        self.ctl("stop", self.name)


class Qemu:
    def __init__(self, name, params, tmpdir):
        self.monitor = os.path.join(tmpdir, f"{name}.monitor")
        # debug-threads names the vCPU threads "CPU N/KVM", which
        # host.vmm_cpu_ns() tells apart.
        self.cmd = qemu_cmd(f"{RAM_MIB}", params) + [
            "-name", f"{name},debug-threads=on",
            "-device", "virtio-balloon-pci",
            "-monitor", f"unix:{self.monitor},server=on,wait=off"]

    def set_guest_mem(self, mib):
        out = hmp(self.monitor, f"balloon {mib}")
        if out:                                 # silent when it worked
            raise RunError(f"HMP 'balloon {mib}': {out}")

    def release_calls(self):
        return None             # QEMU does not count them

    def stop(self):
        hmp(self.monitor, "quit")


# ---- one run -----------------------------------------------------------

def reached(con, pages):
    """Waits until the guest's balloon holds `pages`; the fields of the
    guest's line (ns: its time for the move)."""
    return con.fields(rf"balloon reached target={pages} actual={pages} ",
                    MOVE_TIMEOUT)


def measure(vmm, mode):
    """One run of a mode in a VM of its own; its figures."""
    # stderr to a file: merged into the pipe, a warning could land in the
    # middle of a guest line.
    with tempfile.TemporaryFile() as errfile:
        p = subprocess.Popen(vmm.cmd, stdout=subprocess.PIPE,
                             stderr=errfile, stdin=subprocess.DEVNULL,
                             text=True, errors="replace")
        con = Console(p, errfile)
        try:
            return run_steps(vmm, mode, p, con)
        finally:
            stop(vmm, p)
            con.close()


def run_steps(vmm, mode, p, con):
    """Boot (usemem fragments guest memory first), inflate to leave the
    guest KEEP_MIB, deflate, and the guest's reuse, measuring around
    each. Host figures are read only once the guest says a step is done,
    so that they describe a settled state."""
    first = con.fields(r"usemem phase=first ", BOOT_TIMEOUT)
    con.wait(r"serving", BOOT_TIMEOUT)
    if mode == "reporting":
        # Start from the state reporting produces: free blocks released.
        con.wait(r"balloon reported=", MOVE_TIMEOUT)
    # Release calls are read outside the timed window: each read is a
    # control request the VMM serves on a non-vCPU thread.
    calls0 = vmm.release_calls()
    s0 = snapshot(p.pid)

    t = time.monotonic()
    vmm.set_guest_mem(KEEP_MIB)
    inflated = reached(con, TARGET_PAGES)
    inflate_wall = time.monotonic() - t
    s1 = snapshot(p.pid)
    calls1 = vmm.release_calls()

    t = time.monotonic()
    vmm.set_guest_mem(RAM_MIB)
    deflated = reached(con, 0)
    deflate_wall = time.monotonic() - t
    reuse = con.fields(r"usemem phase=reuse ", REUSE_TIMEOUT)
    huge2, rss2 = guest_ram_usage(p.pid)
    splits2 = thp_split_pmd()

    return {
        "huge0": s0["huge"] / MIB,
        "huge1": s1["huge"] / MIB,
        "huge2": huge2 / MIB,
        "rss1": s1["rss"] / MIB,
        "rss2": rss2 / MIB,
        "rss_fall": 100.0 * (s0["rss"] - s1["rss"]) / BALLOONED,
        "first_mbps": float(first["mb_per_s"]),
        "reuse_mbps": float(reuse["mb_per_s"]),
        "inflate_s": int(inflated["ns"]) / 1e9,
        "inflate_wall": inflate_wall,
        "deflate_s": int(deflated["ns"]) / 1e9,
        "deflate_wall": deflate_wall,
        "calls": None if calls0 is None else calls1 - calls0,
        "cpu_us_page": (s1["cpu_ns"] - s0["cpu_ns"]) / 1e3 / TARGET_PAGES,
        "dev_us_page": (s1["dev_ns"] - s0["dev_ns"]) / 1e3 / TARGET_PAGES,
        "splits": splits2 - s0["splits"],
        # Pages the guest's compaction moved to free whole blocks.
        "migrated": (int(inflated["migrated"]) if "migrated" in inflated
                     else None),
    }


def stop(vmm, p):
    """Asks the VMM to stop; kills it if it does not, or cannot be asked
    (it already failed)."""
    if p.poll() is None:
        try:
            vmm.stop()
            p.wait(timeout=STOP_TIMEOUT)
        except (RunError, OSError, subprocess.TimeoutExpired):
            pass
    if p.poll() is None:
        p.kill()
    p.wait()


def make_vmm(mode, index, tmpdir):
    balloon, params = MODES[mode]
    name = f"bb-{mode}-{os.getpid()}-{index}"
    if balloon is None:
        return Qemu(name, params, tmpdir)
    return Thpvm(name, balloon, params)


# ---- report ------------------------------------------------------------

# (key, header, format) of the table's columns, in order.
COLUMNS = [
    ("huge0", "huge0", "{:.0f}"),
    ("huge1", "huge1", "{:.0f}"),
    ("huge2", "huge2", "{:.0f}"),
    ("rss1", "rss1", "{:.0f}"),
    ("rss2", "rss2", "{:.0f}"),
    ("rss_fall", "fall%", "{:.1f}"),
    ("first_mbps", "MB/s0", "{:.0f}"),
    ("reuse_mbps", "MB/s2", "{:.0f}"),
    ("inflate_s", "infl_s", "{:.2f}"),
    ("inflate_wall", "infl_w", "{:.2f}"),
    ("deflate_s", "defl_s", "{:.2f}"),
    ("deflate_wall", "defl_w", "{:.2f}"),
    ("calls", "calls", "{:.0f}"),
    ("cpu_us_page", "us/page", "{:.2f}"),
    ("dev_us_page", "dev_us", "{:.2f}"),
    ("splits", "splits", "{:.0f}"),
    ("migrated", "migr", "{:.0f}"),
]

LEGEND = f"""\
huge0/1/2: host AnonHugePages of guest RAM (MiB) before inflate, after
  inflate, after deflate and the guest's reuse; rss1/2: its Rss after
  inflate and after reuse (MiB); fall%: Rss fall at inflate in % of
  the {BALLOONED // MIB} MiB ballooned; MB/s0, MB/s2: the guest's usemem
  speed at first touch and at reuse; infl_s, defl_s: inflate and deflate
  time as the guest measures it (s); infl_w, defl_w: the same from the
  host's request to the guest's line (s, host clock); calls: host release
  calls during inflate ('-' for QEMU, which does not count them; its
  source releases 4 KiB pages of THP-backed RAM with one madvise call
  each); us/page: host CPU of the VMM (all threads, the guest's
  emulated kernel included) during inflate per ballooned 4 KiB page;
  dev_us: the same for its non-vCPU threads only (QEMU 7.2 serves the
  balloon in its vCPU thread here, so its dev_us is not its cost);
  splits: thp_split_pmd from before inflate to after reuse (system-wide:
  other host activity counts too); migr: pages the guest's compaction
  migrated during inflate."""


def check(label, ok):
    print(f"{'PASS' if ok else 'MISS'} {label}")


def print_ratios(results):
    """Each thpvm mode against QEMU: guest-measured inflate time and host
    CPU per page (lower is better)."""
    if not results.get("qemu"):
        print("ratios to qemu: no qemu figures")
        return
    q = summarise(results["qemu"], COLUMNS)
    for mode, runs in results.items():
        if mode != "qemu" and runs:
            m = summarise(runs, COLUMNS)
            print(f"{mode} / qemu: inflate time "
                  f"{m['inflate_s'] / q['inflate_s']:.3f}, host CPU per page "
                  f"{m['cpu_us_page'] / q['cpu_us_page']:.3f}")


def print_targets(results):
    """Issue 4's targets for continuous pages; informational."""
    if not results.get("cont"):
        print("targets: no cont figures")
        return
    cont = summarise(results["cont"], COLUMNS)
    # Resident memory bounds what can be huge: say how close it came.
    # The 616 and 907 MiB come from a Linux guest whose other
    # memory stays resident; here a 600 MiB guest holds at most 600 MiB
    # and the reuse touches 800 MiB, so check the share as well.
    check(f"cont all resident guest RAM huge after inflate and reuse "
          f"({cont['huge1'] / cont['rss1']:.1%}, "
          f"{cont['huge2'] / cont['rss2']:.1%})",
          cont["huge1"] >= 0.99 * cont["rss1"] and
          cont["huge2"] >= 0.99 * cont["rss2"])
    check(f"cont huge after inflate >= {TARGET_HUGE_INFLATED} MiB "
          f"({cont['huge1']:.0f} of {cont['rss1']:.0f} MiB resident)",
          cont["huge1"] >= TARGET_HUGE_INFLATED)
    check(f"cont huge after reuse >= {TARGET_HUGE_REUSED} MiB "
          f"({cont['huge2']:.0f} of {cont['rss2']:.0f} MiB resident)",
          cont["huge2"] >= TARGET_HUGE_REUSED)
    check(f"cont RSS fall >= 95% of ballooned ({cont['rss_fall']:.1f}%)",
          cont["rss_fall"] >= 95)
    check(f"cont splits no host huge page ({cont['splits']:.0f} "
          f"thp_split_pmd)", cont["splits"] == 0)
    check(f"cont release calls <= {TARGET_PAGES // 10} "
          f"({cont['calls']:.0f})", cont["calls"] <= TARGET_PAGES / 10)
    if not results.get("qemu"):
        print("n/a  cont CPU/page and inflate time against qemu: "
              "no qemu figures")
        return
    qemu = summarise(results["qemu"], COLUMNS)
    check(f"cont CPU/page <= qemu/10 ({cont['cpu_us_page']:.2f} vs "
          f"{qemu['cpu_us_page']:.2f} us)",
          cont["cpu_us_page"] <= qemu["cpu_us_page"] / 10)
    check(f"cont inflate time <= qemu's ({cont['inflate_s']:.2f} vs "
          f"{qemu['inflate_s']:.2f} s)",
          cont["inflate_s"] <= qemu["inflate_s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated, from " + ",".join(MODES))
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="runs of each mode, interleaved (default 1); "
                    "the table then shows medians")
    args = ap.parse_args()
    modes = args.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad or args.repeat < 1:
        ap.error(f"unknown modes {bad}" if bad else "--repeat must be >= 1")
    require_build()
    if "qemu" in modes and not QEMU:
        sys.exit("qemu-system-x86_64 not found (drop the qemu mode)")

    print_command()
    results = {m: [] for m in modes}
    errors = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmpdir:
        for mode in modes:
            print(f"  {mode}: {quote(make_vmm(mode, 0, tmpdir).cmd)}")
        sys.stdout.flush()
        for i in range(args.repeat):
            for mode in modes:
                vmm = make_vmm(mode, i, tmpdir)
                t = time.monotonic()
                try:
                    results[mode].append(measure(vmm, mode))
                    why = "ok"
                except (RunError, OSError, ValueError, KeyError,
                        subprocess.TimeoutExpired) as e:
                    errors[mode].append(str(e))
                    why = f"error: {quote(vmm.cmd)}\n{e}"
                print(f"{mode} run {i + 1}: {time.monotonic() - t:.0f} s, "
                      f"{why}", file=sys.stderr, flush=True)
    print(f"guest {RAM_MIB} MiB, 1 vCPU, balloon to {KEEP_MIB} MiB and back, "
          f"-p '{GUEST}' (+ vfeat=nocont but for cont), "
          f"{args.repeat} run(s), medians ({time.strftime('%Y-%m-%d')})")
    print_table(results, errors, args.repeat, COLUMNS, LEGEND)
    print_ratios(results)
    print_targets(results)
    sys.exit(1 if any(errors.values()) else 0)


if __name__ == "__main__":
    main()
