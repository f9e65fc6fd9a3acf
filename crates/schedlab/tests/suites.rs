//! Every built-in suite's dry run, snapshotted: the cases in order, the plan and the estimate.
//! A fixed --order-seed and an empty database make the listing the same on every machine.
mod common;
use common::*;

#[test]
fn dry_run_of_every_builtin_suite() {
    let (_d, db) = temp_db();
    let suites: Vec<String> = stdout_of_success(&db, &["list"])
        .lines()
        .filter_map(|l| l.strip_prefix("suite"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(suites.len() >= 2, "{suites:?}");
    for suite in suites {
        let plan = stdout_of_success(
            &db,
            &["run", "--suite", &suite, "--dry-run", "--order-seed", "1"],
        );
        insta::assert_snapshot!(format!("dry_run_{suite}"), plan);
    }
}

/// Counts relative to the machine (`"2x"`, `"50%"`) run as numbers of this machine's online
/// CPUs and are stored as such in the run's plan; bad forms are one-line exit-2 errors naming
/// the key, its line and column.
#[test]
fn relative_counts_are_resolved_and_stored() {
    let (dir, db) = temp_db();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus: u64 = online
        .trim()
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum();
    let suite = write_file(
        dir.path(),
        "relative.toml",
        "description = \"per-machine thread counts\"\niterations = 1\nwarmup = 0\n\
         [[case]]\nworkload = \"syscall\"\ncalls = 2000\n[case.matrix]\nthreads = [\"1x\", \"2x\"]\n\
         [[case]]\nworkload = \"messaging\"\ngroups = \"50%\"\nfds = 2\nloops = 10\n",
    );
    run_suite(&db, &suite, &["--quiet", "--format", "json"]);
    let doc = show_json(&db, "1");
    let cases = doc["runs"][0]["cases"].as_array().unwrap();
    assert_eq!(cases[0]["params"]["threads"], cpus);
    assert_eq!(cases[1]["params"]["threads"], 2 * cpus);
    assert_eq!(cases[2]["params"]["groups"], (cpus / 2).max(1));
    assert!(
        cases[1]["name"]
            .as_str()
            .unwrap()
            .contains(&format!("threads={}", 2 * cpus)),
        "{}",
        cases[1]["name"]
    );

    for bad in ["0x", "150%%", "-1x", "lots"] {
        std::fs::write(
            &suite,
            format!(
                "description = \"bad\"\n[[case]]\nworkload = \"fanout\"\nworkers = \"{bad}\"\n"
            ),
        )
        .unwrap();
        let stderr = assert_bad_input(
            &db,
            &["run", "--suite", suite.to_str().unwrap(), "--dry-run"],
        );
        assert!(
            stderr.starts_with("schedlab: suite ")
                && stderr.contains(&format!("line 4, column 1: workers = \"{bad}\"")),
            "{bad}: {stderr}"
        );
    }
}
