#!/usr/bin/env python3
"""The mutation guard: single-line breakages of product code, each with
the test that must notice it. For each one, in a scratch copy of the
tree built once, the line is changed, the copy rebuilt, the named test
run, and the line put back; a test that still passes is a guard that
fails. TAP, one subtest per mutation.

Usage: mutations.py [NAME...]
Run by meson (the 'slow' suite) or by hand from the tree: python3
tests/mutations.py. NAMEs pick mutations; root runs the ones that need
it (hugetlbfs, loop devices).

On a machine without /dev/kvm (or with THPVM_CI_EMULATED=1, as .ci/run
takes it), a mutation whose test is in meson's 'kvm' suite is built here
as the others are, its thpvm binary kept, and all of those tested at the
end in one emulated AMD-V host (tests/hosts/svm_host.py), each binary in
turn put in the build's place; their results come last."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVM_HOST = os.path.join(ROOT, "tests", "hosts", "svm_host.py")
# The emulated host's run of the kept binaries: its limit, and where its
# tests write (an ext4 disk of its own, which takes O_DIRECT).
SVM_TIMEOUT = 1500
SVM_SCRATCH = "/var/tmp/thpvm-scratch"

# name: (file, the line as it stands, what it becomes, meson test,
#        the test's own arguments)
MUTATIONS = {
    "flush-skips-fdatasync": (
        "vmm/backend/disk_image.c",
        "\twhile (fdatasync(d->fd) < 0) {",
        "\twhile (0 && fdatasync(d->fd) < 0) {",
        "unit-virtio-blk", []),
    "cf8-any-bus": (
        "arch/x86/pci_ports.c",
        "\tif ((a & ADDRESS_ENABLE) && ADDRESS_BUS(a) == 0 && offset + len <= 4)",
        "\tif ((a & ADDRESS_ENABLE) && offset + len <= 4)",
        "unit-pci", []),
    "chain-longer-than-queue": (
        "virtio/virtqueue.c",
        "\tif (n == vq->size)",
        "\tif (n == VIRTQ_MAX_SIZE)",
        "unit-virtqueue", []),
    "indirect-table-unbounded": (
        "virtio/virtqueue.c",
        "\tif (n > vq->size)",
        "\tif (n > VIRTQ_MAX_SIZE * 64)",
        "unit-virtqueue", []),
    "cont-element-size-unchecked": (
        "virtio/balloon.c",
        "\treturn IS_ALIGNED(size, BALLOON_PAGE_SIZE);",
        "\treturn true;",
        "unit-virtio-balloon", []),
    "report-ignores-page-poison": (
        "virtio/balloon.c",
        "\tif (has(b, VIRTIO_BALLOON_F_PAGE_POISON) &&",
        "\tif (0 && has(b, VIRTIO_BALLOON_F_PAGE_POISON) &&",
        "unit-virtio-balloon", []),
    "eager-host-page-as-4k": (
        "vmm/core/balloon_release.c",
        "\tbr->pages_per_host_page = host_page >> BALLOON_PAGE_SHIFT;",
        "\tbr->pages_per_host_page = 1;",
        "unit-balloon-release", []),
    "runs-merge-across-regions": (
        "vmm/core/balloon_release.c",
        "\t\t    guest_ram_boot_contig(br->ram, last->gpa) >=",
        "\t\t    UINT64_MAX >=",
        "unit-balloon-release", []),
    "e820-no-reserved-ebda": (
        "arch/x86/memory_map.c",
        "\t\t\t\t       X86_LOW_HOLE_START, E820_TYPE_RESERVED) ?:",
        "\t\t\t\t       X86_LOW_HOLE_START, E820_TYPE_RAM) ?:",
        "unit-x86-boot", []),
    "control-unknown-member-accepted": (
        "vmm/control/control_commands.c",
        "\t\tif (!member_taken(cmd, key))",
        "\t\tif (!member_taken(cmd, key) && 0)",
        "unit-control", []),
    "mmio-line-not-lowered": (
        "virtio/virtio_mmio.c",
        "\tirq_source_set(m->lines, &m->irq, m->vdev->isr != 0);",
        "\tirq_source_set(m->lines, &m->irq, true);",
        "unit-virtio-mmio", []),
    "shared-line-drops-early": (
        "vmm/core/irq_lines.c",
        "\t\tif (*high == level)",
        "\t\tif (1)",
        "unit-irq-lines", []),
    "console-input-dropped": (
        "vmm/cli/cmd_run.c",
        "\tconsole_feed(con, buf, n);",
        "\t(void)buf;",
        "integration-boot", ["test_console_input_reaches_guest"]),
    "pause-does-not-park": (
        "vmm/core/vcpu.c",
        "\twhile (vm->state == VM_PAUSED ||",
        "\twhile ((0 && vm->state == VM_PAUSED) ||",
        "integration-balloon_guest", ["test_pause_stops_the_guest"]),
    "ioapic-eoi-keeps-remote-irr": (
        "arch/x86/ioapic.c",
        "\t\t*e &= ~RE_REMOTE_IRR;\n\t\tservice_level_locked(io, pin);",
        "\t\tservice_level_locked(io, pin);",
        "unit-x86-ioapic", []),
    "net-user-drop-uncounted": (
        "vmm/backend/net_user.c",
        "\tif (writev(nu->pkt_fd, iov, 2) < 0) {\n\t\tnu->st.dropped++;",
        "\tif (writev(nu->pkt_fd, iov, 2) < 0) {",
        "integration-net_user", ["test_net_user_flood"]),
    "hostfwd-clash-unchecked": (
        "vmm/backend/net_user_config.c",
        "\treturn a->udp == b->udp && a->host_port == b->host_port &&",
        "\treturn 0 && a->udp == b->udp && a->host_port == b->host_port &&",
        "unit-net-user-config", []),
    "qcow2-detected-backing-followed": (
        "vmm/backend/disk.c",
        "\tif (info.backing[0] && detected) {",
        "\tif (0) {",
        "integration-qcow2", ["test_refused_at_open"]),
    "qcow2-l2-reserved-bits-unchecked": (
        "vmm/backend/qcow2.c",
        "\tif (entry & L2_RESERVED)",
        "\tif (0 && entry & L2_RESERVED)",
        "integration-qcow2", ["test_corrupt_tables_fail_requests"]),
    "qcow2-flush-skips-l2-tables": (
        "vmm/backend/qcow2_write.c",
        "\tif (!err && table_cache_dirty(&q->l2)) {",
        "\tif (0 && table_cache_dirty(&q->l2)) {",
        "integration-qcow2", ["test_writes_match_raw"]),
    "qcow2-cow-drops-old-bytes": (
        "vmm/backend/qcow2_write.c",
        "\t\terr = old_bytes(q, &e, offset - in, buf, below);",
        "\t\tmemset(buf, 0, q->cluster_size);",
        "integration-qcow2", ["test_writes_match_raw"]),
    "pause-does-not-kick": (
        "vmm/core/vm.c",
        "\t\tvm->state = VM_PAUSED;\n\t\tkick_all_locked(vm);",
        "\t\tvm->state = VM_PAUSED;",
        "integration-control", ["test_pause_stops_a_busy_guest"]),
    "pause-does-not-wait": (
        "vmm/core/vm.c",
        "\t\twhile (vm->state == VM_PAUSED &&",
        "\t\twhile (0 && vm->state == VM_PAUSED &&",
        "integration-control", ["test_pause_waits_for_every_vcpu"]),
    "params-replace-linux-defaults": (
        "vmm/cli/run_options.c",
        "\tif (!cfg->kernel_path || opts->nodefaults)",
        "\tif (1)",
        "unit-run-options", []),
    "misspelt-disk-option-as-path": (
        "vmm/cli/run_options.c",
        "\t\t\tif (access(d->path, F_OK) == 0)",
        "\t\t\tif (1)",
        "unit-run-options", []),
    "sandbox-quote-left-open": (
        "vmm/cli/sandbox_script.c",
        "\t\tif (*s == '\\'')",
        "\t\tif (0)",
        "unit-sandbox-script", []),
    "sandbox-dir-left-behind": (
        "vmm/cli/sandbox_dir.c",
        "\treturn remove(path) && errno != ENOENT ? errno : 0;",
        "\treturn 0;",
        "unit-cmd-sandbox", []),
    "pause-all-stops-at-paused-vm": (
        "vmm/cli/cmd_lifecycle.c",
        "\t\treturn !strcmp(state, \"paused\");",
        "\t\treturn false;",
        "integration-lkvm_spellings", ["test_pause_resume_stat_list"]),
    "hugetlbfs-madvise-not-punch": (
        "vmm/core/guest_ram.c",
        "\t\treturn discard_hugetlbfs(ram, ext, nr, calls);",
        "\t\treturn discard_each(ram, ext, nr, calls);",
        "unit-balloon-release", []),
    "console-writer-not-cancellable": (
        "vmm/core/console_out.c",
        "\t\tpthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);",
        "\t\tpthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);",
        "unit-console-out", []),
    "console-overrun-not-dropped": (
        "vmm/lib/byte_ring.c",
        "\tsize_t take = MIN(len, byte_ring_room(r));",
        "\tsize_t take = MIN(len, r->size);",
        "unit-console-out", []),
    "console-filter-not-applied": (
        "vmm/core/console_out.c",
        "\tif (!co->filtering) {",
        "\tif (1) {",
        "integration-console", ["test_console_filter"]),
    "ring-holds-the-locked-file": (
        "vmm/backend/disk_ring.c",
        "\tfd = open(path, (flags & (O_ACCMODE | O_DIRECT)) | O_CLOEXEC);",
        "\tfd = fcntl(d->fd, F_DUPFD_CLOEXEC, 0);",
        "unit-virtio-blk", []),
    "balloon-pass-unbounded": (
        "virtio/balloon.c",
        "\tb->budget = BALLOON_PASS_BUDGET;",
        "\tb->budget = UINT64_MAX;",
        "unit-virtio-balloon", []),
    "rng-budget-never-spent": (
        "virtio/rng.c",
        "\tr->budget -= MIN(r->budget, MAX(done, RNG_MIN_CHARGE));",
        "\tr->budget -= 0;",
        "unit-virtio-rng", []),
    "rng-waits-busy": (
        "virtio/rng.c",
        "\twait_for_period(r);",
        "\tvirtio_queue_kick(vdev, REQ_QUEUE);",
        "unit-virtio-rng", []),
    "rng-writes-readable-buffer": (
        "virtio/rng.c",
        "\tif (c->nr_out) {",
        "\tif (0) {",
        "unit-virtio-rng", []),
    "p9-flush-before-its-request": (
        "virtio/p9.c",
        "\t\ttarget = request_find(p9, get_le16(hdr + P9_HEADER_SIZE));",
        "\t\ttarget = NULL;",
        "unit-virtio-p9", []),
    "p9-reset-keeps-session": (
        "virtio/p9.c",
        "\t\tp9_server_reset(p9->server);",
        "\t\t;",
        "unit-virtio-p9", []),
    "p9-reset-runs-dropped-requests": (
        "virtio/p9.c",
        "\twhile ((req = p9->pending)) {",
        "\twhile ((req = NULL)) {",
        "unit-virtio-p9", []),
    "p9-sandbox-lacks-mknodat": (
        "vmm/lib/sandbox_rules.c",
        "\tANY(\"mkdirat\"), ANY(\"mknodat\"), ANY(\"symlinkat\"), ANY(\"linkat\"),",
        "\tANY(\"mkdirat\"), ANY(\"symlinkat\"), ANY(\"linkat\"),",
        "unit-sandbox", []),
    "9p-tag-length-unchecked": (
        "vmm/cli/share_options.c",
        "\tif (strlen(tag) > P9_TAG_MAX) {",
        "\tif (0) {",
        "unit-run-options", []),
    "mem-plugs-over-plugged": (
        "virtio/mem.c",
        "\tif (!why && count_plugged(m, &r))",
        "\tif (0)",
        "unit-virtio-mem", []),
    "mem-unplug-keeps-memory": (
        "virtio/mem.c",
        "\t/* The host kept the memory: the guest may ask again. */\n"
        "\tif (release(m, &r))",
        "\tif (0 && release(m, &r))",
        "unit-virtio-mem", []),
    "hotplug-region-has-ram-offset": (
        "vmm/core/guest_ram.c",
        "\tconst struct ram_region *r = boot_region_of(ram, gpa);",
        "\tconst struct ram_region *r = region_of(ram, gpa);",
        "unit-guest-ram", []),
    "empty-image-accepted": (
        "vmm/cli/cmd_run.c",
        "\tif (!*size) {",
        "\tif (0 && !*size) {",
        "integration-errors", ["test_empty_images"]),
    "block-device-size-from-stat": (
        "vmm/lib/util.c",
        "\treturn ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;",
        "\treturn *size = st->st_size, 0;",
        "unit-util", []),
    "unpack-past-init-size": (
        "arch/x86/boot.c",
        "\tif (img->version >= 0x020a && img->init_size < limit) {",
        "\tif (0) {",
        "integration-errors", ["test_payload_unpacking_bounded"]),
    "fixed-buffer-without-spare-byte": (
        "vmm/boot/decompress.c",
        "\t\t.buf = dst, .cap = size, .max = size, .limit = size,",
        "\t\t.buf = dst, .cap = size, .max = size ? size - 1 : 0, .limit = size,",
        "unit-decompress", []),
    "acpi-madt-lapic-short": (
        "arch/x86/acpi.c",
        "\tfor (i = 0; i < nr_cpus; i++, p += MADT_LAPIC_LEN) {",
        "\tfor (i = 0; i + 1 < nr_cpus; i++, p += MADT_LAPIC_LEN) {",
        "unit-x86-acpi", []),
    "acpi-poweroff-any-sleep-type": (
        "arch/x86/acpi_pm.c",
        "\t\t    (v >> SLP_TYP_SHIFT & SLP_TYP_MASK) == X86_ACPI_SLP_TYP_S5)",
        "\t\t    1)",
        "unit-x86-acpi", []),
    "acpi-mmio-on-command-line-too": (
        "arch/x86/boot.c",
        "\tcmdline = user->no_acpi ? cmdline_with_mmio(vm, user->cmdline)",
        "\tcmdline = true ? cmdline_with_mmio(vm, user->cmdline)",
        "integration-boot", ["test_virtio_mmio_announced"]),
    "listener-never-rests": (
        "vmm/lib/listener.c",
        "\t\t\tl->rest_until_ms = monotonic_ms() + LISTENER_REST_MS;",
        "\t\t\tl->rest_until_ms = 0;",
        "integration-control", ["test_out_of_descriptors_rests"]),
    "insn-name-without-rex-w": (
        "arch/x86/insn_name.c",
        "\t\trex_w = insn[i] & 0x08;",
        "\t\trex_w = false;",
        "unit-x86-insn-name", []),
    "vcons-tx-takes-writable-buffer": (
        "virtio/console.c",
        "\tif (chain->nr_in) {",
        "\tif (0) {",
        "unit-virtio-console", []),
    "vcons-input-not-delivered": (
        "virtio/console.c",
        "\tif (n)\n\t\tvirtio_device_defer(&c->vdev);",
        "\tif (0)\n\t\tvirtio_device_defer(&c->vdev);",
        "unit-virtio-console", []),
    "term-raw-in-background": (
        "vmm/backend/term.c",
        "\tif (!term_foreground() || tcgetattr(STDIN_FILENO, &saved) < 0)",
        "\tif (tcgetattr(STDIN_FILENO, &saved) < 0)",
        "integration-virtio_console", ["test_background_run_not_stopped"]),
    # The socket never removed, rather than removed late: how late
    # depends on the machine, and a guard that sometimes misses is a
    # flaky CI run (test_detach checks the order too).
    "console-socket-left-after-stop": (
        "vmm/cli/run_console.c",
        "\tif (rc->linked)\n\t\tunlink(rc->path);",
        "\tif (0)\n\t\tunlink(rc->path);",
        "integration-detach", ["test_detach_and_attach_serial"]),
    "device-thread-unfiltered": (
        "virtio/virtio.c",
        "\tsandbox_enter(SANDBOX_DEVICE);",
        "\t(void)0;",
        "integration-security", ["test_forbidden_call_from_device_thread"]),
    "exec-mapping-allowed": (
        "vmm/lib/sandbox.c",
        "\t\tcmp = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);",
        "\t\tcmp = SCMP_A2(SCMP_CMP_MASKED_EQ, 0, 0);",
        "unit-sandbox", []),
    "sigsys-blocked-in-quiet-threads": (
        "vmm/lib/thread_start.c",
        "\tsigdelset(&all, SIGSYS);",
        "\t(void)0;",
        "unit-sandbox", ["test_forbidden_call_named"]),
    "control-peer-uid-unchecked": (
        "vmm/lib/listener.c",
        "\tif (cred.uid == l->owner || cred.uid == 0)",
        "\tif (1)",
        "integration-security", ["test_peer_credentials"]),
}

# What a mutation's test needs to run at all (else it skips, and so would
# the mutation): a description and a check.
NEEDS = {
    "hugetlbfs-madvise-not-punch": ("root", lambda: os.geteuid() == 0),
    "block-device-size-from-stat": (
        "root and loop devices",
        lambda: os.geteuid() == 0 and os.path.exists("/dev/loop-control")),
    "control-peer-uid-unchecked": ("root", lambda: os.geteuid() == 0),
}


def sh(cmd, cwd, timeout=900):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          errors="replace", timeout=timeout)


def scratch_copy(dst):
    """The tracked files (and untracked ones git does not ignore)."""
    files = sh(["git", "ls-files", "-co", "--exclude-standard"], ROOT)
    if files.returncode:
        sys.exit(f"git ls-files: {files.stderr}")
    for rel in files.stdout.splitlines():
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel))


def anchor_missing(rel, text, old):
    """Why a mutation cannot apply to text, or None."""
    if text.count(old + "\n") != 1:
        return f"{rel}: the line to change is not there once"
    return None


def check_anchors(names):
    """Each mutation's line is in the tree once: the seconds-long check
    that catches a refactor moving a line before the slow suite does."""
    print(f"1..{len(names)}", flush=True)
    failed = 0
    for i, name in enumerate(names, 1):
        rel, old = MUTATIONS[name][:2]
        with open(os.path.join(ROOT, rel)) as f:
            why = anchor_missing(rel, f.read(), old)
        if why:
            failed += 1
            print(f"# {why}")
        print(f"{'not ok' if why else 'ok'} {i} - {name}", flush=True)
    sys.exit(1 if failed else 0)


def test_result(build, test, args):
    """None if the test failed (it caught the mutation), else why not."""
    cmd = ["meson", "test", "-C", build, "--no-rebuild", test]
    if args:
        cmd += ["--test-args", " ".join(args)]
    r = sh(cmd, build)
    if r.returncode == 0 and re.search(r"^Skipped:\s+[1-9]", r.stdout, re.M):
        return f"{test} {' '.join(args)} skipped here, so it cannot tell"
    if r.returncode == 0:
        return f"{test} {' '.join(args)} still passes"
    return None


def mutate(tree, build, name, keep=None):
    """None if the test caught the mutation, else why the guard fails.
    With keep, a path, the mutated thpvm is copied there instead of
    tested."""
    rel, old, new, test, args = MUTATIONS[name]
    path = os.path.join(tree, rel)
    with open(path) as f:
        text = f.read()
    why = anchor_missing(rel, text, old)
    if why:
        return why
    with open(path, "w") as f:
        f.write(text.replace(old + "\n", new + "\n"))
    try:
        b = sh(["ninja", "-C", build], tree)
        if b.returncode:
            return f"the mutated tree does not build:\n{b.stdout[-2000:]}"
        if keep:
            shutil.copy2(os.path.join(build, "thpvm"), keep)
            return None
        return test_result(build, test, args)
    finally:
        with open(path, "w") as f:
            f.write(text)


def kvm_tests(build):
    """The names of the build's tests in the 'kvm' suite (.ci/kvm_tests,
    as .ci/run lists them)."""
    r = sh([os.path.join(ROOT, ".ci", "kvm_tests"), build, "kvm"], ROOT)
    if r.returncode:
        sys.exit(f".ci/kvm_tests: {r.stderr}")
    return set(r.stdout.split())


def run_kept(build, kept):
    """In the emulated host: each kept binary (kept/NAME) in the build's
    place, its mutation's test run, and {NAME: why or None} written to
    kept/results.json after each. Those already there are not run again:
    svm_host runs this again in a fresh host when one stops."""
    path = os.path.join(kept, "results.json")
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError):
        results = {}
    thpvm = os.path.join(build, "thpvm")
    for name in sorted(os.listdir(kept)):
        if name not in MUTATIONS or name in results:
            continue
        # A new file renamed over the old: a mutant's test may have left
        # the last one running (a stopped background thpvm), and a
        # running binary cannot be written (ETXTBSY).
        shutil.copy2(os.path.join(kept, name), thpvm + ".new")
        os.replace(thpvm + ".new", thpvm)
        results[name] = test_result(build, *MUTATIONS[name][3:])
        with open(path + ".new", "w") as f:
            json.dump(results, f)
        os.rename(path + ".new", path)


def test_kept(build, kept, names):
    """{NAME: why or None} for the kept binaries, tested in one emulated
    AMD-V host; every one fails when that host could not run them."""
    cmd = [sys.executable, SVM_HOST, "--timeout", str(SVM_TIMEOUT),
           "--attempts", "4", "--writable", kept, "--scratch", SVM_SCRATCH,
           "--", "env", f"TMPDIR={SVM_SCRATCH}", sys.executable,
           os.path.abspath(__file__), "--run-kept", build, kept]
    r = sh(cmd, ROOT, timeout=SVM_TIMEOUT + 120)
    try:
        with open(os.path.join(kept, "results.json")) as f:
            results = json.load(f)
    except (OSError, ValueError):
        results = {}
    tail = (r.stdout + r.stderr).splitlines()[-20:]
    why = ("the emulated AMD-V host did not test it (status "
           f"{r.returncode}); its last output:\n" + "\n".join(tail))
    return {name: results.get(name, why) for name in names}


def report(i, name, why):
    if why:
        for line in why.splitlines():
            print(f"# {line}")
    print(f"{'not ok' if why else 'ok'} {i} - {name}", flush=True)
    return 1 if why else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="mutations to run (all)")
    ap.add_argument("--anchors", action="store_true",
                    help="only check that each line to change is there")
    ap.add_argument("--run-kept", nargs=2, metavar=("BUILD", "KEPT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_kept:
        run_kept(*args.run_kept)
        return
    names = args.names or list(MUTATIONS)
    unknown = [n for n in names if n not in MUTATIONS]
    if unknown:
        sys.exit(f"unknown mutations: {', '.join(unknown)}")
    if args.anchors:
        check_anchors(names)
    print(f"1..{len(names)}", flush=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="thpvm-mutations-") as tmp:
        tree, build = os.path.join(tmp, "tree"), os.path.join(tmp, "build")
        kept = os.path.join(tmp, "kept")
        os.mkdir(kept)
        scratch_copy(tree)
        for step in (["meson", "setup", build], ["ninja", "-C", build]):
            r = sh(step, tree)
            if r.returncode:
                print("# the scratch copy does not build:")
                for line in (r.stdout + r.stderr).splitlines()[-20:]:
                    print(f"# {line}")
                sys.exit(1)
        elsewhere = set()
        # .ci/run's THPVM_CI_EMULATED=1 (the emulated host's path on a
        # machine with /dev/kvm) takes that path here too.
        if (not os.access("/dev/kvm", os.R_OK | os.W_OK) or
                os.environ.get("THPVM_CI_EMULATED") == "1"):
            needs_kvm = kvm_tests(build)
            elsewhere = {n for n in names if MUTATIONS[n][3] in needs_kvm}
        i = 0
        for name in names:
            if name in NEEDS and not NEEDS[name][1]():
                i += 1
                print(f"ok {i} - {name} # SKIP needs {NEEDS[name][0]}",
                      flush=True)
                continue
            if name in elsewhere:
                why = mutate(tree, build, name, os.path.join(kept, name))
                if why:
                    elsewhere.discard(name)
                    i += 1
                    failed += report(i, name, why)
                continue
            i += 1
            failed += report(i, name, mutate(tree, build, name))
        if elsewhere:
            print(f"# {len(elsewhere)} tested in the emulated AMD-V host",
                  flush=True)
            results = test_kept(build, kept, sorted(elsewhere))
            for name in names:
                if name in elsewhere:
                    i += 1
                    failed += report(i, name, results[name])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
