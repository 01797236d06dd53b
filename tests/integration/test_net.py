#!/usr/bin/env python3
"""virtio-net end to end: the test guest's driver on thpvm's device (on
PCI, and on MMIO), exchanging real packets with the host kernel through a tap in a network
namespace of the test's own: ARP and ICMP echo both ways, and UDP to a
socket the test opened, whose log shows the guest's datagram arrived."""
import harness
import netns
from net_exchange import (F_EVENT_IDX, F_INDIRECT_DESC, F_MRG_RXBUF,
                          check_exchange, exchange, require_netns)
from net_exchange import PARAMS as NET_PARAMS

PARAMS = "skip=smp,lapic,pit " + NET_PARAMS


def require_net():
    harness.require_kvm()
    require_netns()


def test_net_packets_both_ways():
    require_net()
    r, log, ping = exchange(
        [harness.THPVM, "run", "-n", f"mode=tap,tapif={netns.TAP}",
         "-p", PARAMS])
    check_exchange(r, log, ping)
    assert r.tg["net"]["mac"].startswith("52:54:00:"), r
    features = int(r.tg["net"]["features"], 16)
    assert features & F_INDIRECT_DESC and features & F_EVENT_IDX, r
    assert features & F_MRG_RXBUF, r


def test_net_mac_option_and_no_event_idx():
    require_net()
    r, log, ping = exchange(
        [harness.THPVM, "run", "-n",
         f"mode=tap,tapif={netns.TAP},mac=02:11:22:33:44:55",
         "-p", PARAMS + " vfeat=noevent,noindirect"])
    check_exchange(r, log, ping)
    assert r.tg["net"]["mac"] == "02:11:22:33:44:55", r
    features = int(r.tg["net"]["features"], 16)
    assert not features & (F_INDIRECT_DESC | F_EVENT_IDX), r


def test_net_no_mrg_rxbuf():
    """Without mergeable receive buffers every frame comes in one 2 KiB
    buffer."""
    require_net()
    r, log, ping = exchange(
        [harness.THPVM, "run", "-n", f"mode=tap,tapif={netns.TAP}",
         "-p", PARAMS + " vfeat=nomrg"])
    check_exchange(r, log, ping)
    assert not int(r.tg["net"]["features"], 16) & F_MRG_RXBUF, r
    assert r.tg["ok"]["net-udp"]["reply_buffers"] == "1", r


def test_net_over_mmio():
    """The same exchange with the device on virtio-mmio."""
    require_net()
    r, log, ping = exchange(
        [harness.THPVM, "run", "-n",
         f"mode=tap,tapif={netns.TAP},transport=mmio", "-p", PARAMS])
    check_exchange(r, log, ping)
    assert "mmio=0xfe000000 gsi=16" in r.out, r


def test_net_errors():
    harness.require_kvm()
    harness.one_error(harness.run(["run", "-n",
                                   "mode=tap,mac=01:00:00:00:00:01"]),
                      "is a multicast address", rc=2)
    harness.one_error(harness.run(["run", "-n", "mode=bridge"]),
                      "mode must be none, tap or user", rc=2)
    harness.one_error(harness.run(["run", "-n", "mode=tap,tapif=lo"]),
                      "tap lo: invalid name, or an interface", rc=1)


if __name__ == "__main__":
    harness.main(globals())
