//! Every built-in suite's dry run, snapshotted: the cases in order, the plan and the estimate.
//! A fixed --order-seed (for a random-order suite; a seed alone asks for a random order) and an
//! empty database make the listing the same on every machine. And
//! the reports of a random-order suite list its cases as written.
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
        let mut plan = stdout_of_success(&db, &["run", "--suite", &suite, "--dry-run"]);
        if plan.lines().next().unwrap().contains("random order") {
            plan = stdout_of_success(
                &db,
                &["run", "--suite", &suite, "--dry-run", "--order-seed", "1"],
            );
        }
        match machine_dependent_cases(&suite) {
            // Task counts relative to the CPUs make a different listing on every machine size:
            // the snapshots hold the cases for 2 and for 64 CPUs, and this machine's dry run must
            // list what the suite makes of its own count.
            Some(for_this_machine) => {
                let listed: Vec<&str> = plan
                    .lines()
                    .filter_map(|l| l.trim_start().split_once("  "))
                    .filter(|(index, _)| index.parse::<usize>().is_ok())
                    .filter_map(|(_, rest)| rest.trim_start().split("  ~").next())
                    .collect();
                assert_eq!(listed, for_this_machine, "{suite}:\n{plan}");
                for cpus in [2, 64] {
                    insta::assert_snapshot!(
                        format!("cases_{suite}_on_{cpus}_cpus"),
                        case_names(&suite, cpus).join("\n")
                    );
                }
            }
            None => insta::assert_snapshot!(format!("dry_run_{suite}"), plan),
        }
    }
}

/// A built-in suite's case names on a machine with `cpus` online CPUs.
fn case_names(suite: &str, cpus: u32) -> Vec<String> {
    let text = schedlab_core::suite::BUILTIN_SUITES
        .iter()
        .find(|(name, _)| *name == suite)
        .map(|(_, text)| *text)
        .unwrap();
    schedlab_core::suite::Suite::parse_for(suite, text, cpus)
        .unwrap()
        .cases
        .iter()
        .map(|case| case.case_name())
        .collect()
}

/// This machine's case names of a suite whose cases depend on the CPU count, `None` for the rest.
fn machine_dependent_cases(suite: &str) -> Option<Vec<String>> {
    (case_names(suite, 2) != case_names(suite, 64)).then(|| {
        let online = schedlab_core::fingerprint::online_cpu_count();
        case_names(suite, online)
    })
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
    run_suite(&db, &suite, &words("--quiet --format json"));
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

/// A random-order suite's runs each take their own order, and every report lists the cases as
/// the suite does: `show` (with the seed in its header), `compare`'s rows and `changes`.
#[test]
fn reports_list_a_random_order_suite_as_written() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "m.toml",
        "description = \"m\"\niterations = 2\nwarmup = 0\norder = \"random\"\n\
         [[case]]\nworkload = \"fake\"\n[case.matrix]\nvalue_usec = [50, 30, 40, 10, 20, 60]\n",
    );
    let listed: Vec<String> = [50, 30, 40, 10, 20, 60]
        .iter()
        .map(|v| format!("fake:value={v} spread=1"))
        .collect();
    for (label, seed) in [("a", "3"), ("b", "4")] {
        run_suite(&db, &suite, &["--label", label, "--order-seed", seed]);
    }
    let names = |cases: &serde_json::Value| -> Vec<String> {
        cases
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut orders = Vec::new();
    for label in ["a", "b"] {
        let run = &show_json(&db, label)["runs"][0];
        assert_eq!(names(&run["cases"]), listed, "{label}");
        orders.push(order_run(&db, label));
    }
    assert!(
        orders.iter().all(|ran| *ran != listed) && orders[0] != orders[1],
        "each run ran in an order of its own: {orders:?}"
    );
    let text = stdout_of_success(&db, &words("show a"));
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("(random order, --order-seed 3)"),
        "{text}"
    );
    let compared = json_of_success(&db, &words("compare a b --format json"));
    let rows: Vec<String> = compared["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "usec_per_op")
        .map(|r| r["case"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rows, listed);
    let changes = json_of_success(&db, &words("changes --format json"))["changes"].clone();
    let looked_at: Vec<String> = changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(looked_at, listed);
}

/// The cases of the run `label` in the order they ran, by their first iteration's start in
/// `show --format csv`.
fn order_run(db: &std::path::Path, label: &str) -> Vec<String> {
    let csv = stdout_of_success(db, &["show", label, "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (case, started) = (column("case"), column("started_at_ns"));
    let mut firsts: Vec<(i64, String)> = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let at: i64 = cells[started].parse().unwrap();
        match firsts.iter_mut().find(|(_, c)| c == cells[case]) {
            Some(first) => first.0 = first.0.min(at),
            None => firsts.push((at, cells[case].to_string())),
        }
    }
    firsts.sort();
    firsts.into_iter().map(|(_, case)| case).collect()
}

/// A matrix over a parameter the case name leaves out (`fake`'s seed) makes two cases of one
/// name, whose iterations would be stored as one case's: refused before anything runs.
#[test]
fn cases_sharing_a_name_are_refused() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "same-name.toml",
        "description = \"two seeds\"\n[[case]]\nworkload = \"fake\"\n[case.matrix]\nseed = [1, 2]\n",
    );
    let err = assert_bad_input(&db, &["run", "--suite", suite.to_str().unwrap()]);
    assert!(
        err.contains("two cases are named `fake:value=100 spread=1` but differ (seed 1 and 2)"),
        "{err}"
    );
    assert!(!db.exists(), "nothing stored");

    // A key only the second case sets is named too.
    let suite = write_file(
        dir.path(),
        "one-sets.toml",
        "description = \"one fails\"\n[[case]]\nworkload = \"fake\"\n\
         [[case]]\nworkload = \"fake\"\nfail_at = 5\n",
    );
    let err = assert_bad_input(&db, &["run", "--suite", suite.to_str().unwrap()]);
    assert!(err.contains("but differ (fail_at unset and 5)"), "{err}");
}

/// A seed is only ever of a random order: alone it asks for one, against `--order listed` it is
/// refused.
#[test]
fn an_order_seed_alone_asks_for_a_random_order() {
    let (_d, db) = temp_db();
    let plan = stdout_of_success(&db, &words("run --suite quick --dry-run --order-seed 5"));
    assert!(
        plan.lines()
            .next()
            .unwrap()
            .contains("random order (--order-seed 5)"),
        "{plan}"
    );
    let refused = assert_bad_input(
        &db,
        &words("run --suite quick --dry-run --order listed --order-seed 5"),
    );
    assert!(refused.contains("--order-seed"), "{refused}");
}
