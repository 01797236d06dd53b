#!/usr/bin/env python3
"""User-mode networking (-n mode=user, libslirp) end to end with the test
guest: DHCP, ARP and ping of the gateway, a UDP datagram to a socket on
the host's 127.0.0.1 reached as 10.0.2.2, and datagrams from the host
through a hostfwd echoed by the guest; stat's forwards and counts; a run
by an unprivileged user; restrict=on; and bad specs and busy ports, each
refused with one line. TCP needs a guest with TCP: test_linux.py."""
import json
import os
import pwd
import socket
import subprocess
import tempfile
import threading
import time

import harness
from harness import THPVM, one_error, run

PARAMS = "skip=smp,lapic,pit net dhcp"
UDP_IN = 2
# The guest's datagrams in the flood: under emulation (CI's emulated
# AMD-V host, ASan) about 1,500 a second.
FLOOD = 5000


class UdpEcho:
    """A UDP echo server on 127.0.0.1 (a free port): answers b"echo:" and
    the datagram, and keeps who sent what."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.seen = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                data, peer = self.sock.recvfrom(65536)
            except OSError:
                return
            self.seen.append((peer, data))
            self.sock.sendto(b"echo:" + data, peer)

    def close(self):
        self.sock.close()


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def send_in(port, count, wait):
    """count datagrams to 127.0.0.1:port, each given wait seconds for its
    answer: the answers that came."""
    replies = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(wait)
        for i in range(count):
            s.sendto(b"from-host-%d" % i, ("127.0.0.1", port))
            try:
                replies.append(s.recvfrom(1500)[0])
            except TimeoutError:
                pass
    return replies


def boot(name, net_keys="", params=PARAMS, wrap=(), env=None,
         between=None, wait=10):
    """Boots the guest on a user-mode network with a UDP forward to its
    echo port, sends it UDP_IN datagrams once it waits for them (after
    between(name), if given) and returns (result, echo server, replies,
    what between returned)."""
    echo = UdpEcho()
    fwd_port = free_udp_port()
    keys = f"mode=user,hostfwd=udp:127.0.0.1:{fwd_port}-:{echo.port}"
    if net_keys:
        keys += "," + net_keys
    try:
        p = harness.start_cmd(
            list(wrap) + [THPVM, "run", "--name", name, "-m", "64M",
                          "-n", keys, "-p",
                          f"{params} udp_port={echo.port} "
                          f"net_udp_in={UDP_IN}"], env=env)
        lines = harness.wait_for_line(p, r"tg: net udp-in waiting|tg: done",
                                      timeout=120)
        seen = between(name) if between else None
        replies = send_in(fwd_port, UDP_IN, wait) \
            if "waiting" in lines[-1] else []
        lines += harness.wait_for_line(p, "tg: done", timeout=60)
        rc = p.wait(timeout=30)
        r = harness.Result(rc, "\n".join(lines), harness.read_stderr(p))
    finally:
        echo.close()
    return r, echo, replies, seen


def check_guest(r, echo, replies, net="10.0.2"):
    assert r.rc == 0, r
    assert not r.tg["fail"], r
    dhcp = r.tg["ok"]["net-dhcp"]
    assert dhcp["ip"] == f"{net}.15", r
    assert dhcp["router"] == f"{net}.2", r
    assert dhcp["dns"] == f"{net}.3", r
    assert dhcp["mask"] == "255.255.255.0", r
    for c in ("net-arp", "net-ping-out", "net-udp", "net-udp-in"):
        assert c in r.tg["ok"], f"{c} missing\n{r}"
    assert r.tg["ok"]["net-udp-in"]["answered"] == str(UDP_IN), r
    # The guest's datagram reached the host's loopback from a host port.
    assert any(peer[0] == "127.0.0.1" and len(data) == 1400
               for peer, data in echo.seen), echo.seen
    assert replies == [b"echo:from-host-%d" % i for i in range(UDP_IN)], \
        replies


def test_net_user_test_guest():
    """DHCP, gateway, UDP out to the host and in through a forward; stat
    shows the forwards and the traffic, in text and JSON."""
    harness.require_kvm()

    def stat(name):
        text = run(["stat", name], timeout=30)
        return text, harness.ctl_json(["stat", name])

    r, echo, replies, (text, js) = boot(
        "netuser", "hostfwd=tcp:127.0.0.1:38522-:22", between=stat)
    check_guest(r, echo, replies)
    assert text.rc == 0, text
    nu = js["net_user"]
    assert nu["forwards"][1] == "tcp:127.0.0.1:38522-10.0.2.15:22", nu
    assert nu["forwards"][0].startswith("udp:127.0.0.1:"), nu
    assert nu["forwards"][0].endswith(f"-10.0.2.15:{echo.port}"), nu
    # DHCP (2), ARP, pings (3), the datagram: 7 frames each way, none
    # dropped.
    assert nu["frames_in"] >= 7 and nu["frames_out"] >= 7, nu
    assert nu["dropped"] == 0, nu
    # The guest's datagram left from the port the UDP forward ends at,
    # so libslirp sent it through the forward's socket: no socket of
    # its own. Pings of the gateway are answered by libslirp itself.
    assert (nu["tcp"], nu["udp"], nu["icmp"]) == (0, 0, 0), nu
    assert "User network: " in text.out, text
    assert "Forward: tcp:127.0.0.1:38522-10.0.2.15:22" in text.out, text


def test_net_user_other_network():
    """net= moves the guest, gateway and DNS server with it."""
    harness.require_kvm()
    r, echo, replies, _ = boot("netuser2", "net=192.168.76.0/24")
    check_guest(r, echo, replies, net="192.168.76")


def test_net_user_unprivileged():
    """An ordinary user with access to /dev/kvm only: no tap, no
    capability, and the network works."""
    harness.require_kvm()
    nobody = pwd.getpwnam("nobody")
    kvm = os.stat("/dev/kvm")
    if kvm.st_mode & 0o060 != 0o060 or kvm.st_gid == 0:
        harness.skip("/dev/kvm is not given to a group (udev's kvm)")
    kvm_gid = kvm.st_gid
    with tempfile.TemporaryDirectory() as runtime:
        os.chown(runtime, nobody.pw_uid, nobody.pw_gid)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime, HOME=runtime)
        wrap = ["setpriv", f"--reuid={nobody.pw_uid}",
                f"--regid={nobody.pw_gid}", f"--groups={kvm_gid}",
                "--inh-caps=-all", "--bounding-set=-all"]
        r, echo, replies, _ = boot("netnobody", wrap=wrap, env=env)
    check_guest(r, echo, replies)


def test_net_user_restrict():
    """restrict=on (libslirp's meaning): the guest reaches nothing beyond
    the stack. Its datagram to the host is never sent; the host's
    datagrams still come in through the forward, and the guest's answers
    to them stay in (libslirp drops every UDP datagram from a restricted
    guest but DHCP and TFTP); DHCP works, naming no router."""
    harness.require_kvm()
    r, echo, replies, _ = boot("netrestrict", "restrict=on", wait=2)
    assert r.rc != 0, r
    assert r.tg["fail"].keys() == {"net-udp"}, r
    assert r.tg["fail"]["net-udp"]["reason"] == "timeout", r
    assert not echo.seen, echo.seen
    assert r.tg["ok"]["net-udp-in"]["answered"] == str(UDP_IN), r
    assert r.tg["ok"]["net-dhcp"]["ip"] == "10.0.2.15", r
    assert r.tg["ok"]["net-dhcp"]["router"] == "0.0.0.0", r
    assert replies == [], replies


def test_net_user_flood():
    """Floods both ways: the guest's netbench sends FLOOD datagrams to the
    host as fast as its ring allows, while the host fires datagrams
    through a forward from before the guest's driver takes any, through
    netbench's count, and on once the guest has reset its device and
    only serves (`serve`), when the stack can pass nothing on. Frames the
    guest could not take are dropped and counted; the control socket
    answers throughout (each stat within 10 s); the guest's own counts
    arrive, and thpvm stop ends the VM cleanly."""
    harness.require_kvm()
    port = free_udp_port()
    fwd_port = free_udp_port()
    name = "netflood"
    stop = threading.Event()
    sent = [0]

    def flood():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            while not stop.is_set():
                try:
                    s.sendto(b"x" * 18, ("127.0.0.1", fwd_port))
                    sent[0] += 1
                except OSError:
                    pass

    threading.Thread(target=flood, daemon=True).start()
    stats = []
    try:
        p = harness.start(["run", "--name", name, "-m", "64M", "-n",
                           f"mode=user,hostfwd=udp:127.0.0.1:{fwd_port}-"
                           f":{port + 2}", "-p",
                           "skip=smp,lapic,pit netbench serve "
                           f"netbench_packets={FLOOD} udp_port={port}"])
        lines = []
        serving = threading.Event()

        def read_lines():
            for raw in p.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                lines.append(line)
                if line.startswith("tg: serving"):
                    serving.set()

        reader = threading.Thread(target=read_lines, daemon=True)
        reader.start()
        # Until the guest serves and a stat has seen drops since.
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            was_serving = serving.is_set()
            if was_serving:
                # The pair fills within a second of the guest's reset.
                deadline = min(deadline, time.monotonic() + 15)
            t0 = time.monotonic()
            r = run(["stat", name, "--json"], timeout=10)
            if r.rc == 0:
                stats.append((time.monotonic() - t0,
                              json.loads(r.out)["net_user"]))
                if was_serving and stats[-1][1]["dropped"]:
                    break
            time.sleep(0.1)
        rc = harness.stop_and_wait(p, name)
        reader.join(timeout=30)
        r = harness.Result(rc, "\n".join(lines), harness.read_stderr(p))
    finally:
        stop.set()
    assert r.rc == 0, r
    assert "netbench tx" in r.tg and "netbench rx" in r.tg, r
    # Its transmit count also takes the ARP replies the guest sent the
    # stack meanwhile.
    assert int(r.tg["netbench tx"]["packets"]) >= FLOOD, r
    assert int(r.tg["netbench rx"]["packets"]) > 0, r
    assert stats, "stat never answered"
    assert max(t for t, _ in stats) < 10, stats
    last = stats[-1][1]
    print(f"# host sent {sent[0]}, guest counted "
          f"{r.tg['netbench rx']['packets']}; last stat {last}; slowest "
          f"stat {max(t for t, _ in stats):.3f} s of {len(stats)}")
    assert last["dropped"] > 0, (last, sent[0])
    assert last["frames_in"] >= FLOOD, last
    # The guest's datagrams out left a UDP socket of libslirp's, which
    # stat counts (its table's forward listener is not counted).
    assert max(st["udp"] for _, st in stats) >= 1, stats


def test_net_user_bad_specs():
    """Each malformed -n mode=user gets one line naming what is wrong,
    and no guest runs."""
    harness.require_kvm()
    cases = [
        ("mode=user,hostfwd=tcp::22", "hostfwd"),
        ("mode=user,hostfwd=sctp::22-:22", "tcp|udp"),
        ("mode=user,hostfwd=tcp::99999-:22", "hostfwd"),
        ("mode=user,hostfwd=tcp:example.org:22-:22", "hostfwd"),
        ("mode=user,hostfwd=tcp::2222-10.0.3.15:22",
         "not a host of the user-mode network"),
        ("mode=user,hostfwd=tcp::2222-10.0.2.2:22", "gateway"),
        ("mode=user,hostfwd=tcp::2222-:22,hostfwd=tcp:127.0.0.1:2222-:23",
         "an earlier forward has its host port"),
        ("mode=user,net=10.0.2.1/24", "no host bits"),
        ("mode=user,net=10.0.2.0/30", "prefix from 8 to 27"),
        ("mode=user,restrict=maybe", "restrict"),
        ("mode=user,tapif=tap0", "tapif needs mode=tap"),
        ("mode=tap,hostfwd=tcp::2222-:22", "need mode=user"),
        ("mode=none,net=10.0.2.0/24", "mode=none takes no other keys"),
    ]
    for keys, text in cases:
        one_error(run(["run", "-n", keys, "-p", PARAMS]), text)


def test_net_user_port_in_use():
    """A forward whose host port is taken: one line naming the forward
    and the reason, before any guest runs."""
    harness.require_kvm()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run(["run", "-n", f"mode=user,hostfwd=tcp:127.0.0.1:{port}-:22",
                 "-p", PARAMS])
    one_error(r, f"hostfwd=tcp:127.0.0.1:{port}-10.0.2.15:22: cannot "
              "listen on the host port")


def test_net_user_without_libslirp():
    """On a host without libslirp (here: its file hidden in a mount
    namespace of the test's own) thpvm still runs, and mode=user alone is
    refused in one line saying what to install."""
    harness.require_kvm()
    lib = subprocess.run(["sh", "-c", "ldconfig -p | sed -n "
                          "'s/.*libslirp.so.0 .*=> //p' | head -n 1"],
                         capture_output=True, text=True).stdout.strip()
    if not lib:
        harness.skip("libslirp0 is not installed")
    hide = ["unshare", "--mount", "sh", "-c",
            f"mount --bind /dev/null {lib} && exec \"$@\"", "hide"]
    r = harness.run_cmd(hide + [THPVM, "run", "-n", "mode=user", "-p",
                                PARAMS])
    one_error(r, "-n mode=user: cannot load libslirp.so.0 (install "
              "libslirp0)")
    r = harness.run_cmd(hide + [THPVM, "run", "-p", "skip=smp,lapic,pit"])
    assert r.rc == 0, r


if __name__ == "__main__":
    harness.main(globals())
