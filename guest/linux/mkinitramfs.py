#!/usr/bin/env python3
"""Builds the initramfs for Linux guests under thpvm (docs/linux-guests.md).

    mkinitramfs.py OUT.cpio.gz [--kernel VERSION] [--usemem PATH]
                   [--cont-balloon PATH.ko] [--sysroot DIR]

A gzip'd newc cpio holding /init (guest/linux/init), the static busybox of
Debian's busybox-static with its applet links, hackbench from rt-tests with
the libraries and loader it needs, usemem (guest/linux/usemem.c, built by
Meson), the virtio modules of kernel VERSION in load order
(/lib/modules/load-order), the 9p modules a 9p root file system needs
and that list lacks (/lib/modules/9p-root-order, which /init loads for
rootfstype=9p only), optionally cont_balloon.ko, and the run scripts
(/run-scripts/). VERSION defaults to the newest /lib/modules/* with virtio
modules (Debian's linux-image-amd64 installs them). The output is the same
for the same inputs: entries sorted, owners root, mtimes fixed
($SOURCE_DATE_EPOCH, default 0).

With --sysroot DIR (made by arch/mksysroot.py), the initramfs is for
that sysroot's architecture: busybox, hackbench and its libraries, the
kernel and its modules come from DIR instead of this machine, and
--usemem names a cross-built usemem. Busybox's applet list comes from
running it under qemu-user (qemu-user-static).
"""
import argparse
import glob
import gzip
import io
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The build directory the README makes, whatever directory this runs from.
BUILD = os.environ.get("BUILD") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build"))

# Wanted modules, in load order; deps come first (modules.dep). Optional
# ones are left out when the kernel has no such module.
MODULES = [
    ("virtio_ring", False), ("virtio", False),
    ("virtio_pci_legacy_dev", True), ("virtio_pci_modern_dev", True),
    ("virtio_pci", False), ("virtio_mmio", True),
    ("virtio_blk", False), ("virtio_net", False),
    ("virtio_balloon", False), ("virtio_rng", False),
    ("virtio_console", False), ("virtio_mem", True),
]
# What a 9p root file system (thpvm run -d DIR) needs besides MODULES;
# optional, as a kernel may have them built in.
ROOT_9P_MODULES = [("9pnet", True), ("9pnet_virtio", True), ("9p", True)]
MODULE_EXT = re.compile(r"\.ko(\.xz|\.gz|\.zst)?$")


class Error(Exception):
    pass


def version_key(v):
    return [int(n) if n.isdigit() else n for n in re.findall(r"\d+|\D+", v)]


