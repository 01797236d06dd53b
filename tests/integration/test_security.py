#!/usr/bin/env python3
"""The process around a running VM: every thread under a seccomp filter
(and none with --seccomp=off), a forbidden call ending the VM with a
line that names it, no_new_privs, --user dropping root in
every thread, and control and console sockets that refuse clients of
another user by their credentials."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import harness
from harness import one_error, read_stderr, run, start, wait_for_line

SERVE = "serve touch=all"
NOBODY = 65534


def thread_status(pid):
    """{thread name: /proc status fields} of each thread of pid, but
    those KVM starts in the process itself (kvm-nx-lpage-recovery), which
    run no code of ours."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                fields = dict(line.split(":\t", 1) for line in f
                              if ":\t" in line)
        except (FileNotFoundError, ProcessLookupError):
            continue    # ended since the listing (an io_uring worker)
        if fields["Name"].startswith("kvm-"):
            continue
        threads[f"{fields['Name'].strip()}/{tid}"] = {
            k: v.strip() for k, v in fields.items()}
    return threads


def serve(name, extra=()):
    """A VM with a thread of each kind: vCPUs, device threads (a disk on
    io_uring, one with worker threads, rng, balloon, a 9p share, the
    network), the 9p share's workers, control, console socket, the
    user-mode network's stack."""
    harness.require_kvm()
    disks = [tempfile.NamedTemporaryFile(suffix=".img") for _ in range(2)]
    for disk in disks:
        disk.truncate(4 << 20)
    share = tempfile.TemporaryDirectory()
    p = start(["run", "--name", name, "-m", "256M", "-c", "2",
               "-d", disks[0].name, "-d", disks[1].name + ",aio=threads",
               "--rng", "--balloon", "--9p", share.name + ",sec",
               "--console-socket", harness.console_socket(name),
               "-n", "mode=user", "-p", SERVE] + list(extra))
    p.disks = disks
    p.share = share
    return p


WANT = ("vcpu0", "vcpu1", "blk0", "blk1-io", "rng0", "balloon0", "9p0",
        "9p0-io", "control", "console-sock", "net0", "net-user")


def wait_threads(p, seccomp):
    """p's threads once each kind runs and has set itself up (a thread
    shows before it installs its filter)."""
    deadline = time.monotonic() + 60
    while True:
        threads = thread_status(p.pid)
        names = [re.sub(r"/\d+$", "", n) for n in threads]
        if (all(any(n.startswith(w) for n in names) for w in WANT) and
                all(t["Seccomp"] == seccomp for t in threads.values())):
            return threads
        if p.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"threads: {names}, "
                                 f"{[t['Seccomp'] for t in threads.values()]}")
        time.sleep(0.1)


def test_every_thread_filtered():
    p = serve("sec")
    threads = wait_threads(p, "2")
    for name, st in threads.items():
        assert int(st["Seccomp_filters"]) >= 1, (name, st)
        assert st["NoNewPrivs"] == "1", (name, st["NoNewPrivs"])
    assert harness.stop_and_wait(p, "sec") == 0
    assert "seccomp" not in read_stderr(p)


