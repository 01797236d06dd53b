#!/usr/bin/env python3
"""virtio-net packet rates: the test guest's `netbench` sends UDP
datagrams to a sink socket on the host as fast as its ring allows
(guest -> host), then counts datagrams a host sender fires at it as fast
as Python can (host -> guest); packets per second as the guest measures
them, plus what the host sink counted. thpvm against QEMU's
virtio-net-pci (tap, vhost off) with the same guest, in a network
namespace of this script's own, runs interleaved.

usage: bench/net.py [RUNS]   (default 3; needs root and a build in ./build)"""
import ctypes
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "integration"))
import netns  # noqa: E402
from common import (QEMU, THPVM, check_passed, median,  # noqa: E402
                    qemu_cmd, require_build, tg_fields)

PORT = 7777
PACKETS = 100000
PARAMS = (f"skip=smp,lapic,pit netbench netbench_packets={PACKETS} "
          f"ip={netns.GUEST_IP} hostip={netns.HOST_IP} udp_port={PORT}")


CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    """os.setns(fd, CLONE_NEWNET), which Python has only from 3.12 on."""
    if _libc.setns(fd, CLONE_NEWNET):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def in_netns(ns, fn):
    """Runs fn() with this thread in the namespace (sockets made there
    stay there)."""
    fd = os.open(f"/var/run/netns/{ns.name}", os.O_RDONLY)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        setns(fd)
        return fn()
    finally:
        setns(own)
        os.close(fd)
        os.close(own)


def sink(sock, counter, stop):
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            sock.recv(2048)
            counter[0] += 1
        except socket.timeout:
            pass


def one_run(ns, cmd):
    def sockets():
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.bind((netns.HOST_IP, PORT + 1))
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        return rx, tx
    rx, tx = in_netns(ns, sockets)
    got, stop = [0], threading.Event()
    t = threading.Thread(target=sink, args=(rx, got, stop))
    t.start()
    p = subprocess.Popen(ns.prefix() + cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         text=True)
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if "tg: netbench rx-ready" in line:
                payload = b"x" * 18
                deadline = time.monotonic() + 10
                sent = 0
                while sent < PACKETS * 2 and time.monotonic() < deadline:
                    try:
                        tx.sendto(payload, (netns.GUEST_IP, PORT + 2))
                        sent += 1
                    except OSError:
                        pass
        p.wait(timeout=60)
    finally:
        p.kill()
        stop.set()
        t.join()
        rx.close()
        tx.close()
    text = "".join(out)
    check_passed(cmd, text)
    txf = tg_fields(text, "netbench tx")
    rxf = tg_fields(text, "netbench rx")
    return float(txf["pps"]), got[0], float(rxf["pps"])


def main():
    require_build()
    why = netns.usable()
    if why:
        sys.exit(f"bench/net.py: {why}")
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    configs = [("thpvm", [THPVM, "run", "-n",
                          f"mode=tap,tapif={netns.TAP}", "-p", PARAMS])]
    if QEMU:
        configs.append(("QEMU 7.2 -accel kvm", qemu_cmd("256M", PARAMS) + [
            "-netdev", f"tap,id=n0,ifname={netns.TAP},script=no,"
            "downscript=no,vhost=off",
            "-device", "virtio-net-pci,netdev=n0,disable-legacy=on"]))
    results = {name: [] for name, _ in configs}
    with netns.NetNS() as ns:
        for _ in range(runs):
            for name, cmd in configs:
                results[name].append(one_run(ns, cmd))
    print(f"{PACKETS} UDP datagrams of 18 bytes each way, {runs} runs each "
          f"({time.strftime('%Y-%m-%d')})")
    print(f"{'config':<22} {'guest->host pps':>16} {'host got':>9} "
          f"{'host->guest pps':>16}")
    med = {}
    for name, rs in results.items():
        med[name] = (median([r[0] for r in rs]), median([r[2] for r in rs]))
        print(f"{name:<22} {med[name][0]:>16.0f} "
              f"{median([r[1] for r in rs]):>9.0f} {med[name][1]:>16.0f}"
              f"   runs: {', '.join(f'{a:.0f}/{c:.0f}' for a, _, c in rs)}")
    if QEMU:
        t, q = med["thpvm"], med["QEMU 7.2 -accel kvm"]
        print(f"thpvm / QEMU: guest->host {t[0] / q[0]:.2f}, "
              f"host->guest {t[1] / q[1]:.2f} (higher is better)")


if __name__ == "__main__":
    main()
