"""The host side of the test guest's `net` checks, for any VMM that puts
the guest behind the tap of a netns.NetNS: a UDP echo server and pings
from the host while the guest waits for them (net_ping_in=3)."""
import os
import subprocess

import harness
import netns

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = 7777
PINGS = 3
PARAMS = (f"net ip={netns.GUEST_IP} hostip={netns.HOST_IP} "
          f"udp_port={PORT} net_ping_in={PINGS}")
F_MRG_RXBUF = 1 << 15
F_INDIRECT_DESC = 1 << 28
F_EVENT_IDX = 1 << 29


def require_netns():
    """Network namespaces and taps (root): QEMU's runs need no more; a
    thpvm run needs /dev/kvm too (harness.require_kvm)."""
    why = netns.usable()
    if why:
        harness.skip(why)


def exchange(vmm_cmd):
    """Boots vmm_cmd (the guest with PARAMS) in a fresh namespace, pings
    the guest from the host while it waits for pings, and returns (guest
    result, UDP server log, ping output)."""
    with netns.NetNS() as ns:
        echo = subprocess.Popen(
            ns.prefix() + ["python3", os.path.join(HERE, "udp_echo.py"),
                           netns.HOST_IP, str(PORT)],
            stdout=subprocess.PIPE, text=True)
        try:
            assert echo.stdout.readline().strip() == "ready"
            p = harness.start_cmd(ns.prefix() + vmm_cmd)
            lines = harness.wait_for_line(
                p, r"tg: net ping-in waiting|tg: done", timeout=120)
            ping = subprocess.run(
                ns.prefix() + ["ping", "-c", str(PINGS), "-i", "0.2",
                               "-W", "5", netns.GUEST_IP],
                capture_output=True, text=True, timeout=60)
            lines += harness.wait_for_line(p, "tg: done", timeout=60)
            rc = p.wait(timeout=30)
            out = "\n".join(lines)
            r = harness.Result(rc, out, harness.read_stderr(p))
        finally:
            echo.kill()
            log = echo.communicate()[0]
        return r, log, ping


def check_exchange(r, log, ping, guest_ok_rc=0):
    """Every net check passed, the host's pings were answered and the
    echo server saw the guest's datagram."""
    assert r.rc == guest_ok_rc, f"{r}\n--- ping\n{ping.stdout}{ping.stderr}"
    assert ping.returncode == 0, ping.stdout + ping.stderr
    for c in ("net-arp", "net-ping-out", "net-udp", "net-ping-in"):
        assert c in r.tg["ok"], f"{c} missing\n{r}"
    assert not r.tg["fail"], r
    assert r.tg["done"]["failed"] == "0", r
    assert r.tg["ok"]["net-ping-in"]["answered"] == str(PINGS), r
    assert f"from {netns.GUEST_IP}:{PORT} " in log, log
    # With mergeable buffers the guest posts small ones: the echo, close
    # to the MTU, arrives in several and was reassembled.
    if int(r.tg["net"]["features"], 16) & F_MRG_RXBUF:
        assert int(r.tg["ok"]["net-udp"]["reply_buffers"]) > 1, r
