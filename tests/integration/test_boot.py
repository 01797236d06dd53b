#!/usr/bin/env python3
"""The test guest booted by the real thpvm binary through every entry,
with 1 and 2 vCPUs, checking the boot data it received."""
import os
import subprocess
import tempfile

import harness
from harness import (assert_guest_passed, run, run_guest, start,
                     wait_for_line)

CHECKS = ("e820", "smp", "lapic-timer", "pit-timer")
LOW_MAP = [(0, 0x9fc00, 1), (0x9fc00, 0xa0000, 2), (0xe0000, 0x100000, 2)]


def expected_e820(mib):
    size = mib << 20
    if size <= 3 << 30:
        return LOW_MAP + [(0x100000, size, 1)]
    return LOW_MAP + [(0x100000, 3 << 30, 1),
                      (1 << 32, (1 << 32) + size - (3 << 30), 1)]


def boot(entry, cpus, mib=128, params=""):
    harness.require_kvm()
    kernel = harness.GUEST_ELF if entry == "pvh" else harness.GUEST_BZIMAGE
    args = ["-m", f"{mib}M", "-c", str(cpus), "-k", kernel]
    if entry != "pvh":
        args += ["--boot", entry]
    r = run_guest(f"ram={mib}M cpus={cpus} {params}".strip(), args)
    assert_guest_passed(r, CHECKS)
    assert r.tg["boot"]["entry"] == entry, r
    assert r.tg["e820"] == expected_e820(mib), r
    assert r.tg["ok"]["smp"]["cpus"] == str(cpus), r
    return r


def test_entry_64_1cpu():
    boot("64", 1)


def test_entry_64_2cpus():
    boot("64", 2)


def test_entry_16_1cpu():
    boot("16", 1)


def test_entry_16_2cpus():
    boot("16", 2)


def test_entry_pvh_1cpu():
    boot("pvh", 1)


def test_entry_pvh_2cpus():
    boot("pvh", 2)


def test_default_is_bundled_guest_64bit():
    harness.require_kvm()
    r = run(["run"])
    assert_guest_passed(r, CHECKS)
    assert r.tg["boot"]["entry"] == "64", r
    assert r.tg["cmdline"] == "", r


def test_ram_above_4g():
    # 5 GiB: 3 GiB below the MMIO hole, 2 GiB from 4 GiB; touch one word
    # per 2 MiB of all of it from guest user mode.
    r = boot("64", 1, mib=5120, params="touch=all touch_stride=2M")
    # More than the 3 GiB below the hole: the RAM above 4 GiB was touched.
    assert int(r.tg["touch"]["bytes"]) > (5 << 30) - (16 << 20), r


def test_cmdline_round_trip():
    harness.require_kvm()
    line = "a=1 b=\"two words\" c='x' 末 " + "z" * 1500
    r = run(["run", "-p", line])
    assert_guest_passed(r)
    assert r.tg["cmdline"] == line, r


def test_linux_params_after_defaults():
    """A kernel given with -k gets -p after thpvm's Linux defaults, as in
    kvmtool; --nodefaults gives -p alone; -v shows the line the guest
    gets. (The test guest ignores the keys it does not know.)"""
    harness.require_kvm()
    kernel = ["-k", harness.GUEST_BZIMAGE]
    r = run(["run", "-v", "-p", "x=1"] + kernel)
    assert_guest_passed(r)
    line = f"{harness.LINUX_DEFAULT_PARAMS} x=1"
    assert r.tg["cmdline"] == line, r
    assert f"thpvm: debug: kernel command line: {line}\n" in r.err, r
    r = run(["run", "--nodefaults", "-p", "x=1"] + kernel)
    assert_guest_passed(r)
    assert r.tg["cmdline"] == "x=1", r


def test_virtio_mmio_announced():
    """Each virtio-mmio device is announced after the user's command line
    in Linux's virtio_mmio.device= form: its own page of the platform MMIO
    window and its own interrupt line; a device kept on PCI is not."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-mmio-") as tmp:
        disks = []
        for name in ("a", "b"):
            disks.append(os.path.join(tmp, name))
            with open(disks[-1], "wb") as f:
                f.truncate(1 << 20)
        r = run(["run", "-p", "x=1", "--virtio-transport", "mmio",
                 "-d", disks[0], "-d", disks[1] + ",pci", "--balloon"])
    assert_guest_passed(r)
    assert r.tg["cmdline"] == ("x=1 virtio_mmio.device=0x200@0xfe000000:16 "
                               "virtio_mmio.device=0x200@0xfe001000:18"), r


def test_console_input_reaches_guest():
    """Bytes piped into thpvm run arrive at the guest's UART: once the
    guest says it is reading, a line written to thpvm's stdin comes back
    in its report."""
    harness.require_kvm()
    p = start(["run", "-p", "skip=smp,lapic,pit echo"],
              stdin=subprocess.PIPE)
    wait_for_line(p, "^tg: echo ready")
    p.stdin.write(b"hello thpvm 42\n")
    p.stdin.flush()
    wait_for_line(p, "^tg: ok echo text=hello thpvm 42$", timeout=30)
    assert p.wait(timeout=30) == 0


def test_cmdline_too_long_refused():
    harness.require_kvm()
    r = run(["run", "-p", "x" * 4096])
    assert r.rc == 1, r
    assert "command line is 4096 bytes" in r.err, r
    assert "tg:" not in r.out


def test_initrd_checksum():
    harness.require_kvm()
    with tempfile.NamedTemporaryFile(suffix=".img") as f:
        f.write(os.urandom(3 << 20) + b"tail")
        f.flush()
        crc = harness.crc32_file(f.name)
        for entry in ("64", "16"):
            r = run(["run", "-i", f.name, "--boot", entry, "-p",
                     f"initrd_crc32={crc:#x}"])
            assert_guest_passed(r, ["initrd"])
            assert int(r.tg["ok"]["initrd"]["bytes"]) == (3 << 20) + 4, r
        r = run(["run", "-i", f.name, "-k", harness.GUEST_ELF, "-p",
                 f"initrd_crc32={crc:#x}"])
        assert_guest_passed(r, ["initrd"])


def test_initrd_checksum_mismatch_fails_guest():
    harness.require_kvm()
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"hello initrd")
        f.flush()
        r = run(["run", "-i", f.name, "-p", "initrd_crc32=0x12345678"])
        assert r.rc == 1, r
        assert "initrd" in r.tg["fail"], r


def test_guest_exit_status_passes_through():
    harness.require_kvm()
    r = run(["run", "-p", "exit_status=3"])
    assert r.rc == 3, r


def test_exit_param_ends_at_once():
    harness.require_kvm()
    r = run(["run", "-p", "exit"])
    assert r.rc == 0, r
    assert "tg: done" not in r.out


def test_no_thp_and_thp_both_boot():
    harness.require_kvm()
    for extra in ([], ["--no-thp"]):
        r = run(["run", "-m", "64M", "-p", "touch=all"] + extra)
        assert_guest_passed(r)


if __name__ == "__main__":
    harness.main(globals())
