//! End-to-end tests of campaigns whose kernels boot in QEMU guests (`campaign start --vm`,
//! `campaign run`), with real kernels under TCG: Debian's 6.1 and 6.12 cloud images (fetched by
//! `.ci/guest-kernels`), QEMU, and the static musl schedlab as the guests' /init. A two-kernel
//! campaign in ABBA order with its runs stored as each guest's own kernel on two NUMA nodes, the
//! accelerator recorded and `compare` refusing a TCG verdict unless asked; a guest that panics
//! ends its slot at the boot deadline with the console's tail kept; Ctrl-C and SIGKILL of
//! `campaign run` leave no QEMU behind. Where the tools are missing the tests say so and stop,
//! and fail under SCHEDLAB_REQUIRE_TOOLS (CI), which cannot skip them. One guest at a time: TCG
//! guests on a 2-CPU machine are slow enough alone.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

/// One test's guests at a time.
static ONE_GUEST: Mutex<()> = Mutex::new(());

/// What the tests boot: the static schedlab and the two kernel images.
struct GuestTools {
    binary: PathBuf,
    kernel_6_1: PathBuf,
    kernel_6_12: PathBuf,
}

/// The newest image in `dir` whose name starts with `prefix` and goes on with a digit after it
/// (`vmlinuz-6.1.` must not take `vmlinuz-6.12…`), by version order.
fn newest_image(dir: &Path, prefix: &str) -> Option<PathBuf> {
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix(prefix)?;
            rest.starts_with(|c: char| c.is_ascii_digit()).then(|| {
                let version = name
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|n| n.parse().ok())
                    .collect();
                (version, entry.path())
            })
        })
        .collect();
    found.sort();
    found.pop().map(|(_, path)| path)
}

/// The tools, or why the test cannot run: a failure under SCHEDLAB_REQUIRE_TOOLS, else a line
/// on stderr and `None`.
fn guest_tools() -> Option<GuestTools> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let binary = std::env::var_os("SCHEDLAB_GUEST_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target/x86_64-unknown-linux-musl/release/schedlab"));
    let cache = std::env::var_os("SCHEDLAB_KERNEL_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/schedlab/kernels"))
        })
        .unwrap_or_default();
    let qemu = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join("qemu-system-x86_64").exists());
    let kernel_6_1 = newest_image(&cache, "vmlinuz-6.1.");
    let kernel_6_12 = newest_image(&cache, "vmlinuz-6.12.");
    let mut missing = Vec::new();
    if !qemu {
        missing.push("qemu-system-x86_64 (apt-get install qemu-system-x86)".to_string());
    }
    if !binary.exists() {
        missing.push(format!(
            "the static schedlab {} (.ci/musl-smoke --build-only, or set SCHEDLAB_GUEST_BINARY)",
            binary.display()
        ));
    }
    if kernel_6_1.is_none() || kernel_6_12.is_none() {
        missing.push(format!(
            "Debian's 6.1 and 6.12 kernel images in {} (.ci/guest-kernels fetches them, or set \
             SCHEDLAB_KERNEL_CACHE)",
            cache.display()
        ));
    }
    if !missing.is_empty() {
        let line = format!("guest campaigns need {}", missing.join("; "));
        assert!(
            std::env::var_os("SCHEDLAB_REQUIRE_TOOLS").is_none(),
            "{line} (SCHEDLAB_REQUIRE_TOOLS)"
        );
        eprintln!("{line}: skipped");
        return None;
    }
    Some(GuestTools {
        binary,
        kernel_6_1: kernel_6_1?,
        kernel_6_12: kernel_6_12?,
    })
}

/// The tiny suite every guest runs: three short cases, two iterations each.
const TINY_SUITE: &str = r#"
description = "a pipe, a messaging and a wakeup case, short"
iterations = 2
warmup = 0

[[case]]
workload = "pipe"
loops = 2000

[[case]]
workload = "messaging"
groups = 1
loops = 20

[[case]]
workload = "wakeup"
runtime = 1
message_threads = 1
workers = 2
"#;

