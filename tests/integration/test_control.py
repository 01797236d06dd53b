#!/usr/bin/env python3
"""A running VM driven through its control socket with the real CLI:
list, stat, pause, resume, stop; names, stale sockets, garbage."""
import ctypes
import json
import os
import resource
import socket
import stat
import tempfile
import time

import harness
from harness import (control_socket, ctl_json, one_error, run, start,
                     wait_for_line)

SERVE = "serve touch=all"


def serve(name, extra=()):
    harness.require_kvm()
    p = start(["run", "--name", name, "-m", "256M", "-p", SERVE] +
              list(extra))
    wait_for_line(p, r"^tg: serving")
    return p


def test_list_stat_pause_resume_stop():
    p = serve("vm1")
    vms = ctl_json(["list"])
    assert [v["name"] for v in vms] == ["vm1"], vms
    assert vms[0]["pid"] == p.pid and vms[0]["state"] == "running"
    assert vms[0]["vcpus"] == 1 and vms[0]["ram"] == 256 << 20
    r = run(["list"])
    assert r.rc == 0 and "vm1" in r.out and "running" in r.out, r

    st = ctl_json(["stat", "vm1"])
    assert st["ram"] == 256 << 20 and st["backing"] == "thp", st
    # The guest touched all of its RAM: the host backs it with huge pages.
    assert st["huge"] >= 0.99 * st["ram"], st
    assert st["resident"] >= st["huge"], st

    assert run(["pause", "vm1"]).rc == 0
    assert ctl_json(["stat", "vm1"])["state"] == "paused"
    r = run(["pause", "vm1"])
    assert r.rc == 1 and "already paused" in r.err, r
    assert run(["resume", "vm1"]).rc == 0
    assert ctl_json(["stat", "vm1"])["state"] == "running"
    one_error(run(["resume", "vm1"]), "VM is not paused", rc=1)

    assert harness.stop_and_wait(p, "vm1") == 0
    assert not os.path.exists(control_socket("vm1"))
    assert ctl_json(["list"]) == []


def thread_names(pid):
    """{tid: name} of pid's threads, as /proc/PID/task/*/comm says (what
    `top -H` and perf show)."""
    names = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names[int(tid)] = f.read().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue    # ended since the listing
    return names


def thread_id(pid, name):
    for tid, n in thread_names(pid).items():
        if n == name:
            return tid
    raise AssertionError(f"no thread {name} in {pid}")


def thread_cpu_s(pid, name):
    """CPU seconds (user + system) of pid's thread called name."""
    with open(f"/proc/{pid}/task/{thread_id(pid, name)}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_taken(pid, seconds):
    """CPU seconds vcpu0 of pid takes in the next `seconds`."""
    before = thread_cpu_s(pid, "vcpu0")
    time.sleep(seconds)
    return thread_cpu_s(pid, "vcpu0") - before


def test_pause_stops_a_busy_guest():
    """A guest that never exits to thpvm (the test guest reading its RAM
    at random in user mode, for good) is where pause matters: it must
    kick the vCPU out of KVM_RUN and wait until it is parked. For this
    guest CPU time is progress: while paused, vcpu0 takes none; resumed,
    it reads again; stop still ends it. A pause that did not kick would
    wait for ever (the wait is test_pause_waits_for_every_vcpu's)."""
    harness.require_kvm()
    p = start(["run", "--name", "busy", "-m", "256M", "-p",
               "touch=16M rand=1000000000000000 skip=smp,lapic,pit"])
    wait_for_line(p, r"^tg: touch bytes=16777216 ")
    busy = cpu_taken(p.pid, 1)
    assert busy >= 0.2, busy
    r = run(["pause", "busy"], timeout=30)
    assert r.rc == 0, r
    paused = cpu_taken(p.pid, 1)
    assert paused <= 0.05, (busy, paused)
    assert ctl_json(["stat", "busy"])["state"] == "paused"
    assert run(["resume", "busy"]).rc == 0
    resumed = cpu_taken(p.pid, 1)
    assert resumed >= 0.2, (busy, paused, resumed)
    assert harness.stop_and_wait(p, "busy") == 0


class HeldThread:
    """One thread of another process stopped by ptrace (PTRACE_SEIZE,
    PTRACE_INTERRUPT) and let go on leaving the block: held where it
    was, as a descheduled thread or a long exit would hold it, while the
    rest of its process runs on."""
    SEIZE, INTERRUPT, DETACH = 0x4206, 0x4207, 17
    WALL = 0x40000000

    def __init__(self, tid):
        self.tid = tid
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.argtypes = [ctypes.c_long] * 4
        self.libc.ptrace.restype = ctypes.c_long

    def call(self, request):
        if self.libc.ptrace(request, self.tid, 0, 0) < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"ptrace {request:#x} of {self.tid}: "
                          f"{os.strerror(err)}")

    def __enter__(self):
        self.call(self.SEIZE)
        self.call(self.INTERRUPT)
        os.waitpid(self.tid, self.WALL)
        return self

    def __exit__(self, *exc):
        self.call(self.DETACH)


