#!/usr/bin/env python3
"""Adds up meson test logs (testlog.json, one JSON object per test) into
the closing line CI reads: "N passed, N failed, N skipped".

Every test here speaks TAP, so the counts are of TAP subtests: a subtest
that skipped is counted as skipped even though meson reports its program
as OK. A test program that failed without a "not ok" line (a crash, a
timeout, a sanitizer report at exit) counts as one more failure."""
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b[^#]*(#\s*(SKIP|TODO)\b)?", re.IGNORECASE)

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"missing test log {path}: {e}")
        failed += 1
        continue
    for line in lines:
        test = json.loads(line)
        p = f = s = 0
        for out in test.get("stdout", "").splitlines():
            m = TAP.match(out)
            if not m:
                continue
            if m.group(1).lower() == "not ok":
                f += 1
            elif m.group(3):
                s += 1
            else:
                p += 1
        ok = test["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
        if not ok and f == 0:
            f = 1
        if p + f + s == 0:
            p, s = (0, 1) if test["result"] == "SKIP" else (1 if ok else 0, 0)
        passed, failed, skipped = passed + p, failed + f, skipped + s
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not passed else 0)
