#!/usr/bin/env python3
"""Fidelity of schedlab's wakeup workload against schbench.

Runs schedlab and schbench side by side, interleaved run by run (A B, then B A, ...) so machine
drift hits both equally, and reports the median of the paired ratios schedlab / schbench.

  pipe     schedlab run wakeup -m M -t T --pipe B -r R   vs  schbench -m M -t T -p B -r R
           transfer: worker_ops_per_sec vs "avg worker transfer: X ops/sec" (same definition:
           transfers per worker per second); wakeup p50 both sides (schbench: whole usec).
  request  schedlab run wakeup -m M -t T -r R             vs  schbench -m M -t T -r R
           requests_avg_per_sec vs "average rps"; wakeup and request p50.

--extra ARGS passes the same arguments to both sides (schedlab's wakeup takes schbench's
spellings), e.g. `--modes request --extra "-s 0 -L"`: no sleep and no lock, so a request is its math.

--taskset CPUS runs both sides under `taskset -c CPUS`. On a small VM a wake-up that crosses to
an idle vCPU costs the host's vCPU wake-up, which swings from run to run and can dwarf the work
itself (here: a pipe round trip took 45-50 usec across the two vCPUs, 6 usec on one); pinned to
one CPU, the pairs compare the two tools' own work.

schbench is given by path; this script never fetches or builds anything.

  bench/schbench_fidelity.py --schedlab target/release/schedlab --schbench /path/to/schbench \\
      --rounds 6 --runtime 10
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


def schedlab_metrics(binary, args):
    cmd = [binary, "run", "wakeup", *args, "--iterations", "1", "--warmup", "0", "--no-store", "--format", "json"]
    out = subprocess.run(PREFIX + cmd, check=True, capture_output=True, text=True).stdout
    case = json.loads(out)["runs"][0]["cases"][0]
    return {m["name"]: m["values"][0] for m in case["metrics"]}


def last_block(text, title):
    """The percentile lines of the last `title` block schbench printed, as {percentile: value}."""
    starts = [m.end() for m in re.finditer(re.escape(title) + r" percentiles.*\n", text)]
    if not starts:
        raise RuntimeError(f"no {title} block in schbench output: {text[-2000:]!r}")
    values = {}
    for line in text[starts[-1]:].splitlines():
        match = re.match(r"\s*\*?\s*([\d.]+)th:\s*(\d+)", line)
        if not match:
            break
        values[float(match.group(1))] = float(match.group(2))
    return values


def schbench_metrics(binary, args):
    # schbench prints everything on stderr.
    text = subprocess.run(PREFIX + [binary, *args], check=True, capture_output=True, text=True).stderr
    result = {"wakeup_p50_usec": last_block(text, "Wakeup Latencies")[50.0]}
    transfer = re.findall(r"avg worker transfer:\s*([\d.]+) ops/sec", text)
    if transfer:
        result["worker_ops_per_sec"] = float(transfer[-1])
    average = re.findall(r"average rps:\s*([\d.]+)", text)
    if average:
        result["requests_avg_per_sec"] = float(average[-1])
        result["request_p50_usec"] = last_block(text, "Request Latencies")[50.0]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedlab", required=True, help="path to the schedlab binary (release build)")
    parser.add_argument("--schbench", required=True, help="path to a schbench binary")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved pairs per mode")
    parser.add_argument("--runtime", type=int, default=10, help="seconds per run, both sides")
    parser.add_argument("--message-threads", type=int, default=3)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--pipe", type=int, default=4096, help="bytes per transfer in pipe mode")
    parser.add_argument("--modes", default="pipe", help="comma-separated: pipe, request")
    parser.add_argument("--json", help="also write every sample to this file")
    parser.add_argument("--taskset", metavar="CPUS", help="run both sides under `taskset -c CPUS`")
    parser.add_argument("--extra", default="", metavar="ARGS",
                        help="more arguments for both sides, spelled as schbench takes them (e.g. '-s 0 -L')")
    opts = parser.parse_args()
    if opts.taskset:
        PREFIX[:] = ["taskset", "-c", opts.taskset]

    common = ["-m", str(opts.message_threads), "-t", str(opts.workers), "-r", str(opts.runtime), *opts.extra.split()]
    pairings = {}
    for mode in opts.modes.split(","):
        if mode == "pipe":
            pairings["pipe"] = (
                common + ["--pipe", str(opts.pipe)],
                common + ["-p", str(opts.pipe)],
                ["worker_ops_per_sec", "wakeup_p50_usec"],
            )
        elif mode == "request":
            pairings["request"] = (common, common, ["requests_avg_per_sec", "wakeup_p50_usec", "request_p50_usec"])
        else:
            sys.exit(f"unknown mode {mode!r}")

    samples = {mode: {"ours": [], "ref": []} for mode in pairings}
    for round_index in range(opts.rounds):
        for mode, (ours_args, ref_args, _) in pairings.items():
            sides = [("ours", lambda a=ours_args: schedlab_metrics(opts.schedlab, a)),
                     ("ref", lambda a=ref_args: schbench_metrics(opts.schbench, a))]
            # Alternate which side goes first so neither always follows the other.
            if round_index % 2:
                sides.reverse()
            for side, run in sides:
                samples[mode][side].append(run())
        print(f"round {round_index + 1}/{opts.rounds} done", file=sys.stderr)

    print(f"{'mode':<8} {'metric':<20} {'schedlab med':>13} {'schbench med':>13} {pairs.ratio_header()}")
    for mode, (_, _, metrics) in pairings.items():
        for metric in metrics:
            ours = [s[metric] for s in samples[mode]["ours"]]
            ref = [s[metric] for s in samples[mode]["ref"]]
            ratio = pairs.ratio_columns(pairs.ratios(ours, ref))
            print(f"{mode:<8} {metric:<20} {statistics.median(ours):>13.2f} {statistics.median(ref):>13.2f} {ratio}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(samples, f, indent=1)


if __name__ == "__main__":
    main()
