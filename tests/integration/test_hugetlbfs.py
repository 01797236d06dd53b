#!/usr/bin/env python3
"""Guest RAM on hugetlbfs (--hugetlbfs PATH): a mount and huge pages made
for the test, the guest touches its RAM, stat reports it all huge."""
import os
import subprocess
import tempfile

import harness
from harness import ctl_json, run, start, wait_for_line

NR_PAGES = 64	# 2 MiB each: 128 MiB for a 64 MiB guest and spare


class HugetlbMount:
    def __enter__(self):
        if os.geteuid() != 0:
            harness.skip("needs root to mount hugetlbfs and reserve pages")
        self.dir = tempfile.mkdtemp(prefix="thpvm-huge-")
        with open("/proc/sys/vm/nr_hugepages") as f:
            self.saved = f.read().strip()
        with open("/proc/sys/vm/nr_hugepages", "w") as f:
            f.write(str(int(self.saved) + NR_PAGES))
        subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                        "none", self.dir], check=True)
        return self.dir

    def __exit__(self, *exc):
        # A VM left running by a failed assertion keeps the mount busy.
        harness.kill_leftovers()
        subprocess.run(["umount", self.dir])
        with open("/proc/sys/vm/nr_hugepages", "w") as f:
            f.write(self.saved)
        os.rmdir(self.dir)


def test_hugetlbfs_backed_guest():
    harness.require_kvm()
    with HugetlbMount() as d:
        p = start(["run", "--name", "huge", "-m", "64M", "--hugetlbfs", d,
                   "-p", "ram=64M serve touch=all"])
        wait_for_line(p, "^tg: serving")
        st = ctl_json(["stat", "huge"])
        assert st["backing"] == "hugetlbfs", st
        # Every page the host backs is a huge page; the guest touched
        # all but its own first megabytes.
        assert st["huge"] == st["resident"], st
        assert st["huge"] >= 60 << 20, st
        assert harness.stop_and_wait(p, "huge") == 0
        # Nothing left behind on the mount.
        assert os.listdir(d) == []


def test_hugetlbfs_not_enough_pages():
    harness.require_kvm()
    with HugetlbMount() as d:
        r = run(["run", "-m", "1G", "--hugetlbfs", d, "-p", "exit"])
        assert r.rc == 1 and "huge pages" in r.err, r


def test_hugetlbfs_path_not_a_mount():
    # The directory is looked at where guest RAM is mapped, once the VM
    # exists: after /dev/kvm is opened.
    harness.require_kvm()
    r = run(["run", "--hugetlbfs", "/tmp", "-p", "exit"])
    assert r.rc == 1 and "not a hugetlbfs mount" in r.err, r
    assert len(r.err.strip().splitlines()) == 1, r


if __name__ == "__main__":
    harness.main(globals())
