"""What tests/svm_host.py and tests/arm64_host.py share: an emulated host
(QEMU) whose serial console is the only way out, run with a time limit,
and guest/linux/mkinitramfs.py, whose cpio writer builds its
initramfs."""
import importlib.util
import io
import os
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_mkinitramfs():
    """guest/linux/mkinitramfs.py as a module."""
    path = os.path.join(ROOT, "guest", "linux", "mkinitramfs.py")
    spec = importlib.util.spec_from_file_location("mkinitramfs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
