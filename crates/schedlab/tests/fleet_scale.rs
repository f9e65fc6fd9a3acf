//! The fleet commands on a generated fleet (`schedlab_store::generate`, what
//! `bench/fleet-history.sh` times at a million runs), at a size CI runs: `changes --all-hosts`
//! finds every planted step and nothing else, and a copy of the database taken back to V8 —
//! which readers answer from the iterations — answers `history`, `changes`, `hosts` and `runs`
//! byte for byte as the summaries do, before and after `db upgrade` fills its summaries.
mod common;

use std::collections::BTreeSet;
use std::path::Path;

use schedlab_store::generate::{generate, FleetSpec, PlantedStep};
use schedlab_store::Location;

use common::{json_of_success, stdout_of_success, temp_db, words};

/// 4 hosts × 3 cases × 60 nights, a step planted in every other series.
fn small_fleet(db: &Path) -> Vec<PlantedStep> {
    let planted = generate(
        &Location::Sqlite(db.to_path_buf()),
        &FleetSpec::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(planted.len(), 6);
    planted
}

#[test]
fn changes_across_every_host_find_the_planted_steps_and_nothing_else() {
    let (_dir, db) = temp_db();
    let planted = small_fleet(&db);
    let all = json_of_success(&db, &words("changes --all-hosts --format json"))["changes"].clone();
    let series = all.as_array().unwrap();
    assert_eq!(series.len(), 12, "one history per host and case");
    let mut found = BTreeSet::new();
    for s in series {
        for change in s["changes"].as_array().unwrap() {
            found.insert((
                s["hostname"].as_str().unwrap().to_string(),
                s["case"].as_str().unwrap().to_string(),
                change["run_id"].as_i64().unwrap(),
            ));
        }
    }
    let runs_apart = |a: i64, b: i64| (a - b).abs() / 12;
    for step in &planted {
        assert!(
            found.iter().any(|(host, case, run)| *host == step.host
                && *case == step.case
                && runs_apart(*run, step.run_id) <= 1),
            "{step:?} not found in {found:?}"
        );
    }
    assert_eq!(found.len(), planted.len(), "{found:?}");
    // One host's, as `--host` names it, is that host's part of the whole.
    let one =
        json_of_success(&db, &words("changes --host node002 --format json"))["changes"].clone();
    let from_all: Vec<&serde_json::Value> = series
        .iter()
        .filter(|s| s["hostname"] == "node002")
        .collect();
    assert_eq!(one.as_array().unwrap().iter().collect::<Vec<_>>(), from_all);
    // Without a host, a case of many hosts is refused, as ever.
    let out = common::schedlab(&db).args(["changes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A time range is a range of nights: the first 30 start before January 31st.
    let early = json_of_success(
        &db,
        &words("changes --host node000 --until 2026-01-31 --format json"),
    )["changes"]
        .clone();
    assert!(early
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["runs"].as_u64() == Some(30)));
}

/// What every fleet reader prints of `db`, one string per command.
fn answers(db: &Path) -> Vec<String> {
    let case = "fake:value=20 spread=2";
    let commands: [&[&str]; 10] = [
        &["history", case, "--host", "node001", "--format", "json"],
        &["history", case, "--host", "node001"],
        &["changes", "--host", "node002", "--format", "json"],
        &["changes", "--all-hosts", "--format", "csv"],
        &["changes", "--all-hosts", "--metric", "ops_per_sec"],
        &[
            "changes",
            "--all-hosts",
            "--include-incomplete",
            "--calibration",
            "none",
        ],
        &["hosts", "--format", "json"],
        &["runs", "--format", "json", "--limit", "40"],
        &[
            "runs",
            "--host",
            "node003",
            "--since",
            "2026-02-01",
            "--until",
            "2026-02-03",
        ],
        &[
            "runs",
            "--where",
            "cpu_model=Synthetic CPU @ 3.00GHz",
            "--limit",
            "5",
        ],
    ];
    commands
        .iter()
        .map(|args| stdout_of_success(db, args))
        .collect()
}

#[test]
fn a_v8_copy_answers_every_fleet_command_alike_before_and_after_its_upgrade() {
    let (dir, db) = temp_db();
    small_fleet(&db);
    let from_summaries = answers(&db);
    let old = dir.path().join("v8.db");
    std::fs::copy(&db, &old).unwrap();
    common::downgrade_to_v8(&old);
    let v8 = json_of_success(&old, &words("db check --format json"));
    assert_eq!(v8["database_schema_version"], 8);
    assert_eq!(answers(&old), from_summaries, "read from the iterations");
    stdout_of_success(&old, &["db", "upgrade"]);
    assert_eq!(answers(&old), from_summaries, "after the upgrade");
    let checked = json_of_success(&old, &words("db check --format json"));
    assert_eq!(checked["summaries"]["runs_compared"], 720);
    assert_eq!(checked["ok"], true);
    // Its summaries are the analysis' too.
    assert_eq!(common::summaries::assert_they_are_the_analysis(&old), 1440);
}

/// The check every test database gets can fail: a summary one ulp off is caught.
#[test]
fn the_check_of_every_test_database_catches_a_summary_one_ulp_off() {
    let (dir, db) = temp_db();
    small_fleet(&db);
    let tampered = dir.path().join("tampered.db");
    std::fs::copy(&db, &tampered).unwrap();
    let conn = rusqlite::Connection::open(&tampered).unwrap();
    let mean: f64 = conn
        .query_row(
            "SELECT log_mean FROM summaries WHERE run_id = 100 AND metric = 'usec_per_op'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE summaries SET log_mean = ?1 WHERE run_id = 100 AND metric = 'usec_per_op'",
        [f64::from_bits(mean.to_bits() + 1)],
    )
    .unwrap();
    drop(conn);
    let caught =
        std::panic::catch_unwind(|| common::summaries::assert_they_are_the_analysis(&tampered));
    assert!(caught.is_err());
    // The end of the test checks every database it leaves, and would catch this one again.
    std::fs::remove_file(&tampered).unwrap();
}
