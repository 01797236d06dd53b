#!/usr/bin/env python3
"""The test guest booted by the real thpvm binary through every entry,
with 1 and 2 vCPUs, checking the boot data it received, the ACPI tables
among them (and without them, --no-acpi); on the split irqchip (the
default: no PIT) and on KVM's with its PIT."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import harness
from harness import (assert_guest_passed, run, run_guest, start,
                     wait_for_line)

CHECKS = ("e820", "smp", "lapic-timer")
# KVM's irqchip and PIT, which the PIT check needs (docs/interrupts.md).
KERNEL_IRQCHIP = ("--irqchip=kernel", "--pit")
# thpvm's ACPI tables: the RSDP at 0xe0000, handed over by every entry
# and found by the BIOS-area scan too.
ACPI_RSDP = "0xe0000"
# The FADT as the guest reads it: hardware-reduced (bit 20) with a reset
# register (bit 10), legacy devices, an i8042 and no VGA, no SCI; the
# registers of arch/x86/acpi_pm.h and \_S5's SLP_TYP.
ACPI_FADT = {"rev": "6", "len": "276", "flags": "0x100400",
             "boot_arch": "0x7", "sci": "0", "reset": "io:0x602/1",
             "sleep_control": "io:0x600", "sleep_status": "io:0x601",
             "s5": "5"}
LOW_MAP = [(0, 0x9fc00, 1), (0x9fc00, 0xa0000, 2), (0xe0000, 0x100000, 2)]


def expected_e820(mib):
    size = mib << 20
    if size <= 3 << 30:
        return LOW_MAP + [(0x100000, size, 1)]
    return LOW_MAP + [(0x100000, 3 << 30, 1),
                      (1 << 32, (1 << 32) + size - (3 << 30), 1)]


def acpi_devices(r):
    """The DSDT's devices as the guest read them: {name: line}."""
    return {m[1]: m[2] for m in re.finditer(
        r"^tg: acpi device name=(\S+) hid=(.*?)\r?$", r.out, re.M)}


def check_acpi(r, cpus, entry="64"):
    """thpvm's tables, as the guest checked and read them: the RSDP given
    (in boot_params, which the 16-bit entry builds itself: none there)
    and found, checksums and lengths (the guest's "acpi" check), a LAPIC
    per vCPU, the FADT's registers, and the DSDT's devices: a processor
    per vCPU and the legacy devices with their ports and IRQs."""
    ok = r.tg["ok"]["acpi"]
    assert ok["rsdp"] == ACPI_RSDP and ok["root"] == "XSDT", r
    assert ok["tables"] == "FACP,APIC" and ok["lapics"] == str(cpus), r
    given = "0x0" if entry == "16" else ACPI_RSDP
    assert r.tg["acpi"] == {"rsdp": ACPI_RSDP, "given": given,
                            "scanned": ACPI_RSDP, "rev": "2"}, r
    assert r.tg["acpi fadt"] == ACPI_FADT, r
    devices = acpi_devices(r)
    cpus_found = [n for n in devices if re.fullmatch(r"C[0-9A-F]{3}", n)]
    assert cpus_found == [f"C{i:03X}" for i in range(cpus)], r
    assert all(devices[n] == "ACPI0007" for n in cpus_found), r
    assert devices["COM1"] == "PNP0501 io=0x3f8/8 irq=4", r
    assert devices["KBD_"] == "PNP0303 io=0x60/1 io=0x64/1 irq=1", r
    assert devices["RTC_"] == "PNP0B00 io=0x70/2", r
    assert devices["PCI0"] == "PNP0A08 io=0xcf8/8", r
    return devices


def boot(entry, cpus, mib=128, params="", args=()):
    """With KERNEL_IRQCHIP among args, the PIT check too; without, the
    guest finds no PIT."""
    harness.require_kvm()
    kernel = harness.GUEST_ELF if entry == "pvh" else harness.GUEST_BZIMAGE
    pit = "--pit" in args
    args = ["-m", f"{mib}M", "-c", str(cpus), "-k", kernel] + list(args)
    if entry != "pvh":
        args += ["--boot", entry]
    r = run_guest(f"ram={mib}M cpus={cpus} {params}".strip(), args)
    assert_guest_passed(r, CHECKS + ("acpi",) + (("pit-timer",) if pit
                                                 else ()))
    assert ("pit absent" in r.tg) != pit, r
    assert r.tg["tsc calibration"]["source"] == "kvmclock", r
    assert r.tg["boot"]["entry"] == entry, r
    assert r.tg["e820"] == expected_e820(mib), r
    assert r.tg["ok"]["smp"]["cpus"] == str(cpus), r
    assert r.tg["firmware"]["source"] == "madt", r
    check_acpi(r, cpus, entry)
    return r


