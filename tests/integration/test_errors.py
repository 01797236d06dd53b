#!/usr/bin/env python3
"""Bad user input gets one clear message and a non-zero exit; SIGINT and
SIGTERM stop a VM cleanly, restoring the terminal and removing the
socket."""
import json
import os
import pty
import re
import signal
import struct
import subprocess
import tempfile
import termios
import threading
import time
import zlib

import harness
from harness import run, start, wait_for_line


def one_error(r, text, rc=1):
    harness.one_error(r, text, rc)


def test_missing_image():
    one_error(run(["run", "-k", "/nonexistent/bzImage"]),
              "kernel /nonexistent/bzImage: No such file or directory")


def test_unreadable_image():
    if os.geteuid() == 0:
        # root reads anything; a directory is still not a readable image
        one_error(run(["run", "-k", "/tmp"]), "not a regular file")
        return
    with tempfile.NamedTemporaryFile() as f:
        os.chmod(f.name, 0)
        one_error(run(["run", "-k", f.name]), "Permission denied")


def test_not_a_kernel():
    harness.require_kvm()
    with tempfile.NamedTemporaryFile() as f:
        f.write(os.urandom(8192))
        f.flush()
        one_error(run(["run", "-k", f.name]), "not a kernel image")
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"\x7fELF" + os.urandom(100))
        f.flush()
        r = run(["run", "-k", f.name])
        assert r.rc == 1 and "thpvm: error:" in r.err, r


def pvh_elf(load_addr, note=None):
    """A minimal ELF64 kernel: one PT_LOAD of 16 bytes at load_addr and a
    PVH entry note pointing at it (or the note given)."""
    note = note or struct.pack("<III4sI", 4, 4, 18, b"Xen\0", load_addr)
    phoff, nph = 64, 2
    data_off = phoff + nph * 56
    note_off = data_off + 16
    ehdr = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0,
                       0, 2, 62, 1, load_addr, phoff, 0, 0, 64, 56, nph,
                       64, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 5, data_off, load_addr, load_addr,
                       16, 16, 16)
    pnote = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(note),
                        len(note), 4)
    return ehdr + load + pnote + b"\xf4" * 16 + note


def test_kernel_below_1mib_refused():
    harness.require_kvm()
    with tempfile.NamedTemporaryFile() as f:
        f.write(pvh_elf(0x7000))
        f.flush()
        one_error(run(["run", "-k", f.name]), "lies below 1 MiB")
    # The same kernel at 2 MiB is accepted (it halts until stopped).
    with tempfile.NamedTemporaryFile() as f:
        f.write(pvh_elf(0x200000))
        f.flush()
        p = start(["run", "--name", "low", "-k", f.name])
        deadline = time.monotonic() + 30
        while harness.run(["stat", "low"]).rc != 0:
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert harness.stop_and_wait(p, "low") == 0


def test_malformed_pvh_note_one_error():
    """A PVH note that overruns its segment, or whose entry is neither 4
    nor 8 bytes: one error that says what is wrong with it."""
    harness.require_kvm()
    bad = ((struct.pack("<III4sI", 4, 40, 18, b"Xen\0", 0x200000),
            "ELF: looking for note Xen/18: note at offset 0x0 of PT_NOTE "
            "segment 1 (name 4 bytes, desc 40 bytes) overruns it"),
           (struct.pack("<III4sH2x", 4, 2, 18, b"Xen\0", 0x2000),
            "malformed PVH entry note: 2 bytes, not 4 or 8"))
    for note, text in bad:
        with tempfile.NamedTemporaryFile() as f:
            f.write(pvh_elf(0x200000, note))
            f.flush()
            one_error(run(["run", "-k", f.name]), text)


