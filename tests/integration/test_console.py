#!/usr/bin/env python3
"""The guest's console output when thpvm's stdout is not read (a full
pipe, a terminal stopped with Ctrl-S): the VM still stops on `thpvm stop`
and on SIGTERM, promptly, and what waited comes out once the reader
reads again. And --console-filter: what a guest prints to retitle the
terminal, write its clipboard or make it answer is removed, colours and
text pass; without it the output is raw."""
import fcntl
import os
import signal
import subprocess
import time

import harness
from harness import ctl_json, run, start, wait_for_line

F_SETPIPE_SZ = 1031
STOP_WITHIN_S = 10


def full_pipe():
    """A pipe whose reader has stopped reading: filled to the last byte,
    its write end blocking again (as a terminal or a pipe is handed to
    thpvm). Returns (read end, write end, bytes it holds)."""
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
    held = 0
    for size in (4096, 1):
        try:
            while True:
                held += os.write(w, b"f" * size)
        except BlockingIOError:
            pass
    fcntl.fcntl(w, fcntl.F_SETFL, 0)
    return r, w, held


def start_unread(name):
    """thpvm serving the test guest with a full pipe as stdout; returns
    the process and the pipe's read end, once the guest has printed into
    the stalled pipe."""
    harness.require_kvm()
    r, w, held = full_pipe()
    p = harness.start(["run", "--name", name, "-p", "serve"], stdout=w)
    os.close(w)
    deadline = time.monotonic() + 60
    while True:
        assert p.poll() is None, f"thpvm ended: {harness.read_stderr(p)}"
        assert time.monotonic() < deadline, "the guest printed nothing"
        vms = ctl_json(["list"])
        if any(v["name"] == name for v in vms):
            st = ctl_json(["stat", name])
            if st["console_pending"] > 0:
                break
        time.sleep(0.2)
    # Whatever it prints next has to wait too; the VM goes on.
    time.sleep(1)
    st = ctl_json(["stat", name])
    assert st["state"] == "running" and st["console_pending"] > 0, st
    return p, r, held


def wait_exit(p, since):
    try:
        rc = p.wait(timeout=STOP_WITHIN_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"thpvm still running {STOP_WITHIN_S} s after it was told "
            f"to stop") from None
    return rc, time.monotonic() - since


def one_drop_line(err):
    lines = [ln for ln in err.splitlines() if "guest output were dropped"
             in ln]
    assert len(lines) == 1, err
    assert "stdout was not read" in lines[0], err


def test_stop_with_unread_stdout():
    p, r, _ = start_unread("unread")
    t0 = time.monotonic()
    res = run(["stop", "unread"], timeout=STOP_WITHIN_S)
    assert res.rc == 0, res
    rc, took = wait_exit(p, t0)
    err = harness.read_stderr(p)
    assert rc == 0, err
    assert took < 5, f"{took:.1f} s to stop"
    # The output still waiting when it ended is counted once, at exit.
    one_drop_line(err)
    os.close(r)


def test_sigterm_with_unread_stdout():
    p, r, _ = start_unread("unread-term")
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    rc, took = wait_exit(p, t0)
    err = harness.read_stderr(p)
    assert rc == 0, err
    assert took < 5, f"{took:.1f} s to stop"
    assert "terminating on signal 15" in err, err
    one_drop_line(err)
    os.close(r)


def test_output_resumes_when_read_again():
    """Ctrl-S, then Ctrl-Q: once the reader reads again, every line the
    guest printed meanwhile comes out, in order, and nothing was
    dropped."""
    p, r, held = start_unread("resume")
    os.set_blocking(r, True)
    while held:
        held -= len(os.read(r, held))
    out = b""
    deadline = time.monotonic() + 30
    while b"tg: serving\n" not in out:
        assert time.monotonic() < deadline, out
        out += os.read(r, 65536)
    st = ctl_json(["stat", "resume"])
    assert st["console_pending"] == 0 and st["console_dropped"] == 0, st
    tg = harness.parse_tg(out.decode(errors="replace"))
    assert tg["done"]["failed"] == "0", out
    assert out.startswith(b"tg: "), out[:200]
    assert harness.stop_and_wait(p, "resume") == 0
    err = harness.read_stderr(p)
    assert "dropped" not in err, err
    os.close(r)


# What the test guest echoes: a title, a clipboard write, a cursor
# report request, a full reset, and colours around the text.
HOSTILE = ("\x1b]0;owned\x07A\x1b]52;c;aGk=\x1b\\\x1b[31mB\x1b[0m"
           "\x1b[6nC\x1bcD")
FILTERED = "A\x1b[31mB\x1b[0mCD"


def echoed(args, name):
    """The echo line of a guest that echoes HOSTILE, then thpvm stat's
    JSON reply and its Console output line while the guest serves."""
    p = start(["run", "--name", name, "-p", "skip=smp,lapic,pit echo serve"]
              + args, stdin=subprocess.PIPE)
    wait_for_line(p, "^tg: echo ready")
    p.stdin.write(HOSTILE.encode() + b"\n")
    p.stdin.flush()
    line = wait_for_line(p, "^tg: ok echo ", timeout=30)[-1]
    wait_for_line(p, "^tg: serving")
    st = ctl_json(["stat", name])
    text = [ln for ln in run(["stat", name]).out.splitlines()
            if ln.startswith("Console output:")]
    assert harness.stop_and_wait(p, name) == 0
    return line, st, text


def test_console_raw_by_default():
    harness.require_kvm()
    line, st, text = echoed([], "raw")
    assert line == "tg: ok echo text=" + HOSTILE, repr(line)
    assert "console_filtered" not in st, st
    assert text == ["Console output: 0 bytes waiting for stdout, "
                    "0 dropped"], text


def test_console_filter():
    harness.require_kvm()
    line, st, text = echoed(["--console-filter"], "filtered")
    assert line == "tg: ok echo text=" + FILTERED, repr(line)
    removed = len(HOSTILE) - len(FILTERED)
    assert st["console_filtered"] == removed, st
    assert text == ["Console output: 0 bytes waiting for stdout, 0 dropped, "
                    f"{removed} removed by the filter"], text


if __name__ == "__main__":
    harness.main(globals())
