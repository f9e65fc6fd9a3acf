//! A reader may leave before schedlab is done writing: `| head` closes the pipe, a dropped ssh
//! session takes the terminal. Every command that prints is run here with stdout and stderr the
//! write ends of pipes whose read ends are closed. None may panic (exit 101, as `println!` does
//! on a closed pipe): each exits as it would with a reader, having done its work (runs stored, a
//! campaign planned, files written).
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

mod common;
use common::*;

/// The write end of a pipe nobody reads any more.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

fn schedlab_without_readers(db: &Path, args: &[&str]) -> ExitStatus {
    Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env("SCHEDLAB_DB", db)
        .env_remove("XDG_DATA_HOME")
        .args(args)
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .start()
        .output_within(COMMAND_DEADLINE)
        .status
}

/// Runs `schedlab ARGS` without readers and checks its exit code; on a mismatch, says what the
/// command prints on stderr when stdout alone has no reader.
fn expect_without_readers(db: &Path, args: &[&str], code: i32) {
    let status = schedlab_without_readers(db, args);
    if status.code() != Some(code) {
        let rerun = Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
            .env("SCHEDLAB_DB", db)
            .env_remove("XDG_DATA_HOME")
            .args(args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .start()
            .output_within(COMMAND_DEADLINE);
        panic!(
            "schedlab {}: {status} without readers, not exit {code}; stderr when run again: {}",
            args.join(" "),
            String::from_utf8_lossy(&rerun.stderr)
        );
    }
}

#[test]
fn every_command_survives_readers_that_left() {
    let (dir, db) = temp_db();
    let quick = "--iterations 3 --warmup 0 fake --sleep-ms 1";
    for label in ["a", "b"] {
        expect_without_readers(&db, &words(&format!("run --label {label} {quick}")), 0);
    }
    // More CSV than its writer buffers, so that a write fails inside the CSV writer.
    expect_without_readers(
        &db,
        &words("run --label many --iterations 200 --warmup 0 fake"),
        0,
    );
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 3, "{runs}");
    assert!(runs
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "complete"));

    let numbers = dir.path().join("numbers.txt");
    std::fs::write(&numbers, "1.5\n1.6\n1.4\n").unwrap();
    let numbers = numbers.to_str().unwrap();
    let html = dir.path().join("report.html");
    let html = html.to_str().unwrap();
    let copy = dir.path().join("copy.db");
    let copy = copy.to_str().unwrap();
    let man = dir.path().join("man");
    let man = man.to_str().unwrap();
    let lines = [
        "list".to_string(),
        "runs".to_string(),
        "runs --format json".to_string(),
        "hosts".to_string(),
        "show a".to_string(),
        "show a --format json".to_string(),
        "show many --format csv".to_string(),
        "changes".to_string(),
        "changes --format csv".to_string(),
        "compare a b".to_string(),
        "compare a b --format json".to_string(),
        "compare a b --style ministat".to_string(),
        "compare a b --format csv".to_string(),
        format!("report a b --html {html}"),
        format!("stat {numbers} {numbers}"),
        format!("stat --format csv {numbers} {numbers}"),
        format!("import --tool plain --label imported {numbers}"),
        "env".to_string(),
        "db check".to_string(),
        "db upgrade".to_string(),
        format!("push --to {copy}"),
        format!("ab --a true --b true --rounds 1 --label pair {quick}"),
        format!("calibrate --runs 3 --pause 0 {quick}"),
        "calibrate --list".to_string(),
        format!("ab --a true --b true --until-decided --max-rounds 2 --label decided {quick}"),
        format!("campaign start --a-kernel x --b-kernel y k {quick}"),
        "campaign status k".to_string(),
        "completions bash".to_string(),
        "man".to_string(),
        format!("man --dir {man}"),
        "--help".to_string(),
        "run --help".to_string(),
        "--version".to_string(),
    ];
    for line in &lines {
        expect_without_readers(&db, &words(line), 0);
    }
    let history = ["history", "fake:value=100 spread=1"];
    expect_without_readers(&db, &history, 0);
    expect_without_readers(&db, &[&history[..], &["--format", "csv"]].concat(), 0);

    // What the commands were for was done all the same.
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    let labels: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["label"].as_str())
        .collect();
    for label in ["imported", "pair-a", "pair-b", "decided-a", "decided-b"] {
        assert!(labels.contains(&label), "{label} missing from {labels:?}");
    }
    assert!(Path::new(html).exists() && Path::new(man).join("schedlab.1").exists());
    let calibrations = stdout_of_success(&db, &words("calibrate --list"));
    assert!(calibrations.lines().count() >= 2, "{calibrations}");
    let campaign = stdout_of_success(&db, &words("campaign status k"));
    assert!(campaign.contains("0 of 8 boots done"), "{campaign}");
    let copied = stdout_of_success(Path::new(copy), &words("runs"));
    assert!(copied.contains("imported"), "{copied}");

    // Bad input still says so in its exit code.
    expect_without_readers(&db, &words("compare a nosuchlabel"), 2);
}

/// A full disk is not a reader that left: help and version written where nothing fits fail as
/// every command's output does, exit 1 with one line, where clap's own printing said nothing.
#[test]
fn help_and_version_on_a_full_disk_fail_as_any_output() {
    let (_dir, db) = temp_db();
    for line in [
        "--help",
        "-h",
        "help",
        "help run",
        "-V",
        "db -V",
        "run pipe --help",
        "list",
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
            .env("SCHEDLAB_DB", &db)
            .env_remove("XDG_DATA_HOME")
            .args(words(line))
            .stdout(full)
            .stderr(Stdio::piped())
            .start()
            .output_within(COMMAND_DEADLINE);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{line}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{line}: {stderr}");
        assert!(
            stderr.starts_with("schedlab: cannot write output: No space left on device"),
            "{line}: {stderr}"
        );
    }
}
