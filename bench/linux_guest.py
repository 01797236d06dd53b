"""Shared helpers of the Linux-guest benchmarks (bench/hackbench.py,
bench/linux_balloon.py): whether this host can run a stock Linux guest
at all, the guest kernel, its initramfs (guest/linux/mkinitramfs.py), the
cont_balloon module built against that kernel's headers, and the guest's
`thpvm-guest: ...` console lines.

The guest side is guest/linux/: its /init prints `thpvm-guest: init ready
kernel=VER`, `thpvm-guest: run NAME begin` and `thpvm-guest: run NAME end
rc=N` around the script chosen by `thpvm.run=NAME`, and the script's own
`thpvm-guest: ...` lines in between."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import common
from common import BUILD, ROOT, THPVM, RunError, print_command

sys.path.insert(0, os.path.join(ROOT, "guest", "linux"))
# The order of kernel versions mkinitramfs.py picks the newest by.
from mkinitramfs import version_key  # noqa: E402

SKIP_STATUS = 77             # what meson and automake take as "skipped"
MKINITRAMFS = os.path.join(ROOT, "guest", "linux", "mkinitramfs.py")
CONT_BALLOON_SRC = os.path.join(ROOT, "guest", "linux", "cont_balloon")
USEMEM = os.path.join(BUILD, "guest", "linux", "usemem")   # meson builds it
PREFIX = "thpvm-guest: "
STOP_TIMEOUT = 60            # for a VM to end after its run ended


# ---- can this host run a stock Linux guest? ----------------------------

def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def kvm_usable():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC))
        return True
    except OSError:
        return False


def host_unfit_reason():
    """None when host KVM can run a stock Linux guest to user space, else
    why not, in a few words. PVM (KVM without VT-x/AMD-V) emulates guest
    kernel code and stops on instructions it cannot emulate long before
    user space (docs/linux-guests.md), so it counts as unfit even
    though /dev/kvm works; so does a CPU without vmx or svm."""
    why = []
    if os.path.isdir("/sys/module/kvm_pvm"):
        why.append("KVM is PVM (module kvm_pvm), which cannot run a stock "
                   "Linux guest to user space")
    if not cpu_flags() & {"vmx", "svm"}:
        why.append("no vmx or svm flag in /proc/cpuinfo")
    if not kvm_usable():
        why.append("/dev/kvm missing or not usable")
    return "; ".join(why) or None


def skip_unless_capable(script):
    """Exits with SKIP_STATUS after one line saying why, on a host that
    cannot run the guest: a skipped run prints no figures at all."""
    why = host_unfit_reason()
    if why:
        print(f"{script}: skipped: {why}", flush=True)
        sys.exit(SKIP_STATUS)


def begin(script):
    """What a Linux-guest benchmark does first: on a host that cannot run
    the guest, one line and no figures; then thpvm must be built; then
    the command line is printed."""
    skip_unless_capable(script)
    if not os.path.exists(THPVM):
        sys.exit(f"{THPVM} is missing: build first (meson setup build && "
                 f"ninja -C build), or set BUILD")
    print_command()


# ---- the guest kernel and what it boots with ---------------------------

def kernel_version(wanted=None):
    """The guest kernel's version: `wanted`, or as mkinitramfs.py picks
    it, the newest /lib/modules/* with virtio modules. Its bzImage must
    be /boot/vmlinuz-VERSION. Passed to mkinitramfs.py explicitly, so the
    image's modules and the booted kernel cannot disagree."""
    if wanted is None:
        found = [os.path.basename(d) for d in glob.glob("/lib/modules/*")
                 if os.path.isdir(os.path.join(d, "kernel", "drivers",
                                               "virtio"))]
        if not found:
            raise RunError("no /lib/modules/*/kernel/drivers/virtio: "
                             "install linux-image-amd64")
        wanted = max(found, key=version_key)
    if not os.path.isfile(vmlinuz(wanted)):
        raise RunError(f"{vmlinuz(wanted)} is missing")
    return wanted


def vmlinuz(version):
    return f"/boot/vmlinuz-{version}"


