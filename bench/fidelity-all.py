#!/usr/bin/env python3
"""Every fidelity pairing in one session, one table: docs/fidelity.md's figures, re-measured.

Runs each pairing of the fidelity scripts beside its reference tool, interleaved pair by pair
(A B, then B A in the next round, so neither side always follows the other and the machine's
drift hits both), and writes one Markdown table of the median of the paired ratios schedlab /
reference with its distribution-free confidence interval (bench/pairs.py), the range, and whether
the median lies within the band (0.95-1.05 unless --band says otherwise):

  perf bench     pipe, pipe -T                          (fidelity.py: usec/op)
  hackbench      -g G -l L, -p, -T, -p -T               (fidelity.py: seconds)
  schbench       -m 3 -t 3 -p 4096 (pipe mode), and request mode (schbench_fidelity.py)
  will-it-scale  getppid1, mmap1, lock1, pipe1 (processes and threads), pthread_mutex1 (threads),
                 each at 1 task and 2 x the online CPUs, unbound (-n)  (will-it-scale.py: ops/s)

A pairing is measured only when its reference is given. The reference binaries are given by path
(--perf, --hackbench, --schbench, --wis-dir); this script never fetches or builds anything.

--taskset CPUS runs every command of both sides under `taskset -c CPUS` (pinned: on a small shared
VM a wake-up that crosses to an idle vCPU costs the host's vCPU wake-up, which swings from run to
run). --rerun-outside measures every pairing whose median fell outside the band once more, with as
many rounds, and prints those rows again (marked `re-run`). --json keeps every sample.

The table's header names the schedlab commit (--commit, else `git rev-parse --short HEAD` of the
checkout this script is in), the date, the pinning and the load average before and after, so a
figure in docs/fidelity.md can name the commit it was measured on.

  bench/fidelity-all.py --schedlab target/release/schedlab --perf /usr/bin/perf \\
      --hackbench /usr/bin/hackbench --schbench /tmp/ref/schbench/schbench \\
      --wis-dir /tmp/ref/will-it-scale --taskset 1 --rounds 6 --rerun-outside \\
      --out fidelity-table.md --json fidelity-all.json
"""
import argparse
import datetime
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fidelity  # noqa: E402
import pairs  # noqa: E402
import schbench_fidelity  # noqa: E402


