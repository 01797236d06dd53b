#!/usr/bin/env python3
"""Runs a command on a KVM host with hardware virtualization, made from
this machine: Debian's kernel boots under QEMU's TCG (software emulation)
on a CPU model with AMD's SVM, loads kvm_amd, mounts this machine's whole
filesystem (read-only through 9p, writable through an overlay on tmpfs)
and runs the command there, in the directory it was started from, with
the same environment.

    tests/hosts/svm_host.py [--mem SIZE] [--cpus N] [--kernel VERSION]
                      [--timeout SECONDS] [--silence SECONDS]
                      [--attempts N] [--writable DIR]... [--scratch DIR]
                      [--] COMMAND [ARG...]

Why: on a KVM without VT-x/AMD-V (PVM), a stock Linux guest never
reaches user space. QEMU's TCG emulates SVM with nested paging well
enough for Linux's kvm_amd, so inside this VM /dev/kvm is real KVM on
(emulated) AMD-V: thpvm boots Debian's kernel there to user space, and
the capable-host branches of the Linux-guest tests and benchmarks run
for real. Everything runs emulated, so their timings say nothing about
hardware; use them as checks, not figures.

One emulated CPU by default: nested Linux guests hang or die more often
on a two-CPU emulated host (docs/benchmarks.md, "Linux guests, on an
emulated AMD-V host", has the rates). --cpus 2 is the faster and the
less reliable host.

The emulated host itself can stop: its own processes no longer
scheduled, then QEMU idle for good, and no timeout inside ever fires.
So the VM's init writes a heartbeat to a second serial port every 5 s
while the command runs; after --silence seconds (default 60) without
one, QEMU is killed and the command runs again in a fresh VM, up to
--attempts runs in all (default 2), within the same --timeout. The
output of the stopped run stays on standard output, and standard error
says it ran again. A command that keeps its progress in a --writable
directory can go on where the stopped one was (.ci/kvm_suite does).

What the command writes is lost with the VM, but under a --writable
directory: that one is shared read-write at its own path, so a test
log written there (meson test's, say) is still there afterwards.
--scratch DIR puts a fresh ext4 filesystem at DIR, on a disk of the VM's
own (a sparse file here): unlike the overlay's tmpfs it takes O_DIRECT,
and what is written there costs the VM no memory.

The command's output appears on standard output (its standard error
too, as both go to the VM's console), and its exit status becomes this
script's. Status 125 means the VM itself did not get to run the command,
or stopped on every attempt (one line says why), 124 that --timeout ran
out.

Needs qemu-system-x86_64 (qemu-system-x86), busybox-static and a kernel
in /boot with its modules (linux-image-amd64)."""
import argparse
import collections
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import emulated_host

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QEMU = "qemu-system-x86_64"
INIT = os.path.join(HERE, "svm_host.init")
# The outer VM's modules: virtio PCI and 9p for the shares, the overlay
# over the read-only one, KVM on SVM, tun for thpvm's taps, loop for its
# block-device disks, and the scratch disk's virtio-blk and ext4 (whose
# checksums need crc32c).
MODULES = [("virtio_pci", False), ("9pnet_virtio", False), ("9p", False),
           ("overlay", False), ("kvm_amd", False), ("tun", False),
           ("loop", False), ("virtio_blk", False),
           ("crc32c_generic", False), ("ext4", False)]
SCRATCH_SIZE = 16 << 30
# The init's console lines around the command (svm_host.init).
BEGIN = "svm-host: begin"
END = "svm-host: end"
SETUP_FAILED = "svm-host: failed: "
# Environment not carried into the VM: the shell's own bookkeeping, and
# .ci/run's rehearsal of a machine without /dev/kvm (the VM has one).
ENV_SKIP = {"PWD", "OLDPWD", "SHLVL", "_", "THPVM_CI_EMULATED"}


class Error(Exception):
    pass


mkinitramfs = emulated_host.load_mkinitramfs()