def run_tool(cmd, what, timeout=600, cwd=None):
    """Runs a build step; its output only matters when it fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           errors="replace", timeout=timeout, cwd=cwd,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunError(f"{what}: {e}") from e
    if p.returncode:
        log = (p.stdout + p.stderr).strip().splitlines()
        raise RunError(f"{what} failed (status {p.returncode}): "
                         f"{' '.join(cmd)}\n" + "\n".join(log[-20:]))
    return p.stdout


def build_initramfs(out, version, cont_balloon=None):
    """guest/linux/mkinitramfs.py OUT --kernel VERSION [--usemem PATH]
    [--cont-balloon KO]; returns OUT. usemem is named when this build
    has one, so that BUILD=DIR picks the matching binary."""
    if not os.path.isfile(MKINITRAMFS):
        raise RunError(f"{MKINITRAMFS} is missing")
    cmd = [sys.executable, MKINITRAMFS, out, "--kernel", version]
    if os.path.isfile(USEMEM):
        cmd += ["--usemem", USEMEM]
    if cont_balloon:
        cmd += ["--cont-balloon", cont_balloon]
    run_tool(cmd, "building the initramfs")
    if not os.path.isfile(out):
        raise RunError(f"{MKINITRAMFS} did not write {out}")
    return out


def kernel_headers(version):
    """Headers of exactly the guest's kernel: a module built against any
    other is refused at load (vermagic)."""
    for kdir in (f"/usr/src/linux-headers-{version}",
                 f"/lib/modules/{version}/build"):
        if os.path.isfile(os.path.join(kdir, "Makefile")):
            return kdir
    raise RunError(f"no headers for {version}: install "
                     f"linux-headers-{version}")


def build_cont_balloon(version, tmpdir):
    """guest/linux/cont_balloon built against the guest kernel's headers
    in a copy under tmpdir, as tests/integration/test_linux_module.py
    does, so that no build product lands in the tree; returns the path
    of cont_balloon.ko."""
    if not shutil.which("make"):
        raise RunError("no make: install build-essential")
    kdir = kernel_headers(version)
    build = os.path.join(tmpdir, "cont_balloon")
    shutil.copytree(CONT_BALLOON_SRC, build, ignore=shutil.ignore_patterns(
        "*.o", "*.ko", "*.mod", "*.mod.c", ".*", "modules.order",
        "Module.symvers"))
    run_tool(["make", "-C", kdir, f"M={build}", "modules"],
             f"building cont_balloon.ko against {kdir}")
    ko = os.path.join(build, "cont_balloon.ko")
    if not os.path.isfile(ko):
        raise RunError(f"make wrote no {ko}")
    return ko


# ---- the guest's console ----------------------------------------------

class Console(common.Console):
    """The Linux guest's console: a wait fails early when the kernel
    panics or the guest's run ends before the awaited line."""

    END = re.compile(re.escape(PREFIX) + r"run (\S+) end rc=(-?\d+)")

    def __init__(self, proc, errfile):
        super().__init__(proc, errfile, PREFIX)

    def check(self, line, pattern):
        if "Kernel panic" in line:
            self.fail("guest kernel panic")
        end = self.END.search(line)
        if end:
            self.fail(f"guest run {end.group(1)} ended (rc="
                      f"{end.group(2)}) before '{PREFIX}{pattern}'")

    def wait_ready(self, version, timeout):
        """The guest's init is up on the kernel it was built for, with
        every module loaded: a balloon driver that did not load would
        only show as a wait that times out much later."""
        got = self.wait(r"init ready kernel=(\S+)", timeout).group(1)
        if got != version:
            self.fail(f"guest runs kernel {got}, not {version}")
        failed = [l for l in self.lines
                  if re.search(re.escape(PREFIX) + r"insmod \S+ failed", l)]
        if failed:
            self.fail("guest: " + ", ".join(
                l[l.find(PREFIX) + len(PREFIX):] for l in failed))

    def wait_end(self, run, timeout):
        """The guest's run ended, successfully."""
        rc = int(self.wait(rf"run {re.escape(run)} end rc=(-?\d+)",
                           timeout).group(1))
        if rc:
            self.fail(f"guest run {run} ended with rc={rc}")


def start_vmm(cmd):
    """Starts a VMM with its console on a pipe; (process, Console). Its
    stderr goes to a file: merged into the pipe, a message could land in
    the middle of a guest line."""
    errfile = tempfile.TemporaryFile()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile,
                         stdin=subprocess.DEVNULL, text=True,
                         errors="replace")
    return p, Console(p, errfile)


def end_vmm(p, con, stop, grace):
    """Lets a VMM end by itself for `grace` seconds (a guest that is done
    powers off or resets; one that failed gets 0), then calls stop(),
    then kills it."""
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            stop()
            p.wait(timeout=STOP_TIMEOUT)
        except Exception:                # noqa: BLE001 - kill it anyway
            pass
    if p.poll() is None:
        p.kill()
        p.wait()
    con.close()
    con.errfile.close()
