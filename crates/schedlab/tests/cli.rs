//! End-to-end tests of the schedlab binary on temporary databases: the run → store → show pipeline
//! with the fake workload, real short pipe and messaging runs, bad input, failure and interruption.
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

mod common;
use common::*;

#[test]
fn list_names_workloads_and_suites() {
    assert_list_names(&["pipe", "messaging", "hackbench", "quick"]);
}

#[test]
fn fake_run_is_stored_and_shown_identically() {
    let (_d, db) = temp_db();
    let run = |label: &str| {
        json_of_success(
            &db,
            &words(&format!(
                "run fake --seed 42 --iterations 4 --warmup 1 --label {label} --format json"
            )),
        )
    };
    let first = run("aa");
    let second = run("aa");
    let values = |doc: &Value| metric(&doc["runs"][0]["cases"][0], "usec_per_op")["values"].clone();
    // Deterministic: the same seed gives the same samples in every run.
    assert_eq!(values(&first), values(&second));
    assert_eq!(values(&first).as_array().unwrap().len(), 4);
    assert_eq!(first["schema_version"], 2);
    assert_eq!(first["runs"][0]["status"], "complete");

    assert_eq!(show_json(&db, "1")["runs"][0], first["runs"][0]);

    // A label names every run that carries it.
    let by_label = show_json(&db, "aa");
    assert_eq!(by_label["runs"].as_array().unwrap().len(), 2);

    assert_stdout_contains(schedlab(&db).arg("runs"), &["aa", "complete"]);
}

#[test]
fn text_summary_has_median_min_max_and_spread() {
    let (_d, db) = temp_db();
    assert_stdout_contains(
        schedlab(&db).args(words("run fake --iterations 3")),
        &["median", "std%", "usec_per_op"],
    );
}

#[test]
fn pipe_run_verifies_and_reports_secondary_metrics() {
    let (_d, db) = temp_db();
    let doc = json_of_success(
        &db,
        &words("run pipe --loops 5000 --iterations 2 --format json"),
    );
    let case = &doc["runs"][0]["cases"][0];
    assert_eq!(metric(case, "usec_per_op")["better"], "lower");
    assert_eq!(metric(case, "ops_per_sec")["better"], "higher");
    for name in [
        "wall_time_sec",
        "user_cpu_sec",
        "sys_cpu_sec",
        "voluntary_csw_count",
    ] {
        let m = metric(case, name);
        assert_eq!(m["role"], "secondary");
        assert_eq!(m["values"].as_array().unwrap().len(), 2);
    }
    assert!(first_value(case, "voluntary_csw_count") > 0.0);
}

#[test]
fn hackbench_alias_and_threads_pipe_mode() {
    let (_d, db) = temp_db();
    assert_stdout_contains(
        schedlab(&db).args(words("run hackbench -g 2 -f 5 -l 20 -p -T --iterations 1")),
        &["messaging:threads-pipe fds=5 groups=2"],
    );
}

/// hackbench's big configurations: 8 × 45 fds (720 tasks) and 40 × 20 fds (1,600 tasks), as
/// processes and as threads; every receiver must get every message.
#[test]
fn large_task_counts_work() {
    let (_d, db) = temp_db();
    for (groups, fds) in [("8", "45"), ("40", "20")] {
        for mode in [None, Some("--threads")] {
            let mut cmd = schedlab(&db);
            cmd.args(words(&format!(
                "run messaging --groups {groups} --fds {fds} --loops 2 \
                 --iterations 1 --warmup 0 --no-store"
            )));
            if let Some(flag) = mode {
                cmd.arg(flag);
            }
            expect_success(&mut cmd);
        }
    }
}

#[test]
fn no_store_leaves_no_database() {
    let (_d, db) = temp_db();
    schedlab(&db)
        .args(words("run fake --iterations 2 --no-store"))
        .assert()
        .success();
    assert!(!db.exists());
}

