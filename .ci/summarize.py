#!/usr/bin/env python3
"""Adds up meson test logs (testlog.json, one JSON object per test) into
the closing line CI reads: "N passed, N failed, N skipped".

Every test here speaks TAP, so the counts are of TAP subtests: a subtest
that skipped is counted as skipped even though meson reports its program
as OK ("# SKIP" followed by anything, as meson reads it). A test program
that failed without a "not ok" line (a crash, a timeout, a sanitizer
report at exit), or whose results do not match the plan it announced
first, counts as one more failure. The last lines of each failed
test's output are printed before the closing line, so that a record
that keeps only the end of the run still shows why.

Usage: summarize.py [--max-skips N] TESTLOG.json...
With --max-skips, more skipped subtests than N fail the run: a host
that lost /dev/kvm or QEMU must not turn the suite green by skipping.
Then every skip is named, a line for each test and reason, so that the
record shows which ones were too many."""
import argparse
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b[^#]*(#\s*(SKIP\S*|TODO)\b)?\W*(.*)",
                 re.IGNORECASE)
PLAN = re.compile(r"^1\.\.(\d+)")
WHOLE_SKIP = re.compile(r"^1\.\.0\s*#\s*SKIP\S*\W*(.+)", re.M | re.I)
# Printed of a failed test's output: lines matching WHY, then its end.
WHY = re.compile(r"not ok|Error|still running|timed out|threads of process|"
                 r" state=\S+ wchan=")
KEY_LINES = 60
TAIL_LINES = 30
MAX_WIDTH = 300


def count(test, skips):
    """(passed, failed, skipped) of one test program; the reason of each
    skip counted in skips[(test, reason)]."""
    p = f = s = 0
    plan = None
    for out in test.get("stdout", "").splitlines():
        m = PLAN.match(out)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TAP.match(out)
        if not m:
            continue
        if m.group(1).lower() == "not ok":
            f += 1
        elif m.group(3):
            s += 1
            key = (test["name"], m.group(4).strip() or "no reason given")
            skips[key] = skips.get(key, 0) + 1
        else:
            p += 1
    ok = test["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
    if plan is None and test["result"] != "SKIP":
        print(f"{test['name']}: no TAP plan")
        f += 1
    elif plan is not None and p + f + s != plan:
        print(f"{test['name']}: {p + f + s} results for a plan of {plan}")
        f += 1
    if not ok and f == 0:
        f = 1
    if p + f + s == 0:
        if test["result"] == "SKIP":
            p, s = 0, 1
            m = WHOLE_SKIP.search(test.get("stdout", ""))
            key = (test["name"], m.group(1) if m else "the whole program")
            skips[key] = skips.get(key, 0) + 1
        else:
            p = 1 if ok else 0
    return p, f, s


def why_failed(out):
    """What tells why a test failed: the lines that say so (failed
    subtests, errors, a hang's thread report), then its last lines."""
    lines = [l[:MAX_WIDTH] for l in out.splitlines()]
    key = [l for l in lines[:-TAIL_LINES] if WHY.search(l)][:KEY_LINES]
    return key + lines[-TAIL_LINES:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-skips", type=int)
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    passed = failed = skipped = 0
    failures = []
    skips = {}
    for path in args.logs:
        try:
            lines = open(path).read().splitlines()
        except OSError as e:
            print(f"missing test log {path}: {e}")
            failed += 1
            continue
        # meson makes a test's log when it starts and fills it when the
        # test ends: empty, the test never finished (its host stopped).
        if not lines:
            print(f"empty test log {path}: the test did not finish")
            failed += 1
            continue
        for line in lines:
            test = json.loads(line)
            # Skips named by build (BUILD/meson-logs/...) and test.
            if "/meson-logs/" in path:
                test = dict(test, name=f"{path.split('/meson-logs/')[0]}: "
                                       f"{test['name']}")
            p, f, s = count(test, skips)
            passed, failed, skipped = passed + p, failed + f, skipped + s
            if f:
                failures.append(test)
    # The end of each failed test's output, where CI's record keeps it.
    for test in failures:
        print(f"--- {test['name']} ({test['result']}):")
        print("\n".join(why_failed(test.get("stdout") or "")))
    too_many = args.max_skips is not None and skipped > args.max_skips
    if too_many:
        for (name, reason), n in sorted(skips.items()):
            print(f"skipped {n}: {name}: {reason}"[:MAX_WIDTH])
        print(f"{skipped} checks skipped, more than the {args.max_skips} "
              "this machine kind skips: something the tests need is "
              "missing")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not passed or too_many else 0


if __name__ == "__main__":
    sys.exit(main())
