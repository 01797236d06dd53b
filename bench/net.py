#!/usr/bin/env python3
"""virtio-net packet rates: the test guest's `netbench` sends UDP
datagrams to a sink on the host as fast as its ring allows (guest ->
host), then counts datagrams a host sender offers it at a fixed rate
(host -> guest); packets per second as the guest measures them, plus what
the host sink counted. The host end is bench/udp_flood (sendmmsg and
recvmmsg batches), so that it is not what limits the rates. thpvm
against QEMU's
virtio-net-pci (tap, vhost off) with the same guest, in a network
namespace of this script's own, runs interleaved.

usage: bench/net.py [RUNS]   (default 3; needs root and a build in ./build)"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "integration"))
import netns  # noqa: E402
from common import (BUILD, QEMU, THPVM, check_passed, median,  # noqa: E402
                    qemu_cmd, print_command, require_build, tg_fields)

PORT = 7777
PACKETS = 100000
PAYLOAD = 18
SEND_SECONDS = 10
# Offered host -> guest load, the same for every VMM. Flat out the sender
# would take a CPU of its own, and this 2-CPU host has none to spare
# beside the polling vCPU and the VMM's device thread.
SEND_RATE = 100000
PARAMS = (f"skip=smp,lapic,pit netbench netbench_packets={PACKETS} "
          f"ip={netns.GUEST_IP} hostip={netns.HOST_IP} udp_port={PORT}")
UDP_FLOOD = os.path.join(BUILD, "bench", "udp_flood")


def flood_field(text, key):
    """N of the `key=N` line udp_flood printed."""
    for line in text.splitlines():
        if line.startswith(key + "="):
            return int(line.split("=", 1)[1])
    raise RuntimeError(f"udp_flood printed no {key}=: {text!r}")


def one_run(ns, cmd):
    sink = subprocess.Popen(ns.prefix() + [UDP_FLOOD, "sink", netns.HOST_IP,
                                           str(PORT + 1)],
                            stdout=subprocess.PIPE, text=True)
    p = None
    try:
        if sink.stdout.readline() != "ready\n":
            raise RuntimeError("udp_flood sink did not start")
        p = subprocess.Popen(ns.prefix() + cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, text=True)
        out = []
        for line in p.stdout:
            out.append(line)
            if "tg: netbench rx-ready" in line:
                sender = subprocess.run(
                    ns.prefix() + [UDP_FLOOD, "send", netns.GUEST_IP,
                                   str(PORT + 2), str(PACKETS * 2),
                                   str(SEND_SECONDS), str(PAYLOAD),
                                   str(SEND_RATE)],
                    capture_output=True, text=True, timeout=60)
                if sender.returncode:
                    raise RuntimeError(f"udp_flood send: {sender.stderr}")
        p.wait(timeout=60)
    finally:
        if p:
            p.kill()
        sink.terminate()
        got = flood_field(sink.communicate(timeout=10)[0], "got")
    text = "".join(out)
    check_passed(cmd, text)
    txf = tg_fields(text, "netbench tx")
    rxf = tg_fields(text, "netbench rx")
    return float(txf["pps"]), got, float(rxf["pps"])


def main():
    require_build()
    print_command()
    if not os.path.exists(UDP_FLOOD):
        sys.exit(f"bench/net.py: {UDP_FLOOD} is missing (ninja -C build)")
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
    print(f"{PACKETS} UDP datagrams of {PAYLOAD} bytes each way, {runs} runs each "
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
