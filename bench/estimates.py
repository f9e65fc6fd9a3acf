#!/usr/bin/env python3
"""Each workload's rule-of-thumb iteration estimate against the iterations it measures.

The watchdog's deadline and its looks before it, `--dry-run` and the progress bar's ETA start from
every workload's rule of thumb (`estimate_sec`, measured once on a 2-vCPU VM) until this host has
stored history of a case. This script keeps the rules honest: for each case below it asks
`schedlab run --dry-run` (with an empty store, so the estimate is the bare rule of thumb), then
runs the case and takes the median of its iterations' `wall_time_sec` (the runner's own clock
around the iteration; for the workloads that start no tasks, which have none, the command's
elapsed time per iteration, start-up included). It prints one markdown row per case: the rule, the
measured median, and measured / rule. A ratio far below 1 makes deadlines and first looks late
(a stopped worker holds the run longer); far above 1 makes `--dry-run` optimistic and brings the
deadline nearer a slow but healthy iteration.

  bench/estimates.py --schedlab target/release/schedlab --iterations 3
  bench/estimates.py --schedlab target/release/schedlab --only semaphore
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The cases: each workload's defaults, the shapes the seeds and suites use, and the case the
# watchdog's first-look promise is made for (semaphore --processes --items 2000000).
CASES = [
    "pipe",
    "pipe --threaded",
    "messaging",
    "messaging --pipe --threads",
    "wakeup",
    "semaphore",
    "semaphore --processes --items 2000000",
    "semaphore --wait spin --items 200000",
    "semaphore --work 0 --items 200000",
    "syscall",
    "syscall --kind getrlimit --threads 2 --calls 200000",
    "syscall --kind write-devnull --threads 4 --calls 200000",
    "fanout",
    "cpudl",
    "cpudl --check --heap-cpus 256",
    "cpupri",
    "rump",
    "rump --variant freelist",
    "rump --threads 4",
    "rump --variant freelist --threads 4 --check",
    "contention --duration 2",
]


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def rule_of_thumb(binary, args, db):
    estimate = run_json([binary, "run", *args, "--dry-run", "--db", db, "--format", "json"])
    case = estimate["estimate"]["cases"][0]
    if case["source"] != "rule of thumb":
        raise RuntimeError(f"{args}: the estimate came from {case['source']}, not the rule")
    return case["iteration_sec"]


def measured(binary, args, iterations):
    cmd = [binary, "run", *args, "--iterations", str(iterations), "--warmup", "0", "--no-store",
           "--format", "json"]
    began = time.monotonic()
    out = run_json(cmd)
    elapsed = time.monotonic() - began
    case = out["runs"][0]["cases"][0]
    for m in case["metrics"]:
        if m["name"] == "wall_time_sec":
            return statistics.median(m["values"]), "wall_time_sec"
    return elapsed / iterations, "elapsed"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedlab", required=True, help="the schedlab binary")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--only", help="keep the cases matching this regular expression")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or re.search(args.only, c)]
    print("| case | rule of thumb | measured (median) | measured ÷ rule | from |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "empty.db")
        for case in cases:
            words = case.split()
            rule = rule_of_thumb(args.schedlab, words, db)
            sec, source = measured(args.schedlab, words, args.iterations)
            print(f"| `{case}` | {rule:.3g} s | {sec:.3g} s | {sec / rule:.2f} | {source} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