def test_pause_waits_for_every_vcpu():
    """pause answers only once every vCPU is parked: with vcpu1 held
    (ptrace-stopped) it does not answer; let go, that vCPU parks and
    pause answers at once, the VM paused. A pause that did not wait would
    answer while vcpu1 could still run the guest."""
    p = serve("held", ["-c", "2"])
    with HeldThread(thread_id(p.pid, "vcpu1")):
        pause = harness.start_cmd([harness.THPVM, "pause", "held"])
        time.sleep(1)
        answered = pause.poll()
    assert answered is None, harness.read_stderr(pause)
    assert pause.wait(timeout=30) == 0, harness.read_stderr(pause)
    assert ctl_json(["stat", "held"])["state"] == "paused"
    assert run(["resume", "held"]).rc == 0
    assert harness.stop_and_wait(p, "held") == 0


def test_socket_permissions():
    p = serve("perm")
    d = os.path.dirname(control_socket("perm"))
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(control_socket("perm")).st_mode) == 0o600
    harness.stop_and_wait(p, "perm")


def test_no_thp_stat_reports_no_huge_pages():
    p = serve("nothp", ["--no-thp"])
    st = ctl_json(["stat", "nothp"])
    assert st["backing"] == "no-thp" and st["huge"] == 0, st
    assert st["resident"] >= 0.9 * st["ram"], st
    harness.stop_and_wait(p, "nothp")


def test_same_name_refused_first_vm_unharmed():
    p = serve("dup")
    r = run(["run", "--name", "dup", "-p", "exit"])
    assert r.rc == 1 and 'already running' in r.err, r
    assert ctl_json(["stat", "dup"])["state"] == "running"
    harness.stop_and_wait(p, "dup")


