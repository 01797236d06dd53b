#!/usr/bin/env python3
"""thpvm run -d DIR with Debian's kernel: a host directory as the guest's
root file system over virtio-9p (docs/9p.md, "A directory as the root").
The guest kit's initramfs (guest/linux) loads the 9p modules, mounts the
share thpvm's command line names and switch_roots into it; the root's
own /sbin/init, a busybox script, then reads, writes, makes, renames and
lists there and powers off. The host checks what it changed, that the
new file is this user's, and that nothing outside DIR changed. A second
boot shares DIR read-only (-d DIR,ro), which thpvm's words then say; a
third gives its own root= in -p: thpvm adds none of its words, and the
guest mounts the root with the user's flags (read-only here). Needs a
capable host (tests/hosts/svm_host.py provides one here)."""
import os
import re
import shutil
import stat
import tempfile

import harness
from p9_share import snapshot
from test_linux_initramfs import (again_if_died, boot_args, build_image,
                                  require_capable)

# What thpvm adds to the command line for -d DIR and -d DIR,ro
# (vmm/cli/share_options.h).
ROOT_PARAMS = ("root=/dev/root rw rootflags=rw,trans=virtio,"
               "version=9p2000.L rootfstype=9p")
ROOT_PARAMS_RO = ("root=/dev/root ro rootflags=ro,trans=virtio,"
                  "version=9p2000.L rootfstype=9p")
HELLO = b"put here by the host\n"
OLD = b"renamed by the guest\n"
MADE = b"written by the guest\n"
SENTINEL = b"outside the root: no guest may change this\n"
APPLETS = ["sh", "cat", "echo", "mkdir", "mv", "ls", "grep", "tr", "sync",
           "stty", "poweroff"]
# The root's init: each step's result a "p9root:" line, then an ACPI
# power-off (status 0), the console drained first as guest/linux/init
# does.
ROOT_INIT = r"""#!/bin/sh
export PATH=/bin
echo "p9root: pid $$"
echo "p9root: cmdline $(cat /proc/cmdline)"
echo "p9root: hello $(cat /hello.txt)"
if echo "written by the guest" >/made.txt; then
	mkdir /newdir && mv /old.txt /newdir/renamed.txt &&
		echo "p9root: changed"
else
	echo "p9root: read-only"
fi
echo "p9root: ls $(ls / | tr '\n' ' ')"
echo "p9root: mount $(grep ' / 9p ' /proc/mounts)"
echo "p9root: done"
sync
stty -F /dev/console "$(stty -F /dev/console -g)" 2>/dev/null
poweroff -f
"""


def make_root(parent):
    """parent/root, a root file system of busybox and ROOT_INIT with the
    files the init reads and renames, and parent/sentinel.txt beside it;
    returns the root's path."""
    busybox = "/bin/busybox"
    if not os.path.isfile(busybox):
        harness.skip("no /bin/busybox (apt-get install busybox-static)")
    root = os.path.join(parent, "root")
    for d in ("bin", "sbin", "dev", "proc", "sys"):
        os.makedirs(os.path.join(root, d))
    shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
    for applet in APPLETS:
        os.symlink("busybox", os.path.join(root, "bin", applet))
    for path, data, mode in (("sbin/init", ROOT_INIT.encode(), 0o755),
                             ("hello.txt", HELLO, 0o644),
                             ("old.txt", OLD, 0o644)):
        with open(os.path.join(root, path), "wb") as f:
            f.write(data)
        os.chmod(os.path.join(root, path), mode)
    with open(os.path.join(parent, "sentinel.txt"), "wb") as f:
        f.write(SENTINEL)
    return root


def boot_root(params, options=""):
    """Boots the kit's initramfs with -d DIR (and options: ",ro"), DIR a
    fresh make_root, and params as -p: (result, the guest's p9root lines as {key: rest}, the
    snapshots of DIR before and after). The VM must have ended with
    status 0 after the root's init ran as PID 1 to its end, and nothing
    beside DIR changed."""
    harness.require_kvm()
    require_capable("a 9p root")
    version, image = build_image()
    with tempfile.TemporaryDirectory(prefix="thpvm-9p-root-") as tmp:
        root = make_root(tmp)
        before = snapshot(root)
        outside = snapshot(tmp, leave_out=("root",))

        def boot():
            return harness.run(boot_args(version, image, "512M", params) +
                               ["-d", root + options], timeout=300)

        r = again_if_died(boot)
        out = r.out.replace("\r", "")
        lines = dict(re.findall(r"^p9root: (\S+) ?(.*)$", out, re.M))
        assert "thpvm-guest: insmod" not in out, r
        assert ("thpvm-guest: root /dev/root on 9p: exec /sbin/init\n"
                in out), r
        assert lines.get("pid") == "1", r
        assert lines.get("hello") == HELLO.decode().strip(), r
        assert "done" in lines, r
        assert r.rc == 0, r
        assert snapshot(tmp, leave_out=("root",)) == outside, r
        return r, lines, before, snapshot(root)


def test_9p_root():
    """thpvm's own root words: the root mounted writable; the file the
    guest made, as the host sees it, is this user's."""
    r, lines, before, after = boot_root("quiet")
    assert lines["cmdline"] == (f"{harness.LINUX_DEFAULT_PARAMS} "
                                f"{ROOT_PARAMS} quiet"), r
    assert re.fullmatch(r"/dev/root / 9p rw,\S*trans=virtio\S* 0 0",
                        lines["mount"]), r
    assert "changed" in lines, r
    assert lines["ls"].split() == ["bin", "dev", "hello.txt", "made.txt",
                                   "newdir", "proc", "sbin", "sys"], r
    kind, _, owner, data = after.pop("made.txt")
    assert kind == stat.S_IFREG and data == MADE, r
    assert owner == os.getuid(), r
    assert after.pop("newdir/renamed.txt") == before.pop("old.txt"), r
    assert after.pop("newdir")[0] == stat.S_IFDIR, r
    assert after == before, r


def test_9p_root_read_only():
    """-d DIR,ro: thpvm's root words say read-only, so the kernel and
    /init mount it so; the guest's writes are refused and DIR stays as it
    was."""
    r, lines, before, after = boot_root("quiet", ",ro")
    assert lines["cmdline"] == (f"{harness.LINUX_DEFAULT_PARAMS} "
                                f"{ROOT_PARAMS_RO} quiet"), r
    assert re.fullmatch(r"/dev/root / 9p ro,\S* 0 0", lines["mount"]), r
    assert "read-only" in lines and "changed" not in lines, r
    assert after == before, r


def test_9p_root_own_root_param():
    """A root= in -p is the user's: thpvm adds none of its words, and
    /init mounts with the user's rootflags, read-only here, so the
    guest's writes are refused and DIR stays as it was."""
    params = ("quiet root=/dev/root rootfstype=9p "
              "rootflags=ro,trans=virtio,version=9p2000.L")
    r, lines, before, after = boot_root(params)
    assert lines["cmdline"] == (f"{harness.LINUX_DEFAULT_PARAMS} "
                                f"{params}"), r
    assert re.fullmatch(r"/dev/root / 9p ro,\S* 0 0", lines["mount"]), r
    assert "read-only" in lines and "changed" not in lines, r
    assert after == before, r


if __name__ == "__main__":
    harness.main(globals())
