//! The quiet-machine guard end to end, on this machine's real CPU pressure (PSI; CI's Debian
//! kernel and this machine have it): a run beside CPU hogs started by the test is marked
//! disturbed with the pressure it saw, a run without them waits and proceeds, and `compare`
//! says how many iterations were disturbed, or leaves them out with `--drop-disturbed` and says
//! so. Bad values of the guard's flags are one line and exit 2.
use std::path::Path;
use std::process::{Child, Command};

use serde_json::Value;

mod common;
use common::*;

/// Busy loops on every CPU, two per CPU so that each always has a runnable task waiting: killed
/// and reaped when dropped, even when an assertion fails first.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start() -> Hogs {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs(
            (0..2 * cpus)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh starts")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The guard's rows of run `id`: (position, warm-up, limit, waited ns, pressure before, why
/// disturbed, pressure during), in order.
type Marks = Vec<(
    i64,
    bool,
    f64,
    i64,
    Option<f64>,
    Option<String>,
    Option<f64>,
)>;

fn marks(db: &Path, id: i64) -> Marks {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT i.position, i.warmup, q.limit_pct, q.waited_ns, q.before_pct, q.disturbed,
                    (SELECT m.value FROM measurements m
                      WHERE m.iteration_id = i.id AND m.name = 'psi_cpu_some_pct')
               FROM iterations i JOIN cases c ON i.case_id = c.id
               LEFT JOIN iteration_quiet q ON q.iteration_id = i.id
              WHERE c.run_id = ?1 ORDER BY i.position",
        )
        .unwrap();
    stmt.query_map([id], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get::<_, Option<f64>>(2)?
                .expect("every iteration has the guard's row"),
            r.get::<_, Option<i64>>(3)?.unwrap(),
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// Runs the fake workload (100 ms iterations, so the pressure during one is measured over a
/// window long enough to mean something) under `label` with `guard`; its run id.
fn guarded_run(db: &Path, label: &str, guard: &str) -> i64 {
    let args = format!(
        "run fake --sleep-ms 100 --iterations 2 --warmup 1 --label {label} --format json -q {guard}"
    );
    let doc = json_of_success(db, &words(&args));
    doc["runs"][0]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no run id: {doc}"))
}

/// Every mark agrees with its own figures: a run that never became quiet waited the whole
/// bound with the last look at or above the limit; one disturbed during ran above the limit;
/// an unmarked one was quiet before and during.
fn assert_consistent(marks: &Marks, bound_ns: i64) {
    for (position, _, limit, waited, before, why, during) in marks {
        let before = before.expect("PSI was readable before it");
        let during = during.expect("PSI was readable during it");
        assert!(
            *waited >= 200_000_000,
            "iteration {position}: one look at least"
        );
        match why.as_deref() {
            Some("never_quiet") => assert!(before >= *limit && *waited >= bound_ns),
            Some("pressure_during") => assert!(before < *limit && during >= *limit),
            None => assert!(before < *limit && during < *limit),
            Some(other) => panic!("iteration {position}: stored reason {other:?}"),
        }
    }
}

#[test]
fn bad_guard_values_are_one_line_and_exit_2() {
    let (_dir, db) = temp_db();
    assert_each_refusal_names(
        &db,
        &[
            ("run fake --quiet-below -1", "--quiet-below"),
            ("run fake --quiet-below 101", "--quiet-below"),
            ("run fake --quiet-below 0", "--quiet-below"),
            ("run fake --quiet-below nan", "--quiet-below"),
            ("run fake --quiet-below 5 --quiet-wait soon", "--quiet-wait"),
            ("run fake --quiet-below 5 --quiet-wait -3", "--quiet-wait"),
            ("run fake --quiet-below 5 --quiet-wait 2h", "--quiet-wait"),
            ("run fake --quiet-wait 1s", "--quiet-below"),
        ],
    );
    assert_eq!(stored_iterations(&db), 0);
}

#[test]
fn a_run_beside_hogs_is_marked_and_compare_says_so_or_leaves_it_out() {
    let (_dir, db) = temp_db();
    // The compared runs beside the hogged one run without the guard, so that none of them can
    // be marked by what else this shared machine runs: the sides are known whatever it does.
    let base = guarded_run(&db, "base", "");
    let hogged = {
        let _hogs = Hogs::start();
        // Let the hogs' pressure show in PSI before the guard's first look.
        std::thread::sleep(std::time::Duration::from_millis(300));
        guarded_run(&db, "cand", "--quiet-below 1 --quiet-wait 1s")
    };
    let plain_cand = guarded_run(&db, "cand", "");
    let calm = guarded_run(&db, "calm", "--quiet-below 95 --quiet-wait 60s");

    // Beside the hogs: every iteration, the warm-up too, waited its second and ran marked,
    // under pressure far above 1 %.
    let beside = marks(&db, hogged);
    assert_eq!(beside.len(), 3, "{beside:?}");
    assert!(beside[0].1, "the warm-up is guarded too");
    for (position, _, limit, waited, before, why, during) in &beside {
        assert_eq!(*limit, 1.0);
        assert_eq!(why.as_deref(), Some("never_quiet"), "iteration {position}");
        assert!(
            *waited >= 1_000_000_000,
            "iteration {position} waited {waited} ns"
        );
        assert!(before.unwrap() > 1.0, "iteration {position}: {before:?}");
        assert!(during.unwrap() > 1.0, "iteration {position}: {during:?}");
    }
    assert_consistent(&beside, 1_000_000_000);
    // Without them: each iteration waited for a quiet look and ran (the machine is shared, so
    // whether it was quiet is not asserted, only that each mark agrees with its figures).
    let calm = marks(&db, calm);
    assert_eq!(calm.len(), 3, "{calm:?}");
    assert_consistent(&calm, 60_000_000_000);
    // Unguarded runs store the pressure, and no mark.
    for id in [base, plain_cand] {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let (iterations, marked, pressures): (i64, i64, i64) = conn
            .query_row(
                "SELECT count(*), count(q.iteration_id),
                        (SELECT count(*) FROM measurements m JOIN iterations j ON m.iteration_id = j.id
                           JOIN cases d ON j.case_id = d.id
                          WHERE d.run_id = ?1 AND m.name = 'psi_cpu_some_pct')
                   FROM iterations i JOIN cases c ON i.case_id = c.id
                   LEFT JOIN iteration_quiet q ON q.iteration_id = i.id WHERE c.run_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((iterations, marked, pressures), (3, 0, 3), "run {id}");
    }

    // Without --drop-disturbed the footer says how many are in.
    let kept = json_of_success(&db, &words("compare base cand --format json"));
    let note = disturbed_note(&kept);
    assert_eq!(note["dropped"], false, "{note}");
    let hogged_entry = note["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == hogged)
        .unwrap_or_else(|| panic!("{note}"));
    assert_eq!(hogged_entry["disturbed"], 2);
    assert_eq!(hogged_entry["measured"], 2);
    let text = stdout_of_success(&db, &words("compare base cand"));
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("--drop-disturbed leaves them out"), "{text}");
    assert!(text.contains(&format!("run {hogged}: 2 of 2")), "{text}");

    // With it, the hogged run (nothing else in it) is left out whole, and the footer says so.
    let dropped = json_of_success(
        &db,
        &words("compare base cand --drop-disturbed --format json"),
    );
    let note = disturbed_note(&dropped);
    assert_eq!(note["dropped"], true, "{note}");
    let cand = &dropped["candidates"][0];
    let excluded = cand["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 1, "{cand}");
    assert_eq!(excluded[0]["id"], hogged);
    assert_eq!(excluded[0]["reason"], "all_disturbed");
    assert_eq!(cand["run_ids"], serde_json::json!([plain_cand]), "{cand}");
    let text = stdout_of_success(&db, &words("compare base cand --drop-disturbed"));
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(&format!("the whole of run {hogged}, which had no other")),
        "{text}"
    );
    // The HTML report says it too.
    let html = stdout_of_success(&db, &words("report base cand --drop-disturbed --html -"));
    // The footer's sentence, not the command line the page also shows.
    let sentence = format!("the whole of run {hogged}, which had no other");
    assert!(
        html.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&sentence),
        "the HTML report says which run it left out"
    );
}

/// The footer's note on disturbed iterations.
fn disturbed_note(doc: &Value) -> &Value {
    doc["footer"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["kind"] == "disturbed")
        .unwrap_or_else(|| panic!("no disturbed note: {}", doc["footer"]))
}