def json_end(r):
    """thpvm run --json's last line on stderr."""
    return json.loads(r.err.strip().splitlines()[-1])


def test_entry_64_1cpu():
    boot("64", 1)


def test_entry_64_2cpus():
    boot("64", 2)


def test_entry_16_1cpu():
    boot("16", 1)


def test_entry_16_2cpus():
    boot("16", 2)


def test_entry_16_leaves_setup_code_alone():
    """Through the real-mode entry thpvm writes only the setup header into
    the setup segment: the rest is the image's own code, here from 0x26c
    to 0x400, over where a zero page keeps e820_table (0x2d0). That code
    gets the memory map from the BIOS (int 0x15, e820) and prints it and
    the command line the header points at."""
    harness.require_kvm()
    r = run(["run", "--boot", "16", "-m", "128M", "-p", "x=1", "-k",
             harness.SETUP_PAST_HEADER_BZIMAGE], timeout=60)
    assert r.rc == 0, r
    assert (f"setup16: e820 entries={len(expected_e820(128))} "
            f"cmdline={harness.LINUX_DEFAULT_PARAMS} x=1\n") in r.out, r


def test_entry_pvh_1cpu():
    boot("pvh", 1)


def test_entry_pvh_2cpus():
    boot("pvh", 2)


def test_kernel_irqchip_with_pit_64_2cpus():
    boot("64", 2, args=KERNEL_IRQCHIP)


def test_kernel_irqchip_with_pit_16_1cpu():
    boot("16", 1, args=KERNEL_IRQCHIP)


def test_kernel_irqchip_without_pit():
    boot("64", 2, args=("--irqchip=kernel",))


def test_pit_needs_kernel_irqchip():
    """KVM has no PIT beside the split irqchip: one line, before any VM."""
    r = run(["run", "--pit", "-p", "exit"], timeout=30)
    assert r.rc == 2, r
    assert r.err.strip().splitlines() == [
        "thpvm: error: --pit needs --irqchip=kernel: KVM's PIT is wired to "
        "its 8259 PICs, which the split irqchip leaves out"], r


def test_unusable_payload_falls_back_in_one_line():
    """A bzImage whose payload thpvm cannot boot through PVH (not an ELF,
    or in a format it cannot unpack) boots through its own entry in auto
    mode, after one line that says so; --boot pvh refuses it in one
    error."""
    harness.require_kvm()
    cases = ((b"not a kernel, not compressed" * 4,
              "its uncompressed or unknown payload is not an ELF64 kernel"),
             (b"BZh91AY&SY" + bytes(64),
              "thpvm cannot unpack its bzip2 payload"))
    with tempfile.TemporaryDirectory(prefix="thpvm-payload-") as tmp:
        kernel = os.path.join(tmp, "bzImage")
        for payload, why in cases:
            harness.bzimage_with_payload(kernel, payload)
            r = run(["run", "-k", kernel, "--nodefaults", "-p", "cpus=1"])
            assert_guest_passed(r)
            assert r.tg["boot"]["entry"] == "64", r
            assert r.err == (f"thpvm: {kernel}: {why}; booting it through "
                             "its 64-bit entry, with its own "
                             "decompressor\n"), r
            harness.one_error(run(["run", "-k", kernel, "--boot", "pvh"]),
                              f"{kernel}: cannot boot through PVH: {why}")


def test_acpi_4cpus_reset():
    """Four vCPUs in the MADT and the DSDT; the guest then writes the
    FADT's reset value to its reset register, which ends thpvm as a
    reset does: status 0, reason reset."""
    r = boot("64", 4, params="acpi=yes acpi_exit=reset", args=["--json"])
    assert "tg: acpi exit how=reset port=0x602 value=0x1" in r.out, r
    assert "acpi-exit" not in r.tg["fail"], r
    assert json_end(r)["reason"] == "reset", r


def test_acpi_poweroff():
    """S5 through the FADT's sleep control register, with the SLP_TYP
    the DSDT's \\_S5 gives and SLP_EN: thpvm ends with status 0, as a
    power-off (reason reset, as on arm64)."""
    r = boot("pvh", 1, params="acpi=yes acpi_exit=poweroff",
             args=["--json"])
    assert "tg: acpi exit how=poweroff port=0x600 value=0x34" in r.out, r
    assert json_end(r)["reason"] == "reset", r


