#!/usr/bin/env python3
"""thpvm for arm64 against a real KVM: the cross-built binary and unit
tests run in the emulated arm64 host (tests/hosts/arm64_host.py), where thpvm
boots Debian's arm64 kernel to user space with 1 and 2 vCPUs, virtio
disks on MMIO and PCI (MSIs through the ITS), power-off and reboot, and
the bundled arm64 test guest, virtio-9p (the test guest's 9P2000.L
client, and Linux mounting a share), and refuses a compressed kernel
that unpacks past guest RAM; then on a host with a GICv2 (no ITS: PCI on
INTx); the device tree it wrote is decompiled here with dtc. The test guest's disks are made with
tests/integration/disk_images.py, its 9p shares as
tests/integration/p9_share.py makes them for test_9p.py. Prints TAP: one
line per check of tests/arm64/checks.sh, then the device tree's.

Environment (tests/arm64/meson.build sets it): THPVM, the cross-built
binary; ARM64_UNIT_TESTS, the unit test binaries, colon-separated;
ARM64_SYSROOT, arch/mksysroot.py's sysroot (kernel, modules,
busybox, hackbench); USEMEM, the cross-built usemem for guest/linux's
initramfs; UDP_ECHO, the cross-built echo server of the test guest's net
checks."""
import glob
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "hosts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import emulated_host  # noqa: E402 (found through the paths set above)
from disk_images import MIB, make_image  # noqa: E402
import p9_share  # noqa: E402

# The guest's modules, in load order (paths under the kernel's
# lib/modules/VERSION/kernel): Debian builds the virtio transports and
# devices as modules.
GUEST_MODULES = [
    "drivers/virtio/virtio_mmio.ko",
    "drivers/virtio/virtio_pci_legacy_dev.ko",
    "drivers/virtio/virtio_pci_modern_dev.ko",
    "drivers/virtio/virtio_pci.ko",
    "drivers/block/virtio_blk.ko",
    "net/core/failover.ko",
    "drivers/net/net_failover.ko",
    "drivers/net/virtio_net.ko",
    "drivers/virtio/virtio_balloon.ko",
]
# How many checks checks.sh makes besides the unit tests, on a GICv3 host
# and on a GICv2 one: the TAP plan is known before the hosts start.
GICV3_HOST_CHECKS = 51
GICV2_HOST_CHECKS = 8
# What Linux needs of the device tree, as dtc prints it.
DTB_NEEDS = [
    ('GICv3', 'compatible = "arm,gic-v3";'),
    ('ITS', 'compatible = "arm,gic-v3-its";'),
    ('PSCI', 'compatible = "arm,psci-0.2";'),
    ('CPUs enabled through PSCI', 'enable-method = "psci";'),
    ('architected timer', 'compatible = "arm,armv8-timer";'),
    ('console UART', 'compatible = "ns16550a";'),
    ('stdout-path', 'stdout-path = "/uart@9000000";'),
    ('RAM at 1 GiB', 'memory@40000000 {'),
    ('virtio-mmio device', 'compatible = "virtio,mmio";'),
    ('PCI host bridge', 'compatible = "pci-host-ecam-generic";'),
    ('PCI MSIs through the ITS', 'msi-map = '),
    ('initrd', 'linux,initrd-start = '),
]


