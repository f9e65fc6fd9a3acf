//! Every JSON output is one object with an integer `schema_version` (docs/json-schema.md): each
//! command that offers `--format json` is run here on a store with runs, a calibration and a
//! second store to push to, and the walk over `-h` fails if a command offers JSON that this test
//! does not run.
mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::Value;

/// The commands below `path` (`schedlab PATH -h`'s `Commands:` list), `help` aside.
fn subcommands(path: &[&str]) -> Vec<String> {
    let help = expect_success(schedlab_without_db().args(path).arg("-h")).stdout;
    let help = String::from_utf8(help).unwrap();
    let Some(start) = help.find("Commands:\n") else {
        return Vec::new();
    };
    help[start + "Commands:\n".len()..]
        .lines()
        .take_while(|line| !line.trim().is_empty())
        // A command's line starts two columns in; wrapped help starts further in.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command line (`db check`, `runs`) whose `--format` takes `json`: the commands of
/// `schedlab -h`, and those of a command that is only a group of commands (`db`, `campaign`).
/// A workload's flags under `run` are the run's own.
fn commands_offering_json() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for top in subcommands(&[]) {
        let usage = expect_success(schedlab_without_db().args([top.as_str(), "-h"])).stdout;
        let usage = String::from_utf8(usage).unwrap();
        let paths: Vec<String> = if usage.contains(&format!("Usage: schedlab {top} <COMMAND>")) {
            subcommands(&[top.as_str()])
                .into_iter()
                .map(|sub| format!("{top} {sub}"))
                .collect()
        } else {
            vec![top]
        };
        for path in paths {
            let help = expect_success(schedlab_without_db().args(words(&path)).arg("--help"));
            let help = String::from_utf8(help.stdout).unwrap();
            let offers = help.contains("--format <FORMAT>")
                && help
                    .lines()
                    .any(|line| line.trim_start().starts_with("- json:"));
            if offers {
                found.insert(path);
            }
        }
    }
    found
}

fn assert_versioned(text: &str, what: &str) -> Value {
    let doc: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{text}"));
    let version = doc
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object:\n{text}"))
        .get("schema_version")
        .unwrap_or_else(|| panic!("{what}: no schema_version:\n{text}"));
    assert!(
        version.as_u64().is_some_and(|v| v >= 1),
        "{what}: schema_version {version}"
    );
    doc
}

#[test]
fn every_json_output_is_an_object_with_a_schema_version() {
    let (dir, db) = temp_db();
    for (label, seed) in [("a", 1), ("a", 2), ("a", 3), ("b", 4)] {
        expect_success(schedlab(&db).args(words(&format!(
            "run fake --iterations 3 --warmup 0 --seed {seed} -q --label {label}"
        ))));
    }
    let shown = show_json(&db, "a");
    let case = shown["runs"][0]["cases"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    write_file(dir.path(), "x.txt", "1\n2\n3\n4\n");
    write_file(dir.path(), "y.txt", "2\n3\n4\n5\n");
    let other = dir.path().join("other.db");
    let other = other.to_str().unwrap();

    // Each command line, and the command (as commands_offering_json names it) it covers.
    let lines: Vec<(&str, Vec<String>)> = vec![
        ("list", owned("list --format json")),
        ("env", owned("env --format json")),
        (
            "run",
            owned("run fake --iterations 2 --warmup 0 -q --format json --label c"),
        ),
        ("run", owned("run fake --dry-run --format json")),
        ("runs", owned("runs --format json")),
        ("hosts", owned("hosts --format json")),
        ("show", owned("show a --format json")),
        ("history", {
            let mut v = owned("history --format json");
            v.push(case.clone());
            v
        }),
        ("changes", owned("changes --format json")),
        ("compare", owned("compare a b --format json")),
        ("stat", owned("stat x.txt y.txt --format json")),
        ("stat", owned("stat x.txt --format json")),
        ("calibrate", owned("calibrate --from a --format json")),
        ("calibrate", owned("calibrate --list --format json")),
        ("calibrate", owned("calibrate --show 1 --format json")),
        ("db check", owned("db check --format json")),
        ("push", owned(&format!("push --to {other} --format json"))),
    ];
    let mut covered = BTreeSet::new();
    for (command, argv) in &lines {
        let out = expect_success(schedlab(&db).current_dir(dir.path()).args(argv));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_versioned(&text, &argv.join(" "));
        covered.insert(command.to_string());
    }
    let offered = commands_offering_json();
    assert!(offered.len() >= 13, "{offered:?}");
    let untested: Vec<&String> = offered.difference(&covered).collect();
    assert!(
        untested.is_empty(),
        "these commands offer --format json that this test does not run: {untested:?}"
    );
}

fn owned(line: &str) -> Vec<String> {
    words(line).iter().map(|w| w.to_string()).collect()
}

/// The lists that used to be bare arrays are under keys of their own.
#[test]
fn lists_are_under_keys_of_their_own() {
    let (_dir, db) = temp_db();
    expect_success(schedlab(&db).args(words("run fake --iterations 2 --warmup 0 -q --label a")));
    let runs = json_of_success(&db, &words("runs --format json"));
    assert_eq!(runs["runs"][0]["label"], "a");
    let hosts = json_of_success(&db, &words("hosts --format json"));
    assert_eq!(hosts["hosts"][0]["runs"], 1);
    let list =
        json_of(&expect_success(schedlab_without_db().args(words("list --format json"))).stdout);
    let workloads: Vec<&str> = list["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(
        workloads.contains(&"pipe") && workloads.contains(&"fake"),
        "{list}"
    );
    assert!(list["suites"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "quick" && s["cases"].as_u64().unwrap() > 0));
}
