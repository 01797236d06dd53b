"""Integration-test harness: runs test functions, prints TAP for meson, and
drives the real thpvm binary.

Each test module ends with `harness.main(globals())`; every function named
test_* is one TAP subtest. A test calls skip("reason") when the host cannot
run it; an AssertionError or any other exception fails it.
"""
import json
import mmap
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
# Shared with bench/ for the tests: QEMU's command line (common.py), and
# the order of kernel versions mkinitramfs.py picks by (linux_guest.py).
from common import qemu_cmd  # noqa: E402,F401
from host import threads_report  # noqa: E402
from linux_guest import host_unfit_reason, version_key  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# meson test names each built file; run by hand, a test finds them in
# the build directory the README makes (./build of the checkout, or
# BUILD=DIR as for bench/).
BUILD = os.environ.get("BUILD") or os.path.join(ROOT, "build")


def _built(variable, path):
    return os.environ.get(variable) or os.path.join(BUILD, path)


THPVM = _built("THPVM", "thpvm")
GUEST_BZIMAGE = _built("TESTGUEST_BZIMAGE", "guest/testguest.bzImage")
GUEST_ELF = _built("TESTGUEST_ELF", "guest/testguest.elf")
USEMEM = _built("USEMEM", "guest/linux/usemem")
# A bzImage whose real-mode setup code lies past its header
# (setup_past_header.S).
SETUP_PAST_HEADER_BZIMAGE = _built(
    "SETUP_PAST_HEADER_BZIMAGE", "tests/integration/setup_past_header.bzImage")
# What thpvm puts before -p for a Linux kernel on x86 (arch_linux_params).
LINUX_DEFAULT_PARAMS = "console=ttyS0 earlyprintk=serial reboot=k panic=-1"


class Skip(Exception):
    pass


class Hang(AssertionError):
    """A command, or a line awaited from one, that did not come in
    time."""


def skip(reason):
    raise Skip(reason)


def main(namespace):
    tests = [(n, f) for n, f in namespace.items()
             if n.startswith("test_") and callable(f)]
    only = sys.argv[1:]
    unknown = sorted(set(only) - {n for n, _ in tests})
    if unknown:
        # A misspelt or renamed test must not pass by running nothing.
        sys.exit(f"{sys.argv[0]}: no test named {', '.join(unknown)}")
    if only:
        tests = [t for t in tests if t[0] in only]
    failed = 0
    # The plan first: a program that dies halfway shows as incomplete.
    print(f"1..{len(tests)}", flush=True)
    for i, (name, fn) in enumerate(tests, 1):
        runtime = tempfile.mkdtemp(prefix="thpvm-test-")
        os.environ["XDG_RUNTIME_DIR"] = runtime
        try:
            fn()
            print(f"ok {i} - {name}", flush=True)
        except Skip as e:
            print(f"ok {i} - {name} # SKIP {e}", flush=True)
        except Exception:
            failed += 1
            for line in traceback.format_exc().splitlines():
                print(f"# {line}")
            print(f"not ok {i} - {name}", flush=True)
        finally:
            kill_leftovers()
            shutil.rmtree(runtime, ignore_errors=True)
    sys.exit(1 if failed else 0)


_procs = []


def kill_leftovers():
    while _procs:
        p = _procs.pop()
        if p.poll() is None:
            p.kill()
            p.wait()


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err
        self.tg = parse_tg(out)

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def parse_tg(out):
    """The test guest's result lines: {'ok': {check: fields}, 'fail': ...};
    other lines by their kind, the words before the first key=value
    ("tg: net dev=0 ..." is "net", "tg: net ping-in waiting" is
    "net ping-in waiting"), the last line of each kind."""
    tg = {"ok": {}, "fail": {}, "e820": []}
    for line in out.splitlines():
        # Firmware may print on the same line first (SeaBIOS's
        # "Booting from ROM..").
        start = line.find("tg: ")
        if start < 0:
            continue
        body = line[start + 4:].rstrip("\r")
        if body.startswith("cmdline="):
            tg["cmdline"] = body[len("cmdline="):]
            continue
        words = body.split(" ")
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if words[0] in ("ok", "FAIL"):
            tg["ok" if words[0] == "ok" else "fail"][words[1]] = dict(
                w.split("=", 1) for w in words[2:] if "=" in w)
        elif words[0] == "e820":
            tg["e820"].append((int(fields["start"], 16),
                               int(fields["end"], 16), int(fields["type"])))
        else:
            kind = 1
            while kind < len(words) and "=" not in words[kind]:
                kind += 1
            tg[" ".join(words[:kind])] = fields
    return tg


