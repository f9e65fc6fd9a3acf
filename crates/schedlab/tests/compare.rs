//! End-to-end tests of `schedlab compare` and `schedlab stat`: every style and format snapshotted
//! from fake-workload runs (deterministic), fingerprint refusal, CI gating, and bad input.
//! Each side is three runs under one label, so rows are judged on runs without a calibration.
use std::path::PathBuf;

use predicates::prelude::*;

mod common;
use common::*;

/// A baseline and a candidate of three fake cases, three runs each: the candidate is 5 % slower
/// in the first, unchanged in the second and 5 % faster in the third; every run has its own seed
/// (noise).
fn stored_pair() -> (common::TestDir, PathBuf) {
    let (dir, db) = temp_db();
    for run in 0..3 {
        for (seed, effects, label) in [
            (1 + 100 * run, [0.0, 0.0, 0.0], "base"),
            (11 + 100 * run, [5.0, 0.0, -5.0], "cand"),
        ] {
            let name = format!("{label}-{run}.toml");
            let file = write_file(dir.path(), &name, three_fake_cases(seed, effects));
            run_suite(&db, &file, &["--label", label]);
        }
    }
    (dir, db)
}

#[test]
fn a_candidate_without_every_case_has_a_geomean_line_of_its_own() {
    let (dir, db) = stored_pair();
    // Two runs of the first two cases only: the third case's line is missing from this side.
    for run in 0..2 {
        let full = three_fake_cases(31 + 100 * run, [0.0; 3]);
        let two_cases = &full[..full.rfind("[[case]]").unwrap()];
        let file = write_file(dir.path(), &format!("short-{run}.toml"), two_cases);
        run_suite(&db, &file, &["--label", "short"]);
    }
    let out = stdout_of_success(&db, &words("compare base cand short --style benchstat"));
    let geomeans: Vec<&str> = out.lines().filter(|l| l.starts_with("geomean")).collect();
    // Per metric: `cand` against the geomean of three cases, `short` against that of two.
    assert_eq!(geomeans.len(), 4, "{out}");
    assert!(geomeans.iter().all(|l| l.starts_with("geomean ⁵")), "{out}");
    assert!(out.contains("⁵ a geomean line per baseline"), "{out}");
    let c = json_of_success(&db, &words("compare base cand short --format json"));
    let bases: Vec<f64> = c["geomeans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["metric"] == "usec_per_op")
        .map(|g| g["base"].as_f64().unwrap())
        .collect();
    assert_eq!(bases.len(), 2);
    for base in bases {
        let shown = format!("{base:.1}");
        assert!(
            geomeans
                .iter()
                .any(|l| words(l)[2].starts_with(&shown[..3])),
            "no geomean line shows the base {base}:\n{out}"
        );
    }
}

#[test]
fn sides_made_in_two_blocks_of_time_are_named_and_interleaved_ones_are_not() {
    let note = "all came before those of";
    let (dir, db) = stored_pair();
    // The footer's sentences as they read before the text wrapped them at 80 columns.
    let compared = |line: &str| unwrapped(&stdout_of_success(&db, &words(line)));
    let interleaved = compared("compare base cand");
    assert!(!interleaved.contains(note), "{interleaved}");
    for (label, seed) in [("early", 51), ("early", 52), ("late", 61), ("late", 62)] {
        let file = write_file(
            dir.path(),
            &format!("{label}-{seed}.toml"),
            three_fake_cases(seed, [0.0; 3]),
        );
        run_suite(&db, &file, &["--label", label]);
    }
    let blocks = compared("compare early late");
    let line = blocks
        .lines()
        .find(|l| l.contains(note))
        .unwrap_or_else(|| panic!("{blocks}"));
    assert!(line.starts_with("the runs of early ("), "{line}");
    assert!(line.contains("those of late ("), "{line}");
    // The candidate first in time is named first.
    let reversed = compared("compare late early");
    assert!(reversed.contains("the runs of early ("), "{reversed}");
    // The baseline, made before the late runs, is a block of its own against them.
    let mixed = compared("compare base late");
    assert!(mixed.contains(note), "{mixed}");
}

/// Text whose wrapped lines (continued with an indent of two) are joined back into one.
fn unwrapped(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        match line.strip_prefix("  ") {
            Some(rest) if !out.is_empty() => {
                out.pop();
                out.push(' ');
                out.push_str(rest.trim_start());
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn unmatched_cases_are_not_compared() {
    let dir = temp_dir();
    let db = dir.path().join("results.db");
    schedlab(&db)
        .args(words("run fake --value-usec 10 --label a"))
        .assert()
        .success();
    schedlab(&db)
        .args(words("run fake --value-usec 20 --label b"))
        .assert()
        .success();
    let stderr = assert_bad_input(&db, &words("compare a b"));
    assert!(stderr.contains("nothing to compare"), "{stderr}");
}

/// A run on both sides would be counted as evidence for each: `compare A A` would find the
/// sides alike by construction. Refused, naming the runs; `report` loads sides the same way.
#[test]
fn a_run_on_both_sides_is_refused() {
    let (dir, db) = stored_pair();
    let stderr = assert_bad_input(&db, &words("compare base base"));
    assert!(
        stderr.contains("runs 1, 3, 5 are on both sides (base and base)"),
        "{stderr}"
    );
    let stderr = assert_bad_input(&db, &words("compare base cand 3"));
    assert!(
        stderr.contains("run 3 is on both sides (base and 3)"),
        "{stderr}"
    );
    let html = dir.path().join("r.html");
    let stderr = assert_bad_input(
        &db,
        &["report", "base", "5", "--html", html.to_str().unwrap()],
    );
    assert!(stderr.contains("run 5 is on both sides"), "{stderr}");
    assert!(!html.exists());
}

#[test]
fn every_style_and_format_snapshot() {
    let (_dir, db) = stored_pair();
    for style in ["schedtests", "mmtests", "ministat", "benchstat", "lkp"] {
        for format in ["text", "markdown", "csv"] {
            let text = stdout_of_success(
                &db,
                &words(&format!(
                    "compare base cand --style {style} --format {format}"
                )),
            );
            insta::assert_snapshot!(format!("compare_{style}_{format}"), text);
        }
    }
    // mmtests normalised to the baseline, as the seed's tables are (issue 40).
    let normalised =
        stdout_of_success(&db, &words("compare base cand --style mmtests --normalise"));
    insta::assert_snapshot!("compare_mmtests_normalised_text", normalised);
    // The kernel release is this machine's; everything else is deterministic. The text is not
    // parsed and re-printed: float parsing differs with serde_json's features.
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let json = stdout_of_success(&db, &words("compare base cand --format json"));
    insta::assert_snapshot!("compare_json", json.replace(kernel.trim(), "<kernel>"));
}

/// `ops_per_sec` is the reciprocal of `usec_per_op`: a change in one is one effect, judged once.
/// The ops_per_sec rows are shown with usec_per_op's verdict, outside the family and the counts,
/// and the HTML counts effects.
#[test]
fn a_change_in_usec_per_op_is_one_judged_effect_not_two() {
    let (dir, db) = stored_pair();
    let doc = json_of_success(&db, &words("compare base cand --format json"));
    assert_eq!(doc["footer"]["comparisons"], 3, "{}", doc["footer"]);
    assert_eq!(doc["footer"]["marked"], 2, "{}", doc["footer"]);
    let rows = doc["rows"].as_array().unwrap();
    for row in rows {
        let case = row["case"].as_str().unwrap();
        match row["metric"].as_str().unwrap() {
            "usec_per_op" => {
                assert!(row.get("restates").is_none(), "{row}");
                assert!(row["q_value"].is_number(), "{row}");
            }
            "ops_per_sec" => {
                assert_eq!(row["restates"]["metric"], "usec_per_op", "{row}");
                assert_eq!(row["restates"]["how"], "reciprocal", "{row}");
                assert!(
                    row["q_value"].is_null() && row["p_value"].is_null(),
                    "{row}"
                );
                let usec = rows
                    .iter()
                    .find(|r| r["case"] == case && r["metric"] == "usec_per_op")
                    .unwrap();
                assert_eq!(row["verdict"], usec["verdict"], "{case}");
            }
            other => panic!("{other}"),
        }
    }
    let regressions = rows.iter().filter(|r| r["verdict"] == "regression").count();
    assert_eq!(regressions, 2, "the row and its restatement");
    let page = dir.path().join("r.html");
    expect_success(
        schedlab(&db)
            .args(words("report base cand --html"))
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<b>1</b> ** regression") && html.contains("<b>1</b> ** improvement"),
        "the chips count effects"
    );
    let text = stdout_of_success(&db, &words("compare base cand"));
    assert!(text.contains("(**)"), "{text}");
    assert!(text.contains("2 of 3 judged rows marked"), "{text}");
}

#[test]
fn json_rows_carry_the_documented_fields() {
    let (_dir, db) = stored_pair();
    let doc = json_of_success(&db, &words("compare base cand --format json"));
    assert_eq!(doc["schema_version"], 3);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 cases x 2 primary metrics");
    for row in rows {
        for field in [
            "case",
            "metric",
            "design",
            "change_pct",
            "ratio_ci",
            "test",
            "variance",
            "p_value",
            "q_value",
            "mde_pct",
            "verdict",
        ] {
            assert!(row.get(field).is_some(), "row lacks {field}: {row}");
        }
        let verdict = row["verdict"].as_str().unwrap();
        assert!([
            "regression",
            "improvement",
            "inconclusive",
            "equivalent",
            "noisy",
            "not_judged"
        ]
        .contains(&verdict));
        assert_eq!(row["design"], "runs");
        assert_eq!(row["base_side"]["n"], 3, "three runs, not 24 iterations");
    }
    assert_eq!(
        doc["footer"]["comparisons"], 3,
        "ops_per_sec restates usec_per_op"
    );
    assert_eq!(doc["footer"]["tested_on"], "log");
    assert_eq!(
        doc["footer"]["units"],
        serde_json::json!([{ "kind": "runs", "mean_of": "log", "boots_recorded": true }])
    );
}

#[test]
fn a_regression_fails_the_gate() {
    let (_dir, db) = stored_pair();
    schedlab(&db)
        .args(words("compare base cand --fail-on-regression"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("**"))
        .stderr(predicate::str::contains("regression"));
    schedlab(&db)
        .args(words("compare base cand"))
        .assert()
        .success();
}

#[test]
fn refuses_different_machines_unless_told() {
    let (_dir, db) = stored_pair();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET fingerprint_json = json_set(fingerprint_json, '$.cpu_model', 'Other CPU') WHERE label = 'cand'",
        [],
    )
    .unwrap();
    drop(conn);
    schedlab(&db)
        .args(words("compare base cand"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("CPU model differs"));
    schedlab(&db)
        .args(words("compare base cand --allow-fingerprint-mismatch"))
        .assert()
        .success();
}

#[test]
fn compare_bad_input_is_one_line_exit_2() {
    let (_dir, db) = stored_pair();
    assert_each_bad_input(
        &db,
        &[
            "compare base",
            "compare base no-such-label",
            "compare base cand --confidence 97",
            "compare base cand --fdr 0",
            "compare base cand --min-effect -1",
            "compare base cand --style fancy",
            "compare base cand --normalise",
            "compare base cand --style mmtests --normalise --format csv",
            "compare base cand --brief --format json",
            "compare base cand --metric no_such_metric",
        ],
    );
}

/// ministat's 99.5 % level reads as 99.5 % in every place that names the level, not "100%".
#[test]
fn a_level_of_99_5_is_printed_as_such() {
    let (dir, db) = stored_pair();
    let text = stdout_of_success(&db, &words("compare base cand --confidence 99.5"));
    assert!(text.contains("(99.5% CI)"), "{text}");
    let page = dir.path().join("r.html");
    expect_success(
        schedlab(&db)
            .args(words("report base cand --confidence 99.5 --html"))
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("99.5% CI") && !html.contains("100% CI"));
}

#[test]
fn stat_matches_ministat_on_hackbench_times() {
    let dir = tempfile::tempdir().unwrap();
    let x = write_file(
        dir.path(),
        "hb_proc.txt",
        "# hackbench -g 4 -l 1000\n1.843\n1.975\n1.991\n2.038\n2.046\n",
    );
    let plus = write_file(
        dir.path(),
        "hb_thr.txt",
        "2.354\n2.378\n2.420\n2.462\n2.834\n",
    );
    let out = expect_success(
        schedlab(&dir.path().join("unused.db"))
            .arg("stat")
            .arg(&x)
            .arg(&plus),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // ministat 20150715's own output for these files, line for line.
    for line in [
        "x   5         1.843         2.046         1.991        1.9786   0.081586151",
        "+   5         2.354         2.834          2.42        2.4896    0.19688779",
        "Difference at 95.0% confidence",
        "\t0.511 +/- 0.219788",
        "\t25.8263% +/- 11.1082%",
        "\t(Student's t, pooled s = 0.1507)",
        "|x         xx  xx                      ++   +  +                          +|",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    let bench = schedlab(&dir.path().join("unused.db"))
        .args(words("stat --style benchstat"))
        .arg(&x)
        .arg(&plus)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bench.stdout).contains("+21.55% (p=0.008 n=5)"));
}

/// A side whose median is 0 (a count that never happened) has no spread in percent however many
/// units it has: its footnote says so, and does not ask for the 6 units it already has. A side
/// of 5 still gets benchstat's "need >= 6".
#[test]
fn benchstat_footnotes_a_zero_median_apart_from_too_few_units() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = write_file(dir.path(), "zeros.txt", "0\n0\n0\n0\n1\n2\n0\n");
    let seven = write_file(dir.path(), "seven.txt", "1\n2\n3\n4\n5\n6\n7\n");
    let five = write_file(dir.path(), "five.txt", "1\n2\n3\n4\n5\n");
    let benchstat = |base: &PathBuf, candidate: &PathBuf| {
        let out = expect_success(
            schedlab(&dir.path().join("unused.db"))
                .args(words("stat --style benchstat"))
                .arg(base)
                .arg(candidate),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = benchstat(&zeros, &seven);
    assert!(text.contains("0 ± ? ³"), "{text}");
    assert!(
        text.contains("³ the median is 0, so its spread has no percentage"),
        "{text}"
    );
    assert!(!text.contains('¹'), "{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout_of_success(
        &dir.path().join("unused.db"),
        &[
            "stat",
            "--format",
            "json",
            zeros.to_str().unwrap(),
            seven.to_str().unwrap(),
        ],
    ))
    .unwrap();
    let figures = &json["rows"][0]["styles"]["benchstat"];
    assert_eq!(figures["base_no_spread"], "zero_median", "{figures}");
    assert_eq!(figures["candidate_no_spread"], serde_json::Value::Null);

    let text = benchstat(&five, &seven);
    assert!(text.contains("± ∞ ¹"), "{text}");
    assert!(text.contains("¹ need >= 6 values per file"), "{text}");
    assert!(!text.contains('³'), "{text}");
}

#[test]
fn stat_rejects_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_file(dir.path(), "good.txt", "1\n2\n3\n");
    let bad = write_file(dir.path(), "bad.txt", "1\n2\nthree\n");
    let short = write_file(dir.path(), "short.txt", "1\n2\n");
    let db = dir.path().join("unused.db");
    let good = good.to_str().unwrap();
    for other in [&bad, &short, &dir.path().join("missing.txt")] {
        assert_bad_input(&db, &["stat", good, other.to_str().unwrap()]);
    }
    assert_bad_input(&db, &["stat", "-c", "97", good, good]);
}

/// `git bisect run` reads 125 as "skip": with `--could-not-test-exit 125` every way a comparison
/// can fail to test anything says so, a regression still exits 1 and a pass 0; without the flag
/// the same situations keep their usual codes.
#[test]
fn could_not_test_exit_lets_git_bisect_skip() {
    let (dir, db) = stored_pair();
    let gate = words("--fail-on-regression --could-not-test-exit 125");
    let code = |args: &[&str]| {
        let out = schedlab(&db).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code(), stderr)
    };
    let with_gate = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(&gate);
        code(&all)
    };
    // Judged rows: a regression is 1, more runs of the baseline's build 0.
    assert_eq!(with_gate(&words("compare base cand")).0, Some(1));
    for run in 0..3 {
        let name = format!("again-{run}.toml");
        let file = write_file(
            dir.path(),
            &name,
            three_fake_cases(21 + 100 * run, [0.0; 3]),
        );
        run_suite(&db, &file, &["--label", "again"]);
    }
    assert_eq!(with_gate(&words("compare base again")).0, Some(0));

    // One run per side and no calibration: nothing judged.
    let one = |label: &str, effect: &str| {
        schedlab(&db)
            .args(words(&format!(
                "run fake --iterations 3 --warmup 0 --effect-pct {effect} --label {label}"
            )))
            .assert()
            .success();
    };
    one("lone-base", "0");
    one("lone-cand", "20");
    let (status, stderr) = with_gate(&words("compare lone-base lone-cand"));
    assert_eq!(status, Some(125), "{stderr}");
    assert!(
        stderr.starts_with("schedlab: could not test: none of the 2 rows"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        code(&words("compare lone-base lone-cand --fail-on-regression")).0,
        Some(0)
    );

    // A candidate whose run failed: no complete run.
    schedlab(&db)
        .args(words("run fake --fail-at 0 --label broken"))
        .assert()
        .code(1);
    let (status, stderr) = with_gate(&words("compare lone-base broken"));
    assert_eq!(status, Some(125), "{stderr}");
    assert!(
        stderr.contains("broken has no complete run (run "),
        "{stderr}"
    );
    assert_eq!(code(&words("compare lone-base broken")).0, Some(2));

    // A candidate that never stored a run; a missing baseline is still a set-up error.
    assert_eq!(with_gate(&words("compare base never-ran")).0, Some(125));
    assert_eq!(with_gate(&words("compare never-ran cand")).0, Some(2));
    // No case in common.
    let other = write_file(
        dir.path(),
        "other.toml",
        "description = \"x\"\niterations = 2\nwarmup = 0\n[[case]]\nworkload = \"fake\"\nvalue_usec = 7\n",
    );
    run_suite(&db, &other, &words("--label elsewhere"));
    assert_eq!(with_gate(&words("compare base elsewhere")).0, Some(125));

    // `report` gates alike, after writing its page.
    let page = dir.path().join("bisect.html");
    let (status, stderr) = with_gate(&words(&format!(
        "report lone-base lone-cand --html {}",
        page.to_str().unwrap()
    )));
    assert_eq!(status, Some(125), "{stderr}");
    assert!(page.exists());

    // The code is for the gate: alone, or 0, it is bad input.
    assert_each_bad_input(
        &db,
        &[
            "compare base cand --could-not-test-exit 125",
            "compare base cand --fail-on-regression --could-not-test-exit 0",
            "compare base cand --fail-on-regression --could-not-test-exit 256",
        ],
    );
}

/// With one run per side, std% is that run's iterations' sd ÷ mean, the number `show` prints:
/// ops_per_sec of a widely spread fake run is skewed, where e^sd(ln x) − 1 would be far larger.
#[test]
fn one_run_per_side_prints_the_std_pct_that_show_prints() {
    let (_dir, db) = temp_db();
    for (label, seed) in [("a", "3"), ("b", "4")] {
        expect_success(schedlab(&db).args(words(&format!(
            "run fake --spread-pct 40 --iterations 8 --label {label} --seed {seed} -q"
        ))));
    }
    let shown = show_json(&db, "a");
    let compared = json_of_success(&db, &words("compare a b --format json"));
    for name in ["usec_per_op", "ops_per_sec"] {
        let metric = metric(&shown["runs"][0]["cases"][0], name);
        let expected = metric["summary"]["std_pct"].as_f64().unwrap();
        let row = find_where(&compared["rows"], "metric", name);
        let printed = row["base_side"]["spread_pct"].as_f64().unwrap();
        assert!(
            (printed - expected).abs() < 1e-9 * expected,
            "{name}: {printed} against show's {expected}"
        );
    }
}
