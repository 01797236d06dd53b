#!/usr/bin/env python3
"""The commands README.md and docs/ show, run as printed (doc_blocks.py):
every block marked `<!-- doc-test ... -->` that needs neither /dev/kvm
(test_docs_kvm.py runs those) nor a host with VT-x/AMD-V
(test_docs_capable.py), and the promises around them: the blocks below
stay marked, and scripts the docs run by path work from any
directory."""
import os
import shutil
import subprocess
import tempfile

import doc_blocks
import harness

# Each must stay marked: a block losing its marker must not drop out of
# the test unnoticed.
EXPECTED = {
    "readme-first-boot", "readme-first-boot-emulated", "readme-test-by-hand", "control-by-hand",
    "control-from-python", "test-guest-qemu", "test-guest-thpvm",
    "test-guest-balloon", "test-guest-net", "linux-initramfs",
    "cont-balloon-build", "linux-vm", "fuzz-replay", "security-user",
    "mem-hotplug",
}


def test_markers():
    names = {b.name for b in doc_blocks.blocks()}
    assert not EXPECTED - names, f"no longer marked: {EXPECTED - names}"
    assert not names - EXPECTED, f"marked but not listed here: " \
                                 f"{names - EXPECTED}"


def test_marker_errors():
    """A marker the test would not run is an error, not a block less."""
    cases = {
        "no block": "<!-- doc-test a -->\ntext\n",
        "not sh": "<!-- doc-test a -->\n```python\npass\n```\n",
        "misspelt": "<!-- doc-test a-->\n```sh\ntrue\n```\n",
        "unknown need": "<!-- doc-test a needs=gpu -->\n```sh\ntrue\n```\n",
        "twice": "<!-- doc-test a -->\n```sh\ntrue\n```\n" * 2,
        "never closed": "<!-- doc-test a -->\n```sh\ntrue\n",
        "continued first": "<!-- doc-test a continued -->\n```sh\n```\n",
    }
    with tempfile.TemporaryDirectory(prefix="thpvm-docs-") as tmp:
        for case, text in cases.items():
            with open(os.path.join(tmp, "doc.md"), "w") as f:
                f.write(text)
            try:
                doc_blocks.blocks(["doc.md"], tmp)
            except ValueError:
                continue
            raise AssertionError(f"{case}: accepted")
        with open(os.path.join(tmp, "doc.md"), "w") as f:
            f.write("<!-- doc-test a needs=kvm timeout=9 -->\n```sh\n"
                    "one\n```\nprose\n<!-- doc-test a continued -->\n"
                    "```sh\ntwo\n```\n")
        (block,) = doc_blocks.blocks(["doc.md"], tmp)
    assert (block.name, block.needs, block.timeout, block.text) == \
        ("a", {"kvm"}, 9, "one\ntwo\n"), vars(block)


def test_mkinitramfs_from_another_directory():
    """guest/linux/mkinitramfs.py, started by its full path from
    elsewhere, finds the build's usemem on its own."""
    scratch = doc_blocks.fresh_clone()
    try:
        with tempfile.TemporaryDirectory(prefix="thpvm-docs-") as tmp:
            r = subprocess.run(
                [os.path.join(scratch, "guest", "linux", "mkinitramfs.py"),
                 "out.cpio.gz"], env=doc_blocks.reader_env(), cwd=tmp,
                capture_output=True, text=True, timeout=300)
            made = os.path.getsize(os.path.join(tmp, "out.cpio.gz")) \
                if r.returncode == 0 else 0
    finally:
        shutil.rmtree(scratch)
    assert r.returncode == 0 and "mkinitramfs: wrote" in r.stdout, r
    assert made > 1 << 20, made


globals().update(doc_blocks.tests("plain"))
harness.main(globals())