def load_will_it_scale():
    spec = importlib.util.spec_from_file_location("will_it_scale", os.path.join(HERE, "will-it-scale.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wis = load_will_it_scale()


class Pairing:
    """One pairing: a name, the metrics it reports, and a function per side giving {metric: value}."""

    def __init__(self, group, name, metrics, ours, ref, reference):
        self.group, self.name, self.metrics = group, name, metrics
        self.ours, self.ref, self.reference = ours, ref, reference


def pairings_from(opts):
    found = []
    if opts.perf:
        for threads in (False, True):
            args = ["pipe", "--loops", str(opts.pipe_loops)] + (["--threads"] if threads else [])
            found.append(Pairing(
                "perf bench", "pipe" + (" -T" if threads else ""), ["usec_per_op"],
                lambda a=args: {"usec_per_op": fidelity.schedlab_value(opts.schedlab, a, "usec_per_op")},
                lambda t=threads: {"usec_per_op": fidelity.perf_pipe_usec(opts.perf, opts.pipe_loops, t)},
                f"perf bench sched pipe -l {opts.pipe_loops}" + (" -T" if threads else "")))
    if opts.hackbench:
        for pipe, threads in ((False, False), (True, False), (False, True), (True, True)):
            flags = (" -p" if pipe else "") + (" -T" if threads else "")
            args = ["messaging", "--groups", str(opts.groups), "--loops", str(opts.hackbench_loops)]
            args += (["--pipe"] if pipe else []) + (["--threads"] if threads else [])
            found.append(Pairing(
                "hackbench", "hackbench" + flags, ["time_sec"],
                lambda a=args: {"time_sec": fidelity.schedlab_value(opts.schedlab, a, "time_sec")},
                lambda p=pipe, t=threads: {"time_sec": fidelity.hackbench_sec(
                    opts.hackbench, opts.groups, opts.hackbench_loops, p, t)},
                f"hackbench -g {opts.groups} -l {opts.hackbench_loops}{flags}"))
    if opts.schbench:
        common = ["-m", "3", "-t", "3", "-r", str(opts.schbench_runtime)]
        found.append(Pairing(
            "schbench", "schbench pipe", ["worker_ops_per_sec", "wakeup_p50_usec"],
            lambda: schbench_fidelity.schedlab_metrics(opts.schedlab, common + ["--pipe", "4096"]),
            lambda: schbench_fidelity.schbench_metrics(opts.schbench, common + ["-p", "4096"]),
            "schbench " + " ".join(common) + " -p 4096"))
        found.append(Pairing(
            "schbench", "schbench request", ["requests_avg_per_sec", "wakeup_p50_usec", "request_p50_usec"],
            lambda: schbench_fidelity.schedlab_metrics(opts.schedlab, common),
            lambda: schbench_fidelity.schbench_metrics(opts.schbench, common),
            "schbench " + " ".join(common)))
    if opts.wis_dir:
        counts = [1, 2 * os.cpu_count()]
        for test, args, scale, modes in wis.TESTS:
            for mode in modes:
                for tasks in counts:
                    found.append(Pairing(
                        "will-it-scale", wis.pairing_name(test, mode, tasks), ["ops_per_sec"],
                        lambda a=args, t=tasks, m=mode, s=scale: {"ops_per_sec": s * wis.schedlab_ops(
                            opts.schedlab, a, t, m == "processes", opts.wis_seconds)},
                        lambda te=test, m=mode, t=tasks: {"ops_per_sec": wis.wis_ops(
                            opts.wis_dir, te, m, t, opts.wis_seconds, False)},
                        f"{test}_{mode} -t {tasks} -n -s {opts.wis_seconds}"))
    if opts.only:
        found = [p for p in found if re.search(opts.only, p.name)]
    return found


def measure(pairings, rounds, samples, label, after_round=lambda: None):
    """`rounds` interleaved rounds of every pairing, appended to samples[name] = {ours, ref};
    `after_round` runs after each (it writes what there is so far)."""
    for round_index in range(rounds):
        for pairing in pairings:
            sides = [("ours", pairing.ours), ("ref", pairing.ref)]
            if round_index % 2:
                sides.reverse()
            entry = samples.setdefault(pairing.name, {"ours": [], "ref": []})
            for side, run in sides:
                entry[side].append(run())
        print(f"{label}: round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
        after_round()


def rows(pairings, samples, band, note=""):
    out = []
    for pairing in pairings:
        entry = samples[pairing.name]
        for metric in pairing.metrics:
            ours = [s[metric] for s in entry["ours"]]
            ref = [s[metric] for s in entry["ref"]]
            ratios = pairs.ratios(ours, ref)
            median = statistics.median(ratios)
            low, high, cover = pairs.median_interval(ratios)
            within = band[0] <= median <= band[1]
            out.append({
                "group": pairing.group, "pairing": pairing.name, "reference": pairing.reference,
                "metric": metric, "rounds": len(ratios), "schedlab_median": statistics.median(ours),
                "reference_median": statistics.median(ref), "ratio_median": median,
                "ci_low": low, "ci_high": high, "coverage": cover, "min": min(ratios), "max": max(ratios),
                "within": within, "note": note,
            })
    return out


def number(value):
    if value >= 10_000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.1f}"
    return f"{value:.3g}" if value < 1 else f"{value:.2f}"


def markdown(all_rows, band):
    lines = [
        "| pairing | reference | metric | rounds | schedlab | reference | ratio median | 95 % CI (cover) "
        f"| range | within {band[0]:.2f}–{band[1]:.2f} |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in all_rows:
        mark = "yes" if r["within"] else "**no**"
        name = r["pairing"] + (f" ({r['note']})" if r["note"] else "")
        lines.append(
            f"| {name} | `{r['reference']}` | `{r['metric']}` | {r['rounds']} | {number(r['schedlab_median'])} "
            f"| {number(r['reference_median'])} | **{r['ratio_median']:.3f}** | {r['ci_low']:.3f}–{r['ci_high']:.3f} "
            f"({r['coverage']:.0%}) | {r['min']:.2f}–{r['max']:.2f} | {mark} |")
    return "\n".join(lines)


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedlab", required=True, help="path to the schedlab binary (a release build)")
    parser.add_argument("--perf", help="path to perf (perf bench sched pipe)")
    parser.add_argument("--hackbench", help="path to hackbench (rt-tests)")
    parser.add_argument("--schbench", help="path to a schbench binary")
    parser.add_argument("--wis-dir", help="directory of the built will-it-scale binaries")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved pairs per pairing")
    parser.add_argument("--taskset", metavar="CPUS", help="run every command under `taskset -c CPUS`")
    parser.add_argument("--band", default="0.95,1.05", help="the band a median should lie in (low,high)")
    parser.add_argument("--rerun-outside", action="store_true",
                        help="measure the pairings outside the band once more, with as many rounds")
    parser.add_argument("--only", metavar="REGEX", help="only the pairings whose name matches")
    parser.add_argument("--pipe-loops", type=int, default=200000)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--hackbench-loops", type=int, default=1000)
    parser.add_argument("--schbench-runtime", type=int, default=5, help="seconds per schbench run, both sides")
    parser.add_argument("--wis-seconds", type=int, default=2, help="will-it-scale seconds measured (after 6 s)")
    parser.add_argument("--commit", help="the schedlab commit measured (default: this checkout's HEAD)")
    parser.add_argument("--out", help="also write the table (with its header) to this Markdown file")
    parser.add_argument("--json", help="also write every sample and row to this file")
    opts = parser.parse_args()
    band = tuple(float(x) for x in opts.band.split(","))
    if opts.taskset:
        prefix = ["taskset", "-c", opts.taskset]
        fidelity.PREFIX[:] = prefix
        schbench_fidelity.PREFIX[:] = prefix
        wis.PREFIX[:] = prefix
    commit = opts.commit or subprocess.run(
        ["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()

    pairings = pairings_from(opts)
    if not pairings:
        sys.exit("no pairing: give --perf, --hackbench, --schbench and/or --wis-dir (and an --only that matches)")
    started, load_before = datetime.datetime.now(datetime.timezone.utc), load_average()
    samples, rerun_samples, outside = {}, {}, []

    def write():
        """The table of the rounds done so far, to stdout's end and --out / --json: a session cut
        short still leaves its table."""
        done = min(len(e["ours"]) for e in samples.values()) if samples else 0
        if done == 0:
            return ""
        measured = [p for p in pairings if len(samples.get(p.name, {}).get("ours", [])) == done]
        table = rows(measured, {n: {k: v[:done] for k, v in e.items()} for n, e in samples.items()}, band)
        again = [p for p in outside if rerun_samples.get(p.name, {}).get("ours")]
        if again:
            table += rows(again, rerun_samples, band, note="re-run")
        header = (f"schedlab {commit}, measured {started:%Y-%m-%d %H:%M}Z–"
                  f"{datetime.datetime.now(datetime.timezone.utc):%H:%M}Z, "
                  + (f"both sides under `taskset -c {opts.taskset}`, " if opts.taskset else "unpinned, ")
                  + f"{done} interleaved rounds, load average {load_before} before and {load_average()} after")
        text = header + "\n\n" + markdown(table, band)
        if opts.out:
            with open(opts.out, "w") as f:
                f.write(text + "\n")
        if opts.json:
            with open(opts.json, "w") as f:
                json.dump({"header": header, "samples": samples, "rerun_samples": rerun_samples, "rows": table},
                          f, indent=1)
        return text

    measure(pairings, opts.rounds, samples, "all pairings", write)
    if opts.rerun_outside:
        table = rows(pairings, samples, band)
        outside[:] = [p for p in pairings if any(r["pairing"] == p.name and not r["within"] for r in table)]
        if outside:
            measure(outside, opts.rounds, rerun_samples, "re-run of those outside the band", write)
    print(write())


if __name__ == "__main__":
    main()
