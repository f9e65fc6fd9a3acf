//! `compare --across KEY`: variants measured in the same runs, compared by the value of one
//! workload parameter. The `fake` workload's case name shows `value_usec` and `spread_pct` (not
//! `seed` or `effect_pct`, which would put two cases of one run under one name), so these suites
//! vary those: a matrix of 100 µs and 110 µs in each run is a +10 % change within every run.
mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// A suite of two fake cases per run, `value_usec` 100 and 110 (a matrix), whose noise is
/// seeded by the run so that runs differ.
fn value_matrix(run: u64) -> String {
    format!(
        "description = \"two values in one run\"\niterations = 5\nwarmup = 1\n\
         [[case]]\nworkload = \"fake\"\nspread_pct = 1\nseed = {run}\n\
         [case.matrix]\nvalue_usec = [100, 110]\n"
    )
}

/// Two cases alike but for a spread the case name tells apart (2 and 2.0001 %): an A/A within
/// each run. Both draw the run's seed, as a row's cases agree on every parameter but the key.
fn twin_cases(run: u64) -> String {
    format!(
        "description = \"two alike cases\"\niterations = 5\nwarmup = 1\n\
         [[case]]\nworkload = \"fake\"\nvalue_usec = 100\nseed = {run}\n\
         [case.matrix]\nspread_pct = [2, 2.0001]\n"
    )
}

/// One case of `spread_pct` per run, seeded by the run (a row's cases agree on every parameter
/// but the key, the seed too): runs of two such labels sample one distribution.
fn one_case(spread: &'static str) -> impl Fn(u64) -> String {
    move |run| {
        format!(
            "description = \"one case\"\niterations = 5\nwarmup = 1\n\
             [[case]]\nworkload = \"fake\"\nvalue_usec = 100\nspread_pct = {spread}\nseed = {}\n",
            run
        )
    }
}

/// `runs` runs of `suite(run)` stored under `label`.
fn store_runs(dir: &Path, db: &Path, label: &str, runs: u64, suite: impl Fn(u64) -> String) {
    for run in 1..=runs {
        let file = write_file(dir, &format!("{label}-{run}.toml"), suite(run));
        run_suite(db, &file, &["--label", label, "--quiet"]);
    }
}

fn row<'a>(c: &'a Value, metric: &str) -> &'a Value {
    find_where(&c["rows"], "metric", metric)
}

#[test]
fn across_a_parameter_marks_the_change_within_each_run_and_reverses_with_the_value_list() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "matrix", 4, value_matrix);

    let c = json_of_success(
        &db,
        &words("compare matrix --across value_usec --format json"),
    );
    assert_eq!(c["across"]["key"], "value_usec");
    assert_eq!(c["across"]["values"], serde_json::json!(["100", "110"]));
    assert_eq!(c["base"]["name"], "value_usec=100");
    assert_eq!(c["candidates"][0]["name"], "value_usec=110");
    let r = row(&c, "usec_per_op");
    assert_eq!(
        r["case"], "fake:value=100 spread=1",
        "rows go by the base case"
    );
    assert_eq!(r["design"], "pairs");
    assert_eq!(r["pairs_within_runs"], true);
    assert_eq!(r["base_side"]["n"], 4, "one pair per run");
    assert_eq!(r["verdict"], "regression");
    let change = r["change_pct"].as_f64().unwrap();
    assert!((change - 10.0).abs() < 1.0, "{change}");
    assert_eq!(
        c["footer"]["units"],
        serde_json::json!([{ "kind": "pairs_within_runs", "by_boot": false }])
    );
    let text = stdout_of_success(&db, &words("compare matrix --across value_usec"))
        // The footer's sentences whole: the text wraps them at 80 columns.
        .replace("\n  ", " ");
    assert!(
        text.contains("pairs of cases within each run (the difference of each run's summaries)"),
        "{text}"
    );

    let reversed = json_of_success(
        &db,
        &words("compare matrix --across value_usec=110,100 --format json"),
    );
    assert_eq!(reversed["base"]["name"], "value_usec=110");
    let r = row(&reversed, "usec_per_op");
    assert_eq!(r["case"], "fake:value=110 spread=1");
    assert_eq!(r["verdict"], "improvement");
    let change = r["change_pct"].as_f64().unwrap();
    assert!((change + 9.09).abs() < 1.0, "{change}");

    // Numbers match as numbers: 100.0 is the 100 the runs hold.
    let same = json_of_success(
        &db,
        &words("compare matrix --across value_usec=100.0,110 --format json --metric usec_per_op"),
    );
    assert_eq!(same["rows"].as_array().unwrap().len(), 1);
    assert_eq!(row(&same, "usec_per_op")["verdict"], "regression");
}

