#!/usr/bin/env python3
"""Runs a shell script on a ppc64le KVM host made from this machine:
Debian's ppc64el kernel boots under QEMU's TCG (software emulation) on a
POWER9 pseries machine that offers nested KVM HV (cap-nested-hv=on), and
loads kvm.ko and kvm-hv.ko, which make /dev/kvm real KVM HV on (emulated)
POWER9, as a nested hypervisor; the script runs there in busybox sh, with
the files given carried in the initramfs.

    tests/hosts/ppc64_host.py [--mem SIZE] [--cpus N] [--timeout SECONDS]
        [--sysroot DIR] [--append ARGS] [--file HOSTPATH[:IMAGEPATH]]...
        (--script FILE | [--] SCRIPT...)

The ppc64le twin of tests/hosts/arm64_host.py, for thpvm's ppc64le port: the
options (but --gic), the files carried (--file), the script's place
(/work), its output and the exit statuses (the script's; 125: the VM did
not get to run it; 124: --timeout ran out) are that runner's, and its
code is theirs (emulated_host.ScriptHost). Programs run there must be
static ppc64le ones, as arch/powerpc/cross.ini builds them; the kernel,
modules and busybox come from the sysroot arch/mksysroot.py ppc64el
makes (default ~/.cache/thpvm/sysroot-ppc64el). The console is hvc0. Times
there are an emulator's: for checks, not figures.

Nested KVM HV is radix only: a guest's MMU goes through
KVM_PPC_CONFIGURE_V3_MMU (process_table with PATB_GR), and each vCPU
needs KVM_CAP_PPC_PAPR enabled; XICS is there as an in-kernel device,
XIVE native (KVM_CAP_PPC_IRQ_XIVE) is not. x-vof=on (QEMU's Virtual Open
Firmware instead of SLOF) boots the ELF vmlinux directly, seconds
sooner. Without cap-nested-hv=on kvm-hv refuses KVM_CREATE_VM."""
import emulated_host

# Debian's ppc64el kernel is an ELF vmlinux; KVM (kvm, kvm_hv, with what
# they depend on in modules.dep) and tun are modules. The console is the
# pseries VTY (hvc0) that -serial stdio makes.
HOST = emulated_host.ScriptHost(
    "ppc64_host", "qemu-system-ppc64", "qemu-system-ppc", "ppc64el",
    "boot/vmlinux-*-powerpc64le", ["kvm_hv", "tun"],
    "kvm-hv needs -M pseries,cap-nested-hv=on",
    lambda args: "pseries,cap-nested-hv=on,x-vof=on", "POWER9", "hvc0")


def main():
    ap = HOST.arguments("Run a shell script on an emulated POWER9 KVM HV "
                        "host.", "2G", 2, "xive=off")
    HOST.main(ap)


if __name__ == "__main__":
    main()
