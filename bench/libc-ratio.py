#!/usr/bin/env python3
"""The static musl build of schedlab against the glibc build: do they measure the same?

The same workloads through two binaries of one commit, interleaved run by run (alternating which
goes first) so that machine drift hits both alike; reports the median of the paired ratios
musl / glibc of each pairing's metric. What differs between the builds is the C library: the
read/write data path (pipe, messaging), fork and the allocator (messaging), the C library's
pthread mutex (contention pthread-mutex); semaphore and wakeup use futexes, clocks and threads of
schedlab's own, so they should agree within noise.

  cargo build --release
  cargo build --release --target x86_64-unknown-linux-musl
  bench/libc-ratio.py --glibc target/release/schedlab \\
      --musl target/x86_64-unknown-linux-musl/release/schedlab --rounds 5
"""
import argparse
import json
import statistics
import subprocess
import sys

import pairs

# name, schedlab arguments, metric (lower is better for every one but ops_per_sec)
PAIRINGS = [
    ("pipe", ["pipe", "--loops", "100000"], "usec_per_op"),
    ("pipe -T", ["pipe", "--loops", "100000", "--threaded"], "usec_per_op"),
    ("messaging -g 4 -l 500", ["messaging", "--groups", "4", "--loops", "500"], "time_sec"),
    ("messaging -T", ["messaging", "--groups", "4", "--loops", "500", "--threads"], "time_sec"),
    ("semaphore", ["semaphore", "--items", "200000"], "usec_per_item"),
    ("wakeup p99", ["wakeup", "--runtime", "3", "--message-threads", "1", "--workers", "2"],
     "wakeup_p99_usec"),
    ("pthread-mutex", ["contention", "--testcase", "pthread-mutex", "--tasks", "2",
                       "--duration", "2", "--warmup-sec", "1"], "ops_per_sec"),
]


def value(binary, args, metric):
    cmd = [binary, "run", *args, "--iterations", "1", "--warmup", "0", "--no-store", "--format", "json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    run = json.loads(out)["runs"][0]
    for m in run["cases"][0]["metrics"]:
        if m["name"] == metric:
            return m["values"][0], run["fingerprint"]["libc"]
    raise RuntimeError(f"no {metric} in the output of {cmd}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--glibc", required=True, help="schedlab built for the host (glibc)")
    parser.add_argument("--musl", required=True, help="schedlab built for x86_64-unknown-linux-musl")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved pairs per pairing")
    parser.add_argument("--json", help="also write every sample to this file")
    opts = parser.parse_args()

    libcs = {}
    samples = {name: {"glibc": [], "musl": []} for name, *_ in PAIRINGS}
    for round_index in range(opts.rounds):
        for name, args, metric in PAIRINGS:
            sides = ["glibc", "musl"] if round_index % 2 == 0 else ["musl", "glibc"]
            for side in sides:
                v, libc = value(getattr(opts, side), args, metric)
                samples[name][side].append(v)
                libcs[side] = libc
        print(f"round {round_index + 1}/{opts.rounds} done", file=sys.stderr)

    print(f"glibc binary: {libcs['glibc']}; musl binary: {libcs['musl']}")
    print(f"{'pairing':<22} {'metric':<16} {'glibc med':>11} {'musl med':>11} {pairs.ratio_header()}")
    for name, _args, metric in PAIRINGS:
        g, m = samples[name]["glibc"], samples[name]["musl"]
        print(f"{name:<22} {metric:<16} {statistics.median(g):>11.4g} {statistics.median(m):>11.4g} "
              f"{pairs.ratio_columns(pairs.ratios(m, g))}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(samples, f, indent=1)


if __name__ == "__main__":
    main()
