#!/usr/bin/env python3
"""Runs a shell script on an arm64 KVM host made from this machine:
Debian's arm64 kernel boots under QEMU's TCG (software emulation) on a
virt board with EL2 (virtualization=on), where its built-in KVM makes
/dev/kvm real KVM on (emulated) arm64; the script runs there in busybox
sh, with the files given carried in the initramfs.

    tests/arm64_host.py [--mem SIZE] [--cpus N] [--timeout SECONDS]
                        [--sysroot DIR] [--gic 2|3] [--append ARGS]
                        [--file HOSTPATH[:IMAGEPATH]]...
                        (--script FILE | [--] SCRIPT...)

Why: the project's own machines are x86 with PVM (../shared/ENVIRONMENT.md);
thpvm's arm64 code needs an arm64 KVM to run against. Programs run there
must be arm64 and static (the image holds busybox and nothing else), as
a cross build with cross/arm64.ini makes them. Everything runs emulated,
so timings say nothing about hardware; use it for checks, not figures.

The kernel and busybox come from the sysroot cross/mksysroot.py arm64
makes (default <repo>/sysroot-arm64). Each --file is copied into the
image at IMAGEPATH, default /work/BASENAME; a relative IMAGEPATH is under
/work, one ending in / gets BASENAME appended; a directory is copied
whole. The script runs in /work with PATH /bin:/usr/bin:/work; SCRIPT's
words are joined with spaces, as sh -c would take them. tun is loaded
(a module there), so thpvm's taps work.

The script's output appears on standard output (its standard error too,
as both go to the VM's console), and its exit status becomes this
script's. Status 125 means the VM itself did not get to run the script
(one line says why), 124 that --timeout ran out."""
import argparse
import collections
import glob
import os
import shutil
import stat
import sys
import tempfile

import emulated_host

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QEMU = "qemu-system-aarch64"
INIT = os.path.join(HERE, "arm64_host.init")
# Modules the VM loads, in order, from the sysroot's kernel (paths under
# lib/modules/VERSION/kernel; none of them has dependencies). KVM itself
# is built in.
MODULES = ["drivers/net/tun.ko"]
# The init's console lines around the script (arm64_host.init).
BEGIN = "arm64-host: begin"
END = "arm64-host: end"
STATUS = "arm64-host: status "
SETUP_FAILED = "arm64-host: failed: "


class Error(Exception):
    pass


mkinitramfs = emulated_host.load_mkinitramfs()


def find_kernel(sysroot):
    """(vmlinuz, its version) in the sysroot. Debian 12's arm64 vmlinuz
    is a plain Image (with an EFI stub); QEMU boots it as it is, and
    would take a gzip'd one too."""
    found = sorted(glob.glob(os.path.join(sysroot, "boot/vmlinuz-*-arm64")))
    if len(found) != 1:
        raise Error(f"{len(found)} kernels in {sysroot}/boot (make the "
                    "sysroot with cross/mksysroot.py arm64)")
    return found[0], os.path.basename(found[0])[len("vmlinuz-"):]


def add_tree(img, host, path):
    """A file, link or directory of this machine at path in the image."""
    st = os.lstat(host)
    if stat.S_ISLNK(st.st_mode):
        img.add(path, stat.S_IFLNK | 0o777, os.readlink(host).encode())
    elif stat.S_ISDIR(st.st_mode):
        img.add(path, stat.S_IFDIR | 0o755)
        for name in sorted(os.listdir(host)):
            add_tree(img, os.path.join(host, name), f"{path}/{name}")
    elif stat.S_ISREG(st.st_mode):
        img.file(path, host)
    else:
        raise Error(f"{host}: not a file, link or directory")


def image_path(spec):
    """(host path, path in the image) of a --file argument."""
    host, _, path = spec.partition(":")
    if not os.path.lexists(host):
        raise Error(f"no {host} (--file {spec})")
    base = os.path.basename(os.path.normpath(host))
    if not path:
        path = base
    elif path.endswith("/"):
        path += base
    return host, os.path.normpath(os.path.join("/work", path))


def build_image(out, sysroot, version, script, files):
    """The VM's initramfs, uncompressed: static busybox, the modules,
    /init, /command and the carried files."""
    busybox = os.path.join(sysroot, "bin/busybox")
    if not os.path.isfile(busybox):
        raise Error(f"no {busybox} (cross/mksysroot.py arm64)")
    img = mkinitramfs.Image()
    for d in ("bin", "dev", "proc", "sys", "tmp", "work", "lib/modules"):
        img.add(d, stat.S_IFDIR | 0o755)
    img.entries["tmp"] = (stat.S_IFDIR | 0o1777, b"")
    # The kernel opens /dev/console for init before devtmpfs is mounted.
    img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
    img.file("init", INIT, 0o755)
    img.file("bin/busybox", busybox, 0o755)
    img.add("bin/sh", stat.S_IFLNK | 0o777, b"busybox")
    moddir = os.path.join(sysroot, "lib/modules", version, "kernel")
    for mod in MODULES:
        img.file("lib/modules/" + os.path.basename(mod),
                 os.path.join(moddir, mod), 0o644)
    img.add("lib/modules/load-order", stat.S_IFREG | 0o644,
            "".join(os.path.basename(m) + "\n" for m in MODULES).encode())
    img.add("command", stat.S_IFREG | 0o644, script.encode())
    for spec in files:
        host, path = image_path(spec)
        if path.lstrip("/") in img.entries:
            raise Error(f"{path} is in the image twice (--file {spec})")
        add_tree(img, host, path)
    img.write(out, 0, compress=False)


