//! The fleet view end to end: `runs`, `hosts`, `history`, `changes` and `compare`'s selection on
//! runs the binary stored, one of them moved to another machine in the file the way a second
//! host's push would put it there; and their JSON checked against the fields docs/json-schema.md
//! documents.
mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{
    assert_bad_input, expect_success, json_of_success, schedlab, stdout_of_success, temp_db, words,
};

/// 14 runs of one fake case, the last 7 with every value 15 % larger; returns the case name.
fn nightly(db: &Path) -> String {
    for i in 1..=14 {
        let effect = if i > 7 { "15" } else { "0" };
        expect_success(schedlab(db).args(words(&format!(
            "run fake --spread-pct 1 --seed {i} --effect-pct {effect} --iterations 3 \
             --label night-{i} -q"
        ))));
    }
    let runs = json_of_success(db, &words("runs --format json --limit 1"))["runs"].clone();
    runs[0]["what"].as_str().unwrap().to_string()
}

/// The cases `changes --format json` reported, in order.
fn cases_of(changes: &serde_json::Value) -> Vec<&str> {
    changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"].as_str().unwrap())
        .collect()
}

fn sql(db: &Path, statement: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute(statement, [])
        .unwrap();
}

/// Takes the file back to V8 and lets `db upgrade` summarise every run again from its iterations
/// and fingerprint: how a test stores what a schedlab before V9 would have (a value that is not
/// finite, another build's runs) once it has changed them behind the store's back.
fn summarised_again(db: &Path) {
    common::downgrade_to_v8(db);
    expect_success(schedlab(db).args(["db", "upgrade"]));
}

