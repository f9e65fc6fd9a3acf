//! Text output fits a plain-text mail: `compare` (every style, with cpudl's long case names and
//! with `--across`), `stat`, `show` and `history` keep every line within 80 columns by default,
//! on runs shaped as the seeds' (cpudl-sweep, three fake cases), imported tool outputs and
//! ministat-style number files.
mod common;

use common::*;

const WIDTH: usize = 80;

fn assert_within(text: &str, what: &str) {
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > WIDTH).collect();
    assert!(
        wide.is_empty(),
        "{what}: {} lines over {WIDTH} columns, the first:\n{}\n\nwhole output:\n{text}",
        wide.len(),
        wide[0]
    );
    assert!(!text.trim().is_empty(), "{what}: no output");
}

const STYLES: [&str; 6] = [
    "--style schedtests",
    "--style mmtests",
    "--style mmtests --normalise",
    "--style ministat",
    "--style benchstat",
    "--style lkp",
];

#[test]
fn compare_stat_show_and_history_keep_within_80_columns() {
    let (dir, db) = temp_db();
    // Seed 002: cpudl-sweep's 33 cases, whose names run to 86 characters; two runs a label.
    for label in ["heap-a", "heap-b", "heap-a", "heap-b"] {
        expect_success(schedlab(&db).args(words(&format!(
            "run --suite cpudl-sweep --scale 0.01 --iterations 2 --warmup 0 -q --label {label}"
        ))));
    }
    // Three fake cases a side, one 5 % slower and one 5 % faster.
    for run in 0..3 {
        for (seed, effects, label) in [
            (1 + 100 * run, [0.0, 0.0, 0.0], "base"),
            (11 + 100 * run, [5.0, 0.0, -5.0], "cand"),
        ] {
            let file = write_file(
                dir.path(),
                &format!("{label}-{run}.toml"),
                three_fake_cases(seed, effects),
            );
            run_suite(&db, &file, &["--label", label, "-q"]);
        }
    }
    // schbench's output of several intervals, imported as one run.
    expect_success(
        schedlab(&db)
            .args(words("import --tool schbench --label sch"))
            .arg(import_fixture("schbench-2022-intervals.txt")),
    );
    // Seed 000's perf bench transcripts and seed 004's hackbench, each imported twice as two
    // sides (the same figures: the layout is what is looked at).
    for (tool, file, label) in [
        ("perf-bench", "perf-pipe-repeated.txt", "perf"),
        ("perf-bench", "perf-messaging-simple-repeated.txt", "msg"),
        ("hackbench", "hackbench-repeated.txt", "hb"),
    ] {
        for side in ["a", "b"] {
            expect_success(
                schedlab(&db)
                    .args([
                        "import",
                        "--tool",
                        tool,
                        "--label",
                        &format!("{label}-{side}"),
                    ])
                    .arg(import_fixture(file)),
            );
        }
    }
    for style in STYLES {
        for sides in [
            "heap-a heap-b",
            "base cand",
            "heap-a --across variant=orig,fast",
            "perf-a perf-b",
            "msg-a msg-b",
            "hb-a hb-b",
        ] {
            let line = format!("compare {sides} {style}");
            assert_within(&stdout_of_success(&db, &words(&line)), &line);
        }
    }
    let brief = stdout_of_success(&db, &words("compare base cand --brief"));
    assert_within(&brief, "compare --brief");
    let footer = brief.lines().last().unwrap();
    assert!(footer.starts_with("2 of 3 judged rows marked"), "{brief}");

    for run in ["heap-a", "base", "sch", "perf-a", "msg-a", "hb-a"] {
        let line = format!("show {run}");
        assert_within(&stdout_of_success(&db, &words(&line)), &line);
    }
    let case =
        "cpudl:orig cpus=64 ops=1000 mix=cpudl-bench (no real deletes: cpus is a multiple of 8)";
    let history = stdout_of_success(&db, &["history", case]);
    assert_within(&history, "history");

    // Seed 004's hackbench times as ministat reads them.
    write_file(
        dir.path(),
        "hb_proc.txt",
        "1.843\n1.975\n1.991\n2.038\n2.046\n",
    );
    write_file(
        dir.path(),
        "hb_thr.txt",
        "2.354\n2.378\n2.420\n2.462\n2.834\n",
    );
    for style in STYLES {
        let out = expect_success(
            schedlab(&db)
                .current_dir(dir.path())
                .arg("stat")
                .args(words(style))
                .args(["hb_proc.txt", "hb_thr.txt"]),
        );

        assert_within(
            &String::from_utf8(out.stdout).unwrap(),
            &format!("stat {style}"),
        );
    }
}