def qemu_command(args, kernel, image):
    return [QEMU, "-M", f"virt,virtualization=on,gic-version={args.gic}",
            "-cpu", "max,pauth-impdef=on", "-accel", "tcg,thread=multi",
            "-smp", str(args.cpus), "-m", args.mem,
            "-nodefaults", "-no-user-config", "-display", "none",
            "-serial", "stdio", "-no-reboot",
            "-kernel", kernel, "-initrd", image,
            "-append", "console=ttyAMA0 quiet loglevel=3 panic=-1 "
                       + args.append]


def relay(lines):
    """Copies the script's console lines (those between the init's
    begin and end lines) to stdout; returns the script's status (None
    if no status line came), the setup failure the init reported with
    the kernel messages it printed before it, if any, and the last
    lines, for the error message of a VM that did not get that far."""
    seen = collections.deque(maxlen=20)
    inside = False
    status = failure = None
    for raw in lines:
        line = raw.replace("\r", "").rstrip("\n")
        if not inside:
            if SETUP_FAILED in line and failure is None:
                why = line[line.index(SETUP_FAILED) + len(SETUP_FAILED):]
                failure = "\n".join([why] + list(seen)[-6:])
            elif line.startswith(STATUS):
                status = int(line[len(STATUS):])
            elif BEGIN in line:
                inside = True
            seen.append(line)
            continue
        seen.append(line)
        if line.endswith(END):
            # Output without a final newline shares the line with it.
            inside = False
            line = line[:-len(END)]
            if not line:
                continue
        print(line, flush=True)
    return status, failure, seen


def run(args, script):
    if not shutil.which(QEMU):
        raise Error(f"no {QEMU} (apt-get install qemu-system-arm)")
    kernel, version = find_kernel(args.sysroot)
    with tempfile.TemporaryDirectory(prefix="arm64-host-") as tmp:
        image = os.path.join(tmp, "arm64-host.cpio")
        build_image(image, args.sysroot, version, script, args.file)
        (status, failure, seen), qemu_status, killed = \
            emulated_host.run_console(qemu_command(args, kernel, image),
                                      args.timeout, relay)
    if killed:
        print(f"arm64_host: timed out after {args.timeout} s",
              file=sys.stderr)
        return 124
    if failure:
        raise Error(f"the VM could not run the script: {failure}")
    if status is None:
        tail = "\n".join(seen)
        raise Error(f"the VM ended (QEMU status {qemu_status}) without "
                    f"the script's status; its last output:\n{tail}")
    return status


def main():
    ap = argparse.ArgumentParser(
        description="Run a shell script on an emulated arm64 KVM host.")
    ap.add_argument("--mem", default="1G", metavar="SIZE",
                    help="the VM's memory (default 1G)")
    ap.add_argument("--cpus", type=int, default=2, metavar="N",
                    help="its vCPUs (default 2)")
    ap.add_argument("--timeout", type=int, default=3600, metavar="SECONDS",
                    help="kill the VM after this long (default 3600)")
    ap.add_argument("--sysroot", metavar="DIR",
                    default=os.path.join(ROOT, "sysroot-arm64"),
                    help="where the kernel and busybox are (default "
                         "<repo>/sysroot-arm64)")
    ap.add_argument("--gic", type=int, choices=(2, 3), default=3,
                    help="the host's interrupt controller, GICv3 "
                         "(default) or GICv2")
    ap.add_argument("--append", default="", metavar="ARGS",
                    help="more kernel parameters (e.g. kvm-arm.mode=nvhe)")
    ap.add_argument("--file", action="append", default=[],
                    metavar="HOSTPATH[:IMAGEPATH]",
                    help="carry a file or directory into the image "
                         "(default /work/BASENAME)")
    ap.add_argument("--script", metavar="FILE",
                    help="the script to run, from a file")
    ap.add_argument("words", nargs=argparse.REMAINDER, metavar="SCRIPT")
    args = ap.parse_args()
    if args.words[:1] == ["--"]:
        args.words = args.words[1:]
    if bool(args.script) == bool(args.words):
        ap.error("give a script: --script FILE, or its text")
    if args.cpus < 1 or args.timeout < 1:
        ap.error("--cpus and --timeout must be >= 1")
    try:
        if args.script:
            with open(args.script) as f:
                script = f.read()
        else:
            script = " ".join(args.words) + "\n"
        sys.exit(run(args, script))
    except (Error, mkinitramfs.Error, OSError) as e:
        print(f"arm64_host: {e}", file=sys.stderr)
        sys.exit(125)


if __name__ == "__main__":
    main()
