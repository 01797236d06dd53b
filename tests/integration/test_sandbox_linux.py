#!/usr/bin/env python3
"""thpvm sandbox -- CMD with Debian's kernel and the guest kit's
initramfs (docs/sandbox.md): the guest's / is the host's, read-only over
9p; CMD runs in the directory thpvm was started in, shared read-write,
and its exit status is thpvm's; its arguments reach it byte for byte;
SIGTERM stops it; the throw-away directory (under $XDG_RUNTIME_DIR, a
fresh one here) is gone afterwards and nothing on the host changed but
what CMD wrote in its directory; with -n mode=user, a network that
needs no set-up. Four boots, on a capable host
(tests/hosts/svm_host.py provides one here); a VM that never runs the
command needs no boot."""
import hashlib
import os
import signal
import stat
import tempfile

import harness
from http_blob import HttpBlob
from p9_share import snapshot
from test_linux_initramfs import (again_if_died, build_image,
                                  require_capable)

HELLO = "put here by the host"
WRITTEN = "written by the guest"
# The tests' directories: beside the binary under test, in its build
# directory (meson runs tests with no BUILD of ours set); one boot's
# under /tmp, which the guest's own tmpfs hide until thpvm's script
# mounts the directory there.
SCRATCH = os.path.dirname(harness.THPVM)
# Words a shell would split, expand or end a line at.
AWKWARD = ["a b", "it's", '"double"', "$HOME", "$(echo no)", "`echo no`",
           "back\\slash", "*", "line\ntwo", "", "-n"]
MISSING = ("thpvm: error: sandbox: the command's exit status is missing: "
           "the guest did not finish it (see its console output)")
PVM = ("thpvm: warning: sandbox: this host's KVM is PVM, which cannot run "
       "a stock Linux kernel to user space; trying anyway")
SCRIPT = ('echo "sandbox: hello from $(uname -r) in $(pwd)"; '
          'echo "sandbox: file $(cat hello.txt)"; '
          f'echo "{WRITTEN}" >hello.txt && echo "sandbox: file changed"; '
          'echo ok > result; '
          'echo t >/tmp/t && echo "sandbox: tmp writable"; '
          'exit 3')


def runtime_dir():
    """A fresh $XDG_RUNTIME_DIR under $TMPDIR, not SCRATCH: thpvm run
    makes its control socket there, and a socket on a 9p share (the
    emulated host shares the build directory so) cannot be connected
    to, as QEMU's 9p server opens no special files. The guest's /tmp
    hiding it does not matter: thpvm shares the throw-away directory in
    it under its own tag."""
    return tempfile.TemporaryDirectory(prefix="sandbox-runtime-")


def sandbox(kernel_args, cmd, timeout=300, writes=None, parent=SCRATCH):
    """thpvm sandbox kernel_args -- cmd, started in a fresh directory
    under parent with hello.txt in it, $XDG_RUNTIME_DIR a fresh
    directory: (result, that directory, what is left in the runtime
    directory but thpvm run's control socket directory). writes: name ->
    the bytes cmd is to leave in its directory, a file of the user's
    (hello.txt keeping its mode); nothing else may have changed there,
    nor in the runtime directory."""
    with tempfile.TemporaryDirectory(prefix="sandbox-test-",
                                     dir=parent) as top, \
            runtime_dir() as runtime:
        work = os.path.join(top, "work")
        os.mkdir(work)
        with open(os.path.join(work, "hello.txt"), "w") as f:
            f.write(HELLO + "\n")
        before = snapshot(top)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        old = os.getcwd()
        os.chdir(work)
        try:
            r = harness.run(["sandbox"] + kernel_args + ["--"] + cmd,
                            timeout=timeout, env=env)
        finally:
            os.chdir(old)
        # thpvm run's directory of control sockets may stay, empty.
        control = os.path.join(runtime, "thpvm")
        assert not os.path.isdir(control) or not os.listdir(control), r
        left = sorted(set(os.listdir(runtime)) - {"thpvm"})
        want = dict(before)
        for name, data in (writes or {}).items():
            rel = os.path.join("work", name)
            kind, mode, owner, _ = before.get(
                rel, (stat.S_IFREG, 0o644, os.getuid(), None))
            want[rel] = (kind, mode, owner, data)
        after = snapshot(top)
        assert after == want, (r, {k: (want.get(k), after.get(k))
                                   for k in set(want) | set(after)
                                   if want.get(k) != after.get(k)})
        return r, work, left


def linux_args():
    harness.require_kvm()
    require_capable("a sandbox's command")
    version, image = build_image()
    kernel = f"/boot/vmlinuz-{version}"
    if not os.path.isfile(kernel):
        harness.skip(f"no {kernel} (install linux-image-amd64)")
    return version, ["-k", kernel, "-i", image, "-m", "512M"]