/// `schedlab ARGS` on `db` with its guests' working folders in `tmp` (so every QEMU it starts
/// names `tmp` on its command line) and the static binary as the guests' /init.
fn schedlab_in(db: &Path, tmp: &Path, binary: &Path) -> assert_cmd::Command {
    let mut cmd = schedlab(db);
    cmd.env("TMPDIR", tmp).env("SCHEDLAB_GUEST_BINARY", binary);
    cmd
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_two_kernel_campaign_boots_in_abba_order_and_is_not_judged_under_tcg() {
    let Some(tools) = guest_tools() else { return };
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, db) = temp_db();
    let suite = write_file(dir.path(), "tiny.toml", TINY_SUITE);
    let (a, b) = (
        tools.kernel_6_1.to_str().unwrap(),
        tools.kernel_6_12.to_str().unwrap(),
    );
    let start = expect_success(schedlab(&db).args(campaign_start_named(
        "k",
        a,
        b,
        &[
            "--vm",
            "--boots",
            "4",
            "--accel",
            "tcg",
            "--vcpus",
            "2",
            "--numa",
            "2",
            "--memory",
            "512M",
            "--suite",
            suite.to_str().unwrap(),
        ],
    )));
    let said = String::from_utf8_lossy(&start.stdout);
    assert!(said.contains("4 guest boots in ABBA order"), "{said}");
    assert!(
        said.contains("TCG"),
        "the plan says what TCG is good for: {said}"
    );

    let out = schedlab_in(&db, dir.path(), &tools.binary)
        .args(["campaign", "run", "k"])
        .output()
        .unwrap();
    assert_succeeded(&out, "campaign run");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches(" complete; guest ").count(), 4, "{said}");
    assert!(said.contains("campaign k is complete"), "{said}");
    assert!(
        stderr_of(&out).contains("guests under tcg"),
        "campaign run says the guests are emulated: {}",
        stderr_of(&out)
    );

    // Slots in ABBA order, each run by the kernel of its arm, as the guest itself reported it.
    let release = |image: &str| {
        Path::new(image)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_prefix("vmlinuz-")
            .unwrap()
            .to_string()
    };
    let status = stdout_of_success(&db, &["campaign", "status", "k"]);
    let slots: Vec<(String, String)> = status
        .lines()
        .filter(|l| l.trim_start().starts_with("slot") && l.contains(" run "))
        .map(|l| {
            let w = words(l);
            (w[2].to_string(), w[6].to_string())
        })
        .collect();
    let (ra, rb) = (release(a), release(b));
    assert_eq!(
        slots,
        [
            ("A".to_string(), ra.clone()),
            ("B".to_string(), rb.clone()),
            ("B".to_string(), rb.clone()),
            ("A".to_string(), ra.clone())
        ],
        "{status}"
    );
    for (label, kernel) in [("k-a", &ra), ("k-b", &rb)] {
        let shown = show_json(&db, label);
        let runs = shown["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{label}");
        for run in runs {
            let fp = &run["fingerprint"];
            assert_eq!(run["status"], "complete", "{run}");
            assert_eq!(&fp["kernel_release"], kernel.as_str());
            assert_eq!(fp["online_cpu_count"], 2);
            assert_eq!(fp["numa_nodes"], 2, "a 2-node guest reports 2 nodes");
            assert_eq!(fp["guest"]["accelerator"], "tcg");
            assert_eq!(fp["guest"]["numa"], "0/1");
            assert!(fp["guest"]["qemu_command"]
                .as_str()
                .unwrap()
                .contains("-accel tcg,thread=single"));
            assert!(fp["guest"]["qemu_version"]
                .as_str()
                .unwrap()
                .starts_with("QEMU emulator version"));
            assert!(fp["guest"]["boot_ms"].as_u64().unwrap() > 0);
            assert!(!fp["guest"]["host"]["hostname"].as_str().unwrap().is_empty());
            assert!(fp["libc"].as_str().unwrap().starts_with("musl"), "{fp}");
            let cases = run["cases"].as_array().unwrap();
            assert_eq!(cases.len(), 3);
            for case in cases {
                assert_eq!(case["measured_iterations"], 2, "{case}");
            }
        }
    }

    // The wakeup case's latency histograms came through the serial port whole: its merged
    // percentile tables are read from them.
    let shown = stdout_of_success(&db, &["show", "k-b"]);
    assert!(
        shown.contains("Wakeup Latencies percentiles (usec) runtime 1 (s) (")
            && shown.contains("percentiles of all iterations' samples merged"),
        "{shown}"
    );
    assert!(
        shown.contains(" under tcg (emulated: its timings are QEMU's, not the kernel's) · 2 NUMA nodes · booted in "),
        "{shown}"
    );

    let out = schedlab(&db)
        .args(["compare", "k-a", "k-b"])
        .output()
        .unwrap();
    let refusal = assert_refused(&out, "compare of TCG runs");
    assert!(
        refusal.contains("refusing to judge") && refusal.contains("TCG"),
        "{refusal}"
    );
    assert!(refusal.contains("--allow-tcg"), "{refusal}");
    let judged = stdout_of_success(&db, &["compare", "k-a", "k-b", "--allow-tcg"]);
    assert!(judged.contains("pipe"), "{judged}");
}

