#!/usr/bin/env bash
# How long Ctrl-C takes to end a run storing into PostgreSQL when the server cannot answer:
#   lock    another session holds ACCESS EXCLUSIVE on `runs` (as a migration or VACUUM FULL does)
#           from before the signal until the run has ended;
#   silent  the server's port goes silent (traffic to and from it throttled to 8 bit/s on lo:
#           a server whose host died or whose network was cut). Needs root and the kernel's
#           sch_htb and cls_u32; skipped, saying so, where they are missing.
# Each case runs the fake workload (an iteration every 100 ms), waits 3 s, cuts the server off,
# sends SIGINT 3 s later, and prints the seconds from the signal to the exit, the exit code and
# the status the next command shows. A case still running 300 s after the signal is killed.
#
#   bench/pg-stop.sh SCHEDLAB PG_URL [CASE...]
#   scripts/with-postgres bash -c 'bench/pg-stop.sh target/release/schedlab "$SCHEDLAB_TEST_PG_URL"'
#
# PG_URL is a superuser URL of a server the bench may create databases in (pgstop_<pid>_<case>).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
schedlab=$(realpath "$1")
admin=$2
shift 2
if [ $# -gt 0 ]; then cases=("$@"); else cases=(lock silent); fi
for case in "${cases[@]}"; do
    case $case in
        lock | silent) ;;
        *)
            echo "pg-stop.sh: no case named $case (lock, silent)" >&2
            exit 2
            ;;
    esac
done
port=$(echo "$admin" | sed -E 's|^[^/]*//[^/]*:([0-9]+)/.*|\1|')
work=$(mktemp -d)
throttled=0
cleanup() {
    [ "$throttled" = 1 ] && tc qdisc del dev lo root 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }

cut_off() {
    case $1 in
        lock)
            psql "$2" -qc "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600)" \
                >/dev/null 2>&1 &
            echo $! >"$work/holder"
            ;;
        silent)
            tc qdisc add dev lo root handle 1: htb default 10 2>/dev/null
            throttled=1
            tc class add dev lo parent 1: classid 1:10 htb rate 10gbit 2>/dev/null
            tc class add dev lo parent 1: classid 1:20 htb rate 8bit ceil 8bit 2>/dev/null
            for dir in dport sport; do
                tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip "$dir" "$port" 0xffff \
                    flowid 1:20
            done
            ;;
    esac
}

restore() {
    case $1 in
        lock)
            kill "$(cat "$work/holder")" 2>/dev/null || true
            psql "$2" -qc "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                           WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()" >/dev/null
            ;;
        silent)
            tc qdisc del dev lo root
            throttled=0
            ;;
    esac
}

can_throttle() {
    [ "$(id -u)" = 0 ] && command -v tc >/dev/null || return 1
    tc qdisc add dev lo root handle 1: htb default 10 2>/dev/null || return 1
    local ok=0
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport 9 0xffff flowid 1:10 \
        2>/dev/null || ok=1
    tc qdisc del dev lo root
    return $ok
}

printf '%-7s %-28s %5s  %s\n' case "SIGINT to exit (s)" exit "status after"
for case in "${cases[@]}"; do
    if [ "$case" = silent ] && ! can_throttle; then
        printf '%-7s skipped: throttling lo needs root, tc, sch_htb and cls_u32\n' "$case"
        continue
    fi
    db="pgstop_$$_$case"
    psql "$admin" -qc "CREATE DATABASE $db"
    url="${admin%/*}/$db"
    "$schedlab" run --db "$url" --quiet fake --iterations 100000 --sleep-ms 100 --warmup 0 \
        >/dev/null 2>"$work/stderr" &
    pid=$!
    sleep 3
    cut_off "$case" "$url"
    sleep 3
    start=$(now)
    kill -INT "$pid"
    for _ in $(seq 1 3000); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    took=$(printf '%.1f' "$(echo "$(now) - $start" | bc)")
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        took=">300"
    fi
    code=0
    wait "$pid" || code=$?
    restore "$case" "$url"
    status=$("$schedlab" runs --db "$url" --format json | sed -nE 's/.*"status": *"([a-z]+)".*/\1/p' | head -1)
    printf '%-7s %-28s %5s  %s\n' "$case" "$took" "$code" "$status"
    sed 's/^/        /' "$work/stderr"
done
