""".ci/summarize.py, which CI's verdict rests on: counts of TAP subtests,
skips in every spelling meson accepts, programs that die without a plan
or before their plan is done, and the cap on skips."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402

SUMMARIZE = os.path.join(HERE, "..", "..", ".ci", "summarize.py")


def summarize(tests, *args, whole=False):
    """(exit status, last line) for a log holding tests: (name, meson's
    result, stdout); with whole, all it printed instead of its last
    line."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as log:
        for name, result, out in tests:
            log.write(json.dumps({"name": name, "result": result,
                                  "stdout": out}) + "\n")
        log.flush()
        p = subprocess.run([sys.executable, SUMMARIZE, *args, log.name],
                           capture_output=True, text=True)
    return p.returncode, p.stdout if whole else p.stdout.splitlines()[-1]


def test_counts():
    out = "1..4\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP no kvm\n" \
          "ok 4 - d # skipped: no qemu\n"
    assert summarize([("t", "FAIL", out)]) == (1, "1 passed, 1 failed, "
                                                  "2 skipped")
    assert summarize([("t", "OK", "1..1\nok 1 - a\n")]) == \
        (0, "1 passed, 0 failed, 0 skipped")


def test_plan_required_and_kept():
    # No plan at all, and a program that died after 1 of 3.
    assert summarize([("t", "OK", "ok 1 - a\n")]) == \
        (1, "1 passed, 1 failed, 0 skipped")
    assert summarize([("t", "FAIL", "1..3\nok 1 - a\n")]) == \
        (1, "1 passed, 1 failed, 0 skipped")


def test_crash_without_not_ok():
    assert summarize([("t", "ERROR", "1..2\nok 1 - a\nok 2 - b\n")]) == \
        (1, "2 passed, 1 failed, 0 skipped")


def test_failure_excerpt():
    """A failed test's telling lines and its end come before the closing
    line (CI's record keeps only the end of the run); a passing test's
    output does not."""
    boot = "".join(f"# [ {i}.0] kernel line {i}\n" for i in range(200))
    out = ("1..2\nok 1 - a\nnot ok 2 - b\n# AssertionError: thpvm still "
           "running after 300 s, killed\n# threads of process 7:\n"
           "#   8 vcpu0 state=S wchan=kvm_vcpu_block\n" + boot +
           "# the last line\n")
    rc, printed = summarize([("t", "FAIL", out),
                             ("u", "OK", "1..1\nok 1 - quiet\n")],
                            whole=True)
    lines = printed.splitlines()
    assert rc == 1 and lines[-1] == "2 passed, 1 failed, 0 skipped", printed
    assert lines[0] == "--- t (FAIL):", printed
    assert lines[1:5] == ["not ok 2 - b",
                          "# AssertionError: thpvm still running after "
                          "300 s, killed",
                          "# threads of process 7:",
                          "#   8 vcpu0 state=S wchan=kvm_vcpu_block"], printed
    assert lines[-2] == "# the last line", printed
    assert "kernel line 150" not in printed, printed
    assert "quiet" not in printed, printed


def test_log_of_unfinished_test():
    """An empty log (meson opened it, the test never ended: an emulated
    host that stopped) is a failure, not nothing."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as empty:
        p = subprocess.run([sys.executable, SUMMARIZE, empty.name],
                           capture_output=True, text=True)
    assert p.returncode == 1, p.stdout
    assert p.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 skipped", \
        p.stdout
    assert "the test did not finish" in p.stdout, p.stdout


def test_skip_cap():
    out = "1..2\nok 1 - a # SKIP x\nok 2 - b # SKIP y\n"
    assert summarize([("t", "OK", out), ("u", "OK", "1..1\nok 1 - c\n")],
                     "--max-skips", "2")[0] == 0
    rc, line = summarize([("t", "OK", out), ("u", "OK", "1..1\nok 1 - c\n")],
                         "--max-skips", "1")
    assert rc == 1 and line == "1 passed, 0 failed, 2 skipped", (rc, line)


def test_skips_named_past_the_cap():
    """Past the cap, each test's skips are named with their reasons (a
    whole program's from its plan line), so the record says which."""
    tests = [("t", "OK", "1..3\nok 1 - a # SKIP no kvm\n"
                         "ok 2 - b # SKIP no kvm\nok 3 - c # skip no qemu\n"),
             ("u", "SKIP", "1..0 # SKIP no openat2 here\n"),
             ("v", "OK", "1..1\nok 1 - d\n")]
    rc, printed = summarize(tests, "--max-skips", "3", whole=True)
    assert rc == 1 and printed.splitlines() == [
        "skipped 2: t: no kvm", "skipped 1: t: no qemu",
        "skipped 1: u: no openat2 here",
        "4 checks skipped, more than the 3 this machine kind skips: "
        "something the tests need is missing",
        "1 passed, 0 failed, 4 skipped"], printed
    rc, printed = summarize(tests, "--max-skips", "4", whole=True)
    assert rc == 0 and "no kvm" not in printed, printed


if __name__ == "__main__":
    harness.main(globals())
