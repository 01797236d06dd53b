#!/usr/bin/env python3
"""Detached VMs and their console: `thpvm run --detach` (and QEMU's
--daemonize) returns once the VM's control socket is ready, the VM goes
on with its console on a socket beside it, `thpvm list` shows it, and
`thpvm console NAME` (on a pty, as a user's terminal) shows the
scrollback and what follows, sends what is typed to the guest (the
serial console, or the virtio-console with --console virtio), and
Ctrl-] detaches, leaving the VM running until `thpvm stop`. And
--console-socket PATH without --detach."""
import os
import re
import select
import signal
import socket
import tempfile
import time

import harness
from harness import ctl_json, one_error, run

QUIET = "skip=smp,lapic,pit"


def detach(name, params, extra=()):
    """A detached VM; returns its info from thpvm list."""
    harness.require_kvm()
    t0 = time.monotonic()
    r = run(["run", "--detach", "--name", name, *extra, "-p", params],
            timeout=60)
    assert r.rc == 0, r
    # Nothing on stdout: the console went to the socket.
    assert r.out == "", r
    assert f"thpvm console {name}" in r.err, r
    assert time.monotonic() - t0 < 30, r
    vms = {v["name"]: v for v in ctl_json(["list"])}
    assert vms[name]["state"] == "running", vms
    return vms[name]


def cleanup(info):
    """Kills a detached VM a failed test left (harness does not know
    it)."""
    try:
        os.kill(info["pid"], signal.SIGKILL)
    except ProcessLookupError:
        pass


class Console(harness.Pty):
    """thpvm console on a pty, as a user's terminal."""

    def __init__(self, *args):
        super().__init__([harness.THPVM, "console", *args])

    def wait(self, timeout=10):
        """Its exit status, once it ends, and the rest of its output."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                try:
                    while select.select([self.fd], [], [], 0.2)[0]:
                        data = os.read(self.fd, 65536)
                        if not data:
                            break
                        self.buf += data
                except OSError:
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(st)
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"thpvm console did not end: {self.buf!r}")


def test_detach_and_attach_serial():
    info = detach("d1", f"{QUIET} echo serve")
    try:
        assert info["console_socket"].endswith("/d1.console"), info
        assert os.path.exists(info["console_socket"])
        r = run(["list"])
        assert re.search(r"^d1 .* socket$", r.out, re.M), r
        con = Console("d1")
        # The scrollback: the boot, and the guest waiting for a line.
        con.expect(r"Connected to the console of VM \"d1\"; Ctrl-\] "
                   r"detaches")
        con.expect(r"tg: cmdline=skip=smp,lapic,pit echo serve")
        con.expect(r"tg: echo ready")
        con.send(b"typed on a pty\n")
        con.expect(r"tg: ok echo text=typed on a pty")
        con.expect(r"tg: serving")
        con.send(b"\x1d")
        assert con.wait() == 0
        assert b"Detached from VM \"d1\"" in con.buf, con.buf
        # The VM goes on; a second attach gets the scrollback again.
        assert ctl_json(["stat", "d1"])["state"] == "running"
        con = Console("-n", "d1")
        con.expect(r"tg: serving")
        con.send(b"\x1d")
        assert con.wait() == 0
        assert run(["stop", "d1"]).rc == 0
        # Gone when stop returns, not only once the VM process ends.
        assert not os.path.exists(info["console_socket"])
        assert ctl_json(["list"]) == []
    finally:
        cleanup(info)


def test_daemonize_virtio_console():
    """QEMU's spelling, and the virtio-console on the socket: the test
    guest's vcons check gets its line through it. thpvm console -p PID
    finds it; the VM ending ends the session."""
    info = detach("d2", f"{QUIET} vcons", ("--daemonize", "--console",
                                              "virtio"))
    try:
        con = Console("-p", str(info["pid"]))
        con.expect(r"tg: vcons ready")
        con.send(b"over the console socket\n")
        con.expect(r"tg: ok vcons \S+ text=over the console socket ")
        con.expect(r"tg: done passed=\d+ failed=0")
        # The guest exits: the VM ends, and so does the session.
        assert con.wait(timeout=30) == 0
        assert b"the VM ended" in con.buf, con.buf
    finally:
        cleanup(info)


def test_console_errors():
    harness.require_kvm()
    one_error(run(["console", "nosuch"]), 'no VM named "nosuch"', 1)
    one_error(run(["console"]), "", 2)
    p = harness.start(["run", "--name", "fg", "-p", f"{QUIET} serve"])
    harness.wait_for_line(p, "tg: serving")
    one_error(run(["console", "fg"]), 'VM "fg" has its console on the '
              "terminal it was started on", 1)
    assert "console_socket" not in ctl_json(["list"])[0]
    assert harness.stop_and_wait(p, "fg") == 0
    one_error(run(["run", "--detach", "--no-control"]),
              "--detach needs the control socket", 2)


def test_console_socket_in_foreground():
    """--console-socket PATH without --detach: thpvm's stdout gets
    nothing; a plain socket client gets the scrollback, and so does a
    second one at the same time."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-con-") as tmp:
        path = os.path.join(tmp, "c.sock")
        p = harness.start(["run", "--name", "fs", "--console-socket", path,
                           "-p", f"{QUIET} serve"])
        deadline = time.monotonic() + 60
        while "fs" not in [v["name"] for v in ctl_json(["list"])]:
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.1)
        assert ctl_json(["stat", "fs"])["console_socket"] == path
        clients = []
        for _ in range(2):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.settimeout(30)
            clients.append(s)
        for s in clients:
            got = b""
            while b"tg: serving" not in got:
                data = s.recv(65536)
                assert data, got
                got += data
        assert harness.stop_and_wait(p, "fs") == 0
        assert p.stdout.read() == b""
        assert not os.path.exists(path)
        for s in clients:
            s.close()


if __name__ == "__main__":
    harness.main(globals())
