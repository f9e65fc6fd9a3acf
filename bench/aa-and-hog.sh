#!/usr/bin/env bash
# Measures, on the machine it runs on, what schedlab's verdicts are worth:
#   1. calibrate the quick suite (C runs, apart in time);
#   2. run the quick suite twice more and compare the two runs: an A/A, so every mark is false;
#   3. an `ab --until-decided` whose B arm starts a CPU hog on every CPU and whose A arm stops
#      it: the rows must be marked, and the script prints at which round each verdict came.
# The figures go into docs/statistics.md and issue notes; nothing here is asserted.
#
# usage: bench/aa-and-hog.sh [SCHEDLAB_BINARY] [WORK_DIR]
#   SCHEDLAB_BINARY  default target/release/schedlab
#   WORK_DIR         default a new temporary directory (kept, and printed)
# environment: RUNS (calibration runs, default 6), PAUSE (seconds between them, default 5),
#              MAX_ROUNDS (ab plan, default 6), SUITE (default quick)
set -euo pipefail

schedlab=${1:-target/release/schedlab}
work=${2:-$(mktemp -d -t schedlab-aa.XXXXXX)}
runs=${RUNS:-6}
pause=${PAUSE:-5}
max_rounds=${MAX_ROUNDS:-6}
suite=${SUITE:-quick}
db="$work/aa.db"
hog_pids="$work/hog.pids"
mkdir -p "$work"
[ -x "$schedlab" ] || { echo "aa-and-hog: $schedlab is not an executable" >&2; exit 2; }

stop_hogs() {
    if [ -f "$hog_pids" ]; then
        xargs -r kill <"$hog_pids" 2>/dev/null || true
        rm -f "$hog_pids"
    fi
}
trap stop_hogs EXIT

echo "work dir: $work"
echo "machine: $(nproc) CPUs, $(uname -r)"

start=$(date +%s)
"$schedlab" calibrate --db "$db" --suite "$suite" --runs "$runs" --pause "$pause" --label "cal-$suite"
echo "calibration: $((($(date +%s) - start))) s"

for label in aa-1 aa-2; do
    "$schedlab" run --db "$db" --suite "$suite" --label "$label" >/dev/null
done
"$schedlab" compare --db "$db" aa-1 aa-2
"$schedlab" compare --db "$db" aa-1 aa-2 --format json >"$work/aa.json"
"$schedlab" compare --db "$db" aa-1 aa-2 --calibration none --format json >"$work/aa-uncalibrated.json"

# The hog: one busy loop per CPU, started by arm B (once: ABBA visits B twice in a row), stopped
# by arm A and by the restore.
hog_start="[ -f $hog_pids ] || for c in \$(seq 0 \$((\$(nproc) - 1))); do nohup taskset -c \$c sh -c 'while :; do :; done' >/dev/null 2>&1 & echo \$! >>$hog_pids; done"
hog_stop="if [ -f $hog_pids ]; then xargs -r kill <$hog_pids 2>/dev/null; rm -f $hog_pids; fi; true"
start=$(date +%s)
"$schedlab" ab --db "$db" --label hog --suite "$suite" \
    --a "$hog_stop" --b "$hog_start" --restore "$hog_stop" \
    --until-decided --max-rounds "$max_rounds"
echo "ab: $((($(date +%s) - start))) s"
"$schedlab" compare --db "$db" hog-a hog-b --format json >"$work/hog.json"

python3 - "$work" <<'EOF'
import json, sys, collections
work = sys.argv[1]
def load(name):
    with open(f"{work}/{name}") as f:
        return json.load(f)
for name, what in [("aa.json", "A/A with the calibration"),
                   ("aa-uncalibrated.json", "A/A without a calibration")]:
    doc = load(name)
    verdicts = collections.Counter(r["verdict"] for r in doc["rows"])
    marked = verdicts["regression"] + verdicts["improvement"]
    print(f"{what}: {len(doc['rows'])} rows, {doc['footer']['comparisons']} judged, "
          f"{marked} marked (all false), verdicts {dict(verdicts)}, "
          f"guard x{doc['guard']['factor']:.2f} ({doc['guard']['method']})")
doc = load("hog.json")
seq = doc.get("sequential") or {}
print(f"hog ab: {seq.get('rounds')} rounds of at most {seq.get('plan', {}).get('max_rounds')}")
by_round = collections.defaultdict(collections.Counter)
for r in doc["rows"]:
    by_round[r.get("decided_at_round")][r["verdict"]] += 1
for rnd in sorted(by_round, key=lambda x: (x is None, x)):
    label = f"round {rnd}" if rnd is not None else "undecided"
    print(f"  {label}: {dict(by_round[rnd])}")
EOF