def dpkg_files(package):
    """The files of an installed Debian package, or Error saying how to
    install it."""
    hint = f"{package} is not installed (apt-get install {package})"
    if not shutil.which("dpkg"):
        raise Error(hint + "; no dpkg")
    st = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                        capture_output=True, text=True)
    if st.returncode != 0 or st.stdout != "install ok installed":
        raise Error(hint)
    out = subprocess.run(["dpkg", "-L", package], capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()


# ELF e_machine: the qemu-user program that runs such a binary here.
QEMU_USER = {183: "qemu-aarch64-static", 21: "qemu-ppc64le-static"}


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF":
        raise Error(f"{path} is not an ELF file")
    return int.from_bytes(head[18:20], "little")


def package_binary(package, name):
    for f in dpkg_files(package):
        if f.endswith("/" + name) and os.path.isfile(f):
            return f
    raise Error(f"{package} has no {name} (reinstall: apt-get install "
                f"--reinstall {package})")


def shared_libs(binary):
    """(path in the image, host file) for each library and the loader a
    dynamic executable needs, at the paths ldd shows; [] if static."""
    p = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if p.returncode != 0:
        if "not a dynamic executable" in p.stdout + p.stderr:
            return []
        raise Error(f"ldd {binary} failed: {(p.stdout + p.stderr).strip()}")
    libs = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if "not found" in line:
            raise Error(f"{binary}: library missing on the host: {line}")
        m = re.match(r"(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$", line)
        if m:
            libs.append((m.group(1), os.path.realpath(m.group(1))))
    return libs


def sysroot_libs(binary, sysroot):
    """As shared_libs, for a binary of the sysroot's architecture: its
    loader and the libraries its DT_NEEDED entries name, and theirs,
    looked up in the sysroot (readelf reads any arch's ELF)."""
    def readelf(flag, path):
        return subprocess.run(["readelf", flag, "-W", path],
                              capture_output=True, text=True,
                              check=True).stdout

    interp = re.search(r"interpreter: (/\S+)\]", readelf("-l", binary))
    if not interp:
        return []
    libdirs = [os.path.relpath(d, sysroot)
               for pattern in ("lib/*-linux-gnu*", "usr/lib/*-linux-gnu*",
                               "lib", "usr/lib")
               for d in glob.glob(os.path.join(sysroot, pattern))]

    def in_sysroot(path):
        return os.path.realpath(os.path.join(sysroot, path.lstrip("/")))

    def lookup(lib):
        path = next((os.path.join("/", d, lib) for d in libdirs
                     if os.path.isfile(os.path.join(sysroot, d, lib))), None)
        if path is None:
            raise Error(f"{binary}: {lib} is not in {sysroot}")
        return path

    # The loader goes where the binary names it; a sysroot of unpacked
    # packages may lack that link (ppc64el's /lib64/ld64.so.2), and then
    # it is the file of that name in a library directory.
    loader = interp.group(1)
    found = {loader: in_sysroot(loader)}
    if not os.path.isfile(found[loader]):
        found[loader] = in_sysroot(lookup(os.path.basename(loader)))
    todo = [binary]
    while todo:
        for lib in re.findall(r"\(NEEDED\).*\[(.+?)\]",
                              readelf("-d", todo.pop())):
            path = lookup(lib)
            if path not in found:
                found[path] = in_sysroot(path)
                todo.append(found[path])
    return list(found.items())


def default_kernel(root="/"):
    moddir = os.path.join(root, "lib/modules")
    found = [os.path.basename(d) for d in glob.glob(moddir + "/*")
             if os.path.isdir(os.path.join(d, "kernel/drivers/virtio"))]
    if not found:
        raise Error(f"no kernel with virtio modules in {moddir} "
                    "(apt-get install linux-image-amd64)")
    return max(found, key=version_key)


def module_name(path):
    return MODULE_EXT.sub("", os.path.basename(path)).replace("-", "_")


def read_module(path):
    """A module's bytes, uncompressed (busybox insmod loads plain .ko)."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        if not shutil.which("zstd"):
            raise Error(f"{path} is zstd-compressed (apt-get install zstd)")
        return subprocess.run(["zstd", "-dc", path], capture_output=True,
                              check=True).stdout
    return data


def resolve_modules(version, wanted=MODULES, root="/"):
    """[(name, host path)] of the wanted modules ((name, optional) pairs)
    of the kernel under root, with their dependencies, each after what
    it depends on."""
    moddir = os.path.join(root, "lib/modules", version)
    depfile = os.path.join(moddir, "modules.dep")
    if not os.path.isfile(depfile):
        raise Error(f"no {depfile} (is the kernel {version} installed?)")
    deps = {}
    with open(depfile) as f:
        for line in f:
            if ":" not in line:
                continue
            mod, rest = line.split(":", 1)
            deps[module_name(mod)] = (mod, [module_name(d)
                                            for d in rest.split()])
    builtin = set()
    try:
        with open(os.path.join(moddir, "modules.builtin")) as f:
            builtin = {module_name(l.strip()) for l in f if l.strip()}
    except FileNotFoundError:
        pass

    order = []

    def visit(name, chain=()):
        if name in order or name in builtin:
            return
        if name in chain:
            raise Error(f"module dependency loop: {' -> '.join(chain)}")
        if name not in deps:
            raise Error(f"module {name} not in {depfile} (nor built in)")
        # modules.dep lists a module's deps farthest last; load those first.
        for d in reversed(deps[name][1]):
            visit(d, chain + (name,))
        order.append(name)

    for name, optional in wanted:
        if optional and name not in deps:
            continue
        visit(name)
    return [(n, os.path.join(moddir, deps[n][0])) for n in order]


def vermagic(data):
    m = re.search(rb"vermagic=([^\0]*)", data)
    return m.group(1).decode(errors="replace") if m else None


class Image:
    """Entries of a newc cpio: path -> (mode, data)."""

    def __init__(self):
        self.entries = {}

    def add(self, path, mode, data=b""):
        path = path.lstrip("/")
        parent = os.path.dirname(path)
        if parent and parent not in self.entries:
            self.add(parent, stat.S_IFDIR | 0o755)
        if path in self.entries and stat.S_ISDIR(mode) \
                and stat.S_ISDIR(self.entries[path][0]):
            return
        if path in self.entries:
            raise Error(f"/{path} added twice")
        self.entries[path] = (mode, data)

    def file(self, path, host, mode=None):
        with open(host, "rb") as f:
            data = f.read()
        if mode is None:
            mode = 0o755 if os.stat(host).st_mode & 0o111 else 0o644
        self.add(path, stat.S_IFREG | mode, data)

    def write(self, out, mtime, compress=True):
        """A newc cpio, gzip'd unless compress is false (a big image
        boots sooner plain under an emulated CPU)."""
        buf = io.BytesIO()

        def entry(ino, name, mode, data, rdev=(0, 0)):
            name_b = name.encode() + b"\0"
            nlink = 2 if stat.S_ISDIR(mode) else 1
            fields = [ino, mode, 0, 0, nlink, mtime, len(data), 0, 0,
                      rdev[0], rdev[1], len(name_b), 0]
            buf.write(b"070701" + b"".join(b"%08x" % v for v in fields))
            buf.write(name_b)
            buf.write(b"\0" * (-buf.tell() % 4))
            buf.write(data)
            buf.write(b"\0" * (-buf.tell() % 4))

        for ino, path in enumerate(sorted(self.entries), 1):
            mode, data = self.entries[path]
            rdev = (0, 0)
            if stat.S_ISCHR(mode):
                rdev, data = data, b""
            entry(ino, path, mode, data, rdev)
        entry(0, "TRAILER!!!", 0, b"")
        tmp = out + ".tmp"
        with open(tmp, "wb") as f:
            if not compress:
                f.write(buf.getvalue())
            else:
                with gzip.GzipFile(filename="", mode="wb", fileobj=f,
                                   mtime=mtime, compresslevel=9) as gz:
                    gz.write(buf.getvalue())
        os.replace(tmp, out)


def busybox_applets(busybox):
    """Its applets' paths (bin/ls, ...), asking busybox itself, under
    qemu-user when it is another architecture's."""
    cmd = [busybox, "--list-full"]
    machine = elf_machine(busybox)
    if machine != elf_machine(sys.executable):
        if machine not in QEMU_USER or not shutil.which(QEMU_USER[machine]):
            raise Error(f"{busybox} is a foreign binary and there is no "
                        f"qemu-user to list its applets "
                        "(apt-get install qemu-user-static)")
        cmd.insert(0, QEMU_USER[machine])
    return subprocess.run(cmd, capture_output=True, text=True,
                          check=True).stdout.split()


