#!/usr/bin/env bash
# Measures what `--explain` costs, on the machine it runs on (root: the probes need tracepoints):
#   1. an A/A of probes on vs off: runs of each workload with and without --explain, alternated
#      run by run, then `compare plain explained`: the measured iterations of an explained run
#      must read as those of a plain one (no row marked), since the probes run on iterations of
#      their own after them;
#   2. the cost of the probes themselves: in every explained run, the probed iteration's wall
#      time against the median of that run's measured ones, divided by the records the probes
#      wrote — the cost per event — and the primary metric's ratio.
# The figures go into docs/explain.md; nothing here is asserted.
#
# usage: bench/explain-overhead.sh [SCHEDLAB_BINARY] [WORK_DIR]
#   SCHEDLAB_BINARY  default target/release/schedlab
#   WORK_DIR         default a new temporary directory (kept, and printed)
# environment: PAIRS (runs per side and workload, default 4), ITERATIONS (per run, default 5)
set -euo pipefail

schedlab=${1:-target/release/schedlab}
work=${2:-$(mktemp -d -t schedlab-explain.XXXXXX)}
pairs=${PAIRS:-4}
iterations=${ITERATIONS:-5}
db="$work/explain.db"
mkdir -p "$work"
[ -x "$schedlab" ] || { echo "explain-overhead: $schedlab is not an executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "explain-overhead: needs python3" >&2; exit 2; }
echo "explain-overhead: work directory $work"

workloads=(
    "pipe --loops 100000"
    "messaging --groups 2 --fds 5 --loops 200"
    "wakeup --runtime 2 --workers 2"
)
for w in "${workloads[@]}"; do
    for ((i = 0; i < pairs; i++)); do
        # Alternate which side goes first, so drift does not line up with a side.
        if ((i % 2 == 0)); then order=(plain explained); else order=(explained plain); fi
        for side in "${order[@]}"; do
            extra=()
            [ "$side" = explained ] && extra=(--explain)
            # shellcheck disable=SC2086
            "$schedlab" run --db "$db" -q --format json --label "$side" --iterations "$iterations" \
                --warmup 1 "${extra[@]}" $w >/dev/null
        done
    done
done

echo
echo "== 1. A/A: compare plain explained (the measured iterations only)"
"$schedlab" compare --db "$db" plain explained || true

echo
echo "== 2. the probed iterations against their own run's measured ones"
python3 - "$db" <<'EOF'
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""
    SELECT r.id, c.name, c.id FROM runs r JOIN cases c ON c.run_id = r.id
     WHERE r.label = 'explained' ORDER BY c.name, r.id""").fetchall()
by_case = {}
for run_id, case, case_id in rows:
    plain = [v for (v,) in db.execute("""
        SELECT m.value FROM measurements m JOIN iterations i ON m.iteration_id = i.id
         WHERE i.case_id = ? AND NOT i.warmup AND m.name = 'wall_time_sec'""", (case_id,))]
    primary = db.execute("""
        SELECT m.name, m.better FROM measurements m JOIN iterations i ON m.iteration_id = i.id
         WHERE i.case_id = ? AND m.role = 'primary' ORDER BY m.rowid LIMIT 1""", (case_id,)).fetchone()
    plain_primary = [v for (v,) in db.execute("""
        SELECT m.value FROM measurements m JOIN iterations i ON m.iteration_id = i.id
         WHERE i.case_id = ? AND NOT i.warmup AND m.name = ?""", (case_id, primary[0]))]
    probe = dict(db.execute("""
        SELECT x.name, x.value FROM probe_measurements x JOIN probe_iterations p ON x.probe_iteration_id = p.id
         WHERE p.case_id = ? AND p.kind = 'explain' AND x.task_group = ''""", (case_id,)).fetchall())
    if 'probe_records_count' not in probe:
        continue
    extra_sec = probe['wall_time_sec'] - statistics.median(plain)
    by_case.setdefault(case, []).append((
        probe[primary[0]] / statistics.median(plain_primary), primary[0],
        probe['probe_records_count'], extra_sec, probe.get('probe_window_pct', 100.0)))
print(f"{'case':48} {'primary':>20} {'probed/plain':>12} {'records':>10} {'ns/record':>10} {'window':>7}")
for case, runs in by_case.items():
    ratio = statistics.median(r[0] for r in runs)
    records = statistics.median(r[2] for r in runs)
    per = statistics.median(r[3] / r[2] * 1e9 for r in runs if r[2] > 0)
    window = min(r[4] for r in runs)
    print(f"{case[:48]:48} {runs[0][1]:>20} {ratio:>12.2f} {records:>10.0f} {per:>10.0f} {window:>6.1f}%")
EOF
