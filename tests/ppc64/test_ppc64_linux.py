#!/usr/bin/env python3
"""thpvm for ppc64le against a real KVM: the cross-built binary runs in
the emulated POWER9 host (tests/hosts/ppc64_host.py, nested KVM HV), where it
boots Debian's ppc64el kernel with a busybox initramfs to user space
(radix MMU, pSeries, power-off); its hwrng reads H_RANDOM;
guest/linux's own initramfs, built for ppc64el, runs hackbench on 2
vCPUs; its guest RAM is counted in the host's
huge pages while the guest has filled it; the control socket works
(list, stat, pause, resume); a second vCPU comes online through RTAS
start-cpu, goes offline and comes back; a virtio-blk disk on the PCI
host bridge is read and written, its requests completing through an
MSI-X vector that RTAS ibm,change-msi gave it; the guest mounts a
virtio-9p share and changes it, as the host then finds; the host pings
the guest through virtio-net on a tap; the balloon inflates and deflates with Debian's
driver and with thpvm's cont_balloon.ko; free page reporting gives
the host back what the guest freed, in whole huge pages; bad boot input is refused
(tests/ppc64/checks.sh). The device tree thpvm wrote is decompiled here
with dtc. Prints TAP, one line per check.

Arguments: THPVM SYSROOT USEMEM, the cross-built binary, arch/mksysroot.py's
ppc64el sysroot (kernel, busybox, hackbench) and the cross-built usemem
for guest/linux's initramfs (kit.cpio.gz)."""
import glob
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "hosts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import emulated_host  # noqa: E402 (found through the paths set above)
from p9_share import make_linux_share  # noqa: E402

CHECKS = 29
# What Linux's pseries code needs of the device tree, as dtc prints it.
DTB_NEEDS = [
    ("a pSeries (CHRP) root", 'device_type = "chrp";'),
    ("RTAS kept out of the guest's memory", "/memreserve/"),
    ("the RTAS entry", "linux,rtas-entry = "),
    ("secondary CPUs through RTAS", "start-cpu = "),
    ("the hypercalls offered", "ibm,hypertas-functions = "),
    ("the XICS presentation controller", 'compatible = "IBM,ppc-xicp";'),
    ("the vty console", 'compatible = "hvterm1";'),
    ("the PCI host bridge", 'compatible = "IBM,Logical_PHB";'),
    ("a virtio PCI function", "vendor-id = <0x1af4>;"),
    ("no IOMMU", "linux,iommu-off;"),
    ("MSIs through RTAS", "ibm,change-msi = "),
    ("each function's MSI-X vectors", "ibm,req#msi-x = "),
    ("the bridge's MSI total", "ibm,pe-total-#msi = "),
    ("H_RANDOM", 'compatible = "ibm,random";'),
]


# The guest's modules (Debian builds virtio as modules), with what they
# depend on, loaded in order by guest_init.sh.
GUEST_MODULES = ["virtio_pci", "virtio_blk", "virtio_net", "virtio_balloon",
                 "pseries_rng"]


def build_cont_balloon(sysroot, tmp):
    """guest/linux/cont_balloon built for ppc64el (Debian's headers in
    the sysroot, this machine's kbuild programs), in a copy under tmp."""
    headers = glob.glob(os.path.join(sysroot,
                                     "usr/src/linux-headers-*-powerpc64le"))
    src = os.path.join(tmp, "cont_balloon")
    shutil.copytree(os.path.join(ROOT, "guest/linux/cont_balloon"), src)
    subprocess.run(["make", "-C", headers[0], f"M={src}", "ARCH=powerpc",
                    "CROSS_COMPILE=powerpc64le-linux-gnu-", "modules"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(src, "cont_balloon.ko")


def initramfs(path, sysroot, version, cont_balloon):
    mk = emulated_host.load_mkinitramfs()
    img = mk.Image()
    for d in ("bin", "dev", "proc", "sys", "lib/modules"):
        img.add(d, stat.S_IFDIR | 0o755)
    img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
    img.file("bin/busybox", os.path.join(sysroot, "bin/busybox"), 0o755)
    img.add("bin/sh", stat.S_IFLNK | 0o777, b"busybox")
    img.file("init", os.path.join(HERE, "guest_init.sh"), 0o755)
    mods = mk.resolve_modules(version, [(m, False) for m in GUEST_MODULES],
                              root=sysroot)
    for name, mod in mods:
        img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                mk.read_module(mod))
    img.file("lib/modules/cont_balloon.ko", cont_balloon, 0o644)
    img.add("lib/modules/load-order", stat.S_IFREG | 0o644,
            "".join(f"{name}.ko\n" for name, _ in mods).encode())
    # What a 9p mount needs besides those (guest/linux/mkinitramfs.py's
    # list for a 9p root), loaded by guest_init.sh for guest.9p= only.
    mods_9p = [m for m in mk.resolve_modules(version, mk.ROOT_9P_MODULES,
                                             root=sysroot)
               if m not in mods]
    for name, mod in mods_9p:
        img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                mk.read_module(mod))
    img.add("lib/modules/9p-order", stat.S_IFREG | 0o644,
            "".join(f"{name}.ko\n" for name, _ in mods_9p).encode())
    img.write(path, 0)


def main():
    thpvm, sysroot, usemem = sys.argv[1:4]
    kernels = glob.glob(os.path.join(sysroot, "boot/vmlinux-*"))
    print(f"1..{CHECKS + len(DTB_NEEDS)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, "initrd")
        version = os.path.basename(kernels[0])[len("vmlinux-"):]
        initramfs(initrd, sysroot, version, build_cont_balloon(sysroot, tmp))
        lshare = os.path.join(tmp, "lshare")
        make_linux_share(lshare)
        kit = os.path.join(tmp, "kit.cpio.gz")
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "guest/linux/mkinitramfs.py"),
                        kit, "--sysroot", sysroot, "--usemem", usemem],
                       check=True, stdout=subprocess.DEVNULL)
        p = subprocess.run(
            [sys.executable,
             os.path.join(ROOT, "tests", "hosts", "ppc64_host.py"),
             "--sysroot", sysroot, "--timeout", "600",
             "--file", thpvm, "--file", f"{kernels[0]}:vmlinux",
             "--file", initrd, "--file", kit, "--file", lshare,
             "--script", os.path.join(HERE, "checks.sh")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace")
    n, tree = 0, emulated_host.DtbCapture()
    for line in p.stdout.splitlines():
        if tree.take(line):
            continue
        if line.startswith("check: "):
            n += 1
            ok, _, name = line[len("check: "):].partition(" ")
            if n > CHECKS:
                # Beyond the plan: meson fails the test, and this says why.
                ok = "fail"
                name = f"beyond the plan of {CHECKS} (CHECKS): {name}"
            print(f"{'ok' if ok == 'ok' else 'not ok'} {n} {name}")
        else:
            print(f"# {line}")
    for i in range(n + 1, CHECKS + 1):
        print(f"not ok {i} (no result: the emulated host ended with "
              f"status {p.returncode})")
    for line in emulated_host.dtb_checks(tree.dtb, DTB_NEEDS, CHECKS + 1):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
