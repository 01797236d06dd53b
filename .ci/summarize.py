#!/usr/bin/env python3
"""Adds up meson test logs (testlog.json, one JSON object per test) into
the closing line CI reads: "N passed, N failed, N skipped"."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"missing test log {path}: {e}")
        failed += 1
        continue
    for line in lines:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not passed else 0)