def build_image(out, version):
    """The outer VM's initramfs: static busybox, the modules, /init."""
    busybox = mkinitramfs.package_binary("busybox-static", "busybox")
    img = mkinitramfs.Image()
    for d in ("bin", "dev", "proc", "sys", "lower", "upper", "root",
              "lib/modules"):
        img.add(d, stat.S_IFDIR | 0o755)
    img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
    # The shell reads a background job's stdin from it.
    img.add("dev/null", stat.S_IFCHR | 0o666, (1, 3))
    img.file("init", INIT, 0o755)
    img.file("bin/busybox", busybox, 0o755)
    img.add("bin/sh", stat.S_IFLNK | 0o777, b"busybox")
    mods = mkinitramfs.resolve_modules(version, MODULES)
    for name, host in mods:
        img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                mkinitramfs.read_module(host))
    img.add("lib/modules/load-order", stat.S_IFREG | 0o644,
            "".join(f"{n}.ko\n" for n, _ in mods).encode())
    img.write(out, 0)


def scratch_disk(path, share, where):
    """A sparse file with an empty ext4 filesystem, for --scratch, and
    its mount point in the share, for the init."""
    with open(path, "wb") as f:
        f.truncate(SCRATCH_SIZE)
    subprocess.run(["mkfs.ext4", "-q", "-F", path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(share, "scratch"), "w") as f:
        f.write(where + "\n")


def writable_list(path, dirs):
    """The --writable directories, one per line, in the order of their
    mount tags (w0, w1, ...), for the init."""
    with open(path, "w") as f:
        f.write("".join(d + "\n" for d in dirs))


def command_script(path, cwd, argv):
    """What the VM runs: cd, this environment, exec the command."""
    lines = ["cd " + shlex.quote(cwd) + " || exit 125"]
    for key, value in sorted(os.environ.items()):
        if key in ENV_SKIP or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*",
                                               key):
            continue
        lines.append(f"export {key}={shlex.quote(value)}")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        # The VM's /run is a fresh tmpfs.
        lines.append(f"mkdir -p {shlex.quote(runtime)}")
    lines.append("exec " + " ".join(shlex.quote(a) for a in argv))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def qemu_command(args, image, kernel, share, heartbeat, scratch):
    extra = []
    for i, d in enumerate(args.writable):
        extra += ["-virtfs", f"local,path={d},mount_tag=w{i},"
                             "security_model=none"]
    if scratch:
        # Its flushes need not reach this machine's disk: it is thrown
        # away with the VM.
        extra += ["-drive", f"file={scratch},format=raw,if=virtio,"
                            "cache=unsafe"]
    return emulated_host.host_command(
        QEMU, args, kernel, image,
        f"console=ttyS0 quiet loglevel=3 panic=-1 svm_host.share={share}") + [
        "-serial", f"file:{heartbeat}",
        "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,"
                   "readonly=on,multidevs=remap",
        "-virtfs", f"local,path={share},mount_tag=share,"
                   "security_model=none"] + extra


def relay(lines):
    """Copies the command's console lines (those between the init's
    begin and end lines) to stdout; returns the setup failure the init
    reported, if any, and the last lines, for the error message of a VM
    that did not get that far."""
    seen = collections.deque(maxlen=20)
    inside = False
    failure = None
    for raw in lines:
        line = raw.replace("\r", "").rstrip("\n")
        seen.append(line)
        if not inside:
            if SETUP_FAILED in line:
                failure = line[line.index(SETUP_FAILED) + len(SETUP_FAILED):]
            if BEGIN in line:
                inside = True
            continue
        if line.endswith(END):
            # Output without a final newline shares the line with it.
            inside = False
            line = line[:-len(END)]
            if not line:
                continue
        print(line, flush=True)
    return failure, seen