/// Every bad input gets one line on stderr, exit code 2, and never a panic.
#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let (dir, db) = temp_db();
    let not_a_db = write_file(
        dir.path(),
        "notes.txt",
        "shopping list: eggs, flour, and a scheduler that never regresses\n",
    );
    let run_on_notes = format!("run fake --db {}", not_a_db.to_str().unwrap());
    let lines = [
        "run nosuchworkload",
        "run pipe --bogus-flag",
        "run pipe --loops 0",
        "run pipe --loops -5",
        "run pipe --cpus 0",
        "run pipe --cpus 0,99999",
        "run messaging --groups 0",
        "run messaging --datasize 1000000000",
        "run messaging --datasize 4k",
        "run semaphore --items 8x00",
        "run semaphore --items 800__000",
        "run semaphore --items 99999999999G",
        "run messaging --groups 10000 --fds 1000",
        "run contention --testcase fork",
        "run contention --tasks 0",
        "run contention --tasks 2y",
        "run contention --tasks 0x",
        "run contention --tasks -1x",
        "run messaging --groups 1e3%",
        "run contention --testcase getppid --map-only",
        "run contention --testcase pipe-loopback --file-per-task",
        "run fake --iterations 0",
        "run fake --label 123",
        "run",
        "run --suite nosuchsuite",
        "run --suite quick pipe",
        "run fake --db /proc/no-such-dir/results.db",
        &run_on_notes,
        "show 424242",
        "show no-such-label",
    ];
    // Make the database exist so `show` reaches the lookup.
    schedlab(&db)
        .args(words("run fake --iterations 1"))
        .assert()
        .success();
    assert_each_bad_input(&db, &lines);
}

/// A command line that stops before its command gets one line naming the commands clap knows
/// there, not the whole help on stderr.
#[test]
fn a_missing_command_gets_one_line_naming_the_commands() {
    let (_dir, db) = temp_db();
    let none: [&str; 0] = [];
    let err = assert_bad_input(&db, &none);
    assert!(
        err.starts_with("schedlab: a command is needed: list, run, runs,")
            && err.contains(" db, push,")
            && err.trim_end().ends_with("(see schedlab --help)"),
        "{err}"
    );
    let err = assert_bad_input(&db, &["db"]);
    assert_eq!(
        err.trim_end(),
        "schedlab: db needs a command: check, upgrade (see schedlab db --help)"
    );
    let err = assert_bad_input(&db, &["campaign"]);
    assert_eq!(
        err.trim_end(),
        "schedlab: campaign needs a command: start, next, run, status (see schedlab campaign --help)"
    );
}

