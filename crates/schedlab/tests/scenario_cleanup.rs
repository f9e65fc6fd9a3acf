//! The cgroups a `scenario` run makes are removed however it ends, checked with real signals on a
//! real cpu controller (CI runs as root; without one the test fails saying so): Ctrl-C, SIGHUP
//! and SIGTERM stop it cleanly and it removes them; the iteration's deadline (the watchdog) fails
//! it and it removes them; after SIGKILL, which nothing survives to clean up after, the next
//! schedlab command removes them and names them. One test, its steps one after another: the
//! removal by "the next command" is any schedlab's, so no other test of this binary may run
//! beside it.
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;

/// The cgroup hierarchies this machine mounts (v1 hierarchies and the v2 one).
fn cgroup_roots() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            matches!(fields.get(2), Some(&"cgroup" | &"cgroup2")).then(|| PathBuf::from(fields[1]))
        })
        .collect()
}

/// The cgroups schedlab process `pid` made.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("schedlab-{pid}-");
    cgroup_roots()
        .iter()
        .flat_map(|root| std::fs::read_dir(root).into_iter().flatten().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// A run of a 30 s scenario whose one group runs in a cgroup; returns once its cgroup exists.
fn start(db: &Path, scenario: &Path, extra: &[&str]) -> (Running, Vec<PathBuf>) {
    let mut args = vec!["run", "--iterations", "1", "--warmup", "0", "--quiet"];
    args.extend(extra);
    args.extend(["scenario", "--file", scenario.to_str().unwrap()]);
    let mut child = background(db, &args).start();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let made = cgroups_of(child.id());
        if !made.is_empty() {
            return (child, made);
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before making its cgroup"
        );
        assert!(
            Instant::now() < deadline,
            "no cgroup was made within a minute"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_scenarios_cgroups_are_removed_however_the_run_ends() {
    let controller = cgroup_roots().into_iter().any(|root| {
        root.join("cpu.cfs_quota_us").exists()
            || std::fs::read_to_string(root.join("cgroup.controllers"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
    });
    assert!(
        controller,
        "this test needs the cgroup cpu controller mounted (cgroup v1 `cpu` or v2), as CI has"
    );
    let (_dir, db, scenario) = temp_db_with(
        "boxed.toml",
        r#"
name = "boxed"
duration = "30s"
[cgroup.box]
quota = "20ms"
period = "100ms"
[[group]]
name = "worker"
count = 2
cgroup = "box"
phases = [{ run = "1ms" }, { sleep = "4ms" }]
"#,
    );

    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGHUP, 129),
        (libc::SIGTERM, 143),
    ] {
        let (child, made) = start(&db, &scenario, &[]);
        let pid = child.id();
        assert!(made.iter().all(|dir| dir.is_dir()), "{made:?}");
        send_signal(&child, signal);
        let (exit, stderr) = exit_code_and_stderr(child);
        assert_eq!(exit, Some(code), "signal {signal}: {stderr}");
        assert!(
            cgroups_of(pid).is_empty(),
            "signal {signal} left {:?}",
            cgroups_of(pid)
        );
        assert_no_strays(&db);
    }

    // The watchdog: the iteration's deadline passes long before the scenario's 30 s.
    let (child, _) = start(&db, &scenario, &["--iteration-timeout", "3"]);
    let pid = child.id();
    let (exit, stderr) = exit_code_and_stderr(child);
    assert_eq!(exit, Some(1), "{stderr}");
    assert!(stderr.contains("no result within 3 s"), "{stderr}");
    assert!(
        cgroups_of(pid).is_empty(),
        "the watchdog left {:?}",
        cgroups_of(pid)
    );
    assert_no_strays(&db);

    // SIGKILL: the tasks die with schedlab (PR_SET_PDEATHSIG), the cgroups stay, empty, until
    // the next command, which removes them and says so.
    let (child, made) = start(&db, &scenario, &[]);
    let pid = child.id();
    send_signal(&child, libc::SIGKILL);
    let (exit, _) = exit_code_and_stderr(child);
    assert_eq!(exit, None, "killed by a signal");
    assert_no_strays(&db);
    assert_eq!(
        cgroups_of(pid),
        made,
        "SIGKILL gave nothing a chance to clean up"
    );
    let out = schedlab(&db).args(["db", "check"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for cgroup in &made {
        let line = format!(
            "schedlab: removed cgroup {}, left by schedlab pid {pid}, which is no longer running",
            cgroup.display()
        );
        assert!(stderr.contains(&line), "{stderr}");
    }
    assert!(cgroups_of(pid).is_empty(), "{:?}", cgroups_of(pid));
    // Once removed, the next command has nothing to say.
    let out = schedlab(&db).args(["db", "check"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("removed cgroup"),
        "{out:?}"
    );
}
