#!/usr/bin/env python3
"""Runs the libFuzzer targets of a -Dfuzzing=true build one after the
other, each for a given time (or until a given number of executions),
and prints one Markdown table row per target: the seconds it ran (less
than asked if it stopped at a finding), executions, executions per
second, edges covered (libFuzzer's final "cov:"), and findings (the
crash, leak, timeout and out-of-memory inputs it saved). docs/fuzzing.md
records a run. With --jobs N, N processes fuzz each target at once on
its one work corpus, each with 1/N of --runs; their executions and rates
are summed.

Each target starts from its seeds (corpus/NAME, read only) and a work
corpus of its own under --work, which it grows; findings go to
--work/findings/. The target's own error lines are dropped
(-close_fd_mask=2); libFuzzer's lines and sanitizer reports are kept in
--work/NAME-logs/fuzz-N.log, one per process.

Usage: run.py --build DIR [--seconds N] [--runs N] [--jobs N] [--work DIR]
              [TARGET...]"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COV = re.compile(r"^#(\d+)\s.*\bcov: (\d+)")
STAT = re.compile(r"^stat::(\w+):\s+(\d+)")
FINDINGS = ("crash-", "leak-", "timeout-", "oom-")


def read_log(log):
    """A libFuzzer log's final edge count and its stat:: lines."""
    edges, stats = 0, {}
    with open(log, errors="replace") as f:
        for line in f:
            m = COV.match(line)
            if m:
                edges = int(m.group(2))
            m = STAT.match(line)
            if m:
                stats[m.group(1)] = int(m.group(2))
    return edges, stats


def run_target(build, name, seconds, runs, jobs, work):
    exe = os.path.abspath(os.path.join(build, "tests", "fuzz",
                                       "fuzz_" + name))
    work = os.path.abspath(work)
    corpus = os.path.join(work, "corpus", name)
    findings = os.path.join(work, "findings")
    logs = os.path.join(work, name + "-logs")
    for d in (corpus, findings, logs):
        os.makedirs(d, exist_ok=True)
    for old in glob.glob(os.path.join(logs, "*.log")):
        os.unlink(old)
    env = dict(os.environ,
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               ASAN_OPTIONS="detect_leaks=1")
    # With jobs > 1, libFuzzer runs that many processes on the one work
    # corpus (each reloads what the others add), each with its share of
    # the executions and its own fuzz-N.log in the cwd.
    share = runs if runs < 0 else -(-runs // jobs)
    parallel = ["-jobs=%d" % jobs, "-workers=%d" % jobs] if jobs > 1 else []
    start = time.monotonic()
    with open(os.path.join(logs, "fuzz-0.log" if jobs == 1 else
                           "parent.log"), "w") as f:
        subprocess.run([exe, *parallel, "-max_total_time=%d" % seconds,
                        "-runs=%d" % share,
                        "-print_final_stats=1", "-close_fd_mask=2",
                        "-timeout=10", "-rss_limit_mb=2048",
                        "-artifact_prefix=%s/%s-" % (findings, name),
                        corpus, os.path.join(HERE, "corpus", name)],
                       stderr=f, stdout=f, env=env, cwd=logs, check=False)
    seconds = time.monotonic() - start
    # Executions and their rates add up over the processes; each
    # process's edge count covers the shared corpus, so the largest is
    # the run's.
    execs = per_sec = edges = 0
    for log in glob.glob(os.path.join(logs, "fuzz-*.log")):
        e, stats = read_log(log)
        edges = max(edges, e)
        execs += stats.get("number_of_executed_units", 0)
        per_sec += stats.get("average_exec_per_sec", 0)
    found = [os.path.basename(p) for p in sorted(glob.glob(
        os.path.join(findings, name + "-*")))
        if os.path.basename(p)[len(name) + 1:].startswith(FINDINGS)]
    return {"seconds": seconds, "execs": execs, "per_sec": per_sec,
            "edges": edges, "findings": found}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--runs", type=int, default=-1,
                   help="stop after this many executions (-1: no limit)")
    p.add_argument("--jobs", type=int, default=1,
                   help="fuzz each target in this many processes at once, "
                   "sharing its corpus and its executions")
    p.add_argument("--work", default="/tmp/thpvm-fuzz")
    p.add_argument("targets", nargs="*")
    args = p.parse_args()
    targets = args.targets or sorted(
        os.path.basename(d) for d in glob.glob(os.path.join(HERE, "corpus", "*"))
        if os.path.exists(os.path.join(args.build, "tests", "fuzz",
                                       "fuzz_" + os.path.basename(d))))
    if not targets:
        sys.exit("run.py: no fuzz_* programs in %s/tests/fuzz "
                 "(configure it with -Dfuzzing=true)" % args.build)
    print("| target | seconds | executions | exec/s | edges | findings |")
    print("|---|---:|---:|---:|---:|---|")
    failed = False
    for name in targets:
        r = run_target(args.build, name, args.seconds, args.runs, args.jobs,
                       args.work)
        failed |= bool(r["findings"]) or not r["execs"]
        print("| %s | %.0f | %d | %d | %d | %s |" % (
            name, r["seconds"], r["execs"], r["per_sec"], r["edges"],
            ", ".join(r["findings"]) or "none"), flush=True)
    sys.exit(1 if failed else 0)


main()