/// A negative number is a bad value of its flag, not an unknown flag `-5`.
#[test]
fn a_negative_number_is_refused_as_a_value_of_its_flag() {
    let (_dir, db) = temp_db();
    let refusals = assert_each_refusal_names(
        &db,
        &[
            (
                "run pipe --loops -5",
                "--loops \"-5\" is not a whole number",
            ),
            ("run contention --tasks -2", "--tasks \"-2\" is not a count"),
            (
                "run pipe --iterations -2",
                "--iterations \"-2\" is not a whole number",
            ),
            ("run fake --scale -1", "--scale"),
            ("stat -C -1 x", "--column \"-1\" is not a whole number"),
            ("compare a b --fdr -0.1", "--fdr"),
        ],
    );
    for err in refusals {
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

/// A whole number too big for the type its parameter is read into is refused with the flag and
/// its range, not serde's `expected u32` naming nothing.
#[test]
fn a_count_beyond_its_type_names_its_flag_and_range() {
    let (_dir, db) = temp_db();
    assert_each_refusal_names(
        &db,
        &[
            (
                "run fake --fail-at 4294967296",
                "schedlab: --fail-at must be between 0 and 4294967295, not 4294967296",
            ),
            (
                "run fake --stall-at 4294967296 --iteration-timeout 1",
                "schedlab: --stall-at must be between 0 and 4294967295, not 4294967296",
            ),
        ],
    );
}

/// A flag of `ab`, `calibrate` or `campaign start` given after the workload's name is refused
/// with where it goes, not only as unknown (or as "similar" to another flag).
#[test]
fn a_commands_flag_after_the_workload_says_where_it_goes() {
    let (_dir, db) = temp_db();
    let refusals = assert_each_refusal_names(
        &db,
        &[
            ("ab fake --a true --b true", "`ab`'s"),
            ("calibrate pipe --loops 10 --runs 3", "`calibrate`'s"),
            (
                "campaign start k fake --a-kernel x --b-kernel y",
                "`campaign start`'s",
            ),
        ],
    );
    for err in refusals {
        assert!(err.contains("goes before the workload's name"), "{err}");
    }
    let err = assert_bad_input(&db, &words("run pipe --bogus"));
    assert!(!err.contains("goes before"), "{err}");
}

#[test]
fn task_counts_may_be_relative_to_the_online_cpus() {
    let (_dir, db) = temp_db();
    let online = u64::from(schedlab_core::fingerprint::online_cpu_count());
    for (given, key, expected) in [
        ("contention --tasks 2x", "tasks", 2 * online),
        ("contention --tasks 7", "tasks", 7),
        ("messaging --groups 50%", "groups", (online / 2).max(1)),
    ] {
        assert_eq!(workload(&db, &words(given))[key], expected, "{given:?}");
    }
}

#[test]
fn counts_may_be_written_with_separators_and_decimal_multipliers() {
    let (_dir, db) = temp_db();
    for (given, key, expected) in [
        ("semaphore --items 800k --work 2k", "items", 800_000),
        ("semaphore --items 800k --work 2k", "work", 2_000),
        ("semaphore --items 800_000", "items", 800_000),
        ("syscall --calls 3M", "calls", 3_000_000),
        ("messaging --datasize 4_096", "datasize", 4_096),
    ] {
        assert_eq!(workload(&db, &words(given))[key], expected, "{given:?}");
    }
}

#[test]
fn failed_run_keeps_finished_iterations() {
    let (_d, db) = temp_db();
    let out = schedlab(&db)
        .args(words(
            "run fake --fail-at 3 --iterations 5 --warmup 1 --format json",
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("(2 measured iterations and 1 warm-up kept, stored as run 1)"));
    let doc = show_json(&db, "1");
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "failed");
    assert_eq!(run["cases"][0]["measured_iterations"], 2);
    assert_eq!(run["cases"][0]["warmup_iterations"], 1);
}

/// Starts a long messaging run, interrupts it with `signal` after its first stored iteration, and
/// checks the exit code, that no task survives, and that the database is consistent.
fn interrupt_messaging_run(signal: i32, threads: bool) {
    let (_d, db) = temp_db();
    let mut cmd = background(
        &db,
        &words("run messaging --groups 2 --fds 10 --loops 3000 --iterations 200 --warmup 0"),
    );
    if threads {
        cmd.arg("--threads");
    }
    let mut child = cmd.start();
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(120));
    // Land inside an iteration rather than between two.
    std::thread::sleep(Duration::from_millis(150));
    send_signal(&child, signal);
    let (code, stderr) = exit_code_and_stderr(child);
    assert_eq!(code, Some(128 + signal), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");

    assert_no_strays(&db);
    assert_interrupted_in_a_sound_database(&db);
    let kept = stored_iterations(&db);
    assert!(kept >= 1);
    let measured: i64 = sql_value(&db, "SELECT count(*) FROM measurements");
    assert!(measured >= kept, "iterations without measurements");
}

#[test]
fn sigint_reaps_processes_and_keeps_results() {
    interrupt_messaging_run(libc::SIGINT, false);
}

#[test]
fn sigterm_during_threaded_run_keeps_results() {
    interrupt_messaging_run(libc::SIGTERM, true);
}

#[test]
fn show_of_a_matrix_run_prints_its_scaling_tables() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "matrix.toml",
        "description = \"fake matrix\"\niterations = 4\nwarmup = 0\n[[case]]\nworkload = \"fake\"\n\
         [case.matrix]\nspread_pct = [0.5, 2.0]\nvalue_usec = [25.0, 50.0, 100.0]\n",
    );
    run_suite(&db, &suite, &words("--label m --quiet"));
    let text = stdout_of_success(&db, &words("show m"));
    // Two series over value_usec (one per spread); spread takes two values, too few for one.
    assert_eq!(
        text.matches("scaling: fake over value_usec").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("over spread_pct"), "{text}");

    let doc = show_json(&db, "m");
    let run = &doc["runs"][0];
    let scaling = run["scaling"].as_array().unwrap();
    assert_eq!(scaling.len(), 2);
    let first = &scaling[0];
    assert_eq!(first["parameter"], "value_usec");
    assert_eq!(first["values"], serde_json::json!([25.0, 50.0, 100.0]));
    assert_eq!(first["fixed"]["spread_pct"], 0.5);
    let usec = find_where(&first["metrics"], "metric", "usec_per_op");
    // The table's numbers are the cases' own summaries, in the parameter's order, and the text
    // prints them as `median ±std%` on the value's line.
    let block = text.split("scaling: fake over value_usec").nth(1).unwrap();
    for (i, case) in first["cases"].as_array().unwrap().iter().enumerate() {
        let case = find_where(&run["cases"], "name", case.as_str().unwrap());
        let summary = &metric(case, "usec_per_op")["summary"];
        assert_eq!(usec["median"][i], summary["median"]);
        assert_eq!(usec["std_pct"][i], summary["std_pct"]);
        let value = first["values"][i].as_f64().unwrap();
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{value} ")))
            .unwrap_or_else(|| panic!("no line for {value}: {block}"));
        let std = summary["std_pct"].as_f64().unwrap();
        assert!(line.contains(&format!("±{std:.1}%")), "{line}");
    }

    // A run without a matrix has neither.
    schedlab(&db)
        .args(words("run fake --label one --iterations 2 --quiet"))
        .assert()
        .success();
    assert!(!stdout_of_success(&db, &words("show one")).contains("scaling:"));
    assert!(show_json(&db, "one")["runs"][0].get("scaling").is_none());
}