#[test]
fn history_and_changes_find_the_step_and_name_its_first_run() {
    let (dir, db) = temp_db();
    let case = nightly(&db);
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let found = changes[0]["changes"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{changes:#}");
    let label = found[0]["label"].as_str().unwrap();
    assert!(
        ["night-7", "night-8", "night-9"].contains(&label),
        "{label}"
    );
    assert_eq!(found[0]["verdict"], "regression");
    let pct = found[0]["change_pct"].as_f64().unwrap();
    assert!((10.0..20.0).contains(&pct), "{pct}");

    let csv = stdout_of_success(&db, &["history", &case, "--format", "csv"]);
    assert_eq!(csv.lines().count(), 15, "{csv}");
    let html = dir.path().join("h.html");
    let text = stdout_of_success(&db, &["history", &case, "--html", html.to_str().unwrap()]);
    assert!(text.contains("◆ +"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("</html>"));
    // A noise bar above the step reports nothing.
    let quiet = json_of_success(
        &db,
        &["changes", &case, "--format", "json", "--min-effect", "50"],
    )["changes"]
        .clone();
    assert!(quiet[0]["changes"].as_array().unwrap().is_empty());
    assert_bad_input(&db, &["history", &case, "--metric", "nope"]);
    assert_bad_input(&db, &words("history no-such-case"));
    assert_bad_input(&db, &words("changes --alpha 2"));
}

/// Imports one `plain` run per value, three iterations each.
fn import_plain_runs(db: &Path, dir: &Path, values: &[&str]) {
    let numbers = dir.join("numbers.txt");
    for v in values {
        std::fs::write(&numbers, format!("{v}\n{v}\n{v}\n")).unwrap();
        expect_success(
            schedlab(db)
                .args(words("import --tool plain --label L"))
                .arg(&numbers),
        );
    }
}

/// Eight runs within ±0.5 % either side of a +50 % step: the step does not become the noise.
#[test]
fn a_step_in_a_short_history_is_found() {
    let (dir, db) = temp_db();
    import_plain_runs(
        &db,
        dir.path(),
        &["100", "100.5", "99.5", "100", "150", "151", "149", "150"],
    );
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let found = changes[0]["changes"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{changes:#}");
    assert_eq!(found[0]["run_id"], 5, "{changes:#}");
    let pct = found[0]["change_pct"].as_f64().unwrap();
    assert!((pct - 50.0).abs() < 1.0, "{pct}");
    assert!(
        changes[0]["noise"]["pct"].as_f64().unwrap() < 1.0,
        "{changes:#}"
    );
}

/// A count that is 0 in eight runs, then 1: the change from 0 has no percent, nor the noise
/// around a median of 0, and every format says so the same way.
#[test]
fn a_change_from_zero_has_no_percent_in_any_format() {
    let (dir, db) = temp_db();
    let values: Vec<&str> = (0..14).map(|i| if i < 8 { "0" } else { "1" }).collect();
    import_plain_runs(&db, dir.path(), &values);
    let text = stdout_of_success(&db, &words("changes"));
    assert!(
        text.contains("noise 0 value per run (from the series itself; not in percent"),
        "{text}"
    );
    let json = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let change = &json[0]["changes"][0];
    assert_eq!(change["run_id"], 9, "{json:#}");
    assert!(change["change_pct"].is_null(), "{json:#}");
    assert!(change["noise_widths"].is_null(), "{json:#}");
    assert!(json[0]["noise"]["pct"].is_null(), "{json:#}");
    assert_eq!(json[0]["noise"]["sd"], 0.0, "{json:#}");
    let csv = stdout_of_success(&db, &words("history plain:value --format csv"));
    assert!(
        csv.lines()
            .nth(9)
            .unwrap()
            .ends_with(",1,,plain (imported)"),
        "{csv}"
    );
    let history = stdout_of_success(&db, &words("history plain:value"));
    assert!(history.contains("◆ 0 → 1.000 regression"), "{history}");
    for output in [&text, &csv, &history] {
        assert!(
            !output.contains("NaN") && !output.contains("inf"),
            "{output}"
        );
    }
}

/// `changes` with no case looks through every stored case and passes over one that only an
/// interrupted (or abandoned) run measured, or that lacks the metric asked for; a case named on
/// the command line must have a history.
#[test]
fn changes_of_every_case_pass_over_cases_no_complete_run_measured() {
    let (_dir, db) = temp_db();
    expect_success(schedlab(&db).args(words("run fake --iterations 2 -q")));
    expect_success(schedlab(&db).args(words("run fake --value-usec 7 --iterations 2 -q")));
    sql(&db, "UPDATE runs SET status = 'interrupted' WHERE id = 2");
    let all = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    assert_eq!(cases_of(&all), ["fake:value=100 spread=1"], "{all:#}");
    let both = json_of_success(&db, &words("changes --format json --include-incomplete"))
        ["changes"]
        .clone();
    assert_eq!(both.as_array().unwrap().len(), 2, "{both:#}");
    let err = assert_bad_input(&db, &["changes", "fake:value=7 spread=1"]);
    assert!(err.contains("no complete run"), "{err}");
    let err = assert_bad_input(&db, &words("changes --metric nope"));
    assert!(
        err.contains("has no metric nope; it has usec_per_op"),
        "{err}"
    );
    sql(&db, "UPDATE runs SET status = 'interrupted'");
    let err = assert_bad_input(&db, &words("changes"));
    assert!(err.contains("--include-incomplete"), "{err}");
}

/// A database from before the runner refused non-finite values may hold one: the case it
/// damages is named and passed over, and the other cases' changes still come.
#[test]
fn changes_pass_over_a_case_with_a_value_that_is_not_finite() {
    let (_dir, db) = temp_db();
    for seed in 1..=2 {
        for value in ["100", "7"] {
            expect_success(schedlab(&db).args(words(&format!(
                "run fake --value-usec {value} --seed {seed} --iterations 2 --warmup 0 -q"
            ))));
        }
    }
    sql(
        &db,
        "UPDATE measurements SET value = 1e999 WHERE name = 'usec_per_op' AND iteration_id = \
         (SELECT i.id FROM iterations i JOIN cases c ON i.case_id = c.id \
          WHERE c.name = 'fake:value=7 spread=1' LIMIT 1)",
    );
    summarised_again(&db);
    let out = schedlab(&db)
        .args(words("changes --format json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = all["changes"].clone();
    assert_eq!(cases_of(&all), ["fake:value=100 spread=1"], "{all:#}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "case fake:value=7 spread=1, metric usec_per_op: run 2 stored a value \
                         that is not a finite number: passed over"
        ),
        "{stderr}"
    );
    let err = assert_bad_input(&db, &["history", "fake:value=7 spread=1"]);
    assert!(err.contains("not a finite number"), "{err}");
    // compare names it too, rather than print NaN; the other case's runs still compare.
    let err = assert_bad_input(&db, &words("compare 2 4"));
    assert!(
        err.contains("metric usec_per_op: run 2 stored a value that is not a finite number"),
        "{err}"
    );
    stdout_of_success(&db, &words("compare 1 3"));

    // With every case passed over, the error says so, not that no complete run matches.
    sql(&db, "UPDATE measurements SET value = 1e999");
    summarised_again(&db);
    let err = assert_bad_input(&db, &["changes"]);
    assert!(
        err.contains(
            "stored a value that is not a finite number (and 1 other case likewise); nothing \
             else to look at"
        ),
        "{err}"
    );
}

#[test]
fn a_step_where_schedlab_was_upgraded_is_named_by_history_changes_and_compare() {
    let (_dir, db) = temp_db();
    let case = nightly(&db);
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let first = changes[0]["changes"][0]["run_id"].as_i64().unwrap();
    assert!(changes[0]["changes"][0].get("build_changed").is_none());
    // From the change's first run on, the runs were measured by another schedlab build.
    sql(
        &db,
        &format!(
            "UPDATE runs SET fingerprint_json =
               json_set(fingerprint_json, '$.schedlab_commit', 'upgraded') WHERE id >= {first}"
        ),
    );
    summarised_again(&db);
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let build = &changes[0]["changes"][0]["build_changed"];
    assert_eq!(
        build["after"].as_str().unwrap().split(' ').nth(2),
        Some("upgraded")
    );
    assert_ne!(build["before"], build["after"]);
    let text = stdout_of_success(&db, &["changes"]);
    assert!(
        text.contains("the measuring build changed there too"),
        "{text}"
    );
    let history = stdout_of_success(&db, &["history", &case]);
    assert!(history.contains("(build changed)"), "{history}");
    assert!(history.contains("measured by 2 builds"), "{history}");
    let csv = stdout_of_success(&db, &words("changes --format csv"));
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",measured_by_before,measured_by"),
        "{csv}"
    );
    assert!(csv.lines().nth(1).unwrap().contains("upgraded"), "{csv}");
    // compare's footer says so too; the rows are judged as before.
    let compare = stdout_of_success(&db, &words("compare night-1 night-14"));
    assert!(
        compare.contains("measured by more than one build or tool"),
        "{compare}"
    );
}

#[test]
fn runs_hosts_and_compare_select_by_host_kernel_and_fingerprint() {
    let (_dir, db) = temp_db();
    let case = nightly(&db);
    let here = json_of_success(&db, &words("hosts --format json"))["hosts"].clone();
    let host = here[0]["hostname"].as_str().unwrap().to_string();
    assert_eq!(here[0]["runs"], 14);
    // Run 14 moves to another machine with another CPU.
    sql(
        &db,
        "UPDATE runs SET hostname = 'otherbox', fingerprint_json =
           json_set(json_set(fingerprint_json, '$.hostname', 'otherbox'), '$.cpu_model', 'Other CPU')
         WHERE id = 14",
    );
    let hosts = json_of_success(&db, &words("hosts --format json"))["hosts"].clone();
    assert_eq!(hosts.as_array().unwrap().len(), 2);
    assert_eq!(hosts[0]["hostname"], "otherbox");
    assert_eq!(hosts[0]["last_run"]["id"], 14);

    let other = json_of_success(&db, &words("runs --format json --host otherbox"))["runs"].clone();
    assert_eq!(other.as_array().unwrap().len(), 1);
    let by_cpu = json_of_success(
        &db,
        &["runs", "--format", "json", "--where", "cpu_model=Other CPU"],
    )["runs"]
        .clone();
    assert_eq!(by_cpu[0]["id"], 14);
    let kernel = other[0]["kernel_release"].as_str().unwrap().to_string();
    let on_kernel =
        json_of_success(&db, &["runs", "--format", "json", "--kernel", &kernel])["runs"].clone();
    assert_eq!(on_kernel.as_array().unwrap().len(), 14);
    assert!(
        stdout_of_success(&db, &words("runs --kernel 0.0-none")).contains("no stored run matches")
    );
    let err = assert_bad_input(&db, &words("runs --where cpu=x"));
    assert!(err.contains("cpu_model"), "{err}");

    // A history is one machine's.
    let err = assert_bad_input(&db, &["history", &case]);
    assert!(err.contains("--host"), "{err}");
    let h = json_of_success(
        &db,
        &["history", &case, "--host", &host, "--format", "json"],
    );
    assert_eq!(h["history"]["points"].as_array().unwrap().len(), 13);

    // compare keeps refusing to mix hardware; --host keeps a side's runs on one machine.
    let err = assert_bad_input(&db, &words("compare night-1 night-14"));
    assert!(err.contains("CPU model"), "{err}");
    expect_success(schedlab(&db).args(words(
        "compare night-1 night-14 --allow-fingerprint-mismatch",
    )));
    let err = assert_bad_input(&db, &["compare", "night-1", "night-14", "--host", &host]);
    assert!(err.contains("night-14 has no run matching --host"), "{err}");
    expect_success(schedlab(&db).args(["compare", "night-1", "night-13", "--host", &host]));
}

/// The backticked names in the first column of the `nth` table under the heading `heading` of
/// docs/json-schema.md.
fn documented_fields(heading: &str, nth: usize) -> BTreeSet<String> {
    let doc = include_str!("../../../docs/json-schema.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("json-schema.md has no section {heading}"));
    let mut tables: Vec<BTreeSet<String>> = Vec::new();
    let mut in_table = false;
    for line in section.lines() {
        let Some(row) = line.strip_prefix('|') else {
            in_table = false;
            continue;
        };
        if !in_table {
            // The header row.
            tables.push(BTreeSet::new());
            in_table = true;
            continue;
        }
        if row.starts_with('-') {
            continue;
        }
        let first = row.split('|').next().unwrap();
        let names = first.split('`').skip(1).step_by(2).map(str::to_string);
        tables.last_mut().unwrap().extend(names);
    }
    tables.into_iter().nth(nth).unwrap_or_default()
}

fn keys(object: &serde_json::Value) -> BTreeSet<String> {
    object.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn json_outputs_have_the_fields_json_schema_md_documents() {
    let (dir, db) = temp_db();
    let case = nightly(&db);
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    assert_eq!(
        keys(&runs[0]),
        documented_fields("`schedlab runs --format json`", 0)
    );
    let hosts = json_of_success(&db, &words("hosts --format json"))["hosts"].clone();
    assert_eq!(
        keys(&hosts[0]),
        documented_fields("`schedlab hosts --format json`", 0)
    );
    let history = json_of_success(&db, &["history", &case, "--format", "json"]);
    assert_eq!(
        keys(&history),
        ["changes", "history", "schema_version"]
            .map(String::from)
            .into()
    );
    let heading = "`schedlab history CASE --format json`";
    assert_eq!(keys(&history["history"]), documented_fields(heading, 0));
    assert_eq!(keys(&history["changes"]), documented_fields(heading, 1));
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    assert_eq!(keys(&changes[0]), documented_fields(heading, 1));
    let push = json_of_success(
        &db,
        &words(&format!(
            "push --format json --to {}",
            dir.path().join("copy.db").to_str().unwrap()
        )),
    );
    assert_eq!(
        keys(&push),
        documented_fields("`schedlab push --format json`", 0)
    );
    let numbers = dir.path().join("numbers.txt");
    std::fs::write(&numbers, "1.5\n1.6\n").unwrap();
    expect_success(
        schedlab(&db)
            .args(words("import --tool plain --label imported"))
            .arg(&numbers),
    );
    let show = json_of_success(&db, &words("show imported --format json"));
    assert_eq!(
        keys(&show["runs"][0]["fingerprint"]["imported"]),
        documented_fields("fingerprint", 1)
    );
}