#[test]
fn alike_cases_are_an_aa_that_is_not_marked_paired_within_runs_or_across_runs() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "twins", 4, twin_cases);
    let c = json_of_success(
        &db,
        &words("compare twins --across spread_pct --format json --all-metrics"),
    );
    assert_eq!(c["base"]["name"], "spread_pct=2");
    assert_eq!(row(&c, "usec_per_op")["pairs_within_runs"], true);
    assert!(c["footer"]["comparisons"].as_u64().unwrap() > 0);
    assert_eq!(c["footer"]["marked"], 0, "{}", c["footer"]);

    // The values in runs of their own: no run holds both, so runs are compared with runs.
    store_runs(dir.path(), &db, "x", 4, one_case("2"));
    store_runs(dir.path(), &db, "y", 4, one_case("2.0001"));
    let c = json_of_success(&db, &words("compare x y --across spread_pct --format json"));
    let r = row(&c, "usec_per_op");
    assert_eq!(r["design"], "runs");
    assert!(r.get("pairs_within_runs").is_none());
    assert_eq!(r["base_side"]["n"], 4);
    assert!(c["footer"]["comparisons"].as_u64().unwrap() > 0);
    assert_eq!(c["footer"]["marked"], 0, "{}", c["footer"]);
}

#[test]
fn every_style_and_format_names_the_sides_by_their_values() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "matrix", 3, value_matrix);
    for style in ["schedtests", "mmtests", "ministat", "benchstat"] {
        for format in ["text", "markdown", "csv"] {
            let line =
                format!("compare matrix --across value_usec --style {style} --format {format}");
            let out = stdout_of_success(&db, &words(&line));
            assert!(out.contains("value_usec=110"), "{line}:\n{out}");
            if format != "csv" {
                assert!(out.contains("value_usec=100"), "{line}:\n{out}");
                assert!(
                    out.contains("pairs of cases within each run"),
                    "{line}:\n{out}"
                );
            } else {
                assert!(out.contains("pairs_within_runs"), "{line}:\n{out}");
            }
        }
    }
    // The HTML report shares compare's arguments.
    let page = dir.path().join("r.html");
    expect_success(
        schedlab(&db)
            .args(words("report matrix --across value_usec --html"))
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("value_usec=110") && html.contains("value_usec=100"));
}

/// A suite of `value_usec` 100, 110 and, when `with_121`, 121 in each run.
fn three_values(with_121: bool) -> impl Fn(u64) -> String {
    move |run| {
        let values = if with_121 {
            "100, 110, 121"
        } else {
            "100, 110"
        };
        format!(
            "description = \"values\"\niterations = 5\nwarmup = 1\n\
             [[case]]\nworkload = \"fake\"\nspread_pct = 1\nseed = {run}\n\
             [case.matrix]\nvalue_usec = [{values}]\n"
        )
    }
}

#[test]
fn a_candidate_paired_in_fewer_runs_is_shown_beside_its_own_baseline() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "all", 4, three_values(true));
    store_runs(dir.path(), &db, "two", 2, three_values(false));
    let across = "compare all two --across value_usec=100,110,121";
    let c = json_of_success(&db, &words(&format!("{across} --format json")));
    let base_n = |candidate: &str| {
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "usec_per_op" && r["candidate"] == candidate)
            .unwrap()["base_side"]["n"]
            .as_u64()
            .unwrap()
    };
    assert_eq!((base_n("value_usec=110"), base_n("value_usec=121")), (6, 4));

    // ministat draws each candidate beside the baseline dataset its test used.
    let ministat = stdout_of_success(&db, &words(&format!("{across} --style ministat")));
    let base_lines: Vec<&str> = ministat.lines().filter(|l| l.starts_with("x ")).collect();
    assert!(
        base_lines.iter().any(|l| words(l)[1] == "6")
            && base_lines.iter().any(|l| words(l)[1] == "4"),
        "{ministat}"
    );
    // benchstat puts the case on a line per baseline and says why.
    let bench = stdout_of_success(&db, &words(&format!("{across} --style benchstat")));
    let case_lines = bench
        .lines()
        .filter(|l| l.starts_with("fake:value=100 spread=1 ⁴"));
    assert_eq!(case_lines.count(), 4, "{bench}");
    assert!(bench.contains("⁴ a line per baseline"), "{bench}");
}