/// `env` prints what changes scheduler results, in text and in versioned JSON whose fields are
/// the fingerprint's, as every run stores it.
#[test]
fn env_prints_the_scheduler_settings_with_a_schema_version() {
    let (_d, db) = temp_db();
    let doc = json_of_success(&db, &words("env --format json"));
    assert_eq!(doc["schema_version"], 1);
    for field in [
        "preempt_model",
        "sched_features",
        "sched_sysctls",
        "thp_enabled",
        "cpu_vulnerabilities",
        "microcode",
        "mem_total_kib",
        "isolcpus",
        "nohz_full",
        "cgroup_version",
        "kernel_release",
        "cpuidle_governor",
        "halt_poll",
        "sched_ext_state",
        "sched_ext_ops",
        "cpu_capacity",
        "cpu_max_freq_khz",
        "llc_groups",
        "kernel_config",
    ] {
        assert!(doc.get(field).is_some(), "no {field} in {doc}");
    }
    // Where the kernel shows its configuration, the tick rate is among what is recorded.
    if std::path::Path::new("/proc/config.gz").exists() {
        let hz = &doc["kernel_config"]["CONFIG_HZ"];
        assert!(hz.as_str().is_some_and(|hz| hz != "n"), "{doc}");
    }
    assert!(
        doc["mem_total_kib"].as_u64().is_some_and(|k| k > 0),
        "{doc}"
    );
    let text = stdout_of_success(&db, &["env"]);
    assert!(
        text.lines().any(|l| l.starts_with("preempt_model ")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("mem_total_kib ")),
        "{text}"
    );
    assert!(!text.contains("schema_version"), "{text}");
    // The stored fingerprint has the same fields.
    schedlab(&db)
        .args(words("run fake --iterations 1 --warmup 0"))
        .assert()
        .success();
    let shown = show_json(&db, "1");
    let stored = &shown["runs"][0]["fingerprint"];
    assert_eq!(stored["sched_sysctls"], doc["sched_sysctls"]);
    assert_eq!(stored["preempt_model"], doc["preempt_model"]);
}

