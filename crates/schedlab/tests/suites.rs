//! Every built-in suite's dry run, snapshotted: the cases in order, the plan and the estimate.
//! A fixed --order-seed and an empty database make the listing the same on every machine.
use assert_cmd::Command;

#[test]
fn dry_run_of_every_builtin_suite() {
    let dir = tempfile::tempdir().unwrap();
    let list = Command::cargo_bin("schedlab")
        .unwrap()
        .arg("list")
        .output()
        .unwrap();
    let suites: Vec<String> = String::from_utf8(list.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("suite"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(suites.len() >= 2, "{suites:?}");
    for suite in suites {
        let out = Command::cargo_bin("schedlab")
            .unwrap()
            .env("SCHEDLAB_DB", dir.path().join("empty.db"))
            .args(["run", "--suite", &suite, "--dry-run", "--order-seed", "1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{suite}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        insta::assert_snapshot!(
            format!("dry_run_{suite}"),
            String::from_utf8(out.stdout).unwrap()
        );
    }
}

/// Counts relative to the machine (`"2x"`, `"50%"`) run as numbers of this machine's online
/// CPUs and are stored as such in the run's plan; bad forms are one-line exit-2 errors naming
/// the key, its line and column.
#[test]
fn relative_counts_are_resolved_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus: u64 = online
        .trim()
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum();
    let suite = dir.path().join("relative.toml");
    std::fs::write(
        &suite,
        "description = \"per-machine thread counts\"\niterations = 1\nwarmup = 0\n\
         [[case]]\nworkload = \"syscall\"\ncalls = 2000\n[case.matrix]\nthreads = [\"1x\", \"2x\"]\n\
         [[case]]\nworkload = \"messaging\"\ngroups = \"50%\"\nfds = 2\nloops = 10\n",
    )
    .unwrap();
    let schedlab = || {
        let mut cmd = Command::cargo_bin("schedlab").unwrap();
        cmd.env("SCHEDLAB_DB", &db).env_remove("XDG_DATA_HOME");
        cmd
    };
    let out = schedlab()
        .args(["run", "--suite"])
        .arg(&suite)
        .args(["--quiet", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = schedlab()
        .args(["show", "1", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
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
        let out = schedlab()
            .args(["run", "--suite"])
            .arg(&suite)
            .arg("--dry-run")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("schedlab: suite ")
                && stderr.contains(&format!("line 4, column 1: workers = \"{bad}\"")),
            "{bad}: {stderr}"
        );
    }
}
