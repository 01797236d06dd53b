#!/usr/bin/env python3
"""virtio-balloon fragmentation benchmark with a real Linux guest (issue 5;
the experiment of issue 4, which bench/balloon.py runs on the test guest).

Each mode boots Debian's kernel with the initramfs of
guest/linux/mkinitramfs.py in a fresh 1 GiB, 1-vCPU VM. The guest
(`thpvm.run=balloon-frag`) runs `usemem --punch-holes --hold 800m`, which
leaves guest memory fragmented; the host then sets the balloon to leave
the guest 600 MiB, and when the guest saw its memory go, back to 1 GiB;
the guest then frees usemem's memory and runs `usemem 800m` (reuse).
Measured per mode: host huge pages and resident memory of guest RAM
before inflate, after it and after the reuse; inflate and deflate time
from the host's request to the guest's line; host CPU of the VMM (all
threads, and its non-vCPU threads alone) per ballooned page; release
calls; host PMD splits; the guest's reuse speed.

Modes:
  virtio_balloon  Linux's own driver; thpvm
                  --balloon=cont_pages=off,deflate_on_oom=off
  cont_balloon    guest/linux/cont_balloon, built here against the guest
                  kernel's headers; thpvm --balloon=deflate_on_oom=off
  virtio_mem      no balloon: Linux's virtio_mem driver, the guest booted
                  with 600 MiB and the other 424 MiB plugged from a
                  hotplug region (--mem-hotplug=512M,requested=424M,
                  memhp_default_state=online_movable); giving memory back
                  unplugs it (thpvm mem --set 0), taking it plugs it
                  again
  qemu            Linux's own driver on QEMU's virtio-balloon-pci, moved
                  with HMP `balloon` (default: included when
                  qemu-system-x86_64 is installed)

Needs a host whose KVM can run a stock Linux guest to user space
(VT-x/AMD-V); elsewhere, such as on PVM, it prints one line saying why
and exits with status 77 (skipped), printing no figures. A mode that
fails prints an error in its row, never a figure, and the exit status
is then 1.

usage: bench/linux_balloon.py [--modes virtio_balloon,cont_balloon,
                                       virtio_mem,qemu]
                              [--repeat N] [--kernel VERSION]
       (as root, with a build in ./build, or BUILD=DIR)"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import balloon
from balloon import hmp
from common import QEMU, THPVM, print_table, qemu_cmd, quote
from host import guest_ram_usage, snapshot, thp_split_pmd, threads_report
from linux_guest import (STOP_TIMEOUT, RunError, begin, build_cont_balloon,
                         build_initramfs, end_vmm, kernel_version, start_vmm,
                         vmlinuz)

SCRIPT = "bench/linux_balloon.py"
MIB = 1 << 20
PAGE = 4096
RAM_MIB = 1024
KEEP_MIB = 600                                   # what the guest keeps
BALLOONED = (RAM_MIB - KEEP_MIB) * MIB

# name: (thpvm --balloon options, "mem" for virtio-mem, or None for QEMU;
# the guest's balloon driver)
MODES = {
    "virtio_balloon": ("cont_pages=off,deflate_on_oom=off", "virtio_balloon"),
    "cont_balloon": ("deflate_on_oom=off", "cont_balloon"),
    "virtio_mem": ("mem", "none"),
    "qemu": (None, "virtio_balloon"),
}
HOTPLUG_MIB = 512         # the region: whole 128 MiB memory blocks

BOOT_TIMEOUT = 300        # kernel, modules, init, and usemem's 800 MiB
MOVE_TIMEOUT = 300        # an inflate or deflate of 424 MiB
REUSE_TIMEOUT = 300
SETTLE_TIMEOUT = 50       # the last 24 MiB after the guest's line
ERRORS = (RunError, OSError, ValueError, KeyError,
          subprocess.TimeoutExpired)


def guest_params(driver):
    return (f"console=ttyS0 quiet thpvm.run=balloon-frag "
            f"thpvm.balloon={driver}")


# ---- the two VMMs: bench/balloon.py's, on a Linux kernel ---------------

class Thpvm(balloon.Thpvm):
    regions = 1               # guest RAM: one mapping

    def __init__(self, name, options, driver, kernel, initrd):
        self.name = name
        self.cmd = [THPVM, "run", "--name", name, "-k", kernel,
                    "-i", initrd, "-m", f"{RAM_MIB}M", "-c", "1",
                    # The very line QEMU's -append gets below.
                    f"--balloon={options}", "--nodefaults",
                    "-p", guest_params(driver)]

    def info(self):
        return json.loads(self.ctl("balloon", self.name, "--json"))

    def ballooned_pages(self):
        """Pages the host has seen inflated so far."""
        return self.info()["ballooned"] // PAGE

    def settle(self):
        """Until the driver's actual equals the target: the guest's line
        comes once 400 MiB are gone, the balloon may still be moving.
        `--wait` asks every 100 ms, so this stays out of timed windows;
        SETTLE_TIMEOUT keeps it within balloon.Thpvm.ctl's own limit."""
        self.ctl("balloon", self.name, f"--wait={SETTLE_TIMEOUT}")


