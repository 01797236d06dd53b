"""The commands the README and docs/ show, run as a reader would run them.

A fenced block is tested when the line just before its opening fence is a
marker:

    <!-- doc-test NAME [needs=WHAT,...] [timeout=SECONDS] [netns=NS] -->
    ```sh
    ...
    ```

and `<!-- doc-test NAME continued -->` before a later block appends it to
NAME's, so that prose can stand between the parts of one script.

The block runs under `bash -e -o pipefail` (so any command that fails
fails it) in a scratch directory that looks like a fresh clone with the
README's build in it: every top-level entry of the checkout linked in,
and `build` linked to the build under test. Lines that set the machine up
(`apt-get ...`, `meson setup ...`) are left out: the packages are
installed and the build made before any test runs. What a block needs,
by name:

    kvm      a usable /dev/kvm          root     root (taps, mounts)
    qemu     qemu-system-x86_64         net      network namespaces, taps
    headers  Debian's kernel headers    capable  a host with VT-x/AMD-V

A `capable` block runs as printed on such a host (in a network namespace
of its own, with the huge page pool put back after); elsewhere inside the
emulated AMD-V host, tests/hosts/svm_host.py. `netns=NS` names a network
namespace the block makes, removed after it even when the block fails.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import harness

ROOT = harness.ROOT
DOCS = ["README.md"] + sorted(
    os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs"))
    if n.endswith(".md"))
MARKER = re.compile(r"<!-- doc-test (.*) -->")
NEEDS = {"kvm", "root", "qemu", "net", "headers", "capable"}
SETUP_LINE = re.compile(r"^\s*(apt-get|meson setup) ")
SVM_HOST = os.path.join(ROOT, "tests", "hosts", "svm_host.py")
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"
MESON_ONLY = {"THPVM", "TESTGUEST_BZIMAGE", "TESTGUEST_ELF", "USEMEM",
              "BUILD", "MESON_TEST_ITERATION", "MALLOC_PERTURB_"}


class Block:
    def __init__(self, doc, line, name, needs, timeout, netns, text):
        self.doc, self.line, self.name = doc, line, name
        self.needs, self.timeout, self.netns = needs, timeout, netns
        self.text = text

    def where(self):
        return f"{self.doc}:{self.line}"


def parse_marker(doc, line, body):
    """(name, needs, timeout, netns, continued) of a marker's words."""
    words = body.split()
    if not words or "=" in words[0]:
        raise ValueError(f"{doc}:{line}: a doc-test marker needs a name")
    name, needs, timeout, netns = words[0], set(), 120, None
    if words[1:] == ["continued"]:
        return name, needs, timeout, netns, True
    for word in words[1:]:
        key, _, value = word.partition("=")
        if key == "needs" and value:
            needs = set(value.split(","))
            if needs - NEEDS:
                raise ValueError(f"{doc}:{line}: unknown needs "
                                 f"{sorted(needs - NEEDS)}")
        elif key == "timeout" and value.isdigit():
            timeout = int(value)
        elif key == "netns" and value:
            netns = value
        else:
            raise ValueError(f"{doc}:{line}: bad doc-test word {word!r}")
    return name, needs, timeout, netns, False


def blocks(docs=DOCS, root=ROOT):
    """Every marked block of the README and docs/, in order. A marker
    not followed by a ```sh block, one misspelt, or a name used twice is
    an error."""
    found, names = [], {}
    for doc in docs:
        with open(os.path.join(root, doc)) as f:
            lines = f.read().split("\n")
        for i, text in enumerate(lines):
            m = MARKER.fullmatch(text.strip())
            if not m:
                if text.startswith("<!--") and "doc-test" in text:
                    raise ValueError(f"{doc}:{i + 1}: not a doc-test "
                                     f"marker: {text}")
                continue
            name, needs, timeout, netns, continued = parse_marker(
                doc, i + 1, m.group(1))
            if i + 1 >= len(lines) or lines[i + 1].strip() != "```sh":
                raise ValueError(f"{doc}:{i + 1}: doc-test {name} is not "
                                 "followed by a ```sh block")
            end = i + 2
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                raise ValueError(f"{doc}:{i + 2}: block never closed")
            text = "\n".join(lines[i + 2:end]) + "\n"
            if continued:
                if name not in names:
                    raise ValueError(f"{doc}:{i + 1}: doc-test {name} "
                                     "continued before it began")
                names[name].text += text
                continue
            if name in names:
                raise ValueError(f"{doc}:{i + 1}: doc-test {name} twice")
            names[name] = Block(doc, i + 2, name, needs, timeout, netns,
                                text)
            found.append(names[name])
    return found