def run(args):
    if not shutil.which(QEMU):
        raise Error(f"no {QEMU} (apt-get install qemu-system-x86)")
    version = args.kernel or mkinitramfs.default_kernel()
    kernel = f"/boot/vmlinuz-{version}"
    if not os.path.isfile(kernel):
        raise Error(f"no {kernel} (apt-get install linux-image-amd64)")
    with tempfile.TemporaryDirectory(prefix="svm-host-") as tmp:
        share = os.path.join(tmp, "share")
        os.mkdir(share)
        image = os.path.join(tmp, "svm-host.cpio.gz")
        build_image(image, version)
        command_script(os.path.join(share, "command"), os.getcwd(),
                       args.command)
        writable_list(os.path.join(share, "writable"), args.writable)
        scratch = None
        if args.scratch:
            scratch = os.path.join(tmp, "scratch.img")
            scratch_disk(scratch, share, args.scratch)
        deadline = time.monotonic() + args.timeout
        for attempt in range(1, args.attempts + 1):
            heartbeat = os.path.join(tmp, f"heartbeat-{attempt}")
            (failure, seen), qemu_status, killed = \
                emulated_host.run_console(
                    qemu_command(args, image, kernel, share, heartbeat,
                                 scratch),
                    max(1, round(deadline - time.monotonic())), relay,
                    heartbeat, args.silence)
            if killed != "stopped" or attempt == args.attempts:
                break
            # The emulated host, not the command, stopped: the command's
            # output so far stays on stdout, and it runs again.
            print(f"svm_host: the emulated host stopped (no heartbeat for "
                  f"{args.silence} s); the command runs again",
                  file=sys.stderr, flush=True)
        if killed == "stopped":
            raise Error(f"the emulated host stopped in each of "
                        f"{args.attempts} runs (no heartbeat for "
                        f"{args.silence} s)")
        if killed == "timeout":
            print(f"svm_host: timed out after {args.timeout} s",
                  file=sys.stderr)
            return 124
        if failure:
            # The init prints the kernel's last messages before its line.
            dmesg = "\n".join(list(seen)[-7:-1])
            raise Error(f"the VM could not run the command: {failure}\n"
                        f"{dmesg}")
        try:
            with open(os.path.join(share, "status")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            tail = "\n".join(seen)
            raise Error(f"the VM ended (QEMU status {qemu_status}) "
                        f"without the command's status; its last output:\n"
                        f"{tail}") from None


def main():
    ap = argparse.ArgumentParser(
        description="Run a command on an emulated KVM host with AMD-V.")
    emulated_host.host_options(ap, "6G", 1, "; see above")
    ap.add_argument("--kernel", metavar="VERSION",
                    help="its kernel, /boot/vmlinuz-VERSION (default: the "
                         "newest with virtio modules)")
    ap.add_argument("--silence", type=int, default=60, metavar="SECONDS",
                    help="the VM counts as stopped when its heartbeat is "
                         "silent this long (default 60)")
    ap.add_argument("--attempts", type=int, default=2, metavar="N",
                    help="runs in all when the emulated host stops "
                         "(default 2)")
    ap.add_argument("--writable", action="append", default=[],
                    metavar="DIR",
                    help="share this directory read-write, at its own "
                         "path (repeatable)")
    ap.add_argument("--scratch", metavar="DIR",
                    help="a fresh ext4 filesystem at DIR in the VM")
    args = emulated_host.parse_args(ap, "command", "COMMAND")
    if not args.command:
        ap.error("no command")
    if min(args.cpus, args.timeout, args.silence, args.attempts) < 1:
        ap.error("--cpus, --timeout, --silence and --attempts must be >= 1")
    for i, d in enumerate(args.writable):
        if not os.path.isdir(d):
            ap.error(f"--writable {d}: not a directory")
        # QEMU's -virtfs options are comma-separated.
        if "," in d or "\n" in d:
            ap.error(f"--writable {d}: a comma or newline in the path")
        args.writable[i] = os.path.realpath(d)
    if args.scratch is not None and (not os.path.isabs(args.scratch) or
                                     "\n" in args.scratch):
        ap.error(f"--scratch {args.scratch}: not an absolute path")
    try:
        sys.exit(run(args))
    except (Error, mkinitramfs.Error, OSError,
            subprocess.CalledProcessError) as e:
        print(f"svm_host: {e}", file=sys.stderr)
        sys.exit(125)


if __name__ == "__main__":
    main()
