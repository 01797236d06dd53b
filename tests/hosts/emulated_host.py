"""What the emulated hosts of tests/hosts/ (svm_host.py, arm64_host.py,
ppc64_host.py) share: an emulated host (QEMU) whose serial console is
the only way out, run with a time limit, and guest/linux/mkinitramfs.py,
whose cpio writer builds its initramfs. The second half is the script runner of the arm64
and ppc64 hosts: their initramfs (static busybox, modules,
emulated_host.init, the script and the files carried), the console lines
around the script, and their command line."""
import argparse
import collections
import glob
import base64
import importlib.util
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INIT = os.path.join(HERE, "emulated_host.init")


def load_script(rel):
    """A script of the tree (its path from the top) as a module."""
    name = os.path.splitext(os.path.basename(rel))[0]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(ROOT, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_mkinitramfs():
    """guest/linux/mkinitramfs.py as a module."""
    return load_script("guest/linux/mkinitramfs.py")


def host_command(qemu, args, kernel, image, append, machine=None,
                 cpu="max"):
    """An emulated host's QEMU command line: TCG on all host CPUs
    (args.cpus, args.mem), no default devices, the console on stdio, the
    kernel and initramfs given; callers add their devices after it."""
    return ([qemu] + (["-M", machine] if machine else []) +
            ["-cpu", cpu, "-accel", "tcg,thread=multi",
             "-smp", str(args.cpus), "-m", args.mem,
             "-nodefaults", "-no-user-config", "-display", "none",
             "-serial", "stdio", "-no-reboot",
             "-kernel", kernel, "-initrd", image, "-append", append])


def run_console(cmd, timeout, relay, heartbeat=None, silence=60):
    """Runs cmd, a QEMU whose console is its standard output, and hands
    relay() the console's lines. QEMU is killed after timeout seconds,
    or, given heartbeat (a file the VM appends to every few seconds once
    its command runs), when that file has not grown for silence seconds:
    an emulated host that stopped scheduling its own processes (seen
    with nested KVM under TCG) never ends by itself.
    Lines end at "\\n" only: a nested guest's console lines arrive as
    "\\r\\r\\n", which universal newlines would make two. Returns what
    relay returned, QEMU's exit status, and why QEMU was killed: None
    (it ended by itself), "timeout" or "stopped" (the heartbeat's
    silence)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    lines = io.TextIOWrapper(proc.stdout, errors="replace", newline="\n")
    done = threading.Event()
    killed = []

    def watch():
        start = last_beat = time.monotonic()
        size = 0
        while not done.wait(1):
            now = time.monotonic()
            if now - start >= timeout:
                killed.append("timeout")
                break
            if heartbeat is None:
                continue
            try:
                grown = os.path.getsize(heartbeat)
            except FileNotFoundError:
                grown = 0
            if grown != size:
                size, last_beat = grown, now
            elif size and now - last_beat >= silence:
                killed.append("stopped")
                break
        proc.kill()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = relay(lines)
        proc.wait()
    finally:
        done.set()
        watcher.join()
        proc.wait()
    return result, proc.returncode, (killed[0] if killed else None)


class Error(Exception):
    pass


mkinitramfs = load_mkinitramfs()
mksysroot = load_script("arch/mksysroot.py")


class ScriptHost:
    """An emulated KVM host that runs one shell script (arm64_host.py,
    ppc64_host.py): name, the console lines' prefix ("arm64-host") and
    the runner's in messages ("arm64_host"); qemu, the emulator and its
    Debian package; debian_arch, the sysroot's (arch/mksysroot.py
    ARCH); kernel_glob, the kernel image under the sysroot; modules,
    the modules the VM loads (names, with their dependencies from the
    sysroot's modules.dep); no_kvm, what a missing /dev/kvm likely
    means; machine(args), QEMU's -M; cpu, its -cpu; console, the
    kernel's console device."""

    def __init__(self, name, qemu, package, debian_arch, kernel_glob,
                 modules, no_kvm, machine, cpu, console):
        self.tag = name.replace("_", "-")
        self.name = name
        self.qemu, self.package = qemu, package
        self.debian_arch = debian_arch
        self.kernel_glob = kernel_glob
        self.modules, self.no_kvm = modules, no_kvm
        self.machine, self.cpu, self.console = machine, cpu, console
        self.begin = f"{self.tag}: begin"
        self.end = f"{self.tag}: end"
        self.status = f"{self.tag}: status "
        self.setup_failed = f"{self.tag}: failed: "

    def command(self, args, kernel, image):
        """QEMU's command line, the kernel quiet but for the script's
        output."""
        return host_command(self.qemu, args, kernel, image,
                            f"console={self.console} quiet loglevel=3 "
                            "panic=-1 " + args.append,
                            machine=self.machine(args), cpu=self.cpu)

    def find_kernel(self, sysroot):
        """(kernel image, its version) in the sysroot."""
        found = sorted(glob.glob(os.path.join(sysroot, self.kernel_glob)))
        if len(found) != 1:
            raise Error(f"{len(found)} kernels in {sysroot}/boot (make the "
                        "sysroot with arch/mksysroot.py "
                        f"{self.debian_arch})")
        return found[0], os.path.basename(found[0]).split("-", 1)[1]

    def build_image(self, out, sysroot, version, script, files):
        """The VM's initramfs, uncompressed: static busybox, the
        modules, /init, /host.conf, /command and the carried files."""
        busybox = os.path.join(sysroot, "bin/busybox")
        if not os.path.isfile(busybox):
            raise Error(f"no {busybox} (arch/mksysroot.py "
                        f"{self.debian_arch})")
        img = mkinitramfs.Image()
        for d in ("bin", "dev", "proc", "sys", "tmp", "work", "lib/modules"):
            img.add(d, stat.S_IFDIR | 0o755)
        img.entries["tmp"] = (stat.S_IFDIR | 0o1777, b"")
        # The kernel opens /dev/console for init before devtmpfs is
        # mounted.
        img.add("dev/console", stat.S_IFCHR | 0o600, (5, 1))
        img.file("init", INIT, 0o755)
        img.add("host.conf", stat.S_IFREG | 0o644,
                f"TAG={self.tag}\nNO_KVM='{self.no_kvm}'\n".encode())
        img.file("bin/busybox", busybox, 0o755)
        img.add("bin/sh", stat.S_IFLNK | 0o777, b"busybox")
        mods = mkinitramfs.resolve_modules(
            version, [(m, False) for m in self.modules], root=sysroot)
        for name, path in mods:
            img.add(f"lib/modules/{name}.ko", stat.S_IFREG | 0o644,
                    mkinitramfs.read_module(path))
        img.add("lib/modules/load-order", stat.S_IFREG | 0o644,
                "".join(f"{name}.ko\n" for name, _ in mods).encode())
        img.add("command", stat.S_IFREG | 0o644, script.encode())
        for spec in files:
            host, path = image_path(spec)
            if path.lstrip("/") in img.entries:
                raise Error(f"{path} is in the image twice (--file {spec})")
            add_tree(img, host, path)
        img.write(out, 0, compress=False)

    def relay(self, lines):
        """Copies the script's console lines (those between the init's
        begin and end lines) to stdout; returns the script's status
        (None if no status line came), the setup failure the init
        reported with the kernel messages it printed before it, if any,
        and the last lines, for the error message of a VM that did not
        get that far."""
        seen = collections.deque(maxlen=20)
        inside = False
        status = failure = None
        for raw in lines:
            line = raw.replace("\r", "").rstrip("\n")
            if not inside:
                if self.setup_failed in line and failure is None:
                    why = line[line.index(self.setup_failed)
                               + len(self.setup_failed):]
                    failure = "\n".join([why] + list(seen)[-6:])
                elif line.startswith(self.status):
                    status = int(line[len(self.status):])
                elif self.begin in line:
                    inside = True
                seen.append(line)
                continue
            seen.append(line)
            if line.endswith(self.end):
                # Output without a final newline shares the line with it.
                inside = False
                line = line[:-len(self.end)]
                if not line:
                    continue
            print(line, flush=True)
        return status, failure, seen

    def run(self, args, script):
        if not shutil.which(self.qemu):
            raise Error(f"no {self.qemu} (apt-get install {self.package})")
        kernel, version = self.find_kernel(args.sysroot)
        with tempfile.TemporaryDirectory(prefix=self.tag + "-") as tmp:
            image = os.path.join(tmp, self.tag + ".cpio")
            self.build_image(image, args.sysroot, version, script, args.file)
            (status, failure, seen), qemu_status, killed = run_console(
                self.command(args, kernel, image), args.timeout,
                self.relay)
        if killed:
            print(f"{self.name}: timed out after {args.timeout} s",
                  file=sys.stderr)
            return 124
        if failure:
            raise Error(f"the VM could not run the script: {failure}")
        if status is None:
            tail = "\n".join(seen)
            raise Error(f"the VM ended (QEMU status {qemu_status}) without "
                        f"the script's status; its last output:\n{tail}")
        return status

    def arguments(self, description, mem, cpus, append_example):
        """The command line's parser, with the options both hosts take;
        the runner adds its own, then calls main()."""
        ap = argparse.ArgumentParser(description=description)
        host_options(ap, mem, cpus)
        ap.add_argument("--script", metavar="FILE",
                        help="the script to run, from a file")
        ap.add_argument("--file", action="append", default=[],
                        metavar="HOSTPATH[:IMAGEPATH]",
                        help="carry a file or directory into the image "
                             "(default /work/BASENAME)")
        sysroot = mksysroot.default_dest(self.debian_arch)
        ap.add_argument("--sysroot", metavar="DIR", default=sysroot,
                        help="where the kernel and busybox are (default "
                             f"{sysroot}, arch/mksysroot.py's)")
        ap.add_argument("--append", default="", metavar="ARGS",
                        help=f"more kernel parameters (e.g. "
                             f"{append_example})")
        return ap

    def main(self, ap):
        """Parses the command line (ap from arguments(), with the
        runner's own options, and the script's words) and runs the
        script; exits with its status, 124 on a timeout, 125 when the
        VM did not run it."""
        args = parse_args(ap, "words", "SCRIPT")
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
            sys.exit(self.run(args, script))
        except (Error, mkinitramfs.Error, OSError) as e:
            print(f"{self.name}: {e}", file=sys.stderr)
            sys.exit(125)


def host_options(ap, mem, cpus, cpus_note=""):
    """--mem, --cpus and --timeout, which every emulated host takes."""
    ap.add_argument("--mem", default=mem, metavar="SIZE",
                    help=f"the VM's memory (default {mem})")
    ap.add_argument("--cpus", type=int, default=cpus, metavar="N",
                    help=f"its vCPUs (default {cpus}{cpus_note})")
    ap.add_argument("--timeout", type=int, default=3600, metavar="SECONDS",
                    help="kill the VM after this long (default 3600)")


def parse_args(ap, name, metavar):
    """ap's arguments, with the rest of the command line (less a leading
    "--") as a list in args.NAME."""
    ap.add_argument(name, nargs=argparse.REMAINDER, metavar=metavar)
    args = ap.parse_args()
    words = getattr(args, name)
    setattr(args, name, words[1:] if words[:1] == ["--"] else words)
    return args


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
    """(host path, path in the image) of a --file argument: IMAGEPATH
    defaults to /work/BASENAME; a relative one is under /work, one
    ending in / gets BASENAME appended."""
    host, _, path = spec.partition(":")
    if not os.path.lexists(host):
        raise Error(f"no {host} (--file {spec})")
    base = os.path.basename(os.path.normpath(host))
    if not path:
        path = base
    elif path.endswith("/"):
        path += base
    return host, os.path.normpath(os.path.join("/work", path))


class DtbCapture:
    """The device tree a host's script printed as base64 between lines
    "dtb-begin" and "dtb-end"; feed each line of its output to take()."""

    def __init__(self):
        self.dtb = None
        self._b64 = None

    def take(self, line):
        """Whether line belonged to the block (and so is no other
        output)."""
        if line == "dtb-begin":
            self._b64 = []
        elif line == "dtb-end" and self._b64 is not None:
            self.dtb = base64.b64decode("".join(self._b64))
            self._b64 = None
        elif self._b64 is not None:
            self._b64.append(line)
        else:
            return False
        return True


def dtb_checks(dtb, needs, n):
    """TAP lines from n on for a device tree an emulated host printed
    (None if none came back), decompiled by dtc: one per (what, text)
    of needs, ok when the source has text."""
    if dtb is None:
        return [f"not ok {n + i} - device tree: {what} (no tree came "
                "back)" for i, (what, _) in enumerate(needs)]
    proc = subprocess.run(["dtc", "-I", "dtb", "-O", "dts", "-o", "-"],
                          input=dtb, capture_output=True)
    dts = proc.stdout.decode(errors="replace")
    lines = []
    for i, (what, text) in enumerate(needs):
        good = proc.returncode == 0 and text in dts
        lines.append(f"{'ok' if good else 'not ok'} {n + i} - device tree: "
                     f"{what}")
        if not good:
            lines.append(f"# dtc status {proc.returncode}; no '{text}'")
    return lines
