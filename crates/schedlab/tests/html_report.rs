//! End-to-end tests of `schedlab report --html`: a stored pair of fake runs (the candidate
//! labelled with HTML special characters, given synthetic wakeup percentiles and another kernel)
//! is written as a page, which headless Chromium must load without console errors, with one
//! table row per comparison row and the label shown as text. A screenshot and the page are kept
//! in `target/test-artefacts/` for reviews. A stored pair of fake matrix runs gets its scaling
//! plots, one line per side, also loaded in Chromium. Runs with probes (`--explain`), the
//! candidate's beside a real CPU hog, get the "Why" section: the LKP table of what moved and each
//! side's run-queue delay curve, loaded in Chromium too. Also: an unwritable path and an empty
//! comparison are one-line exit-2 errors that leave no file behind.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

const HOSTILE: &str = r#"<script>alert(1)</script>&"'"#;

/// Three fake cases per side: the candidate is 5 % slower in the first, unchanged in the second,
/// 5 % faster in the third. The first case of each side also gets wakeup percentile metrics
/// (12 % worse on the candidate), and the candidate a different kernel, as a real A/B would.
fn stored_pair(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    // Two runs per side, so the rows are judged on the runs' own spread.
    for run in 0..2u64 {
        let base = three_fake_cases(1 + 100 * run, [0.0, 0.0, 0.0]);
        let base = write_file(dir, &format!("base{run}.toml"), base);
        let cand = three_fake_cases(11 + 100 * run, [5.0, 0.0, -5.0]);
        let cand = write_file(dir, &format!("cand{run}.toml"), cand);
        for (file, label) in [(&base, "base"), (&cand, HOSTILE)] {
            run_suite(&db, file, &["--label", label]);
        }
    }
    for (label, scale) in [("base", 1.0), (HOSTILE, 1.12)] {
        store_named_wakeup_latencies(&db, label, scale);
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET fingerprint_json = json_set(fingerprint_json,
             '$.kernel_release', '6.19.0-rc1-candidate',
             '$.kernel_version', '#2 SMP PREEMPT_DYNAMIC candidate build')
         WHERE label = ?1",
        [HOSTILE],
    )
    .unwrap();
    // Every run on a boot of its own, as a kernel comparison has them: two boots per side.
    conn.execute(
        "UPDATE runs SET fingerprint_json = json_set(fingerprint_json,
             '$.boot_id', printf('00000000-0000-4000-8000-%012d', id))",
        [],
    )
    .unwrap();
    db
}

/// `schedlab report ARGS --html PAGE`, which must succeed; returns what it printed and the page.
fn report(db: &Path, args: &[&str], page: &Path) -> (String, String) {
    let out = expect_success(
        schedlab(db)
            .arg("report")
            .args(args)
            .arg("--html")
            .arg(page),
    );
    let html = std::fs::read_to_string(page).unwrap();
    (String::from_utf8(out.stdout).unwrap(), html)
}

fn artefacts_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target>/tmp; the artefacts sit beside it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The Chromium to load pages in, or none after saying on stderr, loudly, that `half` is skipped;
/// under CI a missing Chromium fails the test instead.
fn chromium_or_skip(half: &str) -> Option<PathBuf> {
    let binary = find_chromium();
    if binary.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed, and CI must have it (.ci/run installs it)");
        }
        // Straight to stderr, not eprintln!: the test harness captures the macros, and a skip
        // nobody sees is how a check silently stops running.
        let banner = "!".repeat(79);
        let _ = writeln!(
            std::io::stderr(),
            "\n{banner}\n!!! SKIPPED the headless-Chromium half of {half}: chromium is not on \
             PATH.\n!!! Install it (Debian: apt-get install chromium) to run it; under CI it \
             fails.\n{banner}\n"
        );
    }
    binary
}

/// Runs headless Chromium on `page` with extra `args`; returns (stdout, stderr). Killed after
/// two minutes: a hung browser must fail the test, not hang CI.
fn chromium(binary: &Path, profile: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let (stdout_path, stderr_path) = (out_dir.path().join("out"), out_dir.path().join("err"));
    let mut child = Process::new(binary)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            // Nothing may be fetched; a lookup would fail rather than leave the machine.
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            assert!(status.success(), "chromium failed ({status}):\n{stderr}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (
        std::fs::read_to_string(&stdout_path).unwrap(),
        std::fs::read_to_string(&stderr_path).unwrap(),
    )
}

/// Console messages and uncaught exceptions as Chromium logs them on stderr.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// The text between the first `open` in `dom` and the `close` after it.
fn inside<'a>(dom: &'a str, open: &str, close: &str) -> Option<&'a str> {
    dom.split(open).nth(1).and_then(|t| t.split(close).next())
}