class ThpvmMem(balloon.Thpvm):
    """thpvm with virtio-mem in place of a balloon: the guest boots with
    KEEP_MIB and has the rest plugged from the hotplug region; what is
    given back goes as unplugged 2 MiB blocks."""
    regions = 2               # boot RAM and the hotplug region

    def __init__(self, name, kernel, initrd):
        self.name = name
        self.cmd = [THPVM, "run", "--name", name, "-k", kernel,
                    "-i", initrd, "-m", f"{KEEP_MIB}M", "-c", "1",
                    f"--mem-hotplug={HOTPLUG_MIB}M,"
                    f"requested={RAM_MIB - KEEP_MIB}M", "--nodefaults",
                    "-p", guest_params("none") +
                    " memhp_default_state=online_movable"]

    def info(self):
        return json.loads(self.ctl("mem", self.name, "--json"))

    def set_guest_mem(self, mib):
        plug = mib - KEEP_MIB
        self.ctl("mem", self.name, "--set", f"{plug}M" if plug else "0")

    def release_calls(self):
        return self.info()["release_calls"]

    def ballooned_pages(self):
        """Pages unplugged so far."""
        return ((RAM_MIB - KEEP_MIB) * MIB -
                self.info()["plugged_size"]) // PAGE

    def settle(self):
        self.ctl("mem", self.name, f"--wait={SETTLE_TIMEOUT}")


class Qemu(balloon.Qemu):
    regions = 1

    def __init__(self, name, driver, kernel, initrd, tmpdir):
        self.monitor = os.path.join(tmpdir, f"{name}.monitor")
        # -cpu host: thpvm passes the host's CPUID through too. debug-
        # threads names the vCPU threads "CPU N/KVM", which
        # host.vmm_cpu_ns() counts apart from the others.
        self.cmd = qemu_cmd(f"{RAM_MIB}", guest_params(driver),
                            kernel=kernel, cpu="host", exit_port=False) + [
            "-initrd", initrd, "-name", f"{name},debug-threads=on",
            "-device", "virtio-balloon-pci",
            "-monitor", f"unix:{self.monitor},server=on,wait=off"]

    def actual_mib(self):
        out = hmp(self.monitor, "info balloon")
        m = re.search(r"actual=(\d+)", out)
        if not m:
            raise RunError(f"HMP 'info balloon': {out!r}")
        return int(m.group(1))

    def ballooned_pages(self):
        return (RAM_MIB - self.actual_mib()) * MIB // PAGE

    def settle(self):
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while self.actual_mib() != KEEP_MIB:
            if time.monotonic() > deadline:
                raise RunError(f"QEMU's balloon did not reach "
                                 f"{KEEP_MIB} MiB within {SETTLE_TIMEOUT} s")
            time.sleep(0.2)


def make_vmm(mode, index, kernel, initrd, tmpdir):
    options, driver = MODES[mode]
    name = f"lb-{mode}-{os.getpid()}-{index}"
    if options is None:
        return Qemu(name, driver, kernel, initrd, tmpdir)
    if options == "mem":
        return ThpvmMem(name, kernel, initrd)
    return Thpvm(name, options, driver, kernel, initrd)


# ---- one run -----------------------------------------------------------

def measure(vmm, version):
    """One run of a mode in a VM of its own; its figures."""
    p, con = start_vmm(vmm.cmd)
    grace = 0                   # a failed guest is stopped at once
    try:
        r = run_steps(vmm, version, p, con)
        grace = STOP_TIMEOUT
        return r
    except ERRORS as e:
        # A control command that found no VM: say how the VMM ended.
        try:
            status = p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            # Still running: say where each of its threads is.
            raise RunError(f"{e}\n{threads_report(p.pid)}") from None
        if "last output" in str(e):
            raise
        raise RunError(f"{e}\nthe VMM had exited (status {status}); last "
                       f"output:\n{con.tail()}") from None
    finally:
        end_vmm(p, con, vmm.stop, grace)


