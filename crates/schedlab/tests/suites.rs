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
