#!/usr/bin/env bash
# Store throughput under concurrent writers, and push, on this machine:
#   1. W writers (processes, default 8) each store R runs (default 125) of the fake workload
#      (5 iterations, no warm-up) at once into an SQLite file, then into PostgreSQL: runs/s
#      stored, and runs and iterations lost (expected minus found; want 0).
#   2. `schedlab push` of the SQLite file's W x R runs (1,000 by default) into PostgreSQL: seconds,
#      then the same push again (which copies nothing).
#
#   bench/store-writers.sh SCHEDLAB PG_URL [WRITERS] [RUNS_PER_WRITER]
#   scripts/with-postgres bash -c 'bench/store-writers.sh target/release/schedlab "$SCHEDLAB_TEST_PG_URL"'
#
# PG_URL is a database the bench may write into (its runs are labelled bench-<pid>-…, so other
# runs there do not disturb the counts). It installs and starts nothing.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
schedlab=$(realpath "$1")
pg_url=$2
writers=${3:-8}
runs_each=${4:-125}
iterations=5
tag="bench-$$"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }

# One writer: R runs, each its own process, as a lab's nightly jobs are.
writer() {
    local db=$1 w=$2
    for r in $(seq 1 "$runs_each"); do
        SCHEDLAB_DB=$db "$schedlab" run --quiet --label "$tag-w$w-r$r" \
            fake --iterations "$iterations" --warmup 0 >/dev/null
    done
}

# Runs and measured iterations of this bench found in DB.
count() {
    SCHEDLAB_DB=$1 "$schedlab" runs --format json | awk -v tag="\"$tag-" '
        /"label":/ { mine = index($0, tag) > 0; if (mine) runs++ }
        /"measured_iterations":/ && mine { gsub(/[^0-9]/, ""); iterations += $0 }
        END { printf "%d %d\n", runs, iterations }'
}

measure() {
    local name=$1 db=$2
    local start end
    start=$(now)
    for w in $(seq 1 "$writers"); do
        writer "$db" "$w" &
    done
    wait
    end=$(now)
    read -r found found_iterations < <(count "$db")
    local expected=$((writers * runs_each))
    awk -v name="$name" -v n="$found" -v s="$start" -v e="$end" -v want="$expected" \
        -v it="$found_iterations" -v wantit="$((expected * iterations))" -v w="$writers" 'BEGIN {
        printf "%-10s %d writers: %d runs in %.1f s = %.1f runs/s stored; lost %d runs, %d iterations\n",
            name, w, n, e - s, n / (e - s), want - n, wantit - it }'
}

sqlite_db="$work/results.db"
"$schedlab" --version
measure sqlite "$sqlite_db"
measure postgresql "$pg_url"

start=$(now)
"$schedlab" push --db "$sqlite_db" --to "$pg_url" >"$work/push1.txt"
end=$(now)
awk -v s="$start" -v e="$end" 'BEGIN { printf "push       %.1f s: ", e - s }'
grep '^runs' "$work/push1.txt"
start=$(now)
"$schedlab" push --db "$sqlite_db" --to "$pg_url" >"$work/push2.txt"
end=$(now)
awk -v s="$start" -v e="$end" 'BEGIN { printf "push again %.1f s: ", e - s }'
grep '^runs' "$work/push2.txt"
