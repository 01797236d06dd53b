#!/usr/bin/env python3
"""thpvm run --rng: the test guest's virtio-rng driver reads 4 KiB from
thpvm's device on virtio-pci (MSI-X) and on virtio-mmio (an IOAPIC
line) and finds it random; a VM without --rng has no such device; the
rate limit holds end to end (timed on the host: the guest's clock is not
to be trusted across its sleeps on PVM hosts); thpvm stat shows what
the device served; bad options are usage errors."""
import time

import harness
from harness import assert_guest_passed, one_error, run, run_guest

BASE = "skip=smp,lapic,pit"
RNG_PCI_ID = "1af4:1044"


def check_rng(r, where, irq):
    assert_guest_passed(r, ("rng",))
    ok = r.tg["ok"]["rng"]
    assert ok["bytes"] == "4096" and ok["irq"] == irq, r
    assert where in ok, r
    assert int(ok["values"]) >= 64 and int(ok["zeros"]) < 4096, r
    return ok


def test_rng_pci():
    harness.require_kvm()
    r = run_guest(f"rng pci {BASE}", ["--rng"])
    ok = check_rng(r, "bdf", "msix")
    assert int(ok["queue_irqs"]) >= 1, r
    # As QEMU's virtio-rng-pci: modern device ID, class 0x00ff.
    assert f"tg: pci bdf={ok['bdf']} id={RNG_PCI_ID} class=0x00ff00" \
        in r.out, r


def test_rng_mmio():
    harness.require_kvm()
    for args in (["--rng=transport=mmio"],
                 ["--virtio-transport", "mmio", "--rng"]):
        r = run_guest(f"rng pci {BASE}", args)
        ok = check_rng(r, "mmio", "ioapic")
        # Found in the DSDT, as thpvm's ACPI tables describe it.
        assert (f"tg: acpi device name=V000 hid=LNRO0005 "
                f"mem={ok['mmio']}/0x200 gsi={ok['gsi']} flags=0x1"
                in r.out), r
        assert "virtio_mmio.device" not in r.tg["cmdline"], r
        assert RNG_PCI_ID not in r.out, r


def test_no_rng_without_option():
    harness.require_kvm()
    r = run_guest(f"rng pci {BASE}")
    assert r.rc == 1, r
    assert r.tg["fail"]["rng"] == {"reason": "no-device"}, r
    assert RNG_PCI_ID not in r.out, r
    assert "virtio_mmio.device" not in r.tg["cmdline"], r


def test_rate_limit_holds():
    """1 KiB a second: the guest's 4 KiB take three periods after the
    first, so the whole run at least 3 s."""
    harness.require_kvm()
    t0 = time.monotonic()
    r = run_guest(f"rng {BASE}", ["--rng=bytes_per_sec=1K"])
    took = time.monotonic() - t0
    check_rng(r, "bdf", "msix")
    assert took >= 3.0, (took, r)


def test_stat_shows_rng():
    harness.require_kvm()
    p = harness.start(["run", "--name", "r", "--rng=bytes_per_sec=64K",
                       "-p", f"rng serve {BASE}"])
    harness.wait_for_line(p, "tg: serving")
    st = harness.ctl_json(["stat", "r"])
    assert st["rng_bytes"] == 4096 and st["rng_requests"] == 4, st
    assert st["rng_bytes_per_sec"] == 64 << 10, st
    out = run(["stat", "r"])
    assert out.rc == 0, out
    assert "RNG: 4096 bytes in 4 requests (at most 64 KiB a second)\n" \
        in out.out, out
    q = harness.start(["run", "--name", "plain", "-p", f"serve {BASE}"])
    harness.wait_for_line(q, "tg: serving")
    st = harness.ctl_json(["stat", "plain"])
    assert not any(k.startswith("rng") for k in st), st
    assert "RNG:" not in run(["stat", "plain"]).out
    assert harness.stop_and_wait(p, "r") == 0
    assert harness.stop_and_wait(q, "plain") == 0


def test_rng_option_errors():
    harness.require_kvm()
    for bad, text in (
            ("--rng=bytes_per_sec=0", "bytes_per_sec must be bytes from "
             "1 to 67108864"),
            ("--rng=bytes_per_sec=65M", "bytes_per_sec must be bytes"),
            ("--rng=transport=usb", "transport must be pci or mmio"),
            ("--rng=rate=1K", 'unknown key "rate"')):
        one_error(run(["run", bad]), text, rc=2)
    one_error(run(["run", "--rng", "--rng"]), "given twice", rc=2)


if __name__ == "__main__":
    harness.main(globals())