def run_steps(vmm, version, p, con):
    """Fragmentation, inflate to leave the guest KEEP_MIB, deflate, the
    guest's reuse, measuring around each. Host figures are read once the
    guest says a step is done, so that they describe a settled state."""
    con.wait_ready(version, BOOT_TIMEOUT)
    con.wait(r"balloon-frag fragmented", BOOT_TIMEOUT)
    # Control requests (release calls, ballooned) are made outside the
    # CPU windows: the VMM serves each on a non-vCPU thread.
    calls0 = vmm.release_calls()
    s0 = snapshot(p.pid, vmm.regions)

    t = time.monotonic()
    vmm.set_guest_mem(KEEP_MIB)
    con.wait(r"balloon-frag inflated", MOVE_TIMEOUT)
    inflate_wall = time.monotonic() - t
    compaction = con.wait(r"balloon-frag compaction at=inflated (.*)",
                          MOVE_TIMEOUT).group(1).strip()
    s1 = snapshot(p.pid, vmm.regions)
    pages1 = vmm.ballooned_pages()          # what s1's CPU time paid for
    vmm.settle()
    huge1, rss1 = guest_ram_usage(p.pid, vmm.regions)
    splits1 = thp_split_pmd()
    calls1 = vmm.release_calls()

    t = time.monotonic()
    vmm.set_guest_mem(RAM_MIB)
    con.wait(r"balloon-frag deflated", MOVE_TIMEOUT)
    deflate_wall = time.monotonic() - t
    reuse = con.wait(r"balloon-frag reuse mb_per_s=([0-9.]+)", REUSE_TIMEOUT)
    huge2, rss2 = guest_ram_usage(p.pid, vmm.regions)
    splits2 = thp_split_pmd()
    con.wait_end("balloon-frag", REUSE_TIMEOUT)
    if not pages1:
        raise RunError("the host saw no page inflated")

    return {
        "huge0": s0["huge"] / MIB,
        "huge1": huge1 / MIB,
        "huge2": huge2 / MIB,
        "rss0": s0["rss"] / MIB,
        "rss1": rss1 / MIB,
        "rss2": rss2 / MIB,
        "rss_fall": 100.0 * (s0["rss"] - rss1) / BALLOONED,
        "inflate_wall": inflate_wall,
        "deflate_wall": deflate_wall,
        "calls": None if calls0 is None else calls1 - calls0,
        "cpu_us_page": (s1["cpu_ns"] - s0["cpu_ns"]) / 1e3 / pages1,
        "dev_us_page": (s1["dev_ns"] - s0["dev_ns"]) / 1e3 / pages1,
        "splits_inflate": splits1 - s0["splits"],
        "splits": splits2 - s0["splits"],
        "reuse_mbps": float(reuse.group(1)),
        "compaction": compaction,
    }


# ---- report ------------------------------------------------------------

# (key, header, format) of the table's columns, in order.
COLUMNS = [
    ("huge0", "huge0", "{:.0f}"),
    ("huge1", "huge1", "{:.0f}"),
    ("huge2", "huge2", "{:.0f}"),
    ("rss0", "rss0", "{:.0f}"),
    ("rss1", "rss1", "{:.0f}"),
    ("rss2", "rss2", "{:.0f}"),
    ("rss_fall", "fall%", "{:.1f}"),
    ("inflate_wall", "infl_w", "{:.2f}"),
    ("deflate_wall", "defl_w", "{:.2f}"),
    ("calls", "calls", "{:.0f}"),
    ("cpu_us_page", "us/page", "{:.2f}"),
    ("dev_us_page", "dev_us", "{:.2f}"),
    ("splits_inflate", "spl_i", "{:.0f}"),
    ("splits", "splits", "{:.0f}"),
    ("reuse_mbps", "MB/s", "{:.0f}"),
]