def build(args):
    root = args.sysroot or "/"
    version = args.kernel or default_kernel(root)
    if not os.path.isdir(os.path.join(root, "lib/modules", version)):
        raise Error(f"no {os.path.join(root, 'lib/modules', version)}")
    if args.sysroot:
        busybox = os.path.join(root, "bin/busybox")
        hackbench = os.path.join(root, "usr/bin/hackbench")
        for f in (busybox, hackbench):
            if not os.path.isfile(f):
                raise Error(f"no {f} (arch/mksysroot.py)")
    else:
        busybox = package_binary("busybox-static", "busybox")
        hackbench = package_binary("rt-tests", "hackbench")
    usemem = args.usemem or os.path.join(BUILD, "guest", "linux", "usemem")
    if not os.path.isfile(usemem):
        raise Error(f"no usemem at {usemem} (build it with ninja, or "
                    "pass --usemem PATH)")

    img = Image()
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "lib/modules", "dev",
              "proc", "sys", "tmp", "root", "etc", "run-scripts"):
        img.add(d, stat.S_IFDIR | 0o755)
    img.entries["tmp"] = (stat.S_IFDIR | 0o1777, b"")
    # The kernel opens /dev/console for init before devtmpfs is mounted.
    img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
    img.add("dev/null", stat.S_IFCHR | 0o666, (1, 3))
    img.file("init", os.path.join(HERE, "init"), 0o755)
    for script in sorted(glob.glob(os.path.join(HERE, "run", "*"))):
        img.file("run-scripts/" + os.path.basename(script), script, 0o755)

    img.file("bin/busybox", busybox, 0o755)
    for applet in busybox_applets(busybox):
        if applet in ("linuxrc", "bin/busybox") or "/" not in applet:
            continue
        img.add(applet, stat.S_IFLNK | 0o777, b"/bin/busybox")

    img.file("usr/bin/hackbench", hackbench, 0o755)
    img.file("usr/bin/usemem", usemem, 0o755)
    for binary in (hackbench, usemem):
        libs = (sysroot_libs(binary, root) if args.sysroot else
                shared_libs(binary))
        for path, host in libs:
            if path.lstrip("/") not in img.entries:
                img.file(path, host, 0o755)

    mods = resolve_modules(version, root=root)
    root_9p = [m for m in resolve_modules(version, ROOT_9P_MODULES, root)
               if m not in mods]
    for name, host in mods + root_9p:
        img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                read_module(host))
    for order, listed in (("load-order", mods), ("9p-root-order", root_9p)):
        img.add(f"lib/modules/{order}", stat.S_IFREG | 0o644,
                "".join(f"{n}.ko\n" for n, _ in listed).encode())
    if args.cont_balloon:
        if not os.path.isfile(args.cont_balloon):
            raise Error(f"no {args.cont_balloon}")
        data = read_module(args.cont_balloon)
        magic = vermagic(data)
        if magic is None or magic.split()[0] != version:
            raise Error(f"{args.cont_balloon} was built for kernel "
                        f"{magic.split()[0] if magic else '(no vermagic)'}, "
                        f"the initramfs is for {version}")
        img.add("lib/modules/cont_balloon.ko", stat.S_IFREG | 0o644, data)

    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    img.write(args.out, mtime)
    return version, len(img.entries), [n for n, _ in mods + root_9p]