/// Loads `page` in Chromium with `args` and checks that nothing reached the console; returns
/// Chromium's stdout (the DOM, with `--dump-dom`).
fn load_cleanly(binary: &Path, profile: &Path, page: &Path, args: &[&str]) -> String {
    let (stdout, stderr) = chromium(binary, profile, page, args);
    assert_eq!(
        console_lines(&stderr),
        Vec::<&str>::new(),
        "console errors:\n{stderr}"
    );
    stdout
}

/// Loads `page` cleanly (see `load_cleanly`) in a window of `size` (`W,H`) and keeps a screenshot
/// as `name` among the artefacts; returns its path.
fn take_screenshot(binary: &Path, profile: &Path, page: &Path, name: &str, size: &str) -> PathBuf {
    let screenshot = artefacts_dir().join(name);
    // A screenshot left by an earlier run must not pass for this one's.
    let _ = std::fs::remove_file(&screenshot);
    let shot_arg = format!("--screenshot={}", screenshot.display());
    let size_arg = format!("--window-size={size}");
    load_cleanly(binary, profile, page, &[&shot_arg, &size_arg]);
    screenshot
}

#[test]
fn report_loads_in_headless_chromium() {
    let dir = temp_dir();
    let db = stored_pair(dir.path());
    let page = dir.path().join("report.html");
    let (stdout, html) = report(&db, &["base", HOSTILE], &page);
    assert!(stdout.starts_with("wrote "), "{stdout}");

    // The rows `compare` finds are the rows the page must show.
    let doc = json_of_success(&db, &["compare", "base", HOSTILE, "--format", "json"]);
    let rows = doc["rows"].as_array().unwrap().len();
    assert_eq!(
        rows,
        3 * 2 + 5,
        "3 cases x 2 fake metrics + 5 wakeup percentiles"
    );

    let artefacts = artefacts_dir();
    std::fs::copy(&page, artefacts.join("report.html")).unwrap();
    assert!(
        !html.contains("<script"),
        "the label must not become markup"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"));
    for fetch in ["src=", "url(", "<link", "@import"] {
        assert!(
            !html.contains(fetch),
            "the page must fetch nothing: {fetch}"
        );
    }
    assert_eq!(html.matches(r#"<tr class="row "#).count(), rows);
    assert!(
        html.contains(r#"id="latency""#),
        "wakeup percentiles make a curve"
    );
    assert!(html.contains(r#"<tr class="fp-expected"><th scope="row">kernel_release</th>"#));
    // The three cases differ in value and seed, so no two of them are points of one curve.
    assert!(!html.contains(r#"id="scaling""#));

    let Some(binary) = chromium_or_skip("html_report") else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();

    // First prove the detector works: a page with a console error must be caught.
    let probe = write_file(
        dir.path(),
        "probe.html",
        "<!DOCTYPE html><title>probe</title><script>console.error('schedlab-probe'); missing();</script>",
    );
    let (_, stderr) = chromium(&binary, profile.path(), &probe, &["--dump-dom"]);
    let caught = console_lines(&stderr);
    assert!(
        caught.iter().any(|l| l.contains("schedlab-probe"))
            && caught.iter().any(|l| l.contains("Uncaught")),
        "this Chromium does not log console messages on stderr as expected:\n{stderr}"
    );

    let dom = load_cleanly(&binary, profile.path(), &page, &["--dump-dom"]);
    let table = inside(&dom, r#"<table id="compare""#, "</table>")
        .expect("the compare table is in the DOM");
    assert_eq!(table.matches(r#"<tr class="row "#).count(), rows, "{table}");
    assert!(!dom.contains("<script"), "no script element in the DOM");
    // In the DOM the label is text: its < and & are serialised as entities, quotes as typed.
    assert!(dom.contains(r#"&lt;script&gt;alert(1)&lt;/script&gt;&amp;"'"#));
    assert!(dom.contains(r#"<svg class="forest""#) && dom.contains(r#"<svg class="curve""#));

    let screenshot = take_screenshot(&binary, profile.path(), &page, "report.png", "1280,2000");
    let png = std::fs::read(&screenshot).expect("the screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", screenshot.display());
}

/// Two runs per side of a fake matrix over value_usec (25 to 200 µs, 5 iterations): the
/// candidate is 5 % slower at every point.
fn stored_matrix_pair(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let suite = |seed: u64, effect: f64| {
        format!(
            "description = \"a fake matrix\"\niterations = 5\nwarmup = 0\n[[case]]\n\
             workload = \"fake\"\nspread_pct = 0.5\nseed = {seed}\neffect_pct = {effect}\n\
             [case.matrix]\nvalue_usec = [25.0, 50.0, 100.0, 200.0]\n"
        )
    };
    for run in 0..2u64 {
        for (label, seed, effect) in [("base", 1 + run, 0.0), ("cand", 11 + run, 5.0)] {
            let file = write_file(dir, &format!("{label}{run}.toml"), suite(seed, effect));
            run_suite(&db, &file, &["--label", label, "--quiet"]);
        }
    }
    db
}

#[test]
fn a_matrix_gets_scaling_plots_that_load_in_headless_chromium() {
    let dir = temp_dir();
    let db = stored_matrix_pair(dir.path());
    let doc = json_of_success(&db, &words("compare base cand --format json"));
    let scaling = doc["scaling"].as_array().unwrap();
    assert_eq!(scaling.len(), 1, "{scaling:#?}");
    assert_eq!(scaling[0]["parameter"], "value_usec");
    let metrics = scaling[0]["metrics"].as_array().unwrap().len();
    assert!(metrics >= 1);

    let page = dir.path().join("scaling.html");
    let (_, html) = report(&db, &["base", "cand"], &page);
    std::fs::copy(&page, artefacts_dir().join("scaling.html")).unwrap();
    assert!(html.contains(r#"<section id="scaling">"#));
    assert_eq!(
        html.matches(r#"<figure class="scaling-plot">"#).count(),
        metrics
    );
    // One polyline per side in every plot.
    assert_eq!(html.matches(r#"class="scaling-line""#).count(), 2 * metrics);

    let Some(binary) = chromium_or_skip("the scaling test") else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let dom = load_cleanly(&binary, profile.path(), &page, &["--dump-dom"]);
    let section = inside(&dom, r#"<section id="scaling">"#, "</section>")
        .expect("the scaling section is in the DOM");
    let plots: Vec<&str> = section.split(r#"<svg class="scaling""#).skip(1).collect();
    assert_eq!(plots.len(), metrics);
    for plot in plots {
        let plot = plot.split("</svg>").next().unwrap();
        assert_eq!(plot.matches("<polyline").count(), 2, "{plot}");
        assert_eq!(plot.matches(r#"class="scaling-point""#).count(), 8);
    }
    let screenshot = take_screenshot(&binary, profile.path(), &page, "scaling.png", "1280,2400");
    assert!(std::fs::read(&screenshot).unwrap().starts_with(b"\x89PNG"));
}

/// Kills the CPU hog when the test ends, however it ends.
struct Hog(std::process::Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two probed runs per side of a semaphore pinned to CPU 1; the candidate's runs share CPU 1 with
/// a shell loop, so its wake-ups wait behind it. Both run at nice -19, so that the machine's other
/// work (nice 0) weighs little beside them (tests/explain.rs says why).
fn stored_probed_pair(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    for label in ["base", "cand"] {
        let _hog = (label == "cand").then(|| {
            Hog(Process::new("nice")
                .args([
                    "-n",
                    "-19",
                    "taskset",
                    "-c",
                    "1",
                    "sh",
                    "-c",
                    "while :; do :; done",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start the hog"))
        });
        let line = format!(
            "run --label {label} --explain --iterations 1 --warmup 0 -q \
             semaphore --items 3000 --pin 1,1"
        );
        for _ in 0..2 {
            expect_success(
                assert_cmd::Command::new("nice")
                    .args(["-n", "-19"])
                    .arg(assert_cmd::cargo::cargo_bin("schedlab"))
                    .env("SCHEDLAB_DB", &db)
                    .env_remove("XDG_DATA_HOME")
                    .timeout(COMMAND_DEADLINE)
                    .args(words(&line)),
            );
        }
    }
    db
}

#[test]
fn probed_runs_get_a_why_section_with_delay_curves_that_loads_in_headless_chromium() {
    let dir = temp_dir();
    let db = stored_probed_pair(dir.path());
    let doc = json_of_success(&db, &words("compare base cand --explain --format json"));
    let curves = doc["explanation"]["runq_delay"].as_array().unwrap().len();
    assert!(curves >= 1, "{doc:#?}");

    let page = dir.path().join("explain.html");
    let (_, html) = report(&db, &["base", "cand"], &page);
    std::fs::copy(&page, artefacts_dir().join("explain.html")).unwrap();
    let section = inside(&html, r#"<section id="explain">"#, "</section>")
        .expect("probed runs get the Why section");
    assert!(
        html.contains(r##"<a href="#explain">"##),
        "the nav links to it"
    );
    // The hog moved the delays by far more than the 10 % listing threshold: an LKP table lists
    // them, with its %change and %stddev columns.
    assert!(
        section.contains("<table>") && section.contains("%stddev"),
        "{section}"
    );
    assert!(section.contains("runq_delay_"), "{section}");
    // One delay figure per curve of the model, each with one line per side.
    assert_eq!(
        section.matches(r#"<figure class="latency">"#).count(),
        curves
    );
    assert_eq!(
        section.matches(r#"class="latency-line""#).count(),
        2 * curves,
        "{section}"
    );

    let Some(binary) = chromium_or_skip("the explanation test") else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let dom = load_cleanly(&binary, profile.path(), &page, &["--dump-dom"]);
    let section = inside(&dom, r#"<section id="explain">"#, "</section>")
        .expect("the Why section is in the DOM");
    assert_eq!(section.matches(r#"<svg class="curve""#).count(), curves);
    let screenshot = take_screenshot(&binary, profile.path(), &page, "explain.png", "1280,2400");
    assert!(std::fs::read(&screenshot).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn unwritable_path_is_one_line_exit_2_and_leaves_nothing() {
    let dir = temp_dir();
    let db = stored_pair(dir.path());
    // A missing directory: unwritable even for root, which CI runs as.
    let missing = dir.path().join("no-such-dir").join("report.html");
    let report_to = |page: &Path| {
        assert_bad_input(
            &db,
            &["report", "base", HOSTILE, "--html", page.to_str().unwrap()],
        )
    };
    let stderr = report_to(&missing);
    assert!(stderr.starts_with("schedlab: cannot write "), "{stderr}");

    // A directory in the way: the rename fails and the temporary file is removed.
    let in_the_way = dir.path().join("taken");
    std::fs::create_dir(&in_the_way).unwrap();
    std::fs::write(in_the_way.join("keep"), "x").unwrap();
    report_to(&in_the_way);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn nothing_to_compare_writes_nothing_and_a_report_replaces_the_old_one() {
    let dir = temp_dir();
    let db = stored_pair(dir.path());
    let page = dir.path().join("report.html");
    std::fs::write(&page, "old report").unwrap();
    assert_bad_input(
        &db,
        &[
            "report",
            "base",
            HOSTILE,
            "--metric",
            "no_such_metric",
            "--html",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "old report");

    let (_, html) = report(&db, &["base", HOSTILE, "--metric", "usec_per_op"], &page);
    assert_eq!(html.matches(r#"<tr class="row "#).count(), 3);
    // The latency curves use every stored metric, whatever --metric picks for the table.
    assert!(html.contains(r#"id="latency""#));

    // --fail-on-regression gates as `compare` does, after writing the page.
    std::fs::remove_file(&page).unwrap();
    schedlab(&db)
        .args(["report", "base", HOSTILE, "--fail-on-regression", "--html"])
        .arg(&page)
        .assert()
        .code(1);
    assert!(page.exists());
}

/// A run `--until-ci` extended is listed with the iterations it measured, the count `runs` and
/// the comparison's side figures give, not the 5 + 1 its plan asked for.
#[test]
fn runs_table_counts_the_iterations_measured_not_planned() {
    let dir = temp_dir();
    let db = dir.path().join("results.db");
    for (label, seed) in [("base", 1), ("cand", 2)] {
        // 20 % noise never gets a 0.01 % CI: every case runs to --max-iterations.
        schedlab(&db)
            .args(words(&format!(
                "run fake --spread-pct 20 --seed {seed} --iterations 5 --warmup 1 \
                 --until-ci 0.01 --max-iterations 20 --label {label}"
            )))
            .assert()
            .success();
    }
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    assert_eq!(runs[0]["measured_iterations"], 20, "{runs}");
    let comparison = json_of_success(&db, &words("compare base cand --format json"));
    assert_eq!(comparison["rows"][0]["base_side"]["iterations"], 20);
    let counted = &comparison["base"]["run_iterations"][0];
    assert_eq!(counted["measured_iterations"], 20, "{comparison}");
    assert_eq!(counted["warmup_iterations"], 1, "{comparison}");

    let page = dir.path().join("report.html");
    let (_, html) = report(&db, &["base", "cand"], &page);
    let runs_table = &html[html.find(r#"<section id="runs">"#).unwrap()..];
    assert_eq!(
        runs_table.matches("20 + 1 warm-up").count(),
        2,
        "{runs_table}"
    );
    assert!(!runs_table.contains("5 + 1 warm-up"), "{runs_table}");
}

/// The Machines section flags the scheduler settings of the fingerprint as `differs`, one row per
/// sysctl, and a run stored before those fields existed still loads, its missing fields shown as absent or unknown.
#[test]
fn machines_section_flags_scheduler_settings_and_reads_old_fingerprints() {
    let dir = temp_dir();
    let db = dir.path().join("results.db");
    for label in ["old", "new"] {
        schedlab(&db)
            .args(words(&format!(
                "run fake --iterations 3 --warmup 0 --label {label}"
            )))
            .assert()
            .success();
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    // As schedlab stored fingerprints before: none of the scheduler-setting fields.
    conn.execute(
        "UPDATE runs SET fingerprint_json = json_remove(fingerprint_json, '$.microcode',
             '$.mem_total_kib', '$.preempt_model', '$.sched_features', '$.sched_sysctls',
             '$.thp_enabled', '$.isolcpus', '$.nohz_full', '$.cgroup_version',
             '$.cpu_vulnerabilities')
         WHERE label = 'old'",
        [],
    )
    .unwrap();
    conn.execute(
        "UPDATE runs SET fingerprint_json = json_set(fingerprint_json,
             '$.preempt_model', 'none', '$.thp_enabled', 'never',
             '$.sched_sysctls.\"kernel.sched_schedstats\"', '1')
         WHERE label = 'new'",
        [],
    )
    .unwrap();
    drop(conn);

    let doc = show_json(&db, "old");
    let fp = &doc["runs"][0]["fingerprint"];
    assert!(
        fp["preempt_model"].is_null() && fp["sched_features"].is_null(),
        "{fp}"
    );
    assert_eq!(fp["sched_sysctls"], serde_json::json!({}));

    let page = dir.path().join("machines.html");
    let (_, html) = report(&db, &["old", "new"], &page);
    let row = |field: &str| {
        let start = html
            .find(&format!(r#"<th scope="row">{field}</th>"#))
            .unwrap_or_else(|| panic!("no row {field}"));
        let row_start = html[..start].rfind("<tr").unwrap();
        let end = start + html[start..].find("</tr>").unwrap();
        html[row_start..end].to_string()
    };
    for field in [
        "preempt_model",
        "thp_enabled",
        "sched_sysctls.kernel.sched_schedstats",
    ] {
        let row = row(field);
        assert!(row.starts_with(r#"<tr class="fp-differs""#), "{row}");
        assert!(row.contains("(absent)") || row.contains("—"), "{row}");
    }
    assert!(row("preempt_model").contains(">none <span"));
}

/// A page named on the command line goes where the name leads, and the name stays what it was:
/// `-` and a name for stdout write the page there (and only the page: the summary line goes to
/// stderr), a FIFO is written into and stays a FIFO, a symbolic link stays a link and its target
/// gets the page (made if missing). A rename onto such a name would have replaced it with a
/// regular file: as root, `--html /dev/stdout` replaced the machine's /dev/stdout.
#[test]
fn pages_go_where_their_names_lead_and_the_names_stay() {
    let dir = temp_dir();
    let db = stored_pair(dir.path());
    let whole_page = |html: &str| {
        assert!(
            html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"),
            "not one whole page: {}…",
            &html[..html.len().min(200)]
        );
    };
    // A name of stdout of our own: the test must not lean on the machine's /dev/stdout.
    let own_stdout = dir.path().join("stdout-link");
    std::os::unix::fs::symlink("/proc/self/fd/1", &own_stdout).unwrap();
    let history_case = "fake:value=100 spread=0.5";
    for page in ["-", own_stdout.to_str().unwrap()] {
        let out = expect_success(schedlab(&db).args(["report", "base", HOSTILE, "--html", page]));
        whole_page(&String::from_utf8(out.stdout).unwrap());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with(&format!("wrote {page}: ")), "{stderr}");
        let out = expect_success(schedlab(&db).args(["history", history_case, "--html", page]));
        whole_page(&String::from_utf8(out.stdout).unwrap());
    }
    assert!(std::fs::symlink_metadata(&own_stdout)
        .unwrap()
        .file_type()
        .is_symlink());

    let fifo = dir.path().join("fifo");
    let made = Process::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    expect_success(
        schedlab(&db)
            .args(["report", "base", HOSTILE, "--html"])
            .arg(&fifo),
    );
    whole_page(&reader.join().unwrap());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    for (link, target, exists) in [
        ("link.html", "real.html", true),
        ("dangling.html", "made.html", false),
    ] {
        let (link, target) = (dir.path().join(link), dir.path().join(target));
        if exists {
            std::fs::write(&target, "old").unwrap();
        }
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (_, html) = report(&db, &["base", HOSTILE], &link);
        whole_page(&html);
        whole_page(&std::fs::read_to_string(&target).unwrap());
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}