LEGEND = f"""\
huge0/1/2: host AnonHugePages of guest RAM (MiB) once usemem fragmented
  guest memory, after inflate, and after deflate and the guest's reuse;
  rss0/1/2: its Rss at the same points (MiB); fall%: Rss fall at inflate
  in % of the {BALLOONED // MIB} MiB ballooned; infl_w, defl_w: from the
  host's request to the guest's line saying its MemTotal fell by 400 MiB
  or came back (s, host clock; the guest polls MemTotal every 0.2 s, so
  this is an upper bound); calls: host release calls during inflate ('-'
  for QEMU, which does not count them); us/page: host CPU of the VMM
  (all threads, the guest's kernel included) from the request to the
  guest's inflated line, per page the host had seen ballooned by then;
  dev_us: the same for its non-vCPU threads only (QEMU 7.2 serves the
  balloon in its vCPU thread, so its dev_us is not its cost); spl_i,
  splits: thp_split_pmd from before inflate to after it, and to after
  the reuse (system-wide: other host activity counts too); MB/s: the
  guest's usemem speed at reuse. For virtio_mem, guest RAM is boot RAM
  and the hotplug region together, inflate is the unplug of the 424 MiB
  and deflate their plug."""


# ---- main --------------------------------------------------------------

def parse_modes(ap, args):
    """The modes asked for; qemu leaves the default when it is missing,
    while asking for it explicitly without it is an error."""
    if args.modes is None:
        return [m for m in MODES if m != "qemu" or QEMU]
    modes = args.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}")
    if "qemu" in modes and not QEMU:
        ap.error("qemu-system-x86_64 not found (drop the qemu mode)")
    return modes


def prepare(modes, version, tmpdir, errors):
    """The initramfs all modes boot (one image, so that they differ only
    in the driver the guest loads), with cont_balloon.ko when that mode
    runs. A module that does not build fails its mode only."""
    ko = None
    if "cont_balloon" in modes:
        try:
            ko = build_cont_balloon(version, tmpdir)
        except (RunError, OSError) as e:
            errors["cont_balloon"].append(str(e))
    return build_initramfs(os.path.join(tmpdir, "initramfs.cpio.gz"),
                           version, ko)


def main():
    ap = argparse.ArgumentParser(
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\nusage:")[0])
    ap.add_argument("--modes", metavar="LIST",
                    help="comma-separated, from " + ",".join(MODES) +
                    " (default: all, qemu when installed)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="runs of each mode, interleaved (default 1); "
                    "the table then shows medians")
    ap.add_argument("--kernel", metavar="VERSION",
                    help="guest kernel, /boot/vmlinuz-VERSION (default: "
                    "the newest /lib/modules/* with virtio modules)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    modes = parse_modes(ap, args)
    begin(SCRIPT)
    results = {m: [] for m in modes}
    errors = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="thpvm-lballoon-") as tmpdir:
        try:
            version = kernel_version(args.kernel)
            kernel = vmlinuz(version)
            initrd = prepare(modes, version, tmpdir, errors)
        except (RunError, OSError) as e:
            sys.exit(f"{SCRIPT}: {e}")
        runnable = [m for m in modes if not errors[m]]
        for mode in runnable:
            vmm = make_vmm(mode, 0, kernel, initrd, tmpdir)
            print(f"  {mode}: {quote(vmm.cmd)}")
        sys.stdout.flush()
        for i in range(args.repeat):
            for mode in runnable:
                vmm = make_vmm(mode, i, kernel, initrd, tmpdir)
                t = time.monotonic()
                try:
                    results[mode].append(measure(vmm, version))
                    why = "ok"
                except ERRORS as e:
                    errors[mode].append(str(e))
                    why = f"error: {quote(vmm.cmd)}\n{e}"
                print(f"{mode} run {i + 1}: {time.monotonic() - t:.0f} s, "
                      f"{why}", file=sys.stderr, flush=True)
                if why == "ok":
                    # How often the guest compacted, and how that went.
                    print(f"  guest {results[mode][-1]['compaction']}",
                          file=sys.stderr, flush=True)
    print(f"kernel {version}, guest {RAM_MIB} MiB, 1 vCPU, balloon to "
          f"{KEEP_MIB} MiB and back, -p '{guest_params('DRIVER')}', "
          f"{args.repeat} run(s), medians ({time.strftime('%Y-%m-%d')})")
    print_table(results, errors, args.repeat, COLUMNS, LEGEND, width=16)
    sys.exit(1 if any(errors.values()) else 0)


if __name__ == "__main__":
    main()