def test_payload_unpacking_bounded():
    """A payload that unpacks to more than the image's init_size (the room
    its own decompressor has) is refused once it passes that, however
    large guest RAM is: thpvm's memory stays far below what the payload
    would unpack to (512 MiB)."""
    harness.require_kvm()
    gz = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    payload = b"".join([gz.compress(chunk) for _ in range(512)] +
                       [gz.flush()])
    with tempfile.TemporaryDirectory(prefix="thpvm-bomb-") as tmp:
        kernel = os.path.join(tmp, "bzImage")
        harness.bzimage_with_payload(kernel, payload, init_size=4 << 20)
        with open(os.path.join(tmp, "out"), "w+") as out, \
                open(os.path.join(tmp, "err"), "w+") as err:
            p = subprocess.Popen([harness.THPVM, "run", "-m", "1G", "-k",
                                  kernel], stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=err)
            timer = threading.Timer(120, p.kill)
            timer.start()
            # wait4 for the child's own peak memory.
            _, status, usage = os.wait4(p.pid, 0)
            timer.cancel()
            out.seek(0)
            err.seek(0)
            r = harness.Result(os.waitstatus_to_exitcode(status),
                               out.read(), err.read())
    one_error(r, f"{kernel}: its gzip payload unpacks to more than "
                 f"{4 << 20} bytes, its init_size")
    print(f"# peak RSS {usage.ru_maxrss >> 10} MiB")
    assert usage.ru_maxrss < 128 << 10, (usage.ru_maxrss, r)


def test_initrd_missing():
    one_error(run(["run", "-i", "/nonexistent/initrd"]),
              "initrd /nonexistent/initrd")


def test_disk_missing():
    """A disk's errors say it is the disk, as the kernel's and initrd's
    say what their file was for."""
    one_error(run(["run", "-d", "/nonexistent/disk.img"]),
              "disk /nonexistent/disk.img: No such file or directory")


def test_empty_images():
    """An empty kernel or initrd gets its own message, not a complaint
    about the image format or about where 0 bytes fit."""
    with tempfile.NamedTemporaryFile() as f:
        one_error(run(["run", "-k", f.name]),
                  f"kernel {f.name}: the file is empty")
        one_error(run(["run", "-i", f.name]),
                  f"initrd {f.name}: the file is empty")


def test_setup_failure_json():
    """A set-up failure is one line too, and --json still reports the end,
    however early it came."""
    for args in (["--user", "no-such-user-here"],
                 ["-k", "/nonexistent/bzImage"],
                 ["--control-socket", "/nonexistent/x.sock"]):
        r = run(["run", "--json", "--name", "early"] + args)
        lines = r.err.strip().splitlines()
        assert r.rc == 1 and len(lines) == 2, r
        assert lines[0].startswith("thpvm: error: "), r
        assert json.loads(lines[1]) == {"name": "early", "exit_status": 1,
                                        "reason": "failure"}, r


def test_sizes():
    one_error(run(["run", "-m", "12Q"]), "expected a size", rc=2)
    one_error(run(["run", "-m", "1M"]), "from 16 MiB to 1 TiB", rc=2)
    # Zero is a size out of range too, not "not a size".
    one_error(run(["run", "-m", "0"]), "-m 0: expected a size from 16 MiB "
              "to 1 TiB", rc=2)
    one_error(run(["run", "-m", "2000000"]), "from 16 MiB to 1 TiB", rc=2)
    one_error(run(["run", "-m", ""]), "expected a size", rc=2)
    # Within the range but more than this host has: refused up front.
    with open("/proc/meminfo") as f:
        kib = sum(int(l.split()[1]) for l in f
                  if l.startswith(("MemTotal:", "SwapTotal:")))
    if kib < 1 << 30:
        one_error(run(["run", "-m", "1T"]), "more than this host's", rc=2)


def test_vcpu_range():
    """One range, one message and one status for -c, whatever is wrong."""
    for n in ("0", "255", "300", "1000"):
        one_error(run(["run", "-c", n]),
                  f"-c {n}: expected a number of vCPUs from 1 to 254", rc=2)


def test_kernel_does_not_fit():
    harness.require_kvm()
    with tempfile.NamedTemporaryFile() as f:
        f.write(os.urandom(15 << 20))
        f.flush()
        one_error(run(["run", "-m", "16M", "-i", f.name]),
                  "does not fit")


def test_guest_triple_fault_one_line():
    """A guest that dies (int3 with no IDT) ends thpvm with status 1 and
    one line: where, with the instruction, or, where KVM reset the vCPU
    at the shutdown (AMD), that where is unknown. PVM cannot run the
    guest's kernel mode that far: its line is the emulation failure at
    the int3."""
    harness.require_kvm()
    capable, _ = harness.capable_kvm_host()
    r = run(["run", "-p", "triple_fault"])
    assert r.rc == 1, r
    assert "tg: triple fault" in r.out, r
    lines = r.err.splitlines()
    assert len(lines) == 1, r
    where = (r" at RIP 0x[0-9a-f]+ \(CS 0x10, CR0 0x[0-9a-f]+\), "
             r"instruction bytes: cc( [0-9a-f]{2})* \(int3\)")
    if not capable:
        assert re.fullmatch(rf"thpvm: error: vCPU 0: emulation failure"
                            rf"{where}", lines[0]), r
        return
    assert re.fullmatch(
        rf"thpvm: error: vCPU 0: triple fault({where}| \(where is unknown: "
        r"KVM reset the vCPU at the shutdown, as it does on AMD\))",
        lines[0]), r