/// `show --format csv`: the raw samples in long form, one row per measurement of every stored
/// iteration, the same values `show --format json` holds, with a column per parameter.
#[test]
fn show_csv_writes_every_sample_in_long_form() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "matrix.toml",
        "description = \"m\"\niterations = 3\nwarmup = 1\n[[case]]\nworkload = \"fake\"\n\
         [case.matrix]\nvalue_usec = [10, 20]\n",
    );
    for _ in 0..2 {
        run_suite(&db, &suite, &["--label", "sweep, \"quoted\"", "--quiet"]);
    }
    let text = stdout_of_success(&db, &["show", "sweep, \"quoted\"", "--format", "csv"]);
    let mut lines = text.lines();
    let header_line = lines.next().unwrap();
    // The fixed columns as a user reads them, then one per parameter of the cases.
    assert!(
        header_line.starts_with(
            "run_id,label,status,host,kernel_release,boot_id,case,workload,iteration,warmup,\
             started_at_ns,metric,unit,better,role,value,"
        ),
        "{header_line}"
    );
    let header: Vec<&str> = header_line.split(',').collect();
    assert!(
        header.contains(&"value_usec") && header.contains(&"spread_pct"),
        "{header:?}"
    );
    // 2 runs × 2 cases × (1 warm-up + 3) iterations × 4 metrics: the fake's two and the
    // machine's steal time and CPU pressure.
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2 * 2 * 4 * 4, "{text}");
    // The same samples as the JSON, warm-ups flagged.
    let doc = show_json(&db, "1");
    let case = &doc["runs"][0]["cases"][1];
    let first_measured = first_value(case, "usec_per_op");
    let value_col = header.iter().position(|h| *h == "value").unwrap();
    let param_col = header.iter().position(|h| *h == "value_usec").unwrap();
    let row = rows
        .iter()
        .find(|r| {
            r.starts_with("1,")
                && r.contains(",fake,1,0,")
                && r.contains(",usec_per_op,")
                && r.contains("value=20")
        })
        .unwrap_or_else(|| panic!("no row of run 1, case value=20, iteration 1:\n{text}"));
    // The label holds a comma and quotes: the row has more commas than columns, so read the
    // value and the parameter from the end.
    let cells: Vec<&str> = row.rsplit(',').collect();
    let from_end = |col: usize| cells[header.len() - 1 - col];
    assert_eq!(from_end(value_col).parse::<f64>().unwrap(), first_measured);
    assert_eq!(from_end(param_col).parse::<f64>().unwrap(), 20.0);
    assert!(
        text.contains("\"sweep, \"\"quoted\"\"\""),
        "the label is quoted as CSV does"
    );
    // Bad format names are bad input, as ever.
    assert_bad_input(&db, &words("show 1 --format xml"));
}