def test_no_acpi():
    """--no-acpi: no RSDP anywhere (the guest scans the EBDA and the BIOS
    area too), the CPUs and the IOAPIC from the MP table, which all
    checks still pass with; a guest that asks for ACPI's power-off is
    told there are no tables."""
    harness.require_kvm()
    for entry in ("64", "16"):
        r = run_guest("ram=128M cpus=2 acpi=no", ["-m", "128M", "-c", "2",
                                                  "--no-acpi", "--boot",
                                                  entry])
        assert_guest_passed(r, CHECKS + ("acpi",))
        assert r.tg["ok"]["acpi"] == {"rsdp": "none"}, r
        assert r.tg["firmware"]["source"] == "mptable", r
        assert r.tg["firmware"]["cpus"] == "2", r
        assert r.tg["e820"] == expected_e820(128), r
    r = run_guest("acpi_exit=poweroff", ["--no-acpi"])
    assert r.rc == 1, r
    assert r.tg["fail"]["acpi-exit"] == {"reason": "no-tables"}, r
    # And with tables, a guest that expects none fails.
    r = run_guest("acpi=no")
    assert r.rc == 1, r
    assert r.tg["fail"]["acpi"]["reason"] == "unexpected-tables", r


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
    """Each virtio-mmio device is described in the DSDT (LNRO0005): its
    own page of the platform MMIO window and its own interrupt line,
    level-triggered and active high; a device kept on PCI is not. The
    command line has none (test_blk.py's guest drives disks found so).
    With --no-acpi, they are announced after the user's command line in
    Linux's virtio_mmio.device= form instead."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-mmio-") as tmp:
        disks = []
        for name in ("a", "b"):
            disks.append(os.path.join(tmp, name))
            with open(disks[-1], "wb") as f:
                f.truncate(1 << 20)
        args = ["run", "-p", "x=1", "--virtio-transport",
                "mmio", "-d", disks[0], "-d", disks[1] + ",pci", "--balloon"]
        r = run(args)
        assert_guest_passed(r, ["acpi"])
        assert r.tg["cmdline"] == "x=1", r
        devices = acpi_devices(r)
        assert devices["V000"] == ("LNRO0005 mem=0xfe000000/0x200 gsi=16 "
                                   "flags=0x1"), r
        assert devices["V001"] == ("LNRO0005 mem=0xfe001000/0x200 gsi=18 "
                                   "flags=0x1"), r
        assert "V002" not in devices and r.tg["ok"]["acpi"]["mmio"] == "2", r
        r = run(args[:1] + ["--no-acpi"] + args[1:])
    assert_guest_passed(r)
    assert r.tg["cmdline"] == ("x=1 "
                               "virtio_mmio.device=0x200@0xfe000000:16 "
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


def loop_device(path):
    """path attached read-only to a free loop device (detach it after)."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        harness.skip("needs root and losetup for a block device")
    p = subprocess.run(["losetup", "--find", "--show", "--read-only", path],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        harness.skip(f"losetup: {p.stderr.strip()}")
    return p.stdout.strip()


def test_images_from_block_devices():
    """-k and -i name block devices, whose st_size is 0: read by their
    real size (whole sectors: a loop device drops a partial one)."""
    harness.require_kvm()
    with tempfile.TemporaryDirectory(prefix="thpvm-blkimg-") as tmp:
        initrd = os.path.join(tmp, "initrd")
        with open(initrd, "wb") as f:
            f.write(os.urandom(3 << 20))
        crc = harness.crc32_file(initrd)
        kernel = os.path.join(tmp, "kernel")
        shutil.copyfile(harness.GUEST_BZIMAGE, kernel)
        with open(kernel, "ab") as f:
            f.write(bytes(-os.path.getsize(kernel) % 512))
        devs = []
        try:
            for path in (kernel, initrd):
                devs.append(loop_device(path))
            r = run(["run", "-k", devs[0], "-i", devs[1], "--nodefaults",
                     "-p", f"initrd_crc32={crc:#x}"])
        finally:
            for dev in devs:
                subprocess.run(["losetup", "-d", dev], timeout=30)
    assert_guest_passed(r, ["initrd"])
    assert int(r.tg["ok"]["initrd"]["bytes"]) == 3 << 20, r


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