def guest_lines(r):
    return [line[len("sandbox: "):] for line in r.out.splitlines()
            if line.startswith("sandbox: ")]


def test_sandbox_status_and_files():
    """sh -c's script runs in the host's directory, reads the host's file,
    changes it and makes one beside it there (both on the host after,
    exactly as written), writes to its own /tmp, and its status is
    thpvm's."""
    version, args = linux_args()
    r, work, left = again_if_died(lambda: sandbox(
        args, ["sh", "-c", SCRIPT],
        writes={"hello.txt": f"{WRITTEN}\n".encode(), "result": b"ok\n"}))
    assert guest_lines(r) == [f"hello from {version} in {work}",
                              f"file {HELLO}", "file changed",
                              "tmp writable"], r
    assert r.rc == 3, r
    assert left == [], r


def test_sandbox_awkward_arguments():
    """Each argument arrives as one, unexpanded: printf prints it back
    between < and >. Started under /tmp: the guest makes the directory
    in its own tmpfs to mount it there (else no status, 125). Without
    -k where the kernel is the running one's (as in the emulated host):
    the host's own is the default."""
    version, args = linux_args()
    if version == os.uname().release:
        args = args[2:]
    r, _, left = again_if_died(lambda: sandbox(
        args, ["printf", "sandbox: <%s>\\n"] + AWKWARD, parent="/tmp"))
    out = r.out.replace("\r", "")
    want = "".join(f"sandbox: <{word}>\n" for word in AWKWARD)
    assert want in out, r
    assert r.rc == 0, r
    assert left == [], r


def test_sandbox_user_network():
    """-n mode=user: the sandbox's eth0 is up at 10.0.2.15 with the
    gateway as its route and the stack's DNS forwarder as its only name
    server (the host's resolv.conf, read-only there, left alone on the
    host), and the command fetches a file from an HTTP server on the
    host's 127.0.0.1 as 10.0.2.2."""
    version, args = linux_args()
    blob = b"served to the sandbox\n" * 100
    with open("/etc/resolv.conf", "rb") as f:
        host_resolv = f.read()
    with HttpBlob(blob) as http:
        fetch = ("import hashlib, urllib.request; print('sandbox: md5', "
                 "hashlib.md5(urllib.request.urlopen("
                 f"'http://10.0.2.2:{http.port}/blob', timeout=60).read())"
                 ".hexdigest())")
        script = ("echo sandbox: $(ip -4 -o addr show eth0 | "
                  "awk '{print $4}'); "
                  "echo sandbox: $(ip route show default); "
                  "echo sandbox: $(grep nameserver /etc/resolv.conf); "
                  f'python3 -c "{fetch}"')
        r, _, left = again_if_died(lambda: sandbox(
            args + ["-n", "mode=user"], ["sh", "-c", script]))
    lines = guest_lines(r)
    assert lines[:3] == ["10.0.2.15/24", "default via 10.0.2.2 dev eth0",
                         "nameserver 10.0.2.3"], r
    assert lines[3] == f"md5 {hashlib.md5(blob).hexdigest()}", r
    assert http.requests == ["/blob"], http.requests
    assert r.rc == 0, r
    assert left == [], r
    with open("/etc/resolv.conf", "rb") as f:
        assert f.read() == host_resolv


def test_sandbox_stopped():
    """SIGTERM to thpvm alone, before the command is done: thpvm passes
    it on to the VM, which stops; status 125 with the line saying why,
    the directory gone."""
    _, args = linux_args()
    with runtime_dir() as runtime:
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        p = harness.start(["sandbox"] + args + [
            "--", "sh", "-c", 'echo "sandbox: waiting"; exec sleep 600'],
            env=env)
        harness.wait_for_line(p, r"^sandbox: waiting", timeout=300)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        err = harness.read_stderr(p)
        assert err.splitlines()[-1] == MISSING, err
        assert rc == 125, err
        assert set(os.listdir(runtime)) <= {"thpvm"}, err


def test_sandbox_no_status():
    """A VM that fails before the command runs: one line saying the
    status is missing, status 125, the directory gone. (An initrd that
    is no file fails before any VM is made, KVM or not.) On PVM, the
    line saying so comes first."""
    r, _, left = sandbox(["-k", os.path.abspath(__file__), "-i",
                          "/dev/null"], ["true"])
    pvm = [PVM] if os.path.isdir("/sys/module/kvm_pvm") else []
    assert r.err.splitlines() == pvm + [
        "thpvm: error: initrd /dev/null: not a regular file or a block "
        "device",
        MISSING], r
    assert r.rc == 125, r
    assert left == [], r


if __name__ == "__main__":
    harness.main(globals())