#[test]
fn selections_feed_every_side_and_one_run_is_one_pair_not_judged() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "matrix", 3, value_matrix);
    // Run ids and a label together, a run named twice counting once.
    let c = json_of_success(
        &db,
        &words("compare 1 2 matrix --across value_usec --format json --metric usec_per_op"),
    );
    assert_eq!(row(&c, "usec_per_op")["base_side"]["n"], 3);
    // Without --across, the same run on both sides is still refused.
    let refused = assert_bad_input(&db, &words("compare matrix matrix"));
    assert!(refused.contains("on both sides"), "{refused}");

    let one = json_of_success(
        &db,
        &words(
            "compare 1 --across value_usec --format json --metric usec_per_op --calibration none",
        ),
    );
    let r = row(&one, "usec_per_op");
    assert_eq!(r["verdict"], "not_judged");
    assert_eq!(
        r["note"],
        serde_json::json!({ "kind": "one_unit", "unit": "run_holding_both_cases" })
    );
}

/// cpudl times `fast` without `--variant`: such a case is on the `fast` side, paired within its
/// run with the `orig` case, as one with `variant = "fast"` written out would be.
#[test]
fn a_case_that_leaves_the_key_to_its_default_is_on_the_default_side() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "heaps", 2, |_| {
        "description = \"orig and the default variant\"\niterations = 2\nwarmup = 0\n\
         [[case]]\nworkload = \"cpudl\"\ncpus = 8\nops = 2000\nvariant = \"orig\"\n\
         [[case]]\nworkload = \"cpudl\"\ncpus = 8\nops = 2000\n"
            .to_string()
    });
    let c = json_of_success(
        &db,
        &words("compare heaps --across variant=orig,fast --format json --metric nsec_per_op"),
    );
    let r = row(&c, "nsec_per_op");
    assert_eq!(
        r["case"],
        "cpudl:orig cpus=8 ops=2000 mix=cpudl-bench (no real deletes: cpus is a multiple of 8)"
    );
    assert_eq!(r["pairs_within_runs"], true, "{r}");
    assert_eq!(r["base_side"]["n"], 2, "{r}");
}

/// wakeup's requests do 5 matrix multiplies on every machine unless told otherwise: a case that
/// leaves `operations` out is on the `operations=5` side, and one that writes 5 out is the same
/// case, not one name with two values.
#[test]
fn a_wakeup_case_that_leaves_operations_out_does_five() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    let suite = |explicit: bool| {
        let five = if explicit { "operations = 5\n" } else { "" };
        format!(
            "description = \"default and ten operations\"\niterations = 1\nwarmup = 0\n\
             [[case]]\nworkload = \"wakeup\"\nruntime = 1\nworkers = 1\n{five}\
             [[case]]\nworkload = \"wakeup\"\nruntime = 1\nworkers = 1\noperations = 10\n"
        )
    };
    store_runs(dir.path(), &db, "implicit", 1, |_| suite(false));
    store_runs(dir.path(), &db, "explicit", 1, |_| suite(true));
    let c = json_of_success(
        &db,
        &words("compare implicit explicit --across operations=5,10 --format json --metric requests_p50_per_sec"),
    );
    let r = row(&c, "requests_p50_per_sec");
    assert!(r["case"].as_str().unwrap().contains(" ops=5 "), "{r}");
    assert_eq!(r["pairs_within_runs"], true, "{r}");
    assert_eq!(r["base_side"]["n"], 2, "{r}");
}

