//! `schedlab import` and `schedlab run external` end to end: captured outputs of the real tools
//! imported and compared, bad files refused with nothing stored, the external workload driven by a
//! script that prints a captured output (deterministic), a real tool where one is installed, loud
//! failures, and an interrupted tool that leaves nothing behind.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The argv of a command line whose words `@NAME` stand for the fixture NAME's path, which is
/// passed whole (the checkout's path may hold a space).
fn with_fixtures(line: &str) -> Vec<String> {
    line.split_ascii_whitespace()
        .map(|word| {
            word.strip_prefix('@')
                .map_or(word.to_string(), import_fixture)
        })
        .collect()
}

fn case_named<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["runs"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name} in {run}"))
}

#[test]
fn imported_logs_compare_like_runs() {
    let (_d, db) = temp_db();
    let out = stdout_of_success(
        &db,
        &with_fixtures("import --tool perf-bench --label old --host box7 @perf-pipe-repeated.txt"),
    );
    assert!(
        out.contains("imported 3 perf-bench results from 1 file"),
        "{out}"
    );
    assert!(
        out.contains("perf-bench:pipe process loops=20000: 3 iterations"),
        "{out}"
    );
    stdout_of_success(
        &db,
        &with_fixtures(
            "import --tool perf-bench --label new --host box7 \
             @perf-pipe.txt @perf-pipe-threads.txt",
        ),
    );
    let old = show_json(&db, "old");
    let case = case_named(&old, "perf-bench:pipe process loops=20000");
    assert_eq!(case["measured_iterations"], 3);
    let usec: Vec<f64> = metric(case, "usec_per_op")["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(usec, [14.6682, 14.6924, 9.0123]);
    // The fingerprint knows the host it was told and nothing else.
    let fp = &old["runs"][0]["fingerprint"];
    assert_eq!(fp["hostname"], "box7");
    assert_eq!(fp["kernel_release"], "");
    assert_eq!(fp["imported"]["tool"], "perf-bench");
    assert_eq!(fp["imported"]["tool_version"], serde_json::Value::Null);
    assert_eq!(fp["imported"]["known"]["hostname"], "--host");
    assert!(fp["imported"]["known"].get("cpu_model").is_none());

    let text = stdout_of_success(&db, &words("compare old new"))
        // The footer's sentences whole: the text wraps them at 80 columns.
        .replace("\n  ", " ");
    assert!(text.contains("usec_per_op"), "{text}");
    assert!(
        text.contains("unmatched: perf-bench:pipe threads"),
        "{text}"
    );
    // Imports record no boot: the footer does not claim they shared one.
    assert!(
        text.contains("over its iterations; imported runs, whose boots are not recorded)"),
        "{text}"
    );
    let json = json_of_success(&db, &words("compare old new --format json"));
    assert_eq!(json["rows"].as_array().unwrap().len(), 3, "{json}");
    let shown = stdout_of_success(&db, &words("show new"));
    assert!(
        shown.contains("imported: perf-bench (version unknown)"),
        "{shown}"
    );
    assert!(
        shown.contains("kernel unknown · machine unknown"),
        "{shown}"
    );
}

#[test]
fn a_file_that_does_not_parse_stores_nothing() {
    let (_d, db) = temp_db();
    let err = assert_bad_input(
        &db,
        &with_fixtures("import --tool perf-bench @perf-pipe.txt @malformed-perf-stray-line.txt"),
    );
    assert!(err.contains("malformed-perf-stray-line.txt:6:"), "{err}");
    assert!(!db.exists(), "the database was not even created");
    for (line, says) in [
        ("import --tool hackbench /nonexistent.log", "cannot read"),
        (
            "import --tool schbench @hackbench.txt",
            "not schbench output",
        ),
        (
            "import --tool hackbench --metric x_usec @hackbench.txt",
            "for --tool plain",
        ),
        (
            "import --tool schbench --kernel 6.1.0 @schbench.json",
            "contradicts",
        ),
        (
            "import --tool perf-bench --case one @perf-pipe.txt @perf-messaging.txt",
            "2 kinds",
        ),
        ("import --tool plain @malformed-plain.txt", ":4:"),
    ] {
        let full = with_fixtures(line);
        let err = assert_bad_input(&db, &full);
        assert!(err.contains(says), "{full:?}: {err}");
    }
    assert!(!db.exists());
}

#[test]
fn schbench_json_names_its_machine() {
    let (_d, db) = temp_db();
    stdout_of_success(
        &db,
        &with_fixtures("import --tool schbench --label s @schbench.json"),
    );
    let run = show_json(&db, "s");
    let fp = &run["runs"][0]["fingerprint"];
    assert_eq!(fp["kernel_release"], "6.18.44-fc-v669");
    assert_eq!(fp["hostname"], "vm");
    let known = &fp["imported"]["known"];
    assert!(known["kernel_release"]
        .as_str()
        .unwrap()
        .ends_with("schbench.json"));
    let case = case_named(&run, "schbench:request");
    assert_eq!(first_value(case, "wakeup_p99_usec"), 15984.0);
    assert_eq!(first_value(case, "requests_p50_per_sec"), 95.0);
}

/// Logs of schbench from before its 2023 rework (seed 000's format) import under the cases new
/// logs of the same mode have, so the two compare on the quantities both print; the percentiles
/// only the old one printed are metrics of their own, typed as quantiles.
#[test]
fn schbench_logs_from_before_2023_compare_with_new_ones() {
    let (_d, db) = temp_db();
    let out = stdout_of_success(
        &db,
        &with_fixtures(
            "import --tool schbench --label old @schbench-2021-pipe.txt @schbench-2022-pipe.txt \
             @schbench-2022-intervals.txt",
        ),
    );
    assert!(
        out.contains("imported 3 schbench results from 3 files"),
        "{out}"
    );
    assert!(out.contains("schbench:pipe: 2 iterations"), "{out}");
    assert!(out.contains("schbench:request: 1 iteration"), "{out}");
    stdout_of_success(
        &db,
        &with_fixtures("import --tool schbench --label new @schbench-pipe.txt @schbench.txt"),
    );

    let old = show_json(&db, "old");
    let pipe = case_named(&old, "schbench:pipe");
    let values = |name| metric(pipe, name)["values"].clone();
    assert_eq!(values("wakeup_p99_usec"), serde_json::json!([20.0, 41.0]));
    assert_eq!(
        values("worker_ops_per_sec"),
        serde_json::json!([67696.48, 47779.21])
    );
    let p99_5 = metric(pipe, "wakeup_p99_5_usec");
    assert_eq!(p99_5["values"], serde_json::json!([22.0, 45.0]));
    assert_eq!(p99_5["shape"], "quantile");
    assert_eq!(p99_5["quantile_p"], 99.5);
    assert_eq!(p99_5["distribution"], "wakeup");
    let request = case_named(&old, "schbench:request");
    // The interval reports before the last table are progress.
    assert_eq!(first_value(request, "wakeup_samples_count"), 100.0);
    assert_eq!(first_value(request, "wakeup_p95_usec"), 19552.0);

    let compared = json_of_success(&db, &words("compare old new --format json"));
    for case in ["schbench:pipe", "schbench:request"] {
        let rows: Vec<&str> = compared["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["case"] == case)
            .map(|row| row["metric"].as_str().unwrap())
            .collect();
        for shared in ["wakeup_p50_usec", "wakeup_p99_usec", "wakeup_max_usec"] {
            assert!(rows.contains(&shared), "{case}: {rows:?}");
        }
    }
    let unmatched = compared["unmatched"].as_array().unwrap();
    assert!(
        unmatched.contains(&serde_json::json!({
            "case": "schbench:pipe",
            "metric": "wakeup_p75_usec",
            "reason": { "kind": "not_in", "side": "new" }
        })),
        "{unmatched:?}"
    );

    let err = assert_bad_input(
        &db,
        &with_fixtures("import --tool schbench @malformed-schbench-2022-truncated.txt"),
    );
    assert!(
        err.contains("malformed-schbench-2022-truncated.txt:10: the schbench table"),
        "{err}"
    );
}

/// Runs stored while the RPS metrics were named `rps_*` keep one history and compare with runs
/// stored since, and the old names still select them.
#[test]
fn metrics_stored_under_their_former_names_meet_their_current_names() {
    let (_d, db) = temp_db();
    for label in ["old", "new"] {
        stdout_of_success(
            &db,
            &with_fixtures(&format!(
                "import --tool schbench --label {label} @schbench.json"
            )),
        );
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    for table in ["measurements", "metrics"] {
        let (id, key) = if table == "metrics" {
            ("case_id", "SELECT c.id FROM cases c")
        } else {
            (
                "iteration_id",
                "SELECT i.id FROM iterations i JOIN cases c ON i.case_id = c.id",
            )
        };
        let renamed = conn
            .execute(
                &format!(
                    "UPDATE {table} SET name = 'rps_p50' WHERE name = 'requests_p50_per_sec' \
                     AND {id} IN ({key} JOIN runs r ON c.run_id = r.id WHERE r.label = 'old')"
                ),
                [],
            )
            .unwrap();
        assert_eq!(renamed, 1, "{table}");
    }
    drop(conn);
    let old = show_json(&db, "old");
    let case = case_named(&old, "schbench:request");
    assert_eq!(first_value(case, "requests_p50_per_sec"), 95.0);
    assert!(!has_metric(case, "rps_p50"), "{case}");

    for name in ["rps_p50", "requests_p50_per_sec"] {
        let json = json_of_success(
            &db,
            &words(&format!("compare old new --metric {name} --format json")),
        );
        let rows = json["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{json}");
        assert_eq!(rows[0]["metric"], "requests_p50_per_sec", "{json}");
        assert_eq!(rows[0]["ratio"], 1.0, "{json}");
        let history = stdout_of_success(
            &db,
            &words(&format!(
                "history schbench:request --metric {name} --format csv"
            )),
        );
        assert_eq!(
            history.lines().count(),
            3,
            "a header and both runs:\n{history}"
        );
    }
}

/// A stand-in for a tool: prints a captured output to the stream the tool uses.
fn printing(dir: &Path, fixture_name: &str, to_stderr: bool) -> PathBuf {
    let redirect = if to_stderr { " >&2" } else { "" };
    let script = format!(
        "#!/bin/sh\ncat '{}'{redirect}\n",
        import_fixture(fixture_name)
    );
    let path = write_file(dir, &format!("{fixture_name}.sh"), script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn run_external_stores_what_the_tool_printed_and_compares_with_an_import() {
    let (dir, db) = temp_db();
    let tool = printing(dir.path(), "schbench.txt", true);
    let case = "schbench:request";
    let out = expect_success(schedlab(&db).args(words(&format!(
        "run external --parser schbench --case {case} --label ran --iterations 3 --warmup 1 -q \
         -- {} -m 1",
        tool.to_str().unwrap()
    ))));
    assert!(out.status.success());
    let run = show_json(&db, "ran");
    let stored = case_named(&run, case);
    assert_eq!(stored["measured_iterations"], 3);
    assert_eq!(stored["warmup_iterations"], 1);
    assert_eq!(first_value(stored, "wakeup_p99_usec"), 16208.0);
    assert_eq!(first_value(stored, "requests_avg_per_sec"), 49.4);
    // The runner measured around the tool, as around any workload.
    assert!(has_metric(stored, "sys_cpu_sec"), "{stored}");
    assert_eq!(
        run["runs"][0]["fingerprint"]["imported"],
        serde_json::Value::Null
    );

    stdout_of_success(
        &db,
        &with_fixtures(
            "import --tool schbench --label logs @schbench.txt @schbench-intervals.txt \
             --this-machine",
        ),
    );
    let json = json_of_success(&db, &words("compare logs ran --format json"));
    let rows = json["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r.to_string().contains("wakeup_p99_usec")),
        "{json}"
    );
}

#[test]
fn run_external_fails_loudly() {
    let (dir, db) = temp_db();
    let script = write_file(
        dir.path(),
        "bad.sh",
        "#!/bin/sh\necho 'Time: 1.0'\nexit 4\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = schedlab(&db)
        .args(words("run external --parser hackbench -q --"))
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exited with code 4"), "{err}");
    let err = assert_bad_input(
        &db,
        &words("run external --parser hackbench -- /nonexistent/hackbench"),
    );
    assert!(err.contains("no such executable file"), "{err}");
    // A file that is there but cannot be run is not said to be missing.
    for (program, says) in [
        (
            "/etc/passwd",
            "it is not executable (no execute permission)",
        ),
        ("/etc", "it is a directory"),
    ] {
        let err = assert_bad_input(
            &db,
            &["run", "external", "--parser", "hackbench", "--", program],
        );
        assert!(err.contains(says), "{program}: {err}");
    }
    let err = assert_bad_input(&db, &words("run external -- /bin/true"));
    assert!(err.contains("--parser"), "{err}");
    // Two results an iteration: refused before anything runs, not after the first iteration.
    let err = assert_bad_input(
        &db,
        &words("run external --parser perf-bench -- /bin/true bench sched all"),
    );
    assert!(
        err.contains("`perf bench sched all` prints two results"),
        "{err}"
    );
}

/// A real tool where one is installed (`.ci/run` installs rt-tests' hackbench and sets
/// SCHEDLAB_REQUIRE_TOOLS, so CI cannot skip it).
#[test]
fn run_external_with_a_real_hackbench() {
    let Some(hackbench) = ["/usr/bin/hackbench", "/usr/local/bin/hackbench"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(
            std::env::var_os("SCHEDLAB_REQUIRE_TOOLS").is_none(),
            "hackbench is required (SCHEDLAB_REQUIRE_TOOLS) but not installed"
        );
        eprintln!("hackbench is not installed: skipped");
        return;
    };
    let (_d, db) = temp_db();
    expect_success(schedlab(&db).args(words(&format!(
        "run external --parser hackbench --label real --iterations 2 --warmup 0 -q \
         -- {hackbench} -g 1 -l 20"
    ))));
    let run = show_json(&db, "real");
    let case = case_named(&run, "external:hackbench hackbench -g 1 -l 20");
    assert!(first_value(case, "time_sec") > 0.0);
    assert!(has_metric(case, "voluntary_csw_count"));
}

#[test]
fn an_interrupted_tool_leaves_nothing_behind() {
    let (dir, db) = temp_db();
    let state = dir.path().join("ran-once");
    // The first iteration prints a result; the second starts a grandchild that would run
    // forever (its command line carries the database path, where assert_no_strays looks).
    let script = write_file(
        dir.path(),
        "tool.sh",
        "if [ -e \"$1\" ]; then sh -c 'while :; do sleep 0.1; done' \"$2\" & wait; \
         else : > \"$1\"; echo 'Time: 1.5'; fi\n",
    );
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env_remove("SCHEDLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .args(words(
            "run external --parser hackbench --warmup 0 --iterations 3 -q --db",
        ))
        .arg(&db)
        .args(words("-- /bin/sh"))
        .arg(&script)
        .arg(&state)
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .start();
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    let marker = db.to_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Wait for the grandchild (its `sh -c` loop names the database as $0).
    while processes_mentioning(marker).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the tool's second iteration did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    send_signal(&child, libc::SIGTERM);
    let (code, stderr) = exit_code_and_stderr(child);
    assert_eq!(code, Some(143), "{stderr}");
    assert_no_strays(&db);
    assert_interrupted_in_a_sound_database(&db);
}

/// The tool's output piped in, as `hackbench … | schedlab import --tool hackbench` and with `-`
/// named, is stored as a file's would be, its origin named `<stdin>`; `-` twice is refused.
#[test]
fn output_piped_in_is_imported_as_a_file_is() {
    let (_d, db) = temp_db();
    let text = std::fs::read(import_fixture("hackbench-repeated.txt")).unwrap();
    for (label, file) in [("piped", None), ("dash", Some("-"))] {
        let out = expect_success(
            schedlab(&db)
                .args(["import", "--tool", "hackbench", "--label", label])
                .args(file)
                .write_stdin(text.clone()),
        );
        let out = String::from_utf8(out.stdout).unwrap();
        assert!(out.contains("results from 1 file as run"), "{out}");
        let shown = json_of_success(&db, &["show", label, "--format", "json"]);
        assert_eq!(
            shown["runs"][0]["fingerprint"]["imported"]["files"],
            serde_json::json!(["<stdin>"]),
            "{shown}"
        );
    }
    stdout_of_success(
        &db,
        &with_fixtures("import --tool hackbench --label file @hackbench-repeated.txt"),
    );
    for piped in ["piped", "dash"] {
        let compared = json_of_success(&db, &["compare", "file", piped, "--format", "json"]);
        let rows = compared["rows"].as_array().unwrap();
        assert!(
            !rows.is_empty() && rows.iter().all(|r| r["change_pct"] == 0.0),
            "{compared}"
        );
    }
    let stderr = assert_bad_input(&db, &words("import --tool plain - -"));
    assert!(stderr.contains("can be read once"), "{stderr}");
}

/// A log of separate invocations imported with `--run-per-result` is a run per result: `compare`
/// then has a unit per invocation to judge on, where the log as one run has one unit per side.
#[test]
fn a_run_per_result_makes_each_invocation_a_unit_of_compare() {
    let (_dir, db) = temp_db();
    let hackbench = import_fixture("hackbench-repeated.txt");
    for (label, how) in [("one", None), ("each", Some("--run-per-result"))] {
        let mut args = vec![
            "import",
            "--tool",
            "hackbench",
            "--label",
            label,
            &hackbench,
        ];
        args.extend(how);
        let out = stdout_of_success(&db, &args);
        match how {
            None => assert!(out.contains("as run 1 (label one)"), "{out}"),
            Some(_) => assert!(out.contains("as runs 2–4 (label each)"), "{out}"),
        }
    }
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    let iterations: Vec<u64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["measured_iterations"].as_u64().unwrap())
        .collect();
    assert_eq!(iterations, [1, 1, 1, 3], "{runs:#}");

    let pipe = import_fixture("perf-pipe-repeated.txt");
    for label in ["a", "b"] {
        let args = [
            "import",
            "--tool",
            "perf-bench",
            "--run-per-result",
            "--label",
            label,
            &pipe,
        ];
        stdout_of_success(&db, &args);
    }
    let compared = json_of_success(&db, &words("compare a b --format json"));
    let row = find_where(&compared["rows"], "metric", "usec_per_op");
    assert_eq!(row["design"], "runs", "{row:#}");
    assert_eq!(row["base_side"]["n"], 3, "{row:#}");
    assert!(row["p_value"].is_number(), "judged: {row:#}");
}