def script(block):
    """The block as bash runs it: setup lines left out, each failure
    fatal."""
    out = ["set -e -o pipefail"]
    for line in block.text.splitlines():
        out.append(": setup, done already" if SETUP_LINE.match(line)
                   else line)
    return "\n".join(out) + "\n"


def fresh_clone():
    """A scratch directory laid out as a clone with its build in
    ./build: links to the checkout's entries and to the build under
    test. What a block writes stays in it."""
    scratch = tempfile.mkdtemp(prefix="thpvm-docs-")
    for name in os.listdir(ROOT):
        if name in ("build", ".git") or name.startswith("build-"):
            continue
        if name == "tests":
            # A copy: Python finds a script's modules by its real path,
            # and the harness its build next to itself.
            shutil.copytree(os.path.join(ROOT, name),
                            os.path.join(scratch, name), symlinks=True)
        else:
            os.symlink(os.path.join(ROOT, name),
                       os.path.join(scratch, name))
    os.symlink(os.path.dirname(os.path.abspath(harness.THPVM)),
               os.path.join(scratch, "build"))
    return scratch


def reader_env():
    """This environment without what meson sets for its tests: a reader
    has none of it."""
    return {k: v for k, v in os.environ.items() if k not in MESON_ONLY}


def require(block):
    """Skips a block this host cannot run, with the reason."""
    if "kvm" in block.needs:
        harness.require_kvm()
    if block.needs & {"root", "net", "capable"} and os.geteuid() != 0:
        harness.skip("needs root")
    if "net" in block.needs and not os.path.exists("/dev/net/tun"):
        harness.skip("no /dev/net/tun")
    if "qemu" in block.needs and not shutil.which("qemu-system-x86_64"):
        harness.skip("no qemu-system-x86_64 (apt-get install "
                     "qemu-system-x86)")
    if "headers" in block.needs and not any(
            re.fullmatch(r"linux-headers-.*-amd64", n)
            for n in os.listdir("/usr/src")):
        harness.skip("no Debian kernel headers (apt-get install "
                     "linux-headers-amd64)")


def command(block, path):
    """How the block's script runs here: as it is, in a network namespace
    of its own on a capable host, or inside the emulated AMD-V host."""
    if "capable" not in block.needs:
        return ["bash", path]
    capable, why = harness.capable_kvm_host()
    if capable:
        return ["unshare", "--net", "bash", path]
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"),
                          ("busybox", "busybox-static")):
        if not shutil.which(tool):
            harness.skip(f"{why}, and no {tool} for the emulated host "
                         f"(apt-get install {package})")
    return [sys.executable, SVM_HOST, "--timeout", str(block.timeout),
            "--", "bash", path]


def run(block):
    """Runs the block; fails with its output if any command failed or it
    outlived its time. Whatever it left running is killed after."""
    require(block)
    scratch = fresh_clone()
    path = os.path.join(scratch, f".doc-test-{block.name}.sh")
    with open(path, "w") as f:
        f.write(script(block))
    cmd = command(block, path)
    with open(NR_HUGEPAGES) as f:
        hugepages = f.read()
    p = subprocess.Popen(cmd, cwd=scratch, env=reader_env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)

    def stopped(signum, frame):
        # meson's timeout: the block's session is not in our group.
        os.killpg(p.pid, signal.SIGKILL)
        sys.exit(f"doc-test {block.name}: stopped by signal {signum}")
    signal.signal(signal.SIGTERM, stopped)
    try:
        out, _ = p.communicate(timeout=block.timeout + 60)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = "killed after its timeout"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if block.netns:
            subprocess.run(["ip", "netns", "delete", block.netns],
                           capture_output=True)
        if cmd[0] == "unshare":
            with open(NR_HUGEPAGES, "w") as f:
                f.write(hugepages)
        shutil.rmtree(scratch, ignore_errors=True)
    text = out.decode(errors="replace")
    assert rc == 0, (f"{block.where()}: doc-test {block.name}: status "
                     f"{rc}\n--- the block\n{block.text}--- its output\n"
                     f"{text[-6000:]}")
    # What it printed, in the log.
    for line in text.splitlines()[-60:]:
        print(f"# {block.name}: {line}")
    return text


def kind(block):
    """Which test program runs the block: "capable" (test_docs_capable),
    "kvm" (test_docs_kvm, in the suite that needs /dev/kvm) or "plain"
    (test_docs)."""
    if "capable" in block.needs:
        return "capable"
    return "kvm" if "kvm" in block.needs else "plain"


def tests(which):
    """test_NAME functions for harness.main(): the blocks of one kind."""
    found = {}
    try:
        marked = blocks()
    except ValueError:
        return {}       # test_markers says why
    for block in marked:
        if kind(block) != which:
            continue

        def test(block=block):
            run(block)
        found["test_" + re.sub(r"\W", "_", block.name)] = test
    return found
