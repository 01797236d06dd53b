"""What tests/svm_host.py and tests/arm64_host.py share: an emulated host
(QEMU) whose serial console is the only way out, run with a time limit,
and guest/linux/mkinitramfs.py, whose cpio writer builds its
initramfs."""
import importlib.util
import io
import os
import subprocess
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_mkinitramfs():
    """guest/linux/mkinitramfs.py as a module."""
    path = os.path.join(ROOT, "guest", "linux", "mkinitramfs.py")
    spec = importlib.util.spec_from_file_location("mkinitramfs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_console(cmd, timeout, relay):
    """Runs cmd, a QEMU whose console is its standard output, and hands
    relay() the console's lines, killing QEMU after timeout seconds.
    Lines end at "\\n" only: a nested guest's console lines arrive as
    "\\r\\r\\n", which universal newlines would make two. Returns what
    relay returned, QEMU's exit status, and whether the time ran out."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    lines = io.TextIOWrapper(proc.stdout, errors="replace", newline="\n")
    timed_out = threading.Event()

    def expire():
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        result = relay(lines)
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return result, proc.returncode, timed_out.is_set()