def main():
    ap = argparse.ArgumentParser(
        description="Build the initramfs for Linux guests under thpvm.")
    ap.add_argument("out", metavar="OUT.cpio.gz")
    ap.add_argument("--kernel", metavar="VERSION",
                    help="kernel whose modules go in (default: the newest "
                         "/lib/modules/* with virtio modules)")
    ap.add_argument("--usemem", metavar="PATH",
                    help="usemem binary (default: $BUILD/guest/linux/usemem, "
                         "BUILD defaulting to the checkout's build/)")
    ap.add_argument("--cont-balloon", metavar="PATH.ko",
                    help="add cont_balloon.ko (thpvm.balloon=cont_balloon)")
    ap.add_argument("--sysroot", metavar="DIR",
                    help="a foreign arch's sysroot (arch/mksysroot.py): "
                         "its busybox, hackbench, kernel and modules")
    args = ap.parse_args()
    try:
        version, n, mods = build(args)
    except (Error, OSError, subprocess.CalledProcessError) as e:
        print(f"mkinitramfs: {e}", file=sys.stderr)
        sys.exit(1)
    # powerpc boots the ELF vmlinux; the others a vmlinuz.
    boot = os.path.join(args.sysroot or "/", "boot")
    kernel = next((k for k in (os.path.join(boot, f"{name}-{version}")
                               for name in ("vmlinuz", "vmlinux"))
                   if os.path.exists(k)),
                  os.path.join(boot, f"vmlinuz-{version}"))
    print(f"mkinitramfs: wrote {args.out} for kernel {version}: {n} entries, "
          f"modules {' '.join(mods)}; boot it with thpvm run -k {kernel} "
          f"-i {args.out}")


if __name__ == "__main__":
    main()
