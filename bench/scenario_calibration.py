#!/usr/bin/env python3
"""Calibration error of the scenario workload's run phases against rt-app's.

Both tools run the same rt-app file: one SCHED_FIFO task (priority 10) pinned to --cpu that loops
`run R, sleep R/4` for --seconds. A run phase is a number of work units worked out from a
calibration, so how long it really takes is the calibration's error:

  rt-app    logs, per loop, the wall time its run events took (`run`, us) and what they asked for
            (`c_duration`); its error is sum(run) / sum(c_duration) - 1. It calibrates once, on the
            CPU the file's `calibration` names (the same --cpu here).
  schedlab  reads the same file (`run scenario --file`) and reports thread0_run_wall_pct, the wall
            time of the run phases over what they asked for, x 100 (the same sum as rt-app's), and
            thread0_run_cpu_pct, the same by the task's CPU time; its error is pct / 100 - 1. Each
            task calibrates on its own CPU before it starts.

Rounds interleave the two tools (alternating which goes first), so machine drift hits both; per
run length the script prints each tool's median error in percent (signed: positive is a run phase
that took longer than asked), with the distribution-free interval of the median (bench/pairs.py)
and the range, and the median of the paired ratios |schedlab error| / |rt-app error|.

rt-app is given by path (Debian's `rt-app` package); this script never fetches or builds anything.

  cargo build --release
  bench/scenario_calibration.py --rt-app /usr/bin/rt-app --schedlab target/release/schedlab \\
      --cpu 1 --rounds 6 --json calibration.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import pairs


def scenario_file(directory, run_us, seconds, cpu):
    """The rt-app file both tools run, for run phases of `run_us`."""
    text = json.dumps({
        "tasks": {
            "thread0": {
                "loop": -1,
                "policy": "SCHED_FIFO",
                "priority": 10,
                "cpus": [cpu],
                "run": run_us,
                "sleep": max(run_us // 4, 1),
            }
        },
        "global": {
            "duration": seconds,
            "calibration": f"CPU{cpu}",
            "logdir": directory,
            "log_basename": "rt",
        },
    }, indent=1)
    path = os.path.join(directory, f"run{run_us}.json")
    with open(path, "w") as f:
        f.write(text)
    return path


def rtapp_error_pct(rtapp, path, directory):
    log = os.path.join(directory, "rt-thread0-0.log")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([rtapp, path], check=True, capture_output=True, text=True, cwd=directory)
    ran = asked = 0
    partial = 0
    with open(log) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.split()
            # idx perf run period start end rel_st slack c_duration c_period wu_lat; rt-app may
            # leave its last line cut short when the duration ends while it writes.
            if len(cols) != 11 or not all(c.lstrip("-").isdigit() for c in cols):
                partial += 1
                continue
            ran += int(cols[2])
            asked += int(cols[8])
    if partial > 1:
        raise RuntimeError(f"{partial} lines of {log} do not read as rt-app's log")
    if not asked:
        raise RuntimeError(f"rt-app logged no run phase in {log}")
    return (ran / asked - 1) * 100


def schedlab_error_pct(schedlab, path):
    cmd = [schedlab, "run", "--iterations", "1", "--warmup", "0", "--no-store", "--quiet",
           "--format", "json", "scenario", "--file", path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    case = json.loads(out)["runs"][0]["cases"][0]
    values = {m["name"]: m["values"][0] for m in case["metrics"]}
    return values["thread0_run_wall_pct"] - 100, values["thread0_run_cpu_pct"] - 100


def columns(values):
    if not values:
        return "-"
    low, high, cover = pairs.median_interval(values)
    return (f"{statistics.median(values):+7.2f} [{low:+.2f}, {high:+.2f}] {cover:.0%}"
            f" ({min(values):+.2f} .. {max(values):+.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rt-app", required=True, help="the rt-app binary")
    parser.add_argument("--schedlab", default="target/release/schedlab")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU both tools' task runs on")
    parser.add_argument("--runs-us", default="200,1000,8000",
                        help="run phase lengths, microseconds, comma-separated")
    parser.add_argument("--seconds", type=int, default=3, help="each run's duration")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", help="write every round's errors here (after each round)")
    args = parser.parse_args()
    runs = [int(r) for r in args.runs_us.split(",")]
    samples = {r: {"rtapp": [], "wall": [], "cpu": []} for r in runs}
    with tempfile.TemporaryDirectory() as directory:
        for round_ in range(args.rounds):
            for run_us in runs:
                path = scenario_file(directory, run_us, args.seconds, args.cpu)
                order = ["rtapp", "schedlab"] if round_ % 2 == 0 else ["schedlab", "rtapp"]
                for tool in order:
                    if tool == "rtapp":
                        samples[run_us]["rtapp"].append(rtapp_error_pct(args.rt_app, path, directory))
                    else:
                        wall, cpu = schedlab_error_pct(args.schedlab, path)
                        samples[run_us]["wall"].append(wall)
                        samples[run_us]["cpu"].append(cpu)
                s = samples[run_us]
                print(f"round {round_ + 1}, run {run_us} us: rt-app {s['rtapp'][-1]:+.2f} %, "
                      f"schedlab wall {s['wall'][-1]:+.2f} %, cpu {s['cpu'][-1]:+.2f} %",
                      file=sys.stderr)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump({str(k): v for k, v in samples.items()}, f, indent=1)
    print(f"error of run phases, percent: median [interval of the median] coverage (range); "
          f"{args.rounds} rounds of {args.seconds} s, CPU {args.cpu}")
    for run_us in runs:
        s = samples[run_us]
        better = pairs.ratios([abs(w) for w in s["wall"]], [abs(r) for r in s["rtapp"]])
        print(f"run {run_us} us")
        print(f"  rt-app            {columns(s['rtapp'])}")
        print(f"  schedlab (wall)   {columns(s['wall'])}")
        print(f"  schedlab (cpu)    {columns(s['cpu'])}")
        print(f"  |schedlab| / |rt-app| {pairs.ratio_header()}")
        print(f"                        {pairs.ratio_columns(better)}")


if __name__ == "__main__":
    main()
