#!/usr/bin/env bash
# The fleet commands on a synthetic fleet: fills a store with H hosts × C cases × N nights of
# nightly runs (bench/fleet_generate.rs: 5 iterations of two metrics each, steps planted in every
# other series, kernels upgraded every 25 nights), then times the read commands — the best of 3 —
# and the peak memory of `changes --all-hosts`, and checks that every planted step is found.
#
#   bench/fleet-history.sh SCHEDLAB GENERATOR DB [HOSTS CASES NIGHTS]
#   cargo build --release -p schedlab && cargo build --release -p schedlab-store --example fleet_generate
#   scripts/with-postgres bash -c 'psql "$SCHEDLAB_TEST_PG_URL" -c "CREATE DATABASE fleet" &&
#       bench/fleet-history.sh target/release/schedlab target/release/examples/fleet_generate \
#       "${SCHEDLAB_TEST_PG_URL%/postgres}/fleet" 100 10 1000'
#
# DB is an SQLite file to create or a PostgreSQL database (which must exist, empty). Defaults:
# 100 hosts × 10 cases × 1,000 nights, a million runs.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
schedlab=$(realpath "$1")
generator=$(realpath "$2")
db=$3
hosts=${4:-100}
cases=${5:-10}
nights=${6:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SCHEDLAB_DB=$db

start=$(date +%s.%N)
"$generator" --db "$db" --hosts "$hosts" --cases "$cases" --nights "$nights" \
    --planted "$work/planted.json"
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "generated in %.0f s\n", e - s }'
case $db in
postgres://* | postgresql://*) size=$(psql -qtA "$db" -c "SELECT pg_database_size(current_database())") ;;
*) size=$(stat -c %s "$db") ;;
esac
awk -v b="$size" 'BEGIN { printf "database size %.2f GB\n", b / 1e9 }'

host=node$(printf '%03d' $((hosts / 2)))
case="fake:value=$((10 * (cases / 2 + 1))) spread=2"
# The host's newest run and its run of the same case a night before, for compare's sides.
b=$("$schedlab" runs --host "$host" --format json --limit 1 | awk -F': ' '/"id"/ { gsub(/,/, "", $2); print $2 }')
a=$((b - hosts * cases))

# The best of three runs of a command: wall seconds and peak resident memory.
timed() {
    local name=$1
    shift
    local best=""
    for _ in 1 2 3; do
        /usr/bin/time -f '%e %M' -o "$work/time" "$schedlab" "$@" >"$work/out" 2>"$work/err" || {
            echo "$name failed:" >&2
            cat "$work/err" >&2
            exit 1
        }
        read -r seconds kib <"$work/time"
        if [ -z "$best" ] || awk -v a="$seconds" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best="$seconds $kib"
        fi
    done
    printf '%-52s %7s s %8.1f MB\n' "$name" "${best% *}" "$(awk -v k="${best#* }" 'BEGIN { print k / 1024 }')"
}

echo "$((hosts * cases * nights)) runs; command (best of 3)                        wall     peak RSS"
timed "hosts" hosts
timed "runs --limit 20" runs --limit 20
timed "runs --host $host --until 2026-02-01 --limit 20" runs --host "$host" --until 2026-02-01 --limit 20
timed "runs --where cpu_model=... --limit 20" runs --where "cpu_model=Synthetic CPU @ 3.00GHz" --limit 20
timed "history '$case' --host $host" history "$case" --host "$host"
# The generator's first night is 2026-01-01: the second half of the nights.
half=$(date -u -d "2026-01-01 + $((nights / 2)) days" +%F)
timed "history ... --host $host --since $half" history "$case" --host "$host" --since "$half"
timed "changes --host $host" changes --host "$host"
timed "compare $a $b --host $host" compare "$a" "$b" --host "$host"
/usr/bin/time -f '%e %M' -o "$work/time" "$schedlab" changes --all-hosts --format json >"$work/all.json"
read -r seconds kib <"$work/time"
printf '%-52s %7s s %8.1f MB\n' "changes --all-hosts (once)" "$seconds" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')"

/usr/bin/time -f '%e %M' -o "$work/time" "$schedlab" db check >"$work/check" || {
    cat "$work/check" >&2
    exit 1
}
read -r seconds kib <"$work/time"
printf '%-52s %7s s %8.1f MB\n' "db check (every summary against its iterations, once)" "$seconds" \
    "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')"

# Every planted step found within a run of where it was planted, and what else was found.
python3 - "$work/planted.json" "$work/all.json" "$((hosts * cases))" <<'PY'
import json, sys
planted = json.load(open(sys.argv[1]))
found = json.load(open(sys.argv[2]))
per_night = int(sys.argv[3])
changes = {(s["hostname"], s["case"], c["run_id"]) for s in found for c in s["changes"]}
hit = sum(
    any(h == p["host"] and c == p["case"] and abs(r - p["run_id"]) // per_night <= 1
        for (h, c, r) in changes)
    for p in planted)
print(f"series judged: {len(found)}; planted steps: {len(planted)}, found within a run: {hit}; "
      f"changes reported: {len(changes)} ({len(changes) - hit} where none was planted)")
sys.exit(0 if hit == len(planted) else 1)
PY
