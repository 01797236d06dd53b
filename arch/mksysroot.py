#!/usr/bin/env python3
"""Makes a sysroot of Debian 12 packages for a foreign architecture, for
cross-building thpvm statically and for the emulated hosts that run it.

    arch/mksysroot.py ARCH [--dest DIR] [--cache DIR]

ARCH is a Debian architecture in ARCHES (arm64, ppc64el). DIR defaults to
~/.cache/thpvm/sysroot-ARCH (under $XDG_CACHE_HOME where that is set):
generated, so out of the source tree, and shared by every checkout and
build. The libraries' static archives and headers
(libfdt, zlib, liblzma, libzstd, liblz4, libseccomp, liburing, jansson),
static busybox, hackbench (rt-tests, with the shared libraries it runs
on) and Debian's kernel for ARCH with its headers are downloaded with
`apt-get download` into the cache
(default ~/.cache/thpvm/debs; kept, so a second run downloads nothing)
and unpacked with `dpkg-deb -x` into DIR, which also gets paths.ini, the
machine-specific half of the Meson cross file:

    meson setup build-arm64 --cross-file arch/arm64/cross.ini \\
        --cross-file ~/.cache/thpvm/sysroot-arm64/paths.ini
    meson setup build-ppc64 --cross-file arch/powerpc/cross.ini \\
        --cross-file ~/.cache/thpvm/sysroot-ppc64el/paths.ini

Why not multiarch (`apt-get install libfdt-dev:arm64`): Debian 12's
libfdt-dev is not Multi-Arch and installing the others wanted to upgrade
host packages; a sysroot touches nothing on the host but apt's package
lists. The compiler and C library come from
the host's cross toolchain (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross;
gcc-powerpc64le-linux-gnu, libc6-dev-ppc64el-cross),
which also brings the kernel's UAPI headers (linux/kvm.h, asm/kvm.h)
matched to that C library (6.1.4 in Debian 12), so linux-libc-dev is
not unpacked here: two copies of the UAPI headers on one include path
would mix versions. (Its 6.1.192 linux/kvm.h differs from 6.1.4's only
in spelling flexible arrays __DECLARE_FLEX_ARRAY; asm/kvm.h is the same.)
Debian's libzstd.pc says libdir=/usr/lib; here it is pointed at the
multiarch directory, where the library is (fix_pc_files). The kernel
headers build out-of-tree modules for ARCH (guest/linux/cont_balloon)
with the host's own kbuild programs (linux-kbuild-6.1, which
linux-headers-amd64 brings; fixdep and modpost read any arch's objects):
fix_kernel_headers points the headers at this sysroot and at them.

A stamp file (DIR/.stamp) lists the packages and versions unpacked; when
it matches apt's candidates the run only checks and prints where things
are. When they differ (apt-get update brought new versions) DIR is made
again from scratch. Needs root for `dpkg --add-architecture` and
`apt-get update`, which run only when ARCH is not yet a foreign
architecture of dpkg.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Packages every arch gets, besides its kernel and its headers: the
# libraries thpvm links, and what Linux guests run (busybox; hackbench,
# a dynamic program, with its libraries).
COMMON = ["libfdt-dev", "libfdt1", "zlib1g-dev", "zlib1g", "liblzma-dev",
          "liblzma5", "libzstd-dev", "libzstd1", "liblz4-dev", "liblz4-1",
          "libseccomp-dev", "libseccomp2", "liburing-dev", "liburing2",
          "libjansson-dev", "libjansson4", "busybox-static", "rt-tests",
          "libc6"]
STATIC_LIBS = ["libfdt.a", "libz.a", "liblzma.a", "libzstd.a", "liblz4.a",
               "libseccomp.a", "liburing.a", "libjansson.a"]

# Per arch: the GNU triplet (Debian's multiarch library directory, the
# cross tools' prefix), the metapackage that depends on the current
# kernel, the kernel flavour (linux-image-ABI-FLAVOUR) and the kernel
# image's glob in that kernel's package, and its Meson cross file (in
# thpvm's folder for the arch, named as the kernel names it: powerpc for
# Debian's ppc64el).
ARCHES = {
    "arm64": {"triplet": "aarch64-linux-gnu",
              "kernel_meta": "linux-image-arm64",
              "flavour": "arm64",
              "kernel_glob": "boot/vmlinuz-*-arm64",
              "cross_file": "arm64/cross.ini"},
    # Debian's ppc64el kernel is an ELF vmlinux (no vmlinuz), which
    # qemu-system-ppc64 -kernel loads as it is (tests/hosts/ppc64_host.py).
    "ppc64el": {"triplet": "powerpc64le-linux-gnu",
                "kernel_meta": "linux-image-powerpc64le",
                "flavour": "powerpc64le",
                "kernel_glob": "boot/vmlinux-*-powerpc64le",
                "cross_file": "powerpc/cross.ini"},
}
STAMP = ".stamp"
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME",
                                    os.path.expanduser("~/.cache")), "thpvm")


def default_dest(arch):
    """Where ARCH's sysroot is made unless --dest says otherwise; the
    emulated hosts and benchmarks look there too."""
    return os.path.join(CACHE, f"sysroot-{arch}")


class Error(Exception):
    pass


def say(msg):
    print(f"mksysroot: {msg}", flush=True)


def run(argv, **kw):
    return subprocess.run(argv, check=True, text=True, **kw)


def output(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise Error(f"{' '.join(argv)} failed: {p.stderr.strip()}")
    return p.stdout


def apt_show(names):
    """{NAME:ARCH: fields} of apt's candidate of each name (NAME:ARCH, or
    NAME for an Architecture: all package, found as NAME:all)."""
    p = subprocess.run(["apt-cache", "show", "--no-all-versions"] + names,
                       capture_output=True, text=True)
    found = {}
    for stanza in p.stdout.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line[:1] not in ("", " ") and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        if "Package" in fields:
            found[f"{fields['Package']}:{fields['Architecture']}"] = fields
    return found


def ensure_arch(arch):
    """dpkg knows ARCH as a foreign architecture; apt-get update if not."""
    foreign = output(["dpkg", "--print-foreign-architectures"]).split()
    if arch not in foreign:
        say(f"running dpkg --add-architecture {arch}")
        run(["dpkg", "--add-architecture", arch])
        say("running apt-get update")
        # One index a mirror is still syncing fails the whole update, but
        # the others are read: the packages' own lookups say what is
        # missing, if anything is.
        if subprocess.run(["apt-get", "update"]).returncode != 0:
            say("apt-get update failed for some index; going on with the "
                "package lists there are")


def current_kernel(arch, spec):
    """(package, version) of the kernel ARCH's kernel metapackage
    depends on now."""
    meta = f"{spec['kernel_meta']}:{arch}"
    shown = apt_show([meta])
    if meta not in shown:
        raise Error(f"apt knows no {meta} (apt-get update?)")
    for dep in shown[meta].get("Depends", "").split(","):
        dep = dep.split("|")[0].strip()
        if dep.startswith("linux-image-") and "(=" in dep:
            name, version = dep.split("(=")
            return name.strip().split(":")[0], version.strip(" )")
    raise Error(f"{meta} depends on no linux-image-* (= VERSION)")


def wanted(arch, spec):
    """[(NAME:ARCH, version)] of the packages to unpack (NAME:all for
    the kernel headers' arch-independent half): COMMON, and the kernel
    ARCH's metapackage depends on now with its headers, at its version.
    Two apt-cache runs (about a second each: this apt keeps no
    pkgcache.bin), so an up-to-date sysroot is checked quickly."""
    image, version = current_kernel(arch, spec)
    abi = image[len("linux-image-"):]               # 6.1.0-57-arm64
    base = abi[:-len("-" + spec["flavour"])]        # 6.1.0-57
    names = [f"{n}:{arch}" for n in COMMON + [f"linux-headers-{abi}"]]
    common = f"linux-headers-{base}-common"
    shown = apt_show(names + [common])
    names.append(common + ":all")
    missing = [n for n in names if n not in shown]
    if missing:
        raise Error(f"apt has no candidate for {' '.join(missing)}")
    return ([(n, shown[n]["Version"]) for n in names] +
            [(f"{image}:{arch}", version)])


def deb_name(pkg, version, arch):
    # apt-get download's file name: an epoch's ":" becomes "%3a".
    return f"{pkg}_{version.replace(':', '%3a')}_{arch}.deb"


def download(pkgs, cache, arch):
    os.makedirs(cache, exist_ok=True)
    debs, fetch = [], []
    for name, version in pkgs:
        pkg, pkg_arch = name.split(":")
        deb = os.path.join(cache, deb_name(pkg, version, pkg_arch))
        debs.append(deb)
        if not os.path.isfile(deb):
            # apt names an Architecture: all package without one.
            fetch.append(f"{pkg if pkg_arch == 'all' else name}={version}")
    if fetch:
        say(f"downloading {len(fetch)} packages into {cache}")
        # The sandbox user _apt may not write to the cache; we are root.
        run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root"]
            + fetch, cwd=cache, stdout=subprocess.DEVNULL)
    for deb in debs:
        if not os.path.isfile(deb):
            raise Error(f"apt-get download left no {deb}")
    return debs


def paths_ini(dest, spec):
    """DIR/paths.ini: the constants arch/<arch>/cross.ini refers to. Meson
    1.0.1 reads all cross files into one configuration before evaluating
    it, so constants given here are seen there; it has no @DIRNAME@."""
    return ("# Written by arch/mksysroot.py: where this sysroot is. Use "
            "after arch/<arch>/cross.ini:\n"
            f"#   meson setup BUILD --cross-file arch/<arch>/cross.ini "
            f"--cross-file {dest}/paths.ini\n"
            "[constants]\n"
            f"sysroot = '{dest}'\n"
            f"libdir = '{dest}/usr/lib/{spec['triplet']}'\n")


def fix_pc_files(dest, spec):
    """Points each .pc file whose libdir is plain ${...}/lib at the
    multiarch directory it sits in: Debian 12's libzstd.pc says
    libdir=${exec_prefix}/lib, which on the host works only because the
    linker searches the multiarch directory anyway."""
    pcdir = os.path.join(dest, "usr/lib", spec["triplet"], "pkgconfig")
    for pc in sorted(glob.glob(os.path.join(pcdir, "*.pc"))):
        with open(pc) as f:
            lines = f.read().split("\n")
        fixed = [l + "/" + spec["triplet"]
                 if l.startswith("libdir=") and l.endswith("}/lib") else l
                 for l in lines]
        if fixed != lines:
            say(f"{os.path.basename(pc)}: libdir set to "
                f"lib/{spec['triplet']}")
            with open(pc, "w") as f:
                f.write("\n".join(fixed))


def fix_kernel_headers(dest, spec):
    """The kernel headers, made usable from the sysroot: the flavour's
    Makefile includes the common half by its absolute /usr/src path, and
    both reach kbuild's programs through ../../lib/linux-kbuild-X.Y,
    which here becomes a link to the host's own (the same programs build
    modules for any arch). Returns the headers' directory."""
    trees = glob.glob(os.path.join(dest, "usr/src/linux-headers-*-" +
                                   spec["flavour"]))
    if len(trees) != 1:
        raise Error(f"{len(trees)} kernel header trees in {dest}/usr/src")
    makefile = os.path.join(trees[0], "Makefile")
    with open(makefile) as f:
        text = f.read()
    fixed = text.replace("include /usr/src/",
                         f"include {dest}/usr/src/")
    if fixed != text:
        with open(makefile, "w") as f:
            f.write(fixed)
    target = os.readlink(os.path.join(trees[0], "scripts"))
    kbuild = os.path.basename(os.path.dirname(target))  # linux-kbuild-6.1
    link = os.path.join(dest, "usr/lib", kbuild)
    host = os.path.join("/usr/lib", kbuild)
    if not os.path.isdir(host):
        raise Error(f"no {host}: the kernel headers need the host's "
                    f"{kbuild} (apt-get install {kbuild})")
    if not os.path.islink(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(host, link)
    return trees[0]


def check(dest, spec):
    """Where the kernel and busybox are, after checking the static
    libraries are all there."""
    libdir = os.path.join(dest, "usr/lib", spec["triplet"])
    missing = [a for a in STATIC_LIBS
               if not os.path.isfile(os.path.join(libdir, a))]
    if missing:
        raise Error(f"no {' '.join(missing)} in {libdir}")
    kernels = sorted(glob.glob(os.path.join(dest, spec["kernel_glob"])))
    if len(kernels) != 1:
        raise Error(f"{len(kernels)} kernels match {spec['kernel_glob']} "
                    f"in {dest}")
    busybox = os.path.join(dest, "bin/busybox")
    if not os.path.isfile(busybox):
        raise Error(f"no {busybox}")
    return kernels[0], busybox


def make(args):
    arch = args.arch
    spec = ARCHES[arch]
    dest = os.path.abspath(args.dest or default_dest(arch))
    ensure_arch(arch)
    pkgs = wanted(arch, spec)
    stamp = "".join(f"{n} {v}\n" for n, v in pkgs)
    stamp_path = os.path.join(dest, STAMP)
    try:
        with open(stamp_path) as f:
            current = f.read() == stamp
    except FileNotFoundError:
        current = False
    if current:
        say(f"{dest} is up to date")
    else:
        debs = download(pkgs, args.cache, arch)
        if os.path.isdir(dest) and os.listdir(dest):
            if not os.path.isfile(stamp_path):
                raise Error(f"{dest} is not empty and is no sysroot made "
                            "here (no .stamp); not touching it")
            say(f"removing the old {dest}")
            shutil.rmtree(dest)
        os.makedirs(dest, exist_ok=True)
        for deb in debs:
            run(["dpkg-deb", "-x", deb, dest])
        fix_pc_files(dest, spec)
        fix_kernel_headers(dest, spec)
        # The package leaves modules.dep to its postinst; depmod reads
        # any arch's modules (mkinitramfs.resolve_modules needs it).
        for moddir in glob.glob(os.path.join(dest, "lib/modules/*")):
            run(["depmod", "-b", dest, os.path.basename(moddir)])
        with open(stamp_path + ".tmp", "w") as f:
            f.write(stamp)
        os.replace(stamp_path + ".tmp", stamp_path)
        say(f"unpacked {len(debs)} packages into {dest}")
    # Written each time: the sysroot may have been moved or copied.
    paths = os.path.join(dest, "paths.ini")
    try:
        with open(paths) as f:
            stale = f.read() != paths_ini(dest, spec)
    except FileNotFoundError:
        stale = True
    if stale:
        with open(paths, "w") as f:
            f.write(paths_ini(dest, spec))
    kernel, busybox = check(dest, spec)
    say(f"kernel {kernel}")
    say(f"kernel headers {fix_kernel_headers(dest, spec)}")
    say(f"busybox {busybox}")
    ini = os.path.relpath(os.path.join(ROOT, "arch", spec["cross_file"]))
    say(f"meson: --cross-file {ini} --cross-file {paths}")


def main():
    ap = argparse.ArgumentParser(
        description="Make a sysroot of Debian packages for cross-building.")
    ap.add_argument("arch", choices=sorted(ARCHES), metavar="ARCH",
                    help="Debian architecture: " + ", ".join(sorted(ARCHES)))
    ap.add_argument("--dest", metavar="DIR",
                    help="the sysroot (default ~/.cache/thpvm/sysroot-ARCH)")
    ap.add_argument("--cache", metavar="DIR",
                    default=os.path.join(CACHE, "debs"),
                    help="where downloaded .debs are kept "
                         "(default ~/.cache/thpvm/debs)")
    args = ap.parse_args()
    try:
        make(args)
    except (Error, OSError, subprocess.CalledProcessError) as e:
        print(f"mksysroot: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