/// The sides of --across share their runs: a run they leave out is named once.
#[test]
fn a_run_left_out_is_named_once_for_every_side() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    let three = |failing: &str| {
        format!(
            "description = \"three values\"\niterations = 2\nwarmup = 0\n[[case]]\n\
             workload = \"fake\"\n{failing}[case.matrix]\nvalue_usec = [100, 110, 120]\n"
        )
    };
    store_runs(dir.path(), &db, "three", 2, |_| three(""));
    let failing = write_file(dir.path(), "failing.toml", three("fail_at = 1\n"));
    let out = schedlab(&db)
        .args([
            "run",
            "--suite",
            failing.to_str().unwrap(),
            "--label",
            "three",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let out = stdout_of_success(&db, &words("compare three --across value_usec"));
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("left out of")).collect();
    assert_eq!(
        lines,
        ["left out of every side: run 3 (failed) (--include-incomplete uses them)"],
        "{out}"
    );
}

#[test]
fn a_calibration_judges_one_run_with_both_cases_variances() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "calm", 6, value_matrix);
    expect_success(schedlab(&db).args(words("calibrate --from calm")));
    let file = write_file(dir.path(), "new.toml", value_matrix(42));
    run_suite(&db, &file, &["--label", "new", "--quiet"]);
    let c = json_of_success(
        &db,
        &words("compare new --across value_usec --format json --metric usec_per_op"),
    );
    let r = row(&c, "usec_per_op");
    assert_eq!(r["variance"]["source"], "calibration", "{r}");
    assert_eq!(r["verdict"], "regression", "{r}");
    let notes = c["footer"]["notes"].as_array().unwrap();
    assert!(
        notes.contains(&serde_json::json!({ "kind": "calibrated_within_run_pairs" })),
        "{notes:?}"
    );
}

#[test]
fn bad_across_input_is_one_line_and_exit_2() {
    let dir = temp_dir();
    let db = dir.path().join("r.db");
    store_runs(dir.path(), &db, "matrix", 2, value_matrix);
    assert_each_refusal_names(
        &db,
        &[
            (
                "compare matrix --across variant",
                "no workload of the selected runs has a parameter `variant`",
            ),
            (
                "compare matrix --across workload",
                "has a parameter `workload`",
            ),
            (
                "compare matrix --across value_usec=100,120",
                "no case of the selected runs has value_usec=120",
            ),
            (
                "compare matrix --across value_usec=100",
                "give a base and at least one candidate value",
            ),
            (
                "compare matrix --across spread_pct",
                "every case of the selected runs has spread_pct=1",
            ),
            (
                "compare matrix --across value_usec=100,110,100",
                "100 is listed twice",
            ),
            (
                "compare matrix --across value_usec=100,100.0",
                "100.0 is listed twice",
            ),
            (
                "compare matrix --across =100,110",
                "name a workload parameter",
            ),
        ],
    );
    // Two cases of one run under one name: a plan refuses them, but a database written before it
    // did may hold them (a matrix over fake's effect_pct, which its name leaves out).
    let clash = write_file(
        dir.path(),
        "clash.toml",
        "description = \"clash\"\niterations = 2\nwarmup = 0\n[[case]]\nworkload = \"fake\"\n\
         [case.matrix]\nvalue_usec = [100, 110]\n",
    );
    run_suite(&db, &clash, &["--label", "clash", "--quiet"]);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE cases SET name = 'fake:value=100 spread=1', spec_json = \
             replace(replace(spec_json, '110', '100'), '\"effect_pct\":0.0', '\"effect_pct\":10.0') \
             WHERE name = 'fake:value=110 spread=1' AND run_id = \
             (SELECT id FROM runs WHERE label = 'clash')",
            [],
        )
        .unwrap();
    // Summarised as that database was by its upgrade to V9: one case, of both cases' iterations.
    resummarise(&db);
    let refused = assert_bad_input(&db, &words("compare clash --across effect_pct"));
    assert!(refused.contains("two cases named"), "{refused}");

    // One case name with a different effect_pct in each of two runs: --across would read only
    // the first run's value.
    for (label, effect) in [("plain", 0), ("changed", 10)] {
        let file = write_file(
            dir.path(),
            &format!("{label}.toml"),
            format!(
                "description = \"{label}\"\niterations = 2\nwarmup = 0\n[[case]]\n\
                 workload = \"fake\"\neffect_pct = {effect}\n"
            ),
        );
        run_suite(&db, &file, &["--label", label, "--quiet"]);
    }
    let refused = assert_bad_input(&db, &words("compare plain changed --across effect_pct"));
    assert!(
        refused.contains("has effect_pct=0.0 in run 4 and effect_pct=10.0 in run 5"),
        "{refused}"
    );
}