#[test]
fn a_guest_that_panics_ends_its_slot_at_the_deadline_with_its_console() {
    let Some(tools) = guest_tools() else { return };
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, db) = temp_db();
    let image = tools.kernel_6_12.to_str().unwrap();
    // No init to run, and a panic that waits forever (panic=0) instead of restarting: only the
    // boot deadline ends this guest.
    expect_success(schedlab(&db).args(campaign_start_named(
        "p",
        image,
        image,
        &[
            "--vm",
            "--a-append",
            "rdinit=/nonexistent panic=0",
            "--boots",
            "4",
            "--accel",
            "tcg",
            "--boot-timeout",
            "45",
            "--retries",
            "0",
            "pipe",
            "--loops",
            "100",
        ],
    )));
    let began = Instant::now();
    let out = schedlab_in(&db, dir.path(), &tools.binary)
        .args(["campaign", "run", "p"])
        .output()
        .unwrap();
    let took = began.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(took >= Duration::from_secs(45), "ended after {took:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("slot 1 of 4 (A): failed: the guest said nothing in the 45 s"),
        "{said}"
    );
    assert!(
        stderr_of(&out).contains("campaign status p"),
        "{}",
        stderr_of(&out)
    );
    let status = stdout_of_success(&db, &["campaign", "status", "p"]);
    assert!(status.contains("slot   1  A  failed boot: "), "{status}");
    assert!(status.contains("boot deadline"), "{status}");
    assert!(
        status
            .lines()
            .any(|l| l.contains("| ") && l.contains("Kernel panic")),
        "the console's tail shows the panic: {status}"
    );
    // The slot stays open, and no run was begun: the guest never said hello.
    assert!(status.contains("slot   1  A  pending"), "{status}");
    assert_eq!(sql_value::<i64>(&db, "SELECT count(*) FROM runs"), 0);
    assert!(qemus_of(dir.path()).is_empty());
}

/// The QEMU processes of a test: those whose command line names its temporary folder (the
/// initramfs is written there, TMPDIR).
fn qemus_of(tmp: &Path) -> Vec<i32> {
    processes_mentioning(tmp.to_str().unwrap())
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("qemu-system"))
        })
        .collect()
}