def run(args, timeout=120, stdin=subprocess.DEVNULL, env=None):
    return run_cmd([THPVM] + args, timeout=timeout, stdin=stdin, env=env)


def run_cmd(cmd, timeout=120, stdin=subprocess.DEVNULL, env=None):
    """Runs cmd to its end. One that outlives timeout is killed and fails
    the test with what it had printed, so a hang shows where it stopped."""
    with subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            report = threads_report(p.pid)
            p.kill()
            out, err = p.communicate()
            raise Hang(
                f"{cmd[0]} still running after {timeout} s, killed\n"
                f"{report}\n{Result(None, _text(out), _text(err))}") \
                from None
    return Result(p.returncode, _text(out), _text(err))


def _text(data):
    """Decoded as text=True would: universal newlines (the serial
    console's \r\n ends a line with \n)."""
    text = (data or b"").decode(errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def run_guest(params="", args=(), timeout=120):
    return run(["run", "-p", params] + list(args), timeout=timeout)


def assert_guest_passed(r, checks=()):
    assert r.rc == 0, r
    assert "done" in r.tg, r
    assert r.tg["done"]["failed"] == "0", r
    assert not r.tg["fail"], r
    for c in checks:
        assert c in r.tg["ok"], f"check {c} missing\n{r}"


def one_error(r, text, rc=None):
    """r failed with exactly one error line that contains text (and exit
    status rc when given), and no guest ran."""
    assert r.rc != 0 if rc is None else r.rc == rc, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("thpvm: error:"), r
    assert text in lines[0], r
    assert "tg:" not in r.out, r


def start(args, **kw):
    """Starts thpvm in the background; killed at the end of the test.
    Its stdout is read with wait_for_line(), stderr with read_stderr()."""
    return start_cmd([THPVM] + args, **kw)


def start_cmd(cmd, **kw):
    """start() for any command line (thpvm under a wrapper, QEMU). A
    stdout given replaces the pipe wait_for_line() reads."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("stdout", subprocess.PIPE)
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, bufsize=0, **kw)
    p.out_buf = b""
    _procs.append(p)
    return p


def wait_for_line(p, pattern, timeout=60):
    """Reads p's stdout until a line matches; returns the lines read.
    Reads the pipe unbuffered, so select() never misses buffered data."""
    deadline = time.monotonic() + timeout
    lines = []
    fd = p.stdout.fileno()
    while True:
        while b"\n" in p.out_buf:
            raw, p.out_buf = p.out_buf.split(b"\n", 1)
            line = raw.decode(errors="replace")
            lines.append(line)
            if re.search(pattern, line):
                return lines
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            # Nothing in time, or the end of the output.
            raise (Hang if not ready else AssertionError)(
                f"no line matching {pattern!r} within {timeout}s; "
                f"got: {lines[-20:]}; exit: {p.poll()}")
        p.out_buf += chunk


class Pty:
    """A program on a pseudo-terminal, as a user's terminal sees it."""

    def __init__(self, argv):
        self.name = os.path.basename(argv[0])
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvp(argv[0], argv)
        self.buf = b""

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def expect(self, pattern, timeout=60):
        """Reads until pattern matches what came since the last match;
        returns that text."""
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(pattern.encode(), self.buf)
            if m:
                seen, self.buf = self.buf[:m.end()], self.buf[m.end():]
                return seen.decode(errors="replace")
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} in {self.buf[-3000:]!r}"
            if select.select([self.fd], [], [], left)[0]:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""      # EIO: the program's side is closed
                assert data, (f"{self.name} ended; no {pattern!r} in "
                              f"{self.buf[-3000:]!r}")
                self.buf += data


