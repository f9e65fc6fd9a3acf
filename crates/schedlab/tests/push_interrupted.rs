//! `schedlab push` interrupted by real signals while it copies a few hundred runs: SIGKILL at
//! whatever moment it lands, SIGINT and SIGTERM, which stop it between runs. Into an SQLite file
//! always and into PostgreSQL when `scripts/with-postgres` provides a server. Whatever the signal,
//! the target passes `db check`, every run in it is whole (the source's iterations and
//! measurements, case by case), and the next push copies exactly the rest, nothing twice.
// PostgreSQL is half of what this checks: a build without the `postgres` feature skips it whole.
#![cfg(feature = "postgres")]
mod common;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::*;
use schedlab_store::testing::fresh_pg_database;
use schedlab_store::{open_reader, Location, Store};

/// Runs in the source: enough that a push is still copying when the test sees its first run.
const RUNS: usize = 400;

/// A source file of `RUNS` complete runs of two iterations and a warm-up each, and the
/// calibration computed from them, made by one `calibrate` process.
fn source_store(dir: &Path) -> PathBuf {
    let source = dir.join("source.db");
    expect_success(schedlab(&source).args(words(&format!(
        "calibrate --runs {RUNS} --pause 0 --quiet fake --iterations 2 --warmup 1"
    ))));
    source
}

/// What must arrive whole of each run, by its global id: its status and, case by case, the
/// iterations and measurements stored.
type Contents = HashMap<String, (String, Vec<(usize, usize)>)>;

fn contents(store: &dyn Store) -> Contents {
    let summaries = store.list_runs(None).unwrap();
    let contents: Contents = summaries
        .iter()
        .map(|summary| {
            let uuid = store.run_provenance(summary.id).unwrap().uuid.unwrap();
            let run = store.load_run(summary.id).unwrap();
            let cases = run
                .cases
                .iter()
                .map(|case| {
                    let measurements = case.iterations.iter().map(|i| i.measurements.len());
                    (case.iterations.len(), measurements.sum())
                })
                .collect();
            (uuid, (run.status.as_str().to_string(), cases))
        })
        .collect();
    assert_eq!(contents.len(), summaries.len(), "a run is there twice");
    contents
}

/// Runs in `target`; 0 while it does not exist or has no schema yet.
fn stored_runs(target: &Location) -> usize {
    open_reader(target)
        .and_then(|store| store.list_runs(None))
        .map_or(0, |runs| runs.len())
}

/// `target` as `--db` and `--to` take it: a path or a URL.
fn location_of(target: &OsStr) -> Location {
    Location::parse(target).unwrap()
}

/// Starts `push --db SOURCE --to TARGET --format json`, sends `signal` once a run has landed in
/// the target, and checks the target afterwards and what a second push copies.
fn interrupt_push(source: &Path, source_contents: &Contents, target: &OsStr, signal: i32) {
    let location = location_of(target);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env_remove("SCHEDLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .args(words("push --format json --db"))
        .arg(source)
        .arg("--to")
        .arg(target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .start();
    let deadline = Instant::now() + Duration::from_secs(300);
    while stored_runs(&location) == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "push ended before a run was seen in the target"
        );
        assert!(
            Instant::now() < deadline,
            "no run reached the target in time"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: kill(2) on the child this test started and has not reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.output_within(Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let name = if signal == libc::SIGKILL {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{stderr}");
        "SIGKILL"
    } else {
        let name = match signal {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            _ => unreachable!(),
        };
        assert_eq!(
            out.status.code(),
            Some(128 + signal),
            "push did not stop for {name} (it may have finished first: more RUNS): {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("schedlab: push interrupted by {name} after ")),
            "{stderr}"
        );
        name
    };

    // The target: sound, and every run in it whole.
    let db = Path::new(target);
    let check = json_of_success(db, &words("db check --format json"));
    assert_eq!(check["ok"], true, "after {name}: {check}");
    let landed = contents(&*open_reader(&location).unwrap());
    assert!(
        !landed.is_empty() && landed.len() < RUNS,
        "after {name} the target has {} of {RUNS} runs: the push was not interrupted midway",
        landed.len()
    );
    for (uuid, run) in &landed {
        assert_eq!(
            Some(run),
            source_contents.get(uuid),
            "after {name}: run {uuid} differs from the source's"
        );
    }
    if signal != libc::SIGKILL {
        // What the interrupted push reported is what the target holds.
        let report = json_of(&out.stdout);
        assert_eq!(report["interrupted_by"], name);
        assert_eq!(report["copied"].as_array().unwrap().len(), landed.len());
        assert_eq!(report["calibrations_copied"], 0);
    }

    // The next push copies exactly the rest.
    let again = json_of(
        &expect_success(
            schedlab(source)
                .args(words("push --format json --to"))
                .arg(target),
        )
        .stdout,
    );
    assert_eq!(again["interrupted_by"], serde_json::Value::Null);
    assert_eq!(again["already_there"], landed.len());
    assert_eq!(
        again["copied"].as_array().unwrap().len(),
        RUNS - landed.len()
    );
    assert_eq!(again["calibrations_copied"], 1);
    assert_eq!(
        &contents(&*open_reader(&location).unwrap()),
        source_contents,
        "after {name} and a second push"
    );
}

fn source_with_contents(dir: &Path) -> (PathBuf, Contents) {
    let source = source_store(dir);
    let source_contents = contents(&*open_reader(&Location::Sqlite(source.clone())).unwrap());
    assert_eq!(source_contents.len(), RUNS);
    assert!(source_contents
        .values()
        .all(|(status, _)| status == "complete"));
    (source, source_contents)
}

#[test]
fn push_into_sqlite_interrupted_by_kill_int_and_term() {
    let dir = temp_dir();
    let (source, source_contents) = source_with_contents(dir.path());
    for (i, signal) in [libc::SIGKILL, libc::SIGINT, libc::SIGTERM]
        .into_iter()
        .enumerate()
    {
        let target = dir.path().join(format!("target-{i}.db"));
        interrupt_push(&source, &source_contents, target.as_os_str(), signal);
    }
}

#[test]
fn push_into_postgresql_interrupted_by_kill_and_int() {
    let dir = tempfile::tempdir().unwrap();
    let mut targets = Vec::new();
    for signal in [libc::SIGKILL, libc::SIGINT] {
        let Some(url) = fresh_pg_database(&format!("push_interrupted_{signal}")) else {
            return;
        };
        targets.push((url, signal));
    }
    let (source, source_contents) = source_with_contents(dir.path());
    for (url, signal) in targets {
        interrupt_push(&source, &source_contents, OsStr::new(&url), signal);
    }
}