def guest_image(out, sysroot):
    """The guest's initramfs: busybox, the virtio modules, the 9p ones
    (what guest/linux/mkinitramfs.py adds for a 9p root, in its order,
    loaded by /init only for guest.9p=), /init."""
    mk = emulated_host.load_mkinitramfs()
    moddirs = glob.glob(os.path.join(sysroot, "lib/modules/*/kernel"))
    if len(moddirs) != 1:
        raise OSError(f"{len(moddirs)} kernels' modules in {sysroot}")
    version = os.path.basename(os.path.dirname(moddirs[0]))
    listed = {os.path.basename(m)[:-len(".ko")] for m in GUEST_MODULES}
    mods_9p = [m for m in mk.resolve_modules(version, mk.ROOT_9P_MODULES,
                                             sysroot)
               if m[0] not in listed]
    img = mk.Image()
    for d in ("bin", "dev", "proc", "sys", "mnt", "lib/modules"):
        img.add(d, stat.S_IFDIR | 0o755)
    img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
    img.file("init", os.path.join(HERE, "guest.init"), 0o755)
    img.file("bin/busybox", os.path.join(sysroot, "bin/busybox"), 0o755)
    img.add("bin/sh", stat.S_IFLNK | 0o777, b"busybox")
    for mod in GUEST_MODULES:
        img.file("lib/modules/" + os.path.basename(mod),
                 os.path.join(moddirs[0], mod), 0o644)
    img.add("lib/modules/load-order", stat.S_IFREG | 0o644,
            "".join(os.path.basename(m) + "\n"
                    for m in GUEST_MODULES).encode())
    for name, path in mods_9p:
        img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                mk.read_module(path))
    img.add("lib/modules/9p-order", stat.S_IFREG | 0o644,
            "".join(f"{name}.ko\n" for name, _ in mods_9p).encode())
    img.write(out, 0)


def p9_files(tmp):
    """What checks.sh's 9p checks need, under tmp: p9/, the test guest's
    shares (share, and ro, served read-only) as p9_share.make_share
    makes them, their links out pointing where the emulated host has
    them (/work/p9), as the hostile requests would need them;
    p9-after.sha256, the files the checks leave in the share and the
    sentinel beside it, for sha256sum -c in p9/; p9-after.txt, what
    else they leave ("link PATH TARGET", "gone PATH", below the share);
    p9-lines.txt, one extended regular expression for each line the
    guest must print; and lshare/, the share Linux mounts. Returns
    their paths."""
    parent = os.path.join(tmp, "p9")
    os.mkdir(parent)
    for name in ("share", "ro"):
        p9_share.make_share(parent, name, parent_there="/work/p9")
    after = {f"share/{path}": data
             for path, data in p9_share.contents_after().items()}
    after["sentinel.txt"] = p9_share.SENTINEL_TEXT
    sums = os.path.join(tmp, "p9-after.sha256")
    with open(sums, "w") as f:
        for path, data in sorted(after.items()):
            f.write(f"{hashlib.sha256(data).hexdigest()}  {path}\n")
    rest = os.path.join(tmp, "p9-after.txt")
    with open(rest, "w") as f:
        f.write("link %s %s\n" % p9_share.LINK_AFTER)
        f.writelines(f"gone {path}\n" for path in p9_share.GONE_AFTER)
    # Every check a "tg: ok" line (a check left out fails as surely as
    # one that failed), and each change to the read-only share refused
    # with EROFS (30), as test_9p.py has them.
    lines = [f"^tg: ok {c} "
             for c in p9_share.SHARE_CHECKS + p9_share.RO_CHECKS]
    lines += [f"^tg: ok {c} dev=[0-9]+ ecode=30([^0-9]|$)"
              for c in p9_share.RO_CHECKS[2:]]
    expect = os.path.join(tmp, "p9-lines.txt")
    with open(expect, "w") as f:
        f.writelines(line + "\n" for line in lines)
    lshare = os.path.join(tmp, "lshare")
    p9_share.make_linux_share(lshare)
    return [parent, sums, rest, expect, lshare]


def disk(path, head, size):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


def bomb(path, mib):
    """A gzip file of mib MiB of zeros (a few hundred KiB)."""
    gz = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(gz.compress(chunk))
        f.write(gz.flush())