/// Waits until a QEMU of the test runs and its guest has begun a run.
fn wait_for_a_guest_run(db: &Path, tmp: &Path, child: &mut Running) {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        assert!(Instant::now() < deadline, "no guest began a run in time");
        assert!(
            child.try_wait().unwrap().is_none(),
            "campaign run ended early"
        );
        let runs =
            rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .ok()
                .and_then(|c| {
                    c.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
                        .ok()
                })
                .unwrap_or(0);
        if runs > 0 && !qemus_of(tmp).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// No QEMU of the test is left, a few seconds after `campaign run` ended.
fn assert_no_qemu_left(tmp: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !qemus_of(tmp).is_empty() {
        assert!(
            Instant::now() < deadline,
            "stray QEMU processes: {:?}",
            qemus_of(tmp)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_or_sigkill_of_campaign_run_leaves_no_qemu() {
    let Some(tools) = guest_tools() else { return };
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, db) = temp_db();
    let image = tools.kernel_6_12.to_str().unwrap();
    expect_success(schedlab(&db).args(campaign_start_named(
        "c",
        image,
        image,
        &[
            "--vm",
            "--b-append",
            "quiet",
            "--boots",
            "4",
            "--accel",
            "tcg",
            "--iterations",
            "50",
            "pipe",
            "--loops",
            "20000",
        ],
    )));
    let run = |dir: &Path| {
        let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin("schedlab"));
        cmd.env_remove("SCHEDLAB_DB")
            .env("TMPDIR", dir)
            .env("SCHEDLAB_GUEST_BINARY", &tools.binary)
            .args(["campaign", "run", "c", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        cmd
    };

    let mut child = run(dir.path()).start();
    wait_for_a_guest_run(&db, dir.path(), &mut child);
    send_signal(&child, libc::SIGINT);
    let (code, stderr) = exit_code_and_stderr(child);
    assert_eq!(code, Some(130), "{stderr}");
    assert_no_qemu_left(dir.path());
    assert_interrupted_in_a_sound_database(&db);

    // SIGKILL gives schedlab no chance to stop anything: the reaper between it and QEMU ends
    // QEMU's group when schedlab dies.
    let mut child = run(dir.path()).start();
    let before: i64 = sql_value(&db, "SELECT count(*) FROM runs");
    let deadline = Instant::now() + Duration::from_secs(240);
    while sql_value::<i64>(&db, "SELECT count(*) FROM runs") == before
        || qemus_of(dir.path()).is_empty()
    {
        assert!(Instant::now() < deadline, "no guest began a run in time");
        assert!(
            child.try_wait().unwrap().is_none(),
            "campaign run ended early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    send_signal(&child, libc::SIGKILL);
    let _ = finish(child, Duration::from_secs(30));
    assert_no_qemu_left(dir.path());
    let statuses = stdout_of_success(&db, &["runs"]);
    assert!(statuses.contains("abandoned"), "{statuses}");
}

#[test]
fn guest_options_are_checked_before_anything_boots() {
    let (dir, db) = temp_db();
    let not_a_kernel = write_file(dir.path(), "vmlinuz", "not a kernel");
    let path = not_a_kernel.to_str().unwrap();
    for (line, why) in [
        (
            "campaign start x --a-kernel a --b-kernel b --vcpus 2 fake".to_string(),
            "--vcpus is a guest option: it needs --vm",
        ),
        (
            format!("campaign start x --vm --a-kernel {path} --b-kernel {path} fake"),
            "is not an x86 kernel image",
        ),
        (
            format!("campaign start x --vm --a-kernel {path} --b-kernel {path} --vcpus 0 fake"),
            "--vcpus must be 1 to 255",
        ),
        (
            format!("campaign start x --vm --a-kernel {path} --b-kernel {path} --memory 12Q fake"),
            "--memory takes MiB",
        ),
        (
            format!(
                "campaign start x --vm --a-kernel {path} --b-kernel {path} --vcpus 2 --numa 3 fake"
            ),
            "1 to 2 nodes",
        ),
        (
            format!("campaign start x --vm --a-kernel {path} --b-kernel {path} --retries 11 fake"),
            "--retries must be 0 to 10",
        ),
    ] {
        let stderr = assert_bad_input(&db, &words(&line));
        assert!(stderr.contains(why), "{line}: {stderr}");
    }
}

/// A plain campaign and a guest campaign each refuse the other's command.
#[test]
fn next_and_run_each_keep_to_their_kind_of_campaign() {
    let (_dir, db) = temp_db();
    expect_success(schedlab(&db).args(words(
        "campaign start plain --a-kernel x --b-kernel y --boots 4 fake",
    )));
    let stderr = assert_bad_input(&db, &words("campaign run plain"));
    assert!(stderr.contains("campaign next plain"), "{stderr}");
    let Some(tools) = guest_tools() else { return };
    let image = tools.kernel_6_12.to_str().unwrap();
    expect_success(schedlab(&db).args(campaign_start_named(
        "guests",
        image,
        image,
        &["--vm", "--b-append", "quiet", "--accel", "tcg", "fake"],
    )));
    let stderr = assert_bad_input(&db, &words("campaign next guests"));
    assert!(stderr.contains("campaign run guests"), "{stderr}");
    // This test's schedlab is the glibc build: without a static one it says how to build one,
    // before anything boots.
    let out = schedlab(&db)
        .env_remove("SCHEDLAB_GUEST_BINARY")
        .args(["campaign", "run", "guests"])
        .output()
        .unwrap();
    let stderr = assert_refused(&out, "campaign run without a static binary");
    assert!(
        stderr.contains("is dynamically linked") && stderr.contains("--guest-binary"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--target x86_64-unknown-linux-musl"),
        "{stderr}"
    );
    let status = stdout_of_success(&db, &["campaign", "status", "guests"]);
    assert!(
        status.contains("guests under tcg with 2 vCPUs and 1024 MiB"),
        "{status}"
    );
    assert!(status.contains("with 'quiet'"), "{status}");
}

/// Pinning and a host load as arm settings: QEMU kept to the pinned host CPU while it runs, the
/// load's own runs stored, both recorded with the guest's run; a load that ends before its guest
/// fails the slot.
#[test]
fn pinned_guests_beside_a_host_load() {
    let Some(tools) = guest_tools() else { return };
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, db) = temp_db();
    let image = tools.kernel_6_12.to_str().unwrap();
    let load = "exec \"$SCHEDLAB\" run --label \"$SCHEDLAB_CAMPAIGN-load-$SCHEDLAB_ARM\" \
                --iterations 100000 --warmup 0 -q pipe --loops 20000";
    expect_success(schedlab(&db).args(campaign_start_named(
        "pl",
        image,
        image,
        &[
            "--vm",
            "--accel",
            "tcg",
            "--vcpus",
            "2",
            "--pin-vcpus",
            "0,0",
            "--boots",
            "4",
            "--a-host-load",
            load,
            "--b-host-load",
            "sleep 1",
            "--retries",
            "0",
            "--iterations",
            "2",
            "--warmup",
            "0",
            "pipe",
            "--loops",
            "2000",
        ],
    )));
    let child = {
        let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin("schedlab"));
        cmd.env_remove("SCHEDLAB_DB")
            .env("TMPDIR", dir.path())
            .env("SCHEDLAB_GUEST_BINARY", &tools.binary)
            .args(["campaign", "run", "pl", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.start()
    };
    // While the first guest runs, QEMU may use host CPU 0 only.
    let deadline = Instant::now() + Duration::from_secs(240);
    let allowed = loop {
        assert!(Instant::now() < deadline, "no QEMU started");
        if let Some(pid) = qemus_of(dir.path()).first() {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if let Some(line) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                break line.split_whitespace().nth(1).unwrap().to_string();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(allowed, "0");
    let out = child.output_within(Duration::from_secs(600));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", stderr_of(&out));
    assert!(said.contains("slot 1 of 4 (A): run "), "{said}");
    assert!(
        said.contains(
            "slot 2 of 4 (B): failed: the host load ended (status 0) before the guest did"
        ),
        "{said}"
    );
    let guest = show_json(&db, "pl-a");
    let origin = &guest["runs"][0]["fingerprint"]["guest"];
    assert_eq!(origin["host_cpus"], "0");
    assert_eq!(origin["host_load"], load);
    // Under TCG one thread runs both vCPUs: no per-vCPU pins are claimed.
    assert!(origin["vcpu_pins"].is_null(), "{origin}");
    let loaded = show_json(&db, "pl-load-a");
    let run = &loaded["runs"][0];
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["cases"][0]["measured_iterations"].as_u64().unwrap() > 0);
    assert!(qemus_of(dir.path()).is_empty());
}

/// The built-in seed 000 campaign, planned: 4 vCPUs on two host CPUs beside a load, its suite,
/// steal time off in B for one image; under TCG it says the arms boot alike.
#[test]
fn the_vcpu_preempt_preset_plans_seed_000() {
    let Some(tools) = guest_tools() else { return };
    let (_dir, db) = temp_db();
    let image = tools.kernel_6_12.to_str().unwrap();
    let out = expect_success(schedlab(&db).args([
        "campaign",
        "start",
        "s0",
        "--preset",
        "vcpu-preempt",
        "--a-kernel",
        image,
        "--b-kernel",
        image,
        "--accel",
        "tcg",
    ]));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("an A/A campaign"), "{said}");
    let status = stdout_of_success(&db, &["campaign", "status", "s0"]);
    assert!(status.contains("guests under tcg with 4 vCPUs"), "{status}");
    assert!(status.contains("11 cases per boot"), "{status}");
    let b = status
        .lines()
        .find(|l| l.trim_start().starts_with("B: "))
        .unwrap();
    assert!(b.contains("without steal time"), "{b}");
    assert!(b.contains("vCPUs on host CPUs "), "{b}");
    assert!(b.contains("-load-$SCHEDLAB_ARM"), "{b}");
    // Its contention cases count the guest's 4 vCPUs twice over.
    let spec: String = sql_value(&db, "SELECT spec_json FROM experiments");
    assert!(spec.contains("\"tasks\":8"), "{spec}");
}

/// A guest whose schedlab refuses its job (here a plan that holds more memory than the guest
/// has: the host, with more, let it through) fails its slot with the guest's reason, and is not booted again: it would refuse again.
#[test]
fn a_job_the_guest_refuses_is_not_booted_again() {
    let Some(tools) = guest_tools() else { return };
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, db) = temp_db();
    let image = tools.kernel_6_12.to_str().unwrap();
    expect_success(schedlab(&db).args(campaign_start_named(
        "r",
        image,
        image,
        &[
            "--vm",
            "--b-append",
            "quiet",
            "--accel",
            "tcg",
            "--memory",
            "256M",
            "--retries",
            "3",
            "--boots",
            "4",
            "contention",
            "--testcase",
            "page-fault",
            "--tasks",
            "4",
            "--map-kib",
            "131072",
        ],
    )));
    let out = schedlab_in(&db, dir.path(), &tools.binary)
        .args(["campaign", "run", "r"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches("failed: ").count(), 1, "booted once: {said}");
    assert!(
        said.contains("failed: the guest's schedlab refused the job: the plan does not fit this guest: --map-kib"),
        "{said}"
    );
    assert!(
        stderr_of(&out).contains("booting it again would not help"),
        "{}",
        stderr_of(&out)
    );
    assert!(qemus_of(dir.path()).is_empty());
}
