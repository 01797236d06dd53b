#!/usr/bin/env python3
"""cont_balloon (guest/linux/cont_balloon), the guest kernel module for
the continuous-pages balloon, built as CI builds it: against the newest
Debian linux-headers-*-amd64, with W=1 and warnings as errors, in a copy
of the source so that no build product lands in the tree. Loading it
needs a stock Linux guest that reaches user space, which hosts without
hardware virtualization (PVM) cannot run: that is not tested here."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "guest", "linux", "cont_balloon")
ALIAS = "virtio:d00000005v*"


def kernel_headers():
    dirs = [d for d in glob.glob("/usr/src/linux-headers-*-amd64")
            if os.path.isfile(os.path.join(d, "Makefile"))]
    if not dirs:
        harness.skip("no /usr/src/linux-headers-*-amd64 "
                     "(install linux-headers-amd64)")
    return max(dirs, key=lambda d: harness.version_key(os.path.basename(d)))


def modinfo(ko):
    """modinfo's fields as (name, value) pairs; without kmod, the
    .modinfo strings read from the file itself."""
    path = os.environ.get("PATH", "") + ":/sbin:/usr/sbin"
    tool = shutil.which("modinfo", path=path)
    if tool:
        out = subprocess.run([tool, ko], capture_output=True, text=True,
                             check=True).stdout
        return [tuple(s.strip() for s in l.split(":", 1))
                for l in out.splitlines() if ":" in l]
    with open(ko, "rb") as f:
        data = f.read()
    return [tuple(m.decode().split("=", 1)) for m in
            re.findall(rb"(?:alias|license|depends)=[^\0]*", data)]


def test_module_builds_without_warnings():
    kdir = kernel_headers()
    if not shutil.which("make"):
        harness.skip("no make")
    with tempfile.TemporaryDirectory(prefix="thpvm-kmod-") as tmp:
        build = os.path.join(tmp, "cont_balloon")
        shutil.copytree(SRC, build, ignore=shutil.ignore_patterns(
            "*.o", "*.ko", "*.mod", "*.mod.c", ".*", "modules.order",
            "Module.symvers"))
        p = subprocess.run(["make", "-C", kdir, f"M={build}", "W=1",
                            "KCFLAGS=-Werror", "modules"],
                           capture_output=True, text=True, errors="replace",
                           timeout=600)
        log = p.stdout + p.stderr
        assert p.returncode == 0, f"make failed against {kdir}:\n{log}"
        warnings = [l for l in log.splitlines()
                    if re.search(r"warning|error", l, re.I)]
        assert not warnings, "\n".join(warnings)
        ko = os.path.join(build, "cont_balloon.ko")
        assert os.path.isfile(ko), log
        info = modinfo(ko)
        assert ("alias", ALIAS) in info, info
        assert ("license", "GPL") in info, info


if __name__ == "__main__":
    harness.main(globals())
