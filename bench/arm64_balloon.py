#!/usr/bin/env python3
"""bench/linux_balloon.py's balloon fragmentation run, on arm64: Debian's
arm64 kernel under the cross-built thpvm, in the emulated arm64 host
(tests/hosts/arm64_host.py). Everything there is emulated, so only counts are
reported (host huge pages and resident memory of guest RAM, release
calls, PMD splits), never times.

Per mode, a fresh 1 GiB, 1-vCPU VM with guest/linux's initramfs built
for arm64 (mkinitramfs.py --sysroot): the guest fragments 800 MiB
(`usemem --punch-holes --hold 800m`), the balloon leaves it 600 MiB,
then all of it, and the guest reuses 800 MiB (bench/arm64_balloon.sh
drives the steps there).

Modes:
  virtio_balloon           Linux's own driver; --balloon=cont_pages=off,
                           deflate_on_oom=off (release policy eager)
  virtio_balloon_preserve  the same with policy=preserve: only whole
                           host huge pages are released
  cont_balloon             guest/linux/cont_balloon built for arm64
                           against Debian's arm64 headers;
                           --balloon=deflate_on_oom=off
  reporting                Linux's own driver with free page reporting
                           (--balloon=reporting=on, cont_pages=off,
                           deflate_on_oom=off) and no target: the second
                           reading once the bytes released stood still
                           for 20 s; no deflate or reuse (their columns
                           are -)
  virtio_mem               no balloon: Linux's virtio_mem driver, the
                           guest booted with 600 MiB and 424 MiB plugged
                           at boot from a 512 MiB hotplug region (blocks
                           onlined movable); giving back is thpvm mem
                           --set 0, taking back --set 424M

usage: bench/arm64_balloon.py [--modes M,M] [--build DIR] [--sysroot DIR]
  (as root; DIR: a cross build made as docs/arm64.md says, default
  build-arm64; the sysroot of arch/mksysroot.py arm64)"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "arch"))
import mksysroot  # noqa: E402
MODES = ["virtio_balloon", "virtio_balloon_preserve", "cont_balloon",
         "reporting", "virtio_mem"]
COLUMNS = ["huge0", "huge1", "huge2", "rss0", "rss1", "rss2", "rel1",
           "calls", "spl_i", "splits"]
LEGEND = """\
huge0/1/2: host AnonHugePages of guest RAM (MiB; with virtio_mem, boot
  RAM and the hotplug region together) once usemem fragmented guest
  memory, after the balloon left the guest 600 of its 1024 MiB (with
  reporting: once reporting settled), and after deflate and the guest's
  reuse; rss0/1/2: its resident memory at the same points (MiB); rel1:
  what the device had released to the host in all by the second reading
  (MiB, counted from boot); calls: host release calls during inflate
  (reporting: until it settled); spl_i, splits: thp_split_pmd in the
  emulated host from before inflate to after it, and to after the
  reuse."""


class Error(Exception):
    pass


def run(cmd, what, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise Error(f"{what} failed:\n{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


def build_cont_balloon(sysroot, tmp):
    """guest/linux/cont_balloon built for arm64, in a copy under tmp."""
    headers = glob.glob(os.path.join(sysroot, "usr/src/linux-headers-*-arm64"))
    if len(headers) != 1:
        raise Error(f"no arm64 kernel headers in {sysroot} "
                    "(arch/mksysroot.py arm64)")
    src = os.path.join(tmp, "cont_balloon")
    shutil.copytree(os.path.join(ROOT, "guest/linux/cont_balloon"), src)
    run(["make", "-C", headers[0], f"M={src}", "ARCH=arm64",
         "CROSS_COMPILE=aarch64-linux-gnu-", "modules"],
        "building cont_balloon.ko for arm64")
    return os.path.join(src, "cont_balloon.ko")


def main():
    ap = argparse.ArgumentParser(
        description="The balloon fragmentation run on emulated arm64.")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated, of " + ", ".join(MODES))
    ap.add_argument("--build", default=os.path.join(ROOT, "build-arm64"))
    ap.add_argument("--sysroot", default=mksysroot.default_dest("arm64"))
    args = ap.parse_args()
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode {unknown[0]} (of {', '.join(MODES)})")
    thpvm = os.path.join(args.build, "thpvm")
    usemem = os.path.join(args.build, "guest/linux/usemem")
    kernels = glob.glob(os.path.join(args.sysroot, "boot/vmlinuz-*-arm64"))
    try:
        for f in (thpvm, usemem):
            if not os.path.isfile(f):
                raise Error(f"no {f} (cross-build as docs/arm64.md says)")
        if len(kernels) != 1:
            raise Error(f"no arm64 kernel in {args.sysroot}")
        with tempfile.TemporaryDirectory(prefix="arm64-balloon-") as tmp:
            initrd = os.path.join(tmp, "initrd")
            cmd = [sys.executable,
                   os.path.join(ROOT, "guest/linux/mkinitramfs.py"), initrd,
                   "--sysroot", args.sysroot, "--usemem", usemem]
            if "cont_balloon" in modes:
                cmd += ["--cont-balloon", build_cont_balloon(args.sysroot,
                                                             tmp)]
            run(cmd, "building the initramfs")
            script = os.path.join(tmp, "script")
            with open(script, "w") as out, \
                    open(os.path.join(ROOT, "bench/arm64_balloon.sh")) as f:
                out.write(f"MODES='{' '.join(modes)}'\n" + f.read())
            host = os.path.join(ROOT, "tests", "hosts", "arm64_host.py")
            out = run([sys.executable, host,
                       "--sysroot", args.sysroot, "--mem", "3G",
                       "--cpus", "2", "--script", script,
                       "--file", thpvm, "--file", kernels[0] + ":vmlinuz",
                       "--file", initrd], "the emulated arm64 host")
    except (Error, OSError) as e:
        sys.exit(f"arm64_balloon: {e}")
    print(f"{'mode':<24}" + "".join(f"{c:>8}" for c in COLUMNS))
    failed = False
    notes = [line[len("note "):] for line in out.splitlines()
             if line.startswith("note ")]
    for line in out.splitlines():
        m = re.match(r"result (\S+) (.*)", line)
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(2).split()
                      if "=" in kv and not kv.startswith("error="))
        if "error=" in m.group(2):
            failed = True
            print(f"{m.group(1):<24}{m.group(2)}")
        else:
            print(f"{m.group(1):<24}" +
                  "".join(f"{fields.get(c, '-'):>8}" for c in COLUMNS))
    print(LEGEND)
    if notes:
        print("The guest's compaction counters (/proc/vmstat), once "
              "fragmented and once inflated:")
        for note in notes:
            print(f"  {note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
