#!/usr/bin/env python3
"""Fidelity of schedlab's pipe and messaging workloads against the reference tools.

Runs schedlab and the reference side by side, interleaved run by run (A B A B ...), so machine
drift hits both equally, and reports the median of the paired ratios schedlab / reference for
each pairing:

  pipe       schedlab run pipe --loops L            vs  perf bench sched pipe -l L       (usec/op)
  pipe -T    schedlab run pipe --loops L --threads  vs  perf bench sched pipe -l L -T    (usec/op)
  hackbench  schedlab run messaging -g 4 -l 1000    vs  hackbench -g 4 -l 1000           (seconds)
  ... -p, -T and -p -T likewise.

--taskset CPUS runs both sides under `taskset -c CPUS`. On a small VM a wake-up that crosses to
an idle vCPU costs the host's vCPU wake-up, which swings from run to run and can dwarf the work
itself (here: a pipe round trip took 45-50 usec across the two vCPUs, 6 usec on one); pinned to
one CPU, the pairs compare the two tools' own work.

The reference binaries are given by path; this script never fetches or builds anything.

  bench/fidelity.py --schedlab target/release/schedlab --perf /usr/bin/perf \
      --hackbench /usr/bin/hackbench --rounds 10
"""
import argparse
import json
import re
import statistics
import subprocess
import sys

import pairs

# Set from --taskset: the command prefix both sides run under.
PREFIX = []


def schedlab_value(binary, args, metric):
    cmd = [binary, "run", *args, "--iterations", "1", "--warmup", "0", "--no-store", "--format", "json"]
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    case = json.loads(out)["runs"][0]["cases"][0]
    for m in case["metrics"]:
        if m["name"] == metric:
            return m["values"][0]
    raise RuntimeError(f"no {metric} in schedlab output")


def perf_pipe_usec(perf, loops, threads):
    cmd = [perf, "bench", "sched", "pipe", "-l", str(loops)] + (["-T"] if threads else [])
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    match = re.search(r"([\d.]+)\s+usecs/op", out)
    if not match:
        raise RuntimeError(f"cannot parse perf output: {out!r}")
    return float(match.group(1))


def hackbench_sec(hackbench, groups, loops, pipe, threads):
    cmd = [hackbench, "-g", str(groups), "-l", str(loops)]
    cmd += (["-p"] if pipe else []) + (["-T"] if threads else [])
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    match = re.search(r"Time:\s*([\d.]+)", out)
    if not match:
        raise RuntimeError(f"cannot parse hackbench output: {out!r}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedlab", required=True, help="path to the schedlab binary (release build)")
    parser.add_argument("--perf", help="path to perf (perf bench sched pipe)")
    parser.add_argument("--hackbench", help="path to hackbench (rt-tests)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved pairs per pairing")
    parser.add_argument("--pipe-loops", type=int, default=200000)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--hackbench-loops", type=int, default=1000)
    parser.add_argument("--json", help="also write every sample to this file")
    parser.add_argument("--only", metavar="REGEX",
                        help="only the pairings whose name matches (pipe, pipe -T, hackbench, hackbench -p, ...)")
    parser.add_argument("--taskset", metavar="CPUS", help="run both sides under `taskset -c CPUS`")
    opts = parser.parse_args()
    if opts.taskset:
        PREFIX[:] = ["taskset", "-c", opts.taskset]

    pairings = []
    if opts.perf:
        for threads in (False, True):
            name = "pipe" + (" -T" if threads else "")
            args = ["pipe", "--loops", str(opts.pipe_loops)] + (["--threads"] if threads else [])
            pairings.append((
                name, "usec/op",
                lambda a=args: schedlab_value(opts.schedlab, a, "usec_per_op"),
                lambda t=threads: perf_pipe_usec(opts.perf, opts.pipe_loops, t),
            ))
    if opts.hackbench:
        for pipe, threads in ((False, False), (True, False), (False, True), (True, True)):
            name = "hackbench" + (" -p" if pipe else "") + (" -T" if threads else "")
            args = ["messaging", "--groups", str(opts.groups), "--loops", str(opts.hackbench_loops)]
            args += (["--pipe"] if pipe else []) + (["--threads"] if threads else [])
            pairings.append((
                name, "sec",
                lambda a=args: schedlab_value(opts.schedlab, a, "time_sec"),
                lambda p=pipe, t=threads: hackbench_sec(opts.hackbench, opts.groups, opts.hackbench_loops, p, t),
            ))
    if opts.only:
        pairings = [p for p in pairings if re.search(opts.only, p[0])]
    if not pairings:
        sys.exit("no pairing: give --perf and/or --hackbench (and an --only that matches)")

    samples = {name: {"ours": [], "ref": []} for name, *_ in pairings}
    for round_index in range(opts.rounds):
        for name, _unit, ours, ref in pairings:
            # Alternate which side goes first so neither always follows the other.
            order = (ours, ref) if round_index % 2 == 0 else (ref, ours)
            values = {}
            for side in order:
                values[side] = side()
            samples[name]["ours"].append(values[ours])
            samples[name]["ref"].append(values[ref])
        print(f"round {round_index + 1}/{opts.rounds} done", file=sys.stderr)

    print(f"{'pairing':<16} {'unit':<8} {'schedlab med':>13} {'reference med':>14} {pairs.ratio_header()}")
    for name, unit, *_ in pairings:
        ours, ref = samples[name]["ours"], samples[name]["ref"]
        print(f"{name:<16} {unit:<8} {statistics.median(ours):>13.4f} {statistics.median(ref):>14.4f} "
              f"{pairs.ratio_columns(pairs.ratios(ours, ref))}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(samples, f, indent=1)


if __name__ == "__main__":
    main()