/// `push --to` its own store under another spelling (relative, `sqlite:`, a link) is refused as
/// the identical text is; `--to`'s errors name `--to`, not `--db`; `--since` takes calendar dates
/// only.
#[test]
fn push_refuses_its_own_store_by_any_name_and_names_to() {
    let (dir, db) = temp_db();
    expect_success(schedlab(&db).args(words("run fake --iterations 1 -q")));
    std::os::unix::fs::symlink(&db, dir.path().join("link.db")).unwrap();
    std::fs::hard_link(&db, dir.path().join("hard.db")).unwrap();
    let absolute = format!("sqlite://{}", db.display());
    for to in [
        "results.db",
        "./results.db",
        "sqlite:results.db",
        "link.db",
        "hard.db",
        absolute.as_str(),
    ] {
        let out = schedlab(&db)
            .current_dir(dir.path())
            .args(["push", "--to", to])
            .output()
            .unwrap();
        let err = assert_refused(&out, to);
        assert!(err.contains("is the store --db names"), "{to}: {err}");
    }
    let text = write_file(
        dir.path(),
        "text.db",
        "not a database, a shopping list: eggs, flour, milk and more\n".repeat(4),
    );
    for (to, says) in [
        ("", "schedlab: --to is empty"),
        (dir.path().to_str().unwrap(), "it is a directory"),
        (text.to_str().unwrap(), "not a schedlab results database"),
        ("ftp:x", "unknown store scheme"),
        (
            "/nonexistent-folder-of-schedlab/copy.db",
            "its folder /nonexistent-folder-of-schedlab does not exist",
        ),
        ("postgres://nobody@127.0.0.1:1/none", "--to: "),
    ] {
        let err = assert_bad_input(&db, &["push", "--to", to]);
        assert!(
            err.starts_with("schedlab: --to ") || err.starts_with("schedlab: --to: "),
            "{to:?}: {err}"
        );
        assert!(err.contains(says), "{to:?}: {err}");
        assert!(
            !err.contains("--db") && !err.contains("--no-store"),
            "{to:?}: {err}"
        );
    }
    let copy = dir.path().join("copy.db");
    let copy = copy.to_str().unwrap();
    for (since, says) in [
        ("2026-02-30", "2026-02-30 is not a date"),
        ("2025-02-29", "2025-02-29 is not a date"),
        ("9999-12-31", "after 2262-04-11"),
    ] {
        let err = assert_bad_input(&db, &["push", "--to", copy, "--since", since]);
        assert!(err.contains(says), "{since}: {err}");
    }
    assert!(!Path::new(copy).exists());
    let pushed = stdout_of_success(&db, &["push", "--to", copy, "--since", "2024-02-29"]);
    assert!(pushed.contains("1 copied"), "{pushed}");
}

/// Smaller refusals that used to pass silently, say the wrong thing, or land somewhere else.
#[test]
fn small_bad_inputs_are_refused_saying_what_is_wrong() {
    let (dir, db) = temp_db();
    expect_success(schedlab(&db).args(words("run fake --iterations 1 -q")));
    let missing = dir.path().join("missing.db");
    let missing = missing.to_str().unwrap();
    let file = write_file(dir.path(), "a.txt", "not a directory\n");
    let file = file.to_str().unwrap();
    assert_each_refusal_names(
        &db,
        &[
            ("runs --limit 0".to_string(), "--limit must be at least 1"),
            (
                "run pipe --suite quick".to_string(),
                "give either --suite or a workload, not both",
            ),
            (
                "ab --a true --b true fake --suite quick".to_string(),
                "give either --suite or a workload, not both",
            ),
            (
                "history x --html - --format json".to_string(),
                "--format shapes what goes on stdout",
            ),
            (
                format!("calibrate --list --db {missing}"),
                "no results database at",
            ),
            (format!("man --dir {file}"), "it is not a directory"),
            (
                "run fake --iteration-timeout 0.000001".to_string(),
                "from 0.001 (a millisecond, its resolution)",
            ),
        ],
    );
    assert!(!Path::new(missing).exists());

    // A named database whose folder is missing is a typo more often than a wish for new
    // folders: refused, and nothing is made (the default database's folder is, below).
    let nested = dir.path().join("no/such/folder/results.db");
    let out = schedlab(&nested)
        .args(words("run fake --iterations 1 -q"))
        .output()
        .unwrap();
    let err = assert_refused(&out, "a --db in a missing folder");
    assert!(err.contains("does not exist (create it first)"), "{err}");
    assert!(!dir.path().join("no").exists());

    // The environment: an empty SCHEDLAB_DB is named; a relative XDG_DATA_HOME is ignored (the
    // XDG Base Directory specification), an empty HOME is none, and with nothing left it says so.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let env_run = |vars: &[(&str, &str)]| {
        let mut cmd = Command::cargo_bin("schedlab").unwrap();
        cmd.timeout(COMMAND_DEADLINE)
            .current_dir(dir.path())
            .env_remove("SCHEDLAB_DB")
            .env_remove("XDG_DATA_HOME")
            .env_remove("HOME")
            .args(words("run fake --iterations 1 -q"));
        for (key, value) in vars {
            cmd.env(key, value);
        }
        cmd.output().unwrap()
    };
    let err = assert_refused(&env_run(&[("SCHEDLAB_DB", "")]), "SCHEDLAB_DB=''");
    assert!(err.starts_with("schedlab: SCHEDLAB_DB is empty"), "{err}");
    let err = assert_refused(&env_run(&[("HOME", "")]), "HOME=''");
    assert!(err.contains("no results database path"), "{err}");
    let out = env_run(&[("XDG_DATA_HOME", "rel"), ("HOME", home.to_str().unwrap())]);
    assert_succeeded(&out, "a relative XDG_DATA_HOME");
    assert!(home.join(".local/share/schedlab/results.db").exists());
    assert!(!dir.path().join("rel").exists());
}