def test_no_kvm_device():
    # A mount namespace where /dev/kvm is absent, if we may make one.
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/unshare"):
        harness.skip("needs root and unshare to hide /dev/kvm")
    cmd = ["unshare", "-m", "sh", "-c",
           "mount -t tmpfs none /dev && exec \"$0\" run -p exit",
           harness.THPVM]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    r = harness.Result(p.returncode, p.stdout, p.stderr)
    one_error(r, "/dev/kvm does not exist")


def test_set_up_short_of_descriptors_says_why():
    """However far the machine's set-up gets before the descriptors run
    out (the VM, each device on either transport, its interrupts), the
    failure is one line saying what could not be done."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory() as d:
        disks = [os.path.join(d, name) for name in ("pci.img", "mmio.img")]
        for path in disks:
            with open(path, "wb") as f:
                f.truncate(1 << 20)
        args = ["run", "--no-control", "-m", "64M", "-c", "2",
                "-d", disks[0], "-d", disks[1] + ",mmio", "--balloon",
                "--rng=transport=mmio", "--console", "virtio",
                "--mem-hotplug=1G", "-p", "exit"]
        # Below 16, the C library's own needs fail first.
        for limit in range(16, 256):
            r = harness.run_cmd(["sh", "-c", 'ulimit -n "$0" && exec "$@"',
                                 str(limit), harness.THPVM] + args)
            if r.rc == 0:
                break
            one_error(r, "")
        else:
            assert False, "set-up still fails with 255 descriptors"
        assert limit > 32, limit


def test_sigterm_and_sigint_stop_cleanly():
    harness.require_kvm()
    for sig in (signal.SIGTERM, signal.SIGINT):
        p = start(["run", "--name", "sig", "-p", "serve"])
        wait_for_line(p, "^tg: serving")
        sock = harness.control_socket("sig")
        assert os.path.exists(sock)
        p.send_signal(sig)
        assert p.wait(timeout=30) == 0
        assert "terminating on signal" in harness.read_stderr(p)
        assert not os.path.exists(sock)


def test_terminal_restored():
    """Under a pseudo-terminal: raw while running, restored after SIGTERM
    and after Ctrl-A x."""
    harness.require_kvm()
    for how in ("sigterm", "escape"):
        master, slave = pty.openpty()
        before = termios.tcgetattr(slave)
        p = subprocess.Popen([harness.THPVM, "run", "-p", "serve"],
                             stdin=slave, stdout=slave, stderr=slave)
        harness._procs.append(p)
        out = b""
        deadline = time.monotonic() + 60
        while b"tg: serving" not in out and time.monotonic() < deadline:
            out += os.read(master, 4096)
        assert b"tg: serving" in out, out
        during = termios.tcgetattr(slave)
        assert not during[3] & termios.ICANON, "not raw while running"
        if how == "sigterm":
            p.send_signal(signal.SIGTERM)
        else:
            os.write(master, b"\x01x")
        assert p.wait(timeout=30) == 0
        after = termios.tcgetattr(slave)
        assert after == before, (before, after)
        os.close(master)
        os.close(slave)


def test_piped_stdin_and_its_eof_leave_the_vm_running():
    """Without a terminal, stdin is piped to the UART; its EOF does not stop
    the VM (the guest still finishes its checks)."""
    harness.require_kvm()
    p = subprocess.run([harness.THPVM, "run", "-p", "exit_status=0"],
                       input=b"hello\n", capture_output=True, timeout=60)
    assert p.returncode == 0, p
    assert b"tg: done passed=" in p.stdout, p


def test_closed_stdin():
    """CI runs without standard input: fd 0 closed must not become the
    console or a KVM handle."""
    harness.require_kvm()
    p = subprocess.run([harness.THPVM, "run", "-p", "cpus=1"],
                       capture_output=True, timeout=60,
                       preexec_fn=lambda: os.close(0))
    assert p.returncode == 0, p
    assert b"tg: done passed=" in p.stdout, p


if __name__ == "__main__":
    harness.main(globals())