def test_stale_socket_is_replaced():
    harness.require_kvm()
    os.makedirs(os.path.dirname(control_socket("stale")), mode=0o700,
                exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(control_socket("stale"))
    s.close()			# bound, never listening: stale
    r = run(["run", "--name", "stale", "-p", "exit"])
    assert r.rc == 0, r
    assert not os.path.exists(control_socket("stale"))


def test_list_removes_stale_sockets():
    os.makedirs(os.path.dirname(control_socket("gone")), mode=0o700,
                exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(control_socket("gone"))
    s.close()
    assert ctl_json(["list"]) == []
    assert not os.path.exists(control_socket("gone"))


def test_unknown_vm_name():
    for cmd in ("stop", "pause", "resume", "stat"):
        r = run([cmd, "nosuchvm"])
        assert r.rc == 1, r
        assert 'no VM named "nosuchvm"' in r.err, r
        assert len(r.err.strip().splitlines()) == 1, r


# Hostile requests and the error each must get (a substring of it).
GARBAGE = [
    (b"not json\n", "invalid JSON at byte 3: invalid token near 'not'"),
    (b'{"cmd":\n', "invalid JSON at byte 7: unexpected token near end"),
    (b"[1,2]\n", "a request must be a JSON object"),
    (b"{}\n", 'a request needs "cmd" (a string)'),
    (b'{"cmd":"nope"}\n', 'unknown command "nope"'),
    (b"\x00\xff\xfe\n", "invalid JSON at byte 1: invalid token"),
    (b'{"cmd":' + b"[" * 5000 + b"\n", "maximum parsing depth reached"),
    (b"x" * 70000 + b"\n", "request line longer than 65536 bytes"),
    (b'{"cmd":"stat","cmd":"stat"}\n', 'member "cmd" given twice'),
    (b'{"cmd":"stat","x":1}\n', '"stat" takes no member "x"'),
    (b'{"cmd":"st\\u0000at"}\n', "\\u0000 in a string is not supported"),
    (b'{"cmd":"balloon","set":-1}\n', '"set" must be a size in bytes'),
    (b'{"cmd":"balloon","set":"big"}\n', '"set" must be a size in bytes'),
    (b'{"cmd":"balloon","set":1.5}\n', '"set" must be a size in bytes'),
    (b'{"cmd":"balloon","set":1e400}\n', "real number overflow"),
    (b'{"cmd":"balloon","set":4097}\n', "must be a multiple of 4 KiB"),
    (b'{"cmd":"stop","extra":[1]}\n', '"stop" takes no member'),
]


def test_garbage_on_socket_vm_unharmed():
    """Each hostile request gets its own error reply; the VM serves on,
    takes a good request, and ends with status 0 (a sanitizer report
    would make it fail)."""
    p = serve("junk", ["--balloon"])
    for junk, error in GARBAGE:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(control_socket("junk"))
        s.sendall(junk)
        reply = s.makefile().readline()
        s.close()
        msg = json.loads(reply)
        assert msg["ok"] is False and error in msg["error"], (junk[:60],
                                                              reply)
    # A client that connects and says nothing, and one that hangs up.
    idle = socket.socket(socket.AF_UNIX)
    idle.connect(control_socket("junk"))
    s = socket.socket(socket.AF_UNIX)
    s.connect(control_socket("junk"))
    s.sendall(b"{\"cmd\":\"stat\"}\n")
    s.close()
    st = ctl_json(["stat", "junk"])
    assert st["state"] == "running", st
    assert run(["balloon", "junk", "--set", "64M"]).rc == 0
    idle.close()
    assert p.poll() is None
    assert harness.stop_and_wait(p, "junk") == 0


def test_run_json_reports_how_it_ended():
    harness.require_kvm()
    r = run(["run", "--json", "--name", "j1", "-p", "exit_status=3"])
    assert r.rc == 3, r
    assert json.loads(r.err.strip().splitlines()[-1]) == {
        "name": "j1", "exit_status": 3, "reason": "guest"}, r
    p = serve("j2", ["--json"])
    harness.stop_and_wait(p, "j2")
    end = json.loads(harness.read_stderr(p).strip().splitlines()[-1])
    assert end == {"name": "j2", "exit_status": 0, "reason": "stop"}, end
    p = serve("j3", ["--json"])
    p.terminate()
    assert p.wait(timeout=30) == 0
    end = json.loads(harness.read_stderr(p).strip().splitlines()[-1])
    assert end["reason"] == "signal", end
    r = run(["run", "--json", "--name", "j4", "-k", "/nonexistent"])
    assert r.rc == 1, r
    assert json.loads(r.err.strip().splitlines()[-1])["reason"] == "failure"


def test_control_socket_elsewhere_or_none():
    """--control-socket PATH: commands name the VM by that path and list
    does not show it; --no-control: no socket, a signal stops the VM."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-ctl-") as d:
        path = os.path.join(d, "vm.sock")
        p = start(["run", "--name", "own", "--control-socket", path,
                   "-p", SERVE])
        wait_for_line(p, r"^tg: serving")
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert ctl_json(["stat", path])["name"] == "own"
        r = run(["stat", "-m", "-n", path])
        assert r.rc == 0 and "Name: own" in r.out, r
        assert ctl_json(["list"]) == []
        one_error(run(["run", "--control-socket", path, "-p", "exit"]),
                  f"--control-socket {path}: another VM listens there", 1)
        assert harness.stop_and_wait(p, path) == 0
        assert not os.path.exists(path)
        one_error(run(["stop", path]), f"no VM listens on {path}", 1)
    p = start(["run", "--name", "quiet", "--no-control", "-p", SERVE])
    wait_for_line(p, r"^tg: serving")
    assert not os.path.exists(control_socket("quiet"))
    assert ctl_json(["list"]) == []
    p.terminate()
    assert p.wait(timeout=30) == 0


def test_control_socket_errors_name_the_path():
    """A socket that cannot be made is named, with the ways out."""
    harness.require_kvm()
    env = dict(os.environ, HOME="/nonexistent/home")
    del env["XDG_RUNTIME_DIR"]
    r = run(["run", "-p", "exit"], env=env)
    one_error(r, "cannot create the control socket directory "
              "/nonexistent/home/.thpvm: No such file or directory (use "
              "--control-socket PATH, or --no-control)", 1)
    # The way out works from there.
    assert run(["run", "--no-control", "-p", "exit"], env=env).rc == 0
    one_error(run(["run", "--control-socket", "/nonexistent/x.sock", "-p",
                   "exit"]), "cannot create the control socket "
              "/nonexistent/x.sock: No such file or directory", 1)
    one_error(run(["run", "--control-socket", "/a", "--no-control"]),
              "exclude each other", 2)


def test_threads_are_named():
    """Every thread says what it is in /proc/PID/task/*/comm (what
    `top -H` and perf show); only the main thread is called thpvm."""
    harness.require_kvm()
    with tempfile.NamedTemporaryFile(prefix="thpvm-disk-") as disk, \
            tempfile.NamedTemporaryFile(prefix="thpvm-disk-") as disk1:
        disk.truncate(1 << 20)
        disk1.truncate(1 << 20)
        p = serve("named", ["-c", "2", "-d", disk.name,
                            "-d", disk1.name + ",aio=threads", "--balloon",
                            "--rng"])
        names = list(thread_names(p.pid).values())
        harness.stop_and_wait(p, "named")
    assert names.count("thpvm") == 1, names
    # blk0 runs on io_uring (the kernel's iou-wrk threads help it),
    # blk1 on worker threads of its own.
    for want in ("vcpu0", "vcpu1", "control", "blk0", "blk1", "blk1-io",
                 "balloon0", "rng0"):
        assert want in names, (want, names)
    assert "blk0-io" not in names, names


def console_serving(path, timeout=60):
    """A client of the console socket at path, once the guest said it
    serves."""
    deadline = time.monotonic() + timeout
    out = b""
    while True:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    s.settimeout(timeout)
    while b"tg: serving" not in out:
        data = s.recv(65536)
        assert data, out
        out += data
    return s


def test_out_of_descriptors_rests():
    """With no descriptor left, a client's connection waits in the
    listen queue and accept() fails, the socket staying readable: the
    control and console-socket threads rest between tries instead of
    spinning on it (a second of spinning is a second of CPU), and serve
    the clients once descriptors are back."""
    harness.require_kvm()
    console = harness.console_socket("nofd")
    p = start(["run", "--name", "nofd", "-m", "256M", "-p", SERVE,
               "--console-socket", console])
    first = console_serving(console)
    limit = resource.prlimit(p.pid, resource.RLIMIT_NOFILE)
    in_use = len(os.listdir(f"/proc/{p.pid}/fd"))
    resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (in_use, limit[1]))
    ctl = socket.socket(socket.AF_UNIX)
    ctl.connect(control_socket("nofd"))
    ctl.sendall(b'{"cmd":"stat"}\n')
    con = socket.socket(socket.AF_UNIX)
    con.connect(console)
    threads = ("control", "console-sock")
    time.sleep(0.2)
    before = [thread_cpu_s(p.pid, t) for t in threads]
    time.sleep(1)
    spent = [thread_cpu_s(p.pid, t) - b for t, b in zip(threads, before)]
    resource.prlimit(p.pid, resource.RLIMIT_NOFILE, limit)
    assert all(s < 0.1 for s in spent), dict(zip(threads, spent))
    ctl.settimeout(10)
    assert json.loads(ctl.makefile().readline())["state"] == "running"
    con.settimeout(10)
    seen = b""
    while b"tg: serving" not in seen:
        data = con.recv(65536)
        assert data, seen
        seen += data
    for sock in (ctl, con, first):
        sock.close()
    assert harness.stop_and_wait(p, "nofd") == 0
    err = harness.read_stderr(p)
    for what in ("control socket", "console socket"):
        assert f"{what}: accept: Too many open files" in err, err


def test_usage_errors_exit_2():
    for args, why in ((["stat"], "stat: missing VM name"),
                      (["stop", "a", "b"], 'unexpected argument "b"'),
                      (["bogus"], 'unknown command "bogus"'),
                      (["list", "-x"], 'unknown option "-x"'),
                      (["run", "-m", "12Q"], "-m 12Q: expected a size"),
                      (["run", "-c", "0"], "-c 0: expected a number of vCPUs")):
        one_error(run(args), why, rc=2)


def test_help_and_version():
    r = run(["help"])
    assert r.rc == 0 and "run" in r.out, r
    for cmd in ("run", "sandbox", "list", "stop", "pause", "resume", "stat",
                "version", "help"):
        for args in (["help", cmd], [cmd, "--help"]):
            r = run(args)
            assert r.rc == 0 and "usage: thpvm " + cmd in r.out, (args, r)
    v = ctl_json(["version"])
    assert v["version"], v


if __name__ == "__main__":
    harness.main(globals())
