#!/usr/bin/env python3
"""Fidelity of schedlab's contention workload against will-it-scale.

Runs schedlab and will-it-scale side by side, interleaved pair by pair (A B A B ..., alternating
which goes first round by round), and reports the median of the paired ratios schedlab /
will-it-scale in ops/sec, with their range, for each pairing:

  getppid1        contention --testcase getppid
  mmap1           contention --testcase mmap --map-only                 (128 MiB, untouched)
  lock1           contention --testcase fcntl-lock --file-per-task --work 0
                  (will-it-scale counts a lock and an unlock as 2 ops, schedlab the pair as 1:
                  schedlab's rate is doubled before dividing)
  pipe1           contention --testcase pipe-loopback
  pthread_mutex1  contention --testcase pthread-mutex --work 0 --sample-every 0
                  (threads only: schedlab refuses --processes for its user-space locks, and
                  will-it-scale's _processes binary gives every process a mutex of its own, in
                  its own copy of the program's data, so nothing is contended there)

each at 1 task and at 2 x the online CPUs, as processes and as threads. Both sides measure the
same seconds after the same warm-up: will-it-scale's is fixed (it discards its first six 1-second
samples), so schedlab gets --warmup-sec 6.

will-it-scale binds task i to core i mod cores by default; schedlab's tasks are not bound.
--affinity chooses which will-it-scale to compare with: `none` (its -n, the default), `pinned`
(as it runs by default), or `both` (three runs per round; both ratios are printed).

will-it-scale is given by the directory holding its built binaries; this script never fetches or
builds anything. Samples go to --json (appended to, so several short sessions add up to more
rounds); --report prints the table of such a file without measuring.

  bench/will-it-scale.py --schedlab target/release/schedlab --wis-dir ../will-it-scale \\
      --seconds 2 --rounds 2 --json wis.json
  bench/will-it-scale.py --report wis.json
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import pairs

# The command prefix both sides run under (bench/fidelity-all.py's --taskset sets it).
PREFIX = []

# will-it-scale's warm-up: main.c prints its first six 1-second samples without adding them.
WIS_WARMUP_SEC = 6

# (will-it-scale test, schedlab arguments, schedlab ops per will-it-scale op, modes)
TESTS = [
    ("getppid1", ["--testcase", "getppid"], 1, ("processes", "threads")),
    ("mmap1", ["--testcase", "mmap", "--map-only"], 1, ("processes", "threads")),
    ("lock1", ["--testcase", "fcntl-lock", "--file-per-task", "--work", "0"], 2,
     ("processes", "threads")),
    ("pipe1", ["--testcase", "pipe-loopback"], 1, ("processes", "threads")),
    ("pthread_mutex1", ["--testcase", "pthread-mutex", "--work", "0", "--sample-every", "0"], 1,
     ("threads",)),
]


def schedlab_ops(binary, args, tasks, processes, seconds):
    cmd = [binary, "run", "contention", *args, "--tasks", str(tasks), "--duration", str(seconds),
           "--warmup-sec", str(WIS_WARMUP_SEC), "--iterations", "1", "--warmup", "0",
           "--no-store", "--format", "json"]
    if processes:
        cmd.append("--processes")
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    case = json.loads(out)["runs"][0]["cases"][0]
    for m in case["metrics"]:
        if m["name"] == "ops_per_sec":
            return m["values"][0]
    raise RuntimeError(f"no ops_per_sec in schedlab output of {cmd}")


def wis_ops(wis_dir, test, mode, tasks, seconds, pinned):
    cmd = [os.path.join(wis_dir, f"{test}_{mode}"), "-t", str(tasks), "-s", str(seconds)]
    if not pinned:
        cmd.append("-n")
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    match = re.search(r"^average:(\d+)$", out, re.MULTILINE)
    if not match:
        raise RuntimeError(f"cannot parse will-it-scale output of {cmd}: {out!r}")
    return float(match.group(1))


def pairing_name(test, mode, tasks):
    return f"{test} {mode} -t {tasks}"


def report(samples):
    # will-it-scale unbound (-n) first, then as it binds by default.
    refs = [ref for ref in ("unbound", "pinned") if any(ref in p for p in samples.values())]
    header = f"{'pairing':<30} {'rounds':>6} {'schedlab med':>13}"
    for ref in refs:
        header += f" {'wis ' + ref + ' med':>16} {pairs.ratio_header()}"
    print(header)
    for name, pairing in samples.items():
        ours = pairing["schedlab"]
        line = f"{name:<30} {len(ours):>6} {statistics.median(ours):>13.0f}"
        for ref in refs:
            theirs = pairing.get(ref, [])
            if len(theirs) != len(ours) or not ours:
                line += f" {'-':>16} {pairs.ratio_columns([])}"
                continue
            line += f" {statistics.median(theirs):>16.0f} {pairs.ratio_columns(pairs.ratios(ours, theirs))}"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedlab", help="path to the schedlab binary (a release build)")
    parser.add_argument("--wis-dir", help="directory of the built will-it-scale binaries")
    parser.add_argument("--seconds", type=int, default=2, help="seconds measured per run (after 6 s of warm-up)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved pairs per pairing")
    parser.add_argument("--affinity", choices=("none", "pinned", "both"), default="none",
                        help="will-it-scale with -n (none), bound as by default (pinned), or both")
    parser.add_argument("--only", help="only the pairings whose name matches this regular expression")
    parser.add_argument("--tasks", help="task counts, comma-separated (default: 1 and 2 x the online CPUs)")
    parser.add_argument("--json", help="append every sample to this file (made if missing)")
    parser.add_argument("--report", metavar="JSON", help="print the table of a --json file and exit")
    opts = parser.parse_args()

    if opts.report:
        with open(opts.report) as f:
            report(json.load(f))
        return
    if not opts.schedlab or not opts.wis_dir:
        sys.exit("give --schedlab and --wis-dir (or --report FILE)")
    counts = [int(t) for t in opts.tasks.split(",")] if opts.tasks else [1, 2 * os.cpu_count()]
    refs = {"none": ["unbound"], "pinned": ["pinned"], "both": ["unbound", "pinned"]}[opts.affinity]

    pairings = []
    for test, args, scale, modes in TESTS:
        for mode in modes:
            for tasks in counts:
                name = pairing_name(test, mode, tasks)
                if opts.only and not re.search(opts.only, name):
                    continue
                sides = [("schedlab", lambda a=args, t=tasks, m=mode, s=scale:
                          s * schedlab_ops(opts.schedlab, a, t, m == "processes", opts.seconds))]
                for ref in refs:
                    sides.append((ref, lambda te=test, m=mode, t=tasks, p=(ref == "pinned"):
                                  wis_ops(opts.wis_dir, te, m, t, opts.seconds, p)))
                pairings.append((name, sides))
    if not pairings:
        sys.exit("no pairing matches --only")

    samples = {}
    if opts.json and os.path.exists(opts.json):
        with open(opts.json) as f:
            samples = json.load(f)
    for name, sides in pairings:
        samples.setdefault(name, {})
        for side, _ in sides:
            samples[name].setdefault(side, [])
    for round_index in range(opts.rounds):
        for name, sides in pairings:
            # Alternate which side goes first so neither always follows the other.
            order = sides if round_index % 2 == 0 else sides[::-1]
            values = {side: run() for side, run in order}
            for side, value in values.items():
                samples[name][side].append(value)
            print(f"round {round_index + 1}/{opts.rounds} {name}: "
                  + " ".join(f"{side}={value:.0f}" for side, value in values.items()), file=sys.stderr)
        if opts.json:
            with open(opts.json, "w") as f:
                json.dump(samples, f, indent=1)
    report({name: samples[name] for name, _ in pairings})


if __name__ == "__main__":
    main()
