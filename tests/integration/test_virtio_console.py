#!/usr/bin/env python3
"""thpvm run --console virtio: the test guest's vcons check sends a line
on the virtio-console's transmit queue and reads one typed on thpvm's
stdin from its receive queue, on PCI and on virtio-mmio. And a VM
started in the background of an interactive shell (`thpvm run ... &`)
is not stopped by the terminal: it leaves the terminal's modes alone
and reads nothing until it is brought to the foreground (fg), where it
takes the terminal in raw mode (Ctrl-A x stops it) and gives it back."""
import os
import re
import signal
import subprocess
import termios
import time

import harness
from harness import run, start, wait_for_line

QUIET = "skip=smp,lapic,pit"


def check_vcons(transport_args, where):
    harness.require_kvm()
    p = start(["run", "--console", "virtio"] + transport_args +
              ["-p", f"{QUIET} vcons"], stdin=subprocess.PIPE)
    # The guest's own line, through the transmit queue.
    wait_for_line(p, r"^tg: vcons ready$")
    p.stdin.write(b"typed for hvc0\n")
    p.stdin.flush()
    lines = wait_for_line(p, r"^tg: (ok|FAIL) vcons ", timeout=30)
    assert re.match(rf"tg: ok vcons {where}\S* .*text=typed for hvc0 ",
                    lines[-1]), lines
    assert p.wait(timeout=30) == 0, harness.read_stderr(p)


def test_vcons_pci():
    check_vcons([], "bdf=")


def test_vcons_mmio():
    check_vcons(["--virtio-transport", "mmio"], "mmio=")


def test_serial_console_has_no_vcons():
    """Without --console virtio there is no such device: the check
    fails, and what is typed goes to the UART."""
    harness.require_kvm()
    r = harness.run_guest(f"{QUIET} vcons")
    assert r.rc != 0 and "tg: FAIL vcons reason=no-device" in r.out, r


class Shell(harness.Pty):
    """An interactive bash on a pty, so with job control: the terminal
    stops a background job that reads it or changes its modes."""

    def __init__(self):
        super().__init__(["bash", "--norc", "--noprofile", "-i"])
        self.send("PS1='$ '; stty tostop\n")

    def command(self, line, timeout=60):
        """Runs line; returns its output, up to a marker it prints."""
        self.send(f"{line}; echo END-$((40 + 2))\n")
        return self.expect(r"END-42", timeout)

    def wait_raw(self, timeout=30):
        """Until the foreground program has taken the terminal in raw
        mode (ISIG off, which bash's line editing leaves on): what is
        typed before that, its switch flushes."""
        lflag = harness.wait_until(lambda: termios.tcgetattr(self.fd)[3],
                                   lambda f: not f & termios.ISIG, timeout)
        assert not lflag & termios.ISIG, "never in raw mode"

    def modes(self):
        """The terminal's settings, as stty -g prints them."""
        out = self.command("stty -g")
        m = re.search(r"\b([0-9a-f]+(?::[0-9a-f]+){20,})\b", out)
        assert m, out
        return m.group(1)

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_background_run_not_stopped():
    harness.require_kvm()
    sh = Shell()
    try:
        modes = sh.modes()
        sh.send(f"{harness.THPVM} run --name bg -p '{QUIET} serve' &\n")
        sh.expect(r"tg: serving")
        time.sleep(1)
        jobs = sh.command("jobs -l")
        assert "Running" in jobs and "Stopped" not in jobs, jobs
        assert sh.modes() == modes
        # thpvm stop works on it, and it ends as it should.
        assert run(["stop", "bg"]).rc == 0
        # thpvm stop returns before thpvm has exited.
        assert "status=0" in sh.command("wait $!; echo status=$?")

        # Brought to the foreground, it takes the terminal: Ctrl-A x
        # (raw mode) stops it, and the modes are back afterwards.
        sh.send(f"{harness.THPVM} run --name fg -p '{QUIET} serve' &\n")
        sh.expect(r"tg: serving")
        sh.send("fg\n")
        sh.wait_raw()
        sh.send(b"\x01x")
        sh.expect(r"stopping the VM \(Ctrl-A x\)")
        assert sh.modes() == modes
    finally:
        # A check that failed leaves the shell's jobs running, and
        # killing the shell does not end them. Stopping them must not
        # hide that failure: a stop that fails is only said.
        for name in ("bg", "fg"):
            try:
                run(["stop", name])
            except Exception as e:  # noqa: BLE001 (any, after a failure)
                print(f"# stopping {name}: {e!r}")
        sh.close()


if __name__ == "__main__":
    harness.main(globals())