def run_host(gic, tmp, files, sysroot, expected):
    """Runs checks.sh in an emulated host with a GICv<gic>; returns its
    checks as TAP result words ("ok NAME", "not ok NAME: WHY", always
    expected of them) and the device tree it printed, if any."""
    script = os.path.join(tmp, f"checks-gicv{gic}.sh")
    with open(script, "w") as out, open(os.path.join(HERE, "checks.sh")) as f:
        out.write(f"GIC={gic}\n" + f.read())
    cmd = [sys.executable, os.path.join(ROOT, "tests/hosts/arm64_host.py"),
           "--sysroot", sysroot, "--gic", str(gic), "--timeout", "1500",
           "--script", script]
    for f in files:
        cmd += ["--file", f]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    results, tree = [], emulated_host.DtbCapture()
    for line in proc.stdout.splitlines():
        if tree.take(line):
            continue
        if line.startswith("check: "):
            results.append(line[len("check: "):])
    if len(results) > expected:
        # The plan is fixed: the last one says what went beyond it.
        results[expected - 1:] = [
            f"not ok checks beyond the plan: the GICv{gic} host ran "
            f"{len(results)}, not {expected} (GICV{gic}_HOST_CHECKS)"]
    if len(results) < expected:
        print(f"# the GICv{gic} host ran {len(results)} checks, not "
              f"{expected} (status {proc.returncode}); its last lines:")
        for line in (proc.stdout + proc.stderr).splitlines()[-15:]:
            print("# " + line)
        results += ["not ok not run"] * (expected - len(results))
    return results, tree.dtb


def main():
    thpvm = os.environ["THPVM"]
    units = [u for u in os.environ["ARM64_UNIT_TESTS"].split(":") if u]
    sysroot = os.environ["ARM64_SYSROOT"]
    gicv3_checks = len(units) + GICV3_HOST_CHECKS
    print(f"1..{gicv3_checks + GICV2_HOST_CHECKS + len(DTB_NEEDS)}",
          flush=True)
    if not shutil.which("dtc"):
        print("# dtc is missing (apt-get install device-tree-compiler)")
    with tempfile.TemporaryDirectory(prefix="arm64-test-") as tmp:
        os.mkdir(os.path.join(tmp, "unit"))
        for u in units:
            shutil.copy(u, os.path.join(tmp, "unit"))
        guest_image(os.path.join(tmp, "guest.cpio"), sysroot)
        kit = os.path.join(tmp, "kit.cpio.gz")
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "guest/linux/mkinitramfs.py"),
                        kit, "--sysroot", sysroot,
                        "--usemem", os.environ["USEMEM"]],
                       check=True, stdout=subprocess.DEVNULL)
        disk(os.path.join(tmp, "mmio.img"), b"MMIO-DISK-012345", 1 << 20)
        disk(os.path.join(tmp, "pci.img"), b"PCI-DISK-0123456", 2 << 20)
        kernel = glob.glob(os.path.join(sysroot, "boot/vmlinuz-*"))
        # The test guest's disks: pattern A, writable and read-only.
        make_image(os.path.join(tmp, "tg0.img"), 4 * MIB)
        make_image(os.path.join(tmp, "tg1.img"), 2 * MIB)
        bomb(os.path.join(tmp, "bomb.gz"), 300)
        files = [thpvm, os.environ["UDP_ECHO"],
                 os.path.join(tmp, "guest.cpio"), kit,
                 os.path.join(tmp, "mmio.img"),
                 os.path.join(tmp, "pci.img"),
                 os.path.join(tmp, "tg0.img"), os.path.join(tmp, "tg1.img"),
                 os.path.join(tmp, "bomb.gz")]
        files += [kernel[0] + ":vmlinuz"] if len(kernel) == 1 else []
        results, dtb = run_host(3, tmp, files + [os.path.join(tmp, "unit")]
                                + p9_files(tmp), sysroot, gicv3_checks)
        more, _ = run_host(2, tmp, files, sysroot, GICV2_HOST_CHECKS)
    for n, result in enumerate(results + more, 1):
        if result.startswith("ok "):
            print(f"ok {n} - {result[3:]}")
        else:
            print(f"not ok {n} - {result[len('not ok '):]}")
    for line in emulated_host.dtb_checks(dtb, DTB_NEEDS,
                                         len(results) + len(more) + 1):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
