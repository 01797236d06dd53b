#!/usr/bin/env python3
"""virtio-net packet rates: the test guest's `netbench` sends UDP
datagrams to a sink on the host as fast as its ring allows (guest ->
host), then counts datagrams a host sender offers it at a fixed rate
(host -> guest); packets per second as the guest measures them, what the
host sink counted, and the VMM's host CPU per packet outside guest mode
(its threads' user and system time less the time they ran the guest, from
/proc/PID/stat, per datagram either way). The host end is bench/udp_flood
(sendmmsg and recvmmsg batches), so that it is not what limits the rates.
Runs interleaved, the same guest on each:

- tap: thpvm against QEMU's virtio-net-pci on a tap (vhost off), in a
  network namespace of this script's own (needs root);
- user: thpvm's -n mode=user against QEMU's -netdev user, both libslirp,
  the sink on the host's 127.0.0.1 (the guest sends to 10.0.2.2) and the
  host's datagrams through a UDP forward (docs/networking.md).

usage: bench/net.py [RUNS] [tap|user]   (default 3 runs, both back ends;
                                         needs a build in ./build)"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "integration"))
import netns  # noqa: E402
from common import (BUILD, QEMU, THPVM, check_passed, median,  # noqa: E402
                    qemu_cmd, print_command, require_build, tg_fields)

PORT = 7777
FWD_PORT = 17779    # the user-mode forward's host port, to PORT + 2
PACKETS = 100000
PAYLOAD = 18
SEND_SECONDS = 10
# Offered host -> guest load, the same for every VMM. Flat out the sender
# would take a CPU of its own, and this 2-CPU host has none to spare
# beside the polling vCPU and the VMM's device thread.
SEND_RATE = 100000
BENCH = f"skip=smp,lapic,pit netbench netbench_packets={PACKETS} "
TAP_PARAMS = (BENCH + f"ip={netns.GUEST_IP} hostip={netns.HOST_IP} "
              f"udp_port={PORT}")
# The test guest's defaults are QEMU's user-mode addresses.
USER_PARAMS = BENCH + f"udp_port={PORT}"
UDP_FLOOD = os.path.join(BUILD, "bench", "udp_flood")
TICK = os.sysconf("SC_CLK_TCK")
QEMU_NAME = "QEMU 7.2 -accel kvm"


def flood_field(text, key):
    """N of the `key=N` line udp_flood printed."""
    for line in text.splitlines():
        if line.startswith(key + "="):
            return int(line.split("=", 1)[1])
    raise RuntimeError(f"udp_flood printed no {key}=: {text!r}")


class CpuWatch:
    """A process's CPU seconds outside guest mode, sampled until it
    ends (the last sample stands: /proc/PID/stat goes with the process):
    utime + stime - guest_time, fields 14, 15 and 43."""

    def __init__(self, pid):
        self.pid, self.seconds = pid, 0.0
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while True:
            try:
                with open(f"/proc/{self.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                return
            if fields[0] == "Z":
                return
            # fields[0] is field 3 (state).
            utime, stime, guest = (int(fields[i - 3]) for i in (14, 15, 43))
            self.seconds = (utime + stime - guest) / TICK
            time.sleep(0.05)

    def result(self):
        self.thread.join(timeout=5)
        return self.seconds


def one_run(prefix, cmd, sink_ip, send_ip, send_port):
    """(guest->host pps, datagrams the sink got, host->guest pps, VMM CPU
    us per datagram) of one run of cmd."""
    sink = subprocess.Popen(prefix + [UDP_FLOOD, "sink", sink_ip,
                                      str(PORT + 1)],
                            stdout=subprocess.PIPE, text=True)
    p = None
    try:
        if sink.stdout.readline() != "ready\n":
            raise RuntimeError("udp_flood sink did not start")
        p = subprocess.Popen(prefix + cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, text=True)
        cpu = CpuWatch(p.pid)
        out = []
        for line in p.stdout:
            out.append(line)
            if "tg: netbench rx-ready" in line:
                sender = subprocess.run(
                    prefix + [UDP_FLOOD, "send", send_ip, str(send_port),
                              str(PACKETS * 2), str(SEND_SECONDS),
                              str(PAYLOAD), str(SEND_RATE)],
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
    packets = int(txf["packets"]) + int(rxf["packets"])
    return (float(txf["pps"]), got, float(rxf["pps"]),
            cpu.result() * 1e6 / max(packets, 1))


def tap_configs():
    configs = [("thpvm tap", [THPVM, "run", "-n",
                              f"mode=tap,tapif={netns.TAP}", "-p",
                              TAP_PARAMS])]
    if QEMU:
        configs.append((QEMU_NAME + " tap", qemu_cmd("256M", TAP_PARAMS) + [
            "-netdev", f"tap,id=n0,ifname={netns.TAP},script=no,"
            "downscript=no,vhost=off",
            "-device", "virtio-net-pci,netdev=n0,disable-legacy=on"]))
    return configs


def user_configs():
    fwd = f"hostfwd=udp:127.0.0.1:{FWD_PORT}-:{PORT + 2}"
    configs = [("thpvm user", [THPVM, "run", "-n", f"mode=user,{fwd}", "-p",
                               USER_PARAMS])]
    if QEMU:
        configs.append((QEMU_NAME + " user",
                        qemu_cmd("256M", USER_PARAMS) + [
                            "-netdev", f"user,id=n0,{fwd}",
                            "-device",
                            "virtio-net-pci,netdev=n0,disable-legacy=on"]))
    return configs


def run_all(configs, runs, prefix, sink_ip, send_ip, send_port):
    results = {name: [] for name, _ in configs}
    for _ in range(runs):
        for name, cmd in configs:
            results[name].append(one_run(prefix, cmd, sink_ip, send_ip,
                                         send_port))
    return results


def report(results, mode):
    print(f"{'config':<28} {'guest->host pps':>16} {'host got':>9} "
          f"{'host->guest pps':>16} {'VMM CPU us/pkt':>15}")
    med = {}
    for name, rs in results.items():
        med[name] = tuple(median([r[i] for r in rs]) for i in range(4))
        print(f"{name:<28} {med[name][0]:>16.0f} {med[name][1]:>9.0f} "
              f"{med[name][2]:>16.0f} {med[name][3]:>15.2f}"
              f"   runs: {', '.join(f'{a:.0f}/{c:.0f}' for a, _, c, _ in rs)}")
    t, q = med.get(f"thpvm {mode}"), med.get(f"{QEMU_NAME} {mode}")
    if t and q:
        print(f"thpvm / QEMU ({mode}): guest->host {t[0] / q[0]:.2f}, "
              f"host->guest {t[2] / q[2]:.2f} (higher is better); "
              f"CPU per packet {t[3] / q[3]:.2f} (lower is better)")


def main():
    require_build()
    print_command()
    if not os.path.exists(UDP_FLOOD):
        sys.exit(f"bench/net.py: {UDP_FLOOD} is missing (ninja -C build)")
    args = sys.argv[1:]
    modes = [a for a in args if a in ("tap", "user")] or ["tap", "user"]
    numbers = [a for a in args if a not in modes]
    runs = int(numbers[0]) if numbers else 3
    print(f"{PACKETS} UDP datagrams of {PAYLOAD} bytes each way, {runs} runs "
          f"each ({time.strftime('%Y-%m-%d')})")
    if "tap" in modes:
        why = netns.usable()
        if why:
            sys.exit(f"bench/net.py: {why} (bench/net.py user runs "
                     "without it)")
        with netns.NetNS() as ns:
            results = run_all(tap_configs(), runs, ns.prefix(),
                              netns.HOST_IP, netns.GUEST_IP, PORT + 2)
        report(results, "tap")
    if "user" in modes:
        results = run_all(user_configs(), runs, [], "127.0.0.1", "127.0.0.1",
                          FWD_PORT)
        report(results, "user")


if __name__ == "__main__":
    main()