/// Every workload that starts many tasks declares them, and one check holds each case to this
/// machine's limits before anything starts: a case over RLIMIT_NOFILE (any user can lower it) or
/// RLIMIT_NPROC (which binds only others than root: as root, the commands run as `nobody`) is
/// one line naming the limit and exit 2, not a failed run after its first tasks started.
#[test]
fn cases_over_this_machines_task_limits_are_refused_before_they_start() {
    // SAFETY: geteuid has no memory effects.
    let root = unsafe { libc::geteuid() } == 0;
    let limited = |limit: &str, as_nobody: bool, line: &str| {
        let mut cmd = std::process::Command::new("prlimit");
        cmd.arg(limit).arg("--");
        if as_nobody {
            cmd.args(words(
                "setpriv --reuid 65534 --regid 65534 --clear-groups --",
            ));
        }
        cmd.arg(assert_cmd::cargo::cargo_bin("schedlab"))
            .args(words(line))
            .args(words("--no-store --iterations 1 --warmup 0 -q"))
            .env_remove("SCHEDLAB_DB")
            .env_remove("XDG_DATA_HOME");
        let mut cmd = Command::from_std(cmd);
        cmd.timeout(COMMAND_DEADLINE);
        cmd.output().unwrap()
    };
    let descriptors = [
        "run syscall --kind write-devnull --threads 64 --calls 10",
        "run fanout --workers 64 --rounds 1",
        "run messaging --groups 2 --threads --loops 1",
        "run contention --testcase pipe-loopback --tasks 64 --duration 1",
    ];
    let tasks = [
        "run syscall --threads 64 --calls 10",
        "run fanout --workers 64 --rounds 1",
        "run cpupri --threads 64 --ops 10",
        "run wakeup -m 2 -t 40 --runtime 1",
        "run messaging --groups 4 --loops 1",
        "run contention --tasks 64 --duration 1",
    ];
    let limits = [
        (
            "--nofile=48:48",
            false,
            "over RLIMIT_NOFILE",
            &descriptors[..],
        ),
        (
            "--nproc=16:16",
            true,
            "exceed RLIMIT_NPROC = 16",
            &tasks[..],
        ),
    ];
    for (limit, as_nobody, named, lines) in limits {
        if as_nobody && !root {
            continue;
        }
        for line in lines {
            let refusal = assert_refused(&limited(limit, as_nobody, line), line);
            assert!(refusal.contains(named), "{line}: {refusal}");
        }
    }
}