def thread_tid(pid, name):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == name:
                    return int(tid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    raise AssertionError(f"no thread {name} in {pid}")


def forbidden_call_in(thread, kind, call="socket",
                      expr="((int (*)(int, int, int))socket)(1, 1, 0)"):
    """A running VM's thread made to call socket() (in no kind's list
    but net-user's), or expr making system call `call`, by gdb, as a
    compromised thread would: no hook in thpvm. The VM must end with 159
    and the line naming the call and the kind."""
    gdb = shutil.which("gdb")
    assert gdb, "gdb is needed (.ci/packages)"
    p = serve("forbid" + kind)
    wait_threads(p, "2")
    r = subprocess.run(
        [gdb, "-batch", "-nx", "-p", str(thread_tid(p.pid, thread)),
         "-ex", "handle SIGSYS nostop noprint pass",
         "-ex", f"call {expr}"],
        capture_output=True, text=True, timeout=60)
    assert p.wait(timeout=30) == 159, r
    err = read_stderr(p)
    assert re.search(rf"^thpvm: seccomp: {kind} thread made forbidden "
                     rf"system call {call} \(nr \d+\)$", err, re.M), err


def test_forbidden_call_from_device_thread():
    forbidden_call_in("rng0", "device")


def test_forbidden_call_from_9p_worker():
    forbidden_call_in("9p0-io", "9p")


def test_forbidden_call_from_vcpu_thread():
    forbidden_call_in("vcpu1", "vCPU")


def test_forbidden_call_from_net_user_thread():
    """libslirp's thread makes sockets, but may not leave its namespaces."""
    forbidden_call_in("net-user", "net-user", "unshare",
                      "((int (*)(int))unshare)(0)")


def test_seccomp_off():
    p = serve("open", ["--seccomp=off"])
    wait_threads(p, "0")
    # A thread shows 0 until it loads a filter: look again once every
    # thread has long been set up.
    time.sleep(1)
    for name, st in wait_threads(p, "0").items():
        assert st["NoNewPrivs"] == "1", (name, st["NoNewPrivs"])
    assert harness.stop_and_wait(p, "open") == 0


def test_seccomp_bad_value():
    one_error(run(["run", "--seccomp=maybe"]),
              "--seccomp maybe: expected on or off", 2)


def drops_root(name, user, uid, gid):
    """A VM run with --user user: every thread as uid and gid."""
    if os.geteuid() != 0:
        harness.skip("needs root to drop it")
    p = serve(name, ["--user", user])
    # Threads started before the drop (device threads, under their
    # filters) follow it too.
    for thread, st in wait_threads(p, "2").items():
        assert st["Uid"].split() == [str(uid)] * 4, (thread, st["Uid"])
        assert st["Gid"].split() == [str(gid)] * 4, (thread, st["Gid"])
        assert st["Groups"].split() == [str(gid)], (thread, st["Groups"])
    # root still controls it; the disk, /dev/kvm and the sockets were
    # opened before the drop.
    assert harness.stop_and_wait(p, name) == 0
    assert "seccomp" not in read_stderr(p)


def test_user_drops_root():
    drops_root("asnobody", "nobody", NOBODY, NOBODY)


def test_user_ids_drop_root():
    """UID:GID, no user database: ids that need not be anyone's."""
    drops_root("asids", "4321:8765", 4321, 8765)


def test_user_unknown():
    one_error(run(["run", "--user", "no-such-user-here"]),
              "--user no-such-user-here: no such user", 1)


def test_user_ids_refused():
    """Malformed ids and uid 0, refused before anything is opened (only
    root gets that far: others are refused --user altogether)."""
    if os.geteuid() != 0:
        harness.skip("needs root: --user is refused before the ids are read")
    for bad in ("1:x", ":5", "5:", "4294967295:1", "1:2:3"):
        one_error(run(["run", "--user", bad]),
                  f"--user {bad}: expected a user name or UID:GID", 1)
    one_error(run(["run", "--user", "0:5"]),
              "--user 0:5: that is root, nothing would be dropped", 1)


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def open_to_others(sock):
    """Lets another user reach sock (in $XDG_RUNTIME_DIR) past its file
    modes: only its credentials stop that user now."""
    runtime = os.environ["XDG_RUNTIME_DIR"]
    os.chmod(runtime, 0o755)
    d = os.path.dirname(sock)
    while d != runtime:
        os.chmod(d, 0o777)
        d = os.path.dirname(d)
    os.chmod(sock, 0o666)


def refused_once(p, socket_name):
    """p's stderr has one refusal, of nobody's client on socket_name."""
    refused = [l for l in read_stderr(p).splitlines() if "refused" in l]
    assert len(refused) == 1, refused
    assert re.search(rf"{socket_name}: refused a client of uid {NOBODY} "
                     rf"\(pid \d+\): only uid 0 and root", refused[0]), refused


def test_peer_credentials():
    if os.geteuid() != 0:
        harness.skip("needs root to run a client as another user")
    p = serve("creds")
    wait_threads(p, "2")
    open_to_others(harness.control_socket("creds"))
    r = subprocess.run([harness.THPVM, "stat", "creds"], timeout=30,
                       capture_output=True, text=True, preexec_fn=as_nobody)
    assert r.returncode != 0 and "RAM:" not in r.stdout, r
    # root still gets in.
    assert run(["stat", "creds"], timeout=30).rc == 0
    assert harness.stop_and_wait(p, "creds") == 0
    refused_once(p, "control socket")


def console_client(sock, user=None):
    """Connects to the console socket sock (as user, a function that
    drops to it, in a child of ours) and waits for the server to hang up:
    "closed" when it does, "open" while it still serves after a while."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(rd)
            if user:
                user()
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            s.settimeout(2)
            try:
                while s.recv(4096):
                    pass
                os.write(wr, b"closed")
            except TimeoutError:
                os.write(wr, b"open")
            status = 0
        finally:
            os._exit(status)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        said = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert status == 0, f"console client: status {status:#x}"
    return said


def test_console_peer_credentials():
    """The console socket's clients type into the guest: another user's
    is refused as on the control socket."""
    if os.geteuid() != 0:
        harness.skip("needs root to run a client as another user")
    p = serve("conscreds")
    wait_threads(p, "2")
    sock = harness.console_socket("conscreds")
    open_to_others(sock)
    assert console_client(sock, as_nobody) == "closed"
    # root is still served.
    assert console_client(sock) == "open"
    assert harness.stop_and_wait(p, "conscreds") == 0
    refused_once(p, "console socket")


if __name__ == "__main__":
    harness.main(globals())
