//! End to end on a temporary database, with a real workload (threads making getpid calls): two
//! runs of the same case are not judged without a calibration; after `schedlab calibrate` of
//! that case they are judged and not marked; a run made beside two CPU hogs is marked. Also the
//! calibrate command's own surface: --list, --show, --from, bad input.
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::*;

/// A small real case: two threads of getpid calls, quick enough for tests.
const CASE: &str = "syscall --threads 2 --calls 100000 --kind getpid";

fn run(db: &Path, label: &str) {
    schedlab(db)
        .args(words(&format!(
            "run -q --iterations 5 --label {label} {CASE}"
        )))
        .assert()
        .success();
}

fn compare_json(db: &Path, base: &str, cand: &str) -> Value {
    json_of_success(db, &["compare", base, cand, "--format", "json"])
}

fn calibrate(db: &Path) -> Value {
    let line = format!("calibrate --runs 6 --pause 0 -q --iterations 5 --format json {CASE}");
    json_of_success(db, &words(&line))
}

/// The tests that measure hold this, so one's runs are not another's noise: the verdicts they
/// check are about the machine, and the other test's threads would be part of it.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn measuring() -> std::sync::MutexGuard<'static, ()> {
    MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn rows(doc: &Value) -> &Vec<Value> {
    doc["rows"].as_array().unwrap()
}

/// Busy loops pinned two per CPU (the case's threads get about a third of each CPU, a change no
/// noise on a loaded CI machine hides), killed when dropped: each is a `Running`, so those started
/// before a failed start are killed too.
struct Hogs {
    _running: Vec<Running>,
}

impl Hogs {
    fn start() -> Hogs {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs {
            _running: (0..2 * cpus)
                .map(|i| i % cpus)
                .map(|cpu| {
                    Command::new("taskset")
                        .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                        .start()
                })
                .collect(),
        }
    }
}

#[test]
fn two_runs_are_not_judged_then_judged_after_calibrate_and_a_hog_is_marked() {
    let _quiet = measuring();
    let (_dir, db) = temp_db();
    run(&db, "a");
    run(&db, "b");
    let doc = compare_json(&db, "a", "b");
    assert_eq!(doc["schema_version"], 3);
    for row in rows(&doc) {
        assert_eq!(row["verdict"], "not_judged", "{row}");
        assert!(row["p_value"].is_null() && row["q_value"].is_null());
        assert!(row["change_pct"].is_number(), "the change is still shown");
    }
    assert_eq!(doc["footer"]["comparisons"], 0);
    assert_eq!(doc["footer"]["tested_on"], serde_json::Value::Null);
    let text = stdout_of_success(&db, &words("compare a b"));
    assert!(text.contains("schedlab calibrate"), "{text}");

    let report = calibrate(&db);
    let calibration_id = report["id"].as_i64().unwrap();
    assert_eq!(report["runs"], 6);
    assert!(!report["rows"].as_array().unwrap().is_empty());

    // Even a calibration that describes the machine perfectly marks an A/A at the rate q = 0.05
    // promises; at q = 0.001 a mark here would mean the procedure, not chance, is wrong.
    let doc = json_of_success(&db, &words("compare a b --fdr 0.001 --format json"));
    assert_eq!(doc["calibrations"][0]["id"], calibration_id);
    for row in rows(&doc) {
        if row.get("restates").is_some() {
            // ops_per_sec: usec_per_op's effect, tested once.
            assert!(row["p_value"].is_null(), "{row}");
            continue;
        }
        assert!(row["p_value"].is_number(), "judged after calibrate: {row}");
        assert_eq!(row["variance"]["source"], "calibration");
        assert_ne!(row["verdict"], "regression", "{row}");
        assert_ne!(row["verdict"], "improvement", "{row}");
    }
    assert!(
        doc["footer"]["notes"].as_array().unwrap().contains(
            &serde_json::json!({ "kind": "false_mark_bound", "assumes_calibrations": true })
        ),
        "{}",
        doc["footer"]
    );
    // The footer as one line per sentence: the text wraps them at 80 columns.
    let text = stdout_of_success(&db, &words("compare a b --fdr 0.001")).replace("\n  ", " ");
    assert!(
        text.contains(&format!("assuming calibration {calibration_id} (")),
        "{text}"
    );

    {
        let _hogs = Hogs::start();
        run(&db, "hogged");
    }
    let doc = compare_json(&db, "a", "hogged");
    let marked: Vec<&Value> = rows(&doc)
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .collect();
    assert!(
        !marked.is_empty(),
        "a run beside CPU hogs must be marked: {}",
        serde_json::to_string_pretty(rows(&doc)).unwrap()
    );
    // Ignoring the calibration makes the same pair unjudgeable again.
    let doc = json_of_success(
        &db,
        &words("compare a hogged --calibration none --format json"),
    );
    assert!(rows(&doc).iter().all(|r| r["verdict"] == "not_judged"));
}

#[test]
fn calibrations_are_listed_shown_and_computed_from_stored_runs() {
    let _quiet = measuring();
    let (_dir, db) = temp_db();
    for _ in 0..3 {
        schedlab(&db)
            .args(words(&format!(
                "run -q fake --label cal --iterations 4 --seed {}",
                rand_seed()
            )))
            .assert()
            .success();
    }
    let text = stdout_of_success(&db, &words("calibrate --from cal"));
    assert!(text.starts_with("calibration 1 "), "{text}");
    assert!(text.contains("usec_per_op"), "{text}");
    let list = stdout_of_success(&db, &words("calibrate --list"));
    assert!(list.contains("cal") && list.lines().count() == 2, "{list}");
    let doc = json_of_success(&db, &words("calibrate --show 1 --format json"));
    assert_eq!(doc["id"], 1);
    assert_eq!(doc["runs"], 3);
}

/// Distinct seeds per run, so the fake runs differ as real ones do.
fn rand_seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(11);
    NEXT.fetch_add(7, Ordering::Relaxed)
}

#[test]
fn calibrate_refuses_bad_input() {
    let (_dir, db) = temp_db();
    assert_each_bad_input(
        &db,
        &[
            "calibrate --runs 2 fake",
            "calibrate --runs 5000 fake",
            "calibrate --pause -1 fake",
            "calibrate --pause nan fake",
            "calibrate --no-store fake",
            "calibrate --show 7",
            "calibrate --from nobody",
            "calibrate",
            "compare a b --calibration latest",
            "compare a b --calibration -3",
        ],
    );
}
