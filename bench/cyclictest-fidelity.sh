#!/usr/bin/env bash
# Fidelity of `timer-latency` against cyclictest (rt-tests, `apt-get install rt-tests`): both run
# one timer thread on the same settings — pinned to one CPU, the same policy and priority, interval
# and loop count — in interleaved rounds (A B, then B A, ...), and the script prints each round's
# p50 and p99 wake-up latency of both and the median of the paired ratios schedlab ÷ cyclictest
# with its distribution-free interval (bench/pairs.py). Nothing here is asserted; the figures go
# into docs/fidelity.md with the commit they were measured on.
#
# Like for like: cyclictest counts whole microseconds (its `now - next` truncated), so schedlab's
# percentiles (nanosecond HDR histograms) are truncated to whole microseconds too before the
# ratio. cyclictest runs with `--default-system`: it leaves /dev/cpu_dma_latency alone, as
# schedlab does (by default cyclictest writes 0 there, keeping idle CPUs out of deep C-states;
# `TUNED=1` runs it that way as well, in a second pairing, to show what that is worth here).
# Percentiles use the same rule on both sides: the first bucket whose cumulative count reaches
# p % of all wakes, cyclictest's histogram overflows counted above every bucket.
#
# usage: bench/cyclictest-fidelity.sh CYCLICTEST [SCHEDLAB]
#   CYCLICTEST  path of the installed cyclictest (never fetched or built here)
#   SCHEDLAB    default target/release/schedlab
# environment: ROUNDS (default 8), LOOPS (wakes per run, default 5000), INTERVAL (µs, default 1000),
#              CPU (default 0), PRIORITY (default 99), POLICY (fifo or rr, default fifo),
#              TUNED (1: also pair with cyclictest's default power-management tuning)
set -euo pipefail

cyclictest=${1:?usage: bench/cyclictest-fidelity.sh CYCLICTEST [SCHEDLAB]}
schedlab=${2:-target/release/schedlab}
rounds=${ROUNDS:-8}
loops=${LOOPS:-5000}
interval=${INTERVAL:-1000}
cpu=${CPU:-0}
priority=${PRIORITY:-99}
policy=${POLICY:-fifo}
tuned=${TUNED:-0}
# Microseconds cyclictest's histogram tracks; later wakes are its overflows.
hist_usec=100000

[ -x "$cyclictest" ] || { echo "cyclictest-fidelity: $cyclictest is not an executable" >&2; exit 2; }
[ -x "$schedlab" ] || { echo "cyclictest-fidelity: $schedlab is not an executable" >&2; exit 2; }
work=$(mktemp -d -t cyclictest-fidelity.XXXXXX)
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")" && pwd)

# cyclictest's histogram as "p50 p99": usec buckets "NNNNNN COUNT", overflows above them.
cyclictest_percentiles() {
    awk -v hist="$hist_usec" '
        /^[0-9]+ +[0-9]+$/ { count[$1 + 0] += $2; total += $2 }
        /^# Histogram Overflows:/ { overflow = $4 + 0 }
        END {
            n = total + overflow
            if (n == 0) { print "cyclictest-fidelity: no histogram" > "/dev/stderr"; exit 1 }
            r50 = int((50 * n + 99) / 100); r99 = int((99 * n + 99) / 100)
            if (r50 < 1) r50 = 1; if (r99 < 1) r99 = 1
            cum = 0; p50 = -1; p99 = -1
            for (v = 0; v < hist; v++) {
                cum += count[v]
                if (p50 < 0 && cum >= r50) p50 = v
                if (p99 < 0 && cum >= r99) { p99 = v; break }
            }
            if (p50 < 0) p50 = hist; if (p99 < 0) p99 = hist
            print p50, p99
        }'
}

run_cyclictest() { # $1: extra flags
    # shellcheck disable=SC2086
    "$cyclictest" $1 -q -t 1 -a "$cpu" --policy "$policy" -p "$priority" -i "$interval" \
        -l "$loops" -h "$hist_usec" 2>/dev/null | cyclictest_percentiles
}

run_schedlab() {
    "$schedlab" run timer-latency --cpus "$cpu" --policy "$policy" --priority "$priority" \
        --interval "$interval" --loops "$loops" --iterations 1 --warmup 0 --no-store \
        --format json --quiet |
        python3 -c '
import json, math, sys
case = json.load(sys.stdin)["runs"][0]["cases"][0]
def at(name):
    return next(m for m in case["metrics"] if m["name"] == name)["values"][0]
print(math.floor(at("latency_p50_usec")), math.floor(at("latency_p99_usec")))'
}

pairings=("default-system:--default-system")
[ "$tuned" = 1 ] && pairings+=("tuned:")
results="$work/rounds.txt"
: >"$results"
echo "cyclictest-fidelity: $rounds rounds × ${#pairings[@]} pairings, $loops wakes of ${interval} µs," \
    "CPU $cpu, $policy $priority ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
for round in $(seq 1 "$rounds"); do
    for pairing in "${pairings[@]}"; do
        name=${pairing%%:*}
        flags=${pairing#*:}
        if [ $((round % 2)) = 1 ]; then
            ct=$(run_cyclictest "$flags"); sl=$(run_schedlab)
        else
            sl=$(run_schedlab); ct=$(run_cyclictest "$flags")
        fi
        echo "$name $round $ct $sl" | tee -a "$results" >&2
    done
done

python3 - "$results" "$here" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
from pairs import ratios, ratio_columns, ratio_header
rows = [line.split() for line in open(sys.argv[1])]
print("columns per round: pairing round cyclictest_p50 cyclictest_p99 schedlab_p50 schedlab_p99 (µs)")
print(f"{'pairing':<16} {'pct':>4} {'rounds':>6} {'ct med':>7} {'sl med':>7} " + ratio_header())
for pairing in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == pairing]
    for pct, (ci, si) in (("p50", (2, 4)), ("p99", (3, 5))):
        ct = [float(r[ci]) for r in mine]
        sl = [float(r[si]) for r in mine]
        med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2
        print(f"{pairing:<16} {pct:>4} {len(mine):>6} {med(ct):>7.1f} {med(sl):>7.1f} "
              + ratio_columns(ratios(sl, ct)))
EOF
