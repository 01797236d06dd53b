"""Shared helpers of the benchmark scripts: running thpvm and QEMU on the
test guest and reading its "tg:" result lines."""
import atexit
import os
import queue
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
THPVM = os.path.join(BUILD, "thpvm")
BZIMAGE = os.path.join(BUILD, "guest", "testguest.bzImage")
QEMU = shutil.which("qemu-system-x86_64")
# kvmtool is not packaged in Debian: a build of it, by LKVM= or on PATH.
LKVM = os.environ.get("LKVM") or shutil.which("lkvm")


def require_build():
    for f in (THPVM, BZIMAGE):
        if not os.path.exists(f):
            sys.exit(f"{f} is missing: build first (meson setup build && "
                     f"ninja -C build), or set BUILD")


def qemu_cmd(mem, params, cpus=1, machine=None, kernel=BZIMAGE, qemu=QEMU,
             accel="kvm", cpu=None, exit_port=True):
    """QEMU booting kernel (the x86 test guest unless told) with params:
    the serial console on stdio and nothing else, no default devices or
    user configuration, no reboot. The one QEMU command line of the
    benchmarks and the tests (tests/integration/harness.py has it too);
    callers add their devices. accel=None: QEMU's default (TCG).
    exit_port: the x86 test guest's way out (port 0x501, as in thpvm)."""
    cmd = [qemu] + (["-M", machine] if machine else [])
    cmd += ["-accel", accel] if accel else []
    cmd += ["-cpu", cpu] if cpu else []
    cmd += ["-m", mem, "-smp", str(cpus), "-kernel", kernel,
            "-append", params, "-nographic", "-nodefaults",
            "-no-user-config", "-serial", "stdio", "-no-reboot"]
    if exit_port:
        cmd += ["-device", "isa-debug-exit,iobase=0x501,iosize=1"]
    return cmd


def quote(cmd):
    """A command line as a shell would take it back."""
    return " ".join(shlex.quote(a) for a in cmd)


def print_command():
    """The command line that produced the figures, when, and how busy the
    machine was, first in the output; how busy again at the end, since
    figures from a loaded machine are not comparable."""
    build = os.environ.get("BUILD")
    print("command: " + (f"BUILD={shlex.quote(build)} " if build else "") +
          quote([sys.executable] + sys.argv), flush=True)
    print(f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}, {machine_load()}",
          flush=True)
    atexit.register(lambda: print(f"at the end: {machine_load()}",
                                  flush=True))


def machine_load():
    one, five, fifteen = os.getloadavg()
    return (f"load average {one:.2f} {five:.2f} {fifteen:.2f} "
            f"(1, 5, 15 min) on {os.cpu_count()} CPUs")


def lkvm_cmd(mem_mib, params, cpus=1):
    """kvmtool on the test guest: its real-mode entry, our command line
    only (--nodefaults: no 9p root, no appended parameters), no network.
    lkvm ignores port 0x501 and exits 0 whatever the guest reports, so
    results come from the guest's lines (check_passed)."""
    return [LKVM, "run", "--nodefaults", "--network", "mode=none",
            "-k", BZIMAGE, "-m", str(mem_mib), "-c", str(cpus),
            "-p", params]


def tg_fields(out, key):
    """Fields of the guest's `tg: KEY a=1 b=2` line."""
    for line in out.splitlines():
        i = line.find("tg: " + key + " ")
        if i >= 0:
            return dict(w.split("=", 1) for w in line[i:].split()[2:]
                        if "=" in w)
    raise RuntimeError(f"no 'tg: {key}' line in:\n{out}")


def check_passed(cmd, out, err=""):
    """A run whose guest reported a failure is not a figure."""
    if "tg: done passed=" not in out or "failed=0" not in out:
        raise RuntimeError(f"guest failed: {' '.join(cmd)}\n{out}\n{err}")


def run_guest(cmd, timeout=600):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace", timeout=timeout)
    check_passed(cmd, p.stdout, p.stderr)
    return p.stdout


def start_serving(cmd):
    """Starts a VMM on the test guest in serve mode and returns once the
    guest says it is serving (p.out_lines: what it printed up to there),
    with no check failed before."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         text=True, errors="replace")
    p.out_lines = []
    for line in p.stdout:
        p.out_lines.append(line)
        if "tg: FAIL" in line:
            break
        if "tg: serving" in line:
            return p
    p.kill()
    p.wait()
    raise RuntimeError(f"{' '.join(cmd)} failed or ended before serving:\n"
                       + "".join(p.out_lines[-10:]))


def median(xs):
    return statistics.median(xs)


class RunError(Exception):
    """A run that cannot give figures: the guest failed, the VMM ended
    early, something took too long."""


class Console:
    """A VMM's stdout (the guest's serial console), read by a thread so
    that waits can time out. wait() looks for lines where a pattern
    follows `prefix`; check(line), for subclasses, fails a wait early on
    a line that means the awaited one will never come."""

    def __init__(self, proc, errfile, prefix):
        self.proc = proc
        self.errfile = errfile
        self.prefix = prefix
        self.lines = []
        self.q = queue.Queue()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(line.rstrip("\r\n"))
        self.q.put(None)

    def close(self):
        """After the VMM ended: the reader has seen the pipe's end."""
        self.t.join(timeout=10)
        self.proc.stdout.close()

    def tail(self, n=30):
        self.errfile.seek(0)
        err = self.errfile.read().decode(errors="replace").splitlines()
        out = "\n".join(self.lines[-n:])
        if err:
            out += "\n--- stderr:\n" + "\n".join(err[-10:])
        return out

    def fail(self, why):
        raise RunError(f"{why}; last output:\n{self.tail()}")

    def check(self, line, pattern):
        pass

    def wait(self, pattern, timeout):
        """The match of the first new line in which the regex follows the
        prefix (kernel messages may share the line)."""
        deadline = time.monotonic() + timeout
        rx = re.compile(re.escape(self.prefix) + pattern)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.fail(f"no '{self.prefix}{pattern}' within {timeout} s")
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.proc.wait()
                self.fail(f"VMM exited (status {self.proc.returncode}) "
                          f"while waiting for '{self.prefix}{pattern}'")
            self.lines.append(line)
            m = rx.search(line)
            if m:
                return m
            self.check(line, pattern)


# ---- tables of runs: COLUMNS are (key, header, format) ----------------

def summarise(runs, columns):
    """Medians over the runs of one mode, per column."""
    out = {}
    for key, _, _ in columns:
        vals = [r[key] for r in runs if r[key] is not None]
        out[key] = median(vals) if vals else None
    return out


def print_table(results, errors, repeat, columns, legend, width=12):
    """One row per mode (medians), each mode's error instead when it has
    no good run, every single run when there were several, the legend."""
    def row(label, m):
        return f"{label:<{width}}" + "".join(
            f"{'-' if m[k] is None else f.format(m[k]):>8}"
            for k, _, f in columns)

    print(f"{'mode':<{width}}" + "".join(f"{h:>8}" for _, h, _ in columns))
    for mode, runs in results.items():
        if runs:
            print(row(mode, summarise(runs, columns)) +
                  (f"  ({len(runs)} of {repeat} runs)"
                   if len(runs) != repeat else ""))
        else:
            why = errors[mode][0].splitlines()[0].split("; last output")[0]
            print(f"{mode:<{width}}error: {why}")
    if repeat > 1:
        print("single runs:")
        for mode, runs in results.items():
            for i, r in enumerate(runs):
                print(row(f"{mode}#{i + 1}", r))
    print(legend)