def serving(name, args=(), params="serve skip=smp,lapic,pit"):
    """thpvm run --name NAME -m 256M ARGS, once the test guest says it
    serves (params) and so runs until stopped."""
    require_kvm()
    p = start(["run", "--name", name, "-m", "256M"] + list(args) +
              ["-p", params])
    wait_for_line(p, "tg: serving")
    return p


def control_socket(name):
    """Where `thpvm run --name name` listens: its control socket in the
    runtime directory (docs/control-protocol.md)."""
    return os.path.join(os.environ["XDG_RUNTIME_DIR"], "thpvm",
                        name + ".sock")


def console_socket(name):
    """A path for `--console-socket` of the VM called name, beside the
    runtime directory's control sockets (the tests' choice: thpvm's own
    default, with --detach, is NAME.console next to the control socket)."""
    return os.path.join(os.environ["XDG_RUNTIME_DIR"], name + ".console")


def read_stderr(p):
    """All of p's stderr, once it has exited."""
    return p.stderr.read().decode(errors="replace")


def wait_until(probe, done, timeout=30, interval=0.1):
    """probe() again every interval seconds until done(its value) or
    timeout seconds have passed; the last value, for the caller to
    assert on."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(interval)
        value = probe()
    return value


def ctl_json(args):
    """A control command's --json output, parsed; it must succeed."""
    r = run(args + ["--json"], timeout=30)
    assert r.rc == 0, r
    return json.loads(r.out)


def bzimage_with_payload(path, payload, init_size=None):
    """The test guest's bzImage, written to path, with payload appended
    and named as its compressed kernel (payload_offset/length), and
    init_size replaced when given. The guest does not use the payload;
    it is loaded into its .bss, which the guest clears."""
    with open(GUEST_BZIMAGE, "rb") as f:
        image = bytearray(f.read())
    setup_size = ((image[0x1f1] or 4) + 1) * 512
    struct.pack_into("<II", image, 0x248, len(image) - setup_size,
                     len(payload))
    if init_size is not None:
        struct.pack_into("<I", image, 0x260, init_size)
    with open(path, "wb") as f:
        f.write(image + payload)


def crc32_file(path):
    with open(path, "rb") as f:
        return zlib.crc32(f.read()) & 0xffffffff


def kvm_available():
    """A usable /dev/kvm; none with THPVM_CI_EMULATED=1, .ci/run's
    rehearsal here of a machine without one."""
    if os.environ.get("THPVM_CI_EMULATED") == "1":
        return False
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def require_kvm():
    if not kvm_available():
        skip("no usable /dev/kvm")


def direct_tempdir():
    """A TemporaryDirectory whose files take O_DIRECT: in TMPDIR (CI's is
    on ext4), else /var/tmp; the test skips where neither does (tmpfs on
    older kernels, some overlays), as the unit tests do."""
    with mmap.mmap(-1, 4096) as block:  # page-aligned, as O_DIRECT wants
        for base in dict.fromkeys((tempfile.gettempdir(), "/var/tmp")):
            d = _direct_dir_in(base, block)
            if d:
                return d
    skip(f"neither {tempfile.gettempdir()} nor /var/tmp takes O_DIRECT")


def _direct_dir_in(base, block):
    """A TemporaryDirectory in base where block can be written with
    O_DIRECT, or None."""
    try:
        d = tempfile.TemporaryDirectory(dir=base)
    except OSError:
        return None
    try:
        fd = os.open(os.path.join(d.name, "probe"),
                     os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o600)
        try:
            if os.write(fd, block) == len(block):
                return d
        finally:
            os.close(fd)
    except OSError:
        pass
    d.cleanup()
    return None


def capable_kvm_host():
    """(True, "") when /dev/kvm can run a stock Linux guest to user space,
    else (False, one-line reason): the benchmarks' own check
    (bench/linux_guest.py), so that tests and benchmarks never disagree."""
    why = host_unfit_reason()
    return why is None, why or ""


def stop_and_wait(p, name, timeout=30):
    r = run(["stop", name], timeout=30)
    assert r.rc == 0, r
    return p.wait(timeout=timeout)
