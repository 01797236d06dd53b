#!/usr/bin/env python3
"""Runs a shell script on an arm64 KVM host made from this machine:
Debian's arm64 kernel boots under QEMU's TCG (software emulation) on a
virt board with EL2 (virtualization=on), where its built-in KVM makes
/dev/kvm real KVM on (emulated) arm64; the script runs there in busybox
sh, with the files given carried in the initramfs.

    tests/hosts/arm64_host.py [--mem SIZE] [--cpus N] [--timeout SECONDS]
                        [--sysroot DIR] [--gic 2|3] [--append ARGS]
                        [--file HOSTPATH[:IMAGEPATH]]...
                        (--script FILE | [--] SCRIPT...)

Why: the project's own machines are x86 (docs/linux-guests.md); thpvm's
arm64 code needs an arm64 KVM to run against. Programs run there must be
arm64 and static (the image holds busybox and nothing else), as a cross
build with arch/arm64/cross.ini makes them. Everything runs emulated, so
timings say nothing about hardware; use it for checks, not figures.

The kernel and busybox come from the sysroot arch/mksysroot.py arm64
makes (default ~/.cache/thpvm/sysroot-arm64). Each --file is copied into
the image at IMAGEPATH, default /work/BASENAME; a relative IMAGEPATH is under
/work, one ending in / gets BASENAME appended; a directory is copied
whole. The script runs in /work with PATH /bin:/usr/bin:/work; SCRIPT's
words are joined with spaces, as sh -c would take them. tun is loaded
(a module there), so thpvm's taps work.

The script's output appears on standard output (its standard error too,
as both go to the VM's console), and its exit status becomes this
script's. Status 125 means the VM itself did not get to run the script
(one line says why), 124 that --timeout ran out."""
import emulated_host

# Debian 12's arm64 vmlinuz is a plain Image (with an EFI stub); QEMU
# boots it as it is, and would take a gzip'd one too. KVM is built in:
# the VM loads only tun (a module, no dependencies).
HOST = emulated_host.ScriptHost(
    "arm64_host", "qemu-system-aarch64", "qemu-system-arm", "arm64",
    "boot/vmlinuz-*-arm64", ["tun"],
    "the kernel needs EL2: -M virt,virtualization=on",
    lambda args: f"virt,virtualization=on,gic-version={args.gic}",
    "max,pauth-impdef=on", "ttyAMA0")


def main():
    ap = HOST.arguments("Run a shell script on an emulated arm64 KVM host.",
                        "1G", 2, "kvm-arm.mode=nvhe")
    ap.add_argument("--gic", type=int, choices=(2, 3), default=3,
                    help="the host's interrupt controller, GICv3 "
                         "(default) or GICv2")
    HOST.main(ap)


if __name__ == "__main__":
    main()
