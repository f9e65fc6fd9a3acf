//! End-to-end tests of the results database under the conditions of a long benchmark: readers
//! polling beside a run, many writers creating one new file at once, `--db` values that look
//! like URLs, damaged, foreign and newer databases, and `schedlab db check` / `db upgrade`. Every
//! process is the real binary; nothing here asserts how long anything took.
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// The binary with no database chosen by the environment, killed if it outlives
/// `COMMAND_DEADLINE`.
fn bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("schedlab").unwrap();
    cmd.env_remove("SCHEDLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .timeout(COMMAND_DEADLINE);
    cmd
}

/// Runs schedlab with `args` on `db` in the working directory `cwd`.
fn run_in(cwd: &Path, db: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(cwd)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ro(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

fn integrity(db: &Path) -> String {
    ro(db)
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A database with one complete fake run labelled `label`, written and closed.
fn stored_run(dir: &Path, db: &Path, label: &str) {
    let line = format!("run fake --iterations 3 --label {label} -q");
    let out = run_in(dir, db, &words(&line));
    assert_succeeded(&out, "storing a run");
}

#[test]
fn readers_beside_a_writer_never_fail_it() {
    let (dir, db) = temp_db();
    let dir = dir.path();
    stored_run(dir, &db, "base");
    let out = run_in(
        dir,
        &db,
        &words("run fake --iterations 3 --effect-pct 5 --label cand -q"),
    );
    assert_succeeded(&out, "storing the candidate");

    let iterations = 300;
    let writer_line =
        format!("run fake --sleep-ms 5 --warmup 0 -q --iterations {iterations} --label w");
    let mut writer = background(&db, &words(&writer_line))
        .current_dir(dir)
        .start();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Readers start once the writer is storing, so they poll during its run.
    while stored_iterations_of(&db, "w") < 5 {
        assert!(Instant::now() < deadline, "the writer stored nothing");
        if writer.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }

    let done = AtomicBool::new(false);
    let readers = [
        "runs",
        "show w",
        "compare base cand",
        "runs --format json",
        "show base --format json",
    ];
    let (writer_out, reader_results) = std::thread::scope(|scope| {
        let handles: Vec<_> = readers
            .iter()
            .map(|command| {
                let (done, db) = (&done, &db);
                scope.spawn(move || {
                    let mut calls = 0;
                    let mut failures = Vec::new();
                    loop {
                        let out = run_in(dir, db, &words(command));
                        calls += 1;
                        if !out.status.success() {
                            failures.push(format!("{command:?}: {}", stderr_of(&out)));
                        }
                        if done.load(Ordering::SeqCst) {
                            return (calls, failures);
                        }
                    }
                })
            })
            .collect();
        // The readers stop on the flag, which is set even when the wait fails or runs out.
        let out = writer.try_output_within(Duration::from_secs(120));
        done.store(true, Ordering::SeqCst);
        let out = out.unwrap_or_else(|e| panic!("the writer: {e}"));
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        (out, results)
    });

    assert_succeeded(&writer_out, "the writer");
    for (calls, failures) in &reader_results {
        assert!(*calls >= 1);
        assert!(failures.is_empty(), "readers failed: {failures:#?}");
    }
    assert_eq!(stored_iterations_of(&db, "w"), iterations);
    let status: String = ro(&db)
        .query_row("SELECT status FROM runs WHERE label = 'w'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(status, "complete");
    assert_eq!(integrity(&db), "ok");
}

/// Iterations stored so far for runs labelled `label` (0 while there are none).
fn stored_iterations_of(db: &Path, label: &str) -> i64 {
    ro(db)
        .query_row(
            "SELECT count(*) FROM iterations i JOIN cases c ON i.case_id = c.id
               JOIN runs r ON c.run_id = r.id WHERE r.label = ?1",
            [label],
            |r| r.get(0),
        )
        .unwrap_or(0)
}

/// Whether process `pid` is stopped (state `T` in /proc).
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(')')?.1.trim_start().to_string();
            after_name.chars().next()
        })
        == Some('T')
}

#[test]
fn eight_writers_on_one_new_file_all_store_their_run() {
    let (dir, db) = temp_db();
    let writers = 8;
    // Each writer stops itself before exec'ing schedlab; SIGCONT to all at once is the start
    // line, so they open the new file together rather than one after the other.
    let children: Vec<Running> = (0..writers)
        .map(|i| {
            StdCommand::new("sh")
                .arg("-c")
                .arg("kill -STOP $$; exec \"$0\" \"$@\"")
                .arg(assert_cmd::cargo::cargo_bin("schedlab"))
                .args(words(&format!("run fake --iterations 5 -q --label w{i}")))
                .arg("--db")
                .arg(&db)
                .current_dir(dir.path())
                .env_remove("SCHEDLAB_DB")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .start()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !children.iter().all(|c| is_stopped(c.id())) {
        assert!(Instant::now() < deadline, "the writers never stopped");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!db.exists());
    for child in &children {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    }
    for child in children {
        let out = child.output_within(Duration::from_secs(120));
        assert_succeeded(&out, "a writer");
    }

    let conn = ro(&db);
    let complete: i64 = conn
        .query_row(
            "SELECT count(*) FROM runs WHERE status = 'complete'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(complete, writers);
    let iterations: i64 = conn
        .query_row("SELECT count(*) FROM iterations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(iterations, writers * 6);
    assert_eq!(integrity(&db), "ok");
    let out = run_in(dir.path(), &db, &words("db check"));
    assert_succeeded(&out, "db check");
}

#[test]
fn store_urls_are_stores_or_errors() {
    let dir = temp_dir();
    let cwd = dir.path();
    for url in [
        "file:results.db",
        "file:///tmp/results.db",
        "http://example.invalid/results.db",
        "mysql://host/db",
        "results:2024.db",
    ] {
        for command in [
            "run fake --iterations 1",
            "run fake --iterations 1 --no-store",
            "runs",
            "show 1",
            "db check",
        ] {
            let out = run_in(cwd, Path::new(url), &words(command));
            let line = assert_refused(&out, url);
            assert!(line.contains("sqlite:PATH"), "{url}: {line}");
        }
        // The same from the environment.
        let out = bin()
            .current_dir(cwd)
            .env("SCHEDLAB_DB", url)
            .args(words("run fake --iterations 1"))
            .output()
            .unwrap();
        assert_refused(&out, url);
        assert_eq!(listing(cwd), Vec::<String>::new(), "{url} created files");
    }
    // A PostgreSQL URL names a server, never a file: one that does not answer is bad input, and
    // nothing is created here.
    for url in [
        "postgres://u@127.0.0.1:1/x?connect_timeout=5",
        "postgresql://127.0.0.1:1/results?sslmode=disable",
    ] {
        for command in [
            "run fake --iterations 1",
            "runs",
            "show 1",
            "db check",
            "db upgrade",
        ] {
            let out = run_in(cwd, Path::new(url), &words(command));
            let line = assert_refused(&out, url);
            assert!(line.contains("127.0.0.1:1"), "{url}: {line}");
        }
        assert_eq!(listing(cwd), Vec::<String>::new(), "{url} created files");
    }
    let out = run_in(
        cwd,
        Path::new("postgres://h/x?sslmode=sometimes"),
        &["runs"],
    );
    assert!(stderr_of(&out).contains("sslmode=sometimes"));

    for (url, file) in [
        ("sqlite:plain.db", "plain.db"),
        ("sqlite://slashes.db", "slashes.db"),
        ("./a:b.db", "a:b.db"),
    ] {
        let out = run_in(cwd, Path::new(url), &words("run fake --iterations 1"));
        assert_succeeded(&out, url);
        assert!(cwd.join(file).is_file(), "{url}: {:?}", listing(cwd));
        let out = run_in(cwd, Path::new(url), &words("show 1"));
        assert_succeeded(&out, url);
    }
    let absolute = cwd.join("abs.db");
    let url = format!("sqlite://{}", absolute.display());
    let out = run_in(cwd, Path::new(&url), &words("run fake --iterations 1"));
    assert_succeeded(&out, &url);
    assert!(absolute.is_file());
    assert!(listing(cwd).iter().all(|name| !name.contains("sqlite")));

    // What cannot hold a database is named as such, not met later as SQLite's "disk I/O error".
    let made = StdCommand::new("mkfifo")
        .arg(cwd.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    for (path, reason) in [
        ("/dev/null", "not a regular file"),
        ("fifo", "not a regular file"),
        (".", "it is a directory"),
    ] {
        for command in ["run fake --iterations 1", "runs", "show 1", "db check"] {
            let out = run_in(cwd, Path::new(path), &words(command));
            let line = assert_refused(&out, path);
            assert!(line.contains(reason), "{path} {command}: {line}");
        }
    }
}

/// The damaged, foreign and newer databases of the test below, made from a good one.
/// Each is (what, file, what its error says, whether every command meets the damage): damage
/// inside one table is met only by the commands that read that table.
fn damaged_variants(dir: &Path, good: &Path) -> Vec<(&'static str, PathBuf, &'static str, bool)> {
    let bytes = std::fs::read(good).unwrap();
    let page = 4096;
    assert!(bytes.len() > 4 * page, "the fixture is too small");
    let write = |name: &str, data: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, data).unwrap();
        path
    };
    // Deterministic "random" bytes (an LCG), so a failure can be reproduced.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (seed >> 56) as u8
            })
            .collect()
    };
    let mut variants = Vec::new();
    variants.push((
        "truncated",
        write("truncated.db", &bytes[..bytes.len() / 2]),
        "is damaged",
        true,
    ));
    variants.push((
        "truncated to its header",
        write("header.db", &bytes[..100]),
        "is damaged",
        true,
    ));
    let mut scribbled = bytes.clone();
    scribbled[100..page].copy_from_slice(&noise(page - 100));
    variants.push((
        "random bytes in the schema page",
        write("scribbled-schema.db", &scribbled),
        "is damaged",
        true,
    ));
    let runs_root: usize = ro(good)
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'runs'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as usize;
    let mut scribbled = bytes.clone();
    let at = (runs_root - 1) * page;
    scribbled[at..at + page].copy_from_slice(&noise(page));
    variants.push((
        "random bytes in the runs table",
        write("scribbled-runs.db", &scribbled),
        "is damaged",
        false,
    ));
    let mut header = bytes.clone();
    header[16..100].copy_from_slice(&noise(84));
    variants.push((
        "random bytes in the file header",
        write("scribbled-header.db", &header),
        "is damaged",
        true,
    ));

    let copy_then = |name: &str, sql: &str| {
        let path = write(name, &bytes);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        path
    };
    variants.push((
        "a history row from the future",
        copy_then(
            "future-history.db",
            "INSERT INTO refinery_schema_history VALUES (999, 'future', '2031-01-01T00:00:00Z', '42')",
        ),
        "upgrade schedlab",
        true,
    ));
    variants.push((
        "a user_version from the future",
        copy_then("future-user-version.db", "PRAGMA user_version = 999"),
        "upgrade schedlab",
        true,
    ));
    variants.push((
        "a damaged history row",
        copy_then(
            "damaged-history.db",
            "UPDATE refinery_schema_history SET checksum = 'garbage', applied_on = 'yesterday'
              WHERE version = 2",
        ),
        "is damaged",
        true,
    ));
    variants.push((
        "a history row of another migration",
        copy_then(
            "divergent-history.db",
            "UPDATE refinery_schema_history SET name = 'something_else' WHERE version = 1",
        ),
        "is damaged",
        true,
    ));
    let foreign = dir.join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello');")
        .unwrap();
    variants.push((
        "another application's SQLite file",
        foreign,
        "not a schedlab results database",
        true,
    ));
    variants.push((
        "a text file",
        write(
            "notes.txt",
            b"shopping list: eggs, flour, a scheduler that never regresses\n",
        ),
        "not a schedlab results database",
        true,
    ));
    variants
}

#[test]
fn damaged_foreign_and_newer_databases_get_one_line_and_exit_2() {
    let dir = temp_dir();
    let good = dir.path().join("good.db");
    // Enough iterations for the runs table to sit on a page of its own, away from the schema.
    let out = run_in(
        dir.path(),
        &good,
        &words("run fake --iterations 200 --label x -q"),
    );
    assert_succeeded(&out, "the fixture");
    let out = run_in(
        dir.path(),
        &good,
        &words("run fake --iterations 2 --label y -q"),
    );
    assert_succeeded(&out, "the second side");
    let html = dir.path().join("report.html");
    let html = html.to_str().unwrap();
    let report = format!("report x y --html {html}");
    let commands = [
        "runs",
        "show x",
        "compare x y",
        &report,
        "campaign status c",
        "campaign next c",
        "run fake --iterations 1 -q",
        "run fake --iterations 1 -q --dry-run",
        "db upgrade",
    ];
    for (what, path, expected, everywhere) in damaged_variants(dir.path(), &good) {
        let before = std::fs::read(&path).unwrap();
        for command in commands {
            let args = words(command);
            let reads_runs = matches!(args[0], "runs" | "show" | "compare" | "report" | "run");
            if !everywhere && !reads_runs {
                continue;
            }
            if args.contains(&"--dry-run") {
                // A dry run only borrows history for estimates; a bad file means rules of thumb.
                let out = run_in(dir.path(), &path, &args);
                assert_succeeded(&out, what);
                continue;
            }
            let out = run_in(dir.path(), &path, &args);
            let line = assert_refused(&out, &format!("{what}: {args:?}"));
            assert!(line.contains(expected), "{what}: {args:?}: {line}");
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{what}: file changed"
        );
        assert!(!Path::new(html).exists(), "{what}: a report was written");

        let out = run_in(dir.path(), &path, &words("db check --format json"));
        let stderr = stderr_of(&out);
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        match expected {
            "is damaged" => {
                assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
                assert_eq!(json_of(&out.stdout)["ok"], false, "{what}");
            }
            _ => {
                assert_refused(&out, what);
            }
        }
    }
}

#[test]
fn db_check_reports_a_sound_database() {
    let (dir, db) = temp_db();
    stored_run(dir.path(), &db, "ok");
    let failed = run_in(
        dir.path(),
        &db,
        &words("run fake --iterations 3 --fail-at 2 -q"),
    );
    assert_eq!(failed.status.code(), Some(1));

    let out = run_in(dir.path(), &db, &words("db check --format json"));
    assert_succeeded(&out, "db check");
    let report = json_of(&out.stdout);
    assert_eq!(report["ok"], true);
    assert_eq!(report["check"], "integrity_check");
    assert_eq!(report["integrity_problems"], serde_json::json!([]));
    assert_eq!(
        report["database_schema_version"],
        report["known_schema_version"]
    );
    assert_eq!(report["runs_by_status"]["complete"], 1);
    assert_eq!(report["runs_by_status"]["failed"], 1);
    assert_eq!(report["runs_by_status"]["running"], 0);
    assert_eq!(report["abandoned_runs"], serde_json::json!([]));

    let out = run_in(dir.path(), &db, &words("db check --quick"));
    assert_succeeded(&out, "db check --quick");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("integrity  ok (quick_check)"), "{text}");
    assert!(text.contains("runs       2:"), "{text}");
    assert!(text.contains("result     ok"), "{text}");
}

#[test]
fn readers_of_a_missing_database_create_nothing() {
    let dir = temp_dir();
    let db = dir.path().join("sub").join("results.db");
    for command in [
        "show 1",
        "compare a b",
        "campaign status c",
        "campaign next c",
        "db check",
        "db upgrade",
    ] {
        let out = run_in(dir.path(), &db, &words(command));
        let line = assert_refused(&out, &format!("{command:?}"));
        assert!(line.contains("no results database"), "{command:?}: {line}");
    }
    let out = run_in(dir.path(), &db, &["runs"]);
    assert_succeeded(&out, "runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("no stored runs: ") && stdout.contains("does not exist yet"),
        "{stdout}"
    );
    assert_eq!(listing(dir.path()), Vec::<String>::new());
}

/// Makes `db` a version-3 database: what a schedlab from before calibrations left behind.
fn downgrade_to_v3(db: &Path) {
    let undo = format!(
        "{UNDO_V9}
         DROP TABLE calibrations;
         DROP INDEX runs_by_uuid;
         DROP INDEX runs_by_host;
         ALTER TABLE runs DROP COLUMN uuid;
         ALTER TABLE runs DROP COLUMN owner_pid;
         ALTER TABLE runs DROP COLUMN owner_start_ticks;
         ALTER TABLE runs DROP COLUMN owner_boot_id;
         ALTER TABLE runs DROP COLUMN owner_host;
         ALTER TABLE cases DROP COLUMN error;"
    );
    // A V3 file predates schedlab's user_version.
    downgrade(db, &undo, 3, 0);
}

fn history_rows(db: &Path) -> i64 {
    ro(db)
        .query_row("SELECT count(*) FROM refinery_schema_history", [], |r| {
            r.get(0)
        })
        .unwrap()
}

#[test]
fn readers_read_an_older_schema_as_it_is_and_db_upgrade_brings_it_up() {
    let (dir, db) = temp_db();
    stored_run(dir.path(), &db, "old");
    stored_run(dir.path(), &db, "older");
    downgrade_to_v3(&db);
    for command in ["runs", "show old", "compare old older"] {
        let out = run_in(dir.path(), &db, &words(command));
        assert_succeeded(&out, &format!("{command:?}"));
    }
    let out = run_in(dir.path(), &db, &words("db check --format json"));
    assert_succeeded(&out, "db check");
    assert_eq!(json_of(&out.stdout)["database_schema_version"], 3);
    assert_eq!(history_rows(&db), 3, "a reader migrated the database");

    let out = run_in(dir.path(), &db, &words("db upgrade"));
    assert_succeeded(&out, "db upgrade");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("schema version 3 → "), "{said}");
    let out = run_in(dir.path(), &db, &words("db check --format json"));
    let report = json_of(&out.stdout);
    assert_eq!(
        report["database_schema_version"],
        report["known_schema_version"]
    );
    assert_eq!(
        Some(history_rows(&db)),
        report["known_schema_version"].as_i64()
    );
    let out = run_in(dir.path(), &db, &words("db upgrade"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to upgrade"));
    assert_eq!(integrity(&db), "ok");
}

/// Makes `db` a version-6 database: what a schedlab from before metric definitions left behind.
/// Its measurement rows are what V6 wrote; only the definitions V7 keeps beside them go.
fn downgrade_to_v6(db: &Path) {
    let undo = format!(
        "{UNDO_V9}
         DROP TABLE metrics;
         DROP INDEX runs_by_uuid;
         DROP INDEX runs_by_host;
         ALTER TABLE runs DROP COLUMN uuid;"
    );
    downgrade(db, &undo, 6, 6);
}

/// Runs stored before V7 keep their output through the upgrade: `show` and `compare` (latency
/// curves included, drawn from wakeup percentiles stored the V6 way) print the same bytes from
/// the V6 file as a reader sees it and after `db upgrade` has made it V7.
#[test]
fn a_v6_database_shows_and_compares_alike_before_and_after_its_upgrade() {
    let (dir, db) = temp_db();
    stored_run(dir.path(), &db, "base");
    stored_run(dir.path(), &db, "cand");
    downgrade_to_v6(&db);
    // The fake workload's runs have one case, which gets them all.
    for (label, scale) in [("base", 1.0), ("cand", 1.1)] {
        store_named_wakeup_latencies(&db, label, scale);
    }
    let outputs = || -> Vec<String> {
        [
            "show base --format json",
            "show cand --format csv",
            "compare base cand --format json",
            "compare base cand --metric wakeup_p99_9_usec",
        ]
        .iter()
        .map(|command| {
            let out = run_in(dir.path(), &db, &words(command));
            assert_succeeded(&out, &format!("{command:?}"));
            String::from_utf8(out.stdout).unwrap()
        })
        .collect()
    };
    let before = outputs();
    let comparison = json_of(before[2].as_bytes());
    let curve = &comparison["latency_curves"][0];
    assert_eq!(curve["family"], "wakeup", "{comparison}");
    assert_eq!(curve["points"].as_array().unwrap().len(), 5, "{curve}");
    let out = run_in(dir.path(), &db, &words("db check --format json"));
    assert_eq!(json_of(&out.stdout)["database_schema_version"], 6);

    let out = run_in(dir.path(), &db, &words("db upgrade"));
    assert_succeeded(&out, "db upgrade");
    let out = run_in(dir.path(), &db, &words("db check --format json"));
    let report = json_of(&out.stdout);
    assert_eq!(
        report["database_schema_version"],
        report["known_schema_version"]
    );
    assert_eq!(outputs(), before);
    assert_eq!(integrity(&db), "ok");
}

/// A database its user may not read is said to be unreadable, for readers and writers alike: not
/// called a file of another kind. As root, which reads any file, the commands run as `nobody`.
#[test]
fn a_database_that_cannot_be_read_is_not_called_foreign() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, db) = temp_db();
    stored_run(dir.path(), &db, "x");
    let open_to_all = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(dir.path(), open_to_all).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o000)).unwrap();
    // SAFETY: geteuid has no memory effects.
    let root = unsafe { libc::geteuid() } == 0;
    for command in ["runs", "show x", "run fake --iterations 1 -q", "db check"] {
        let mut cmd = if root {
            let mut cmd = StdCommand::new("setpriv");
            cmd.args(words("--reuid 65534 --regid 65534 --clear-groups --"))
                .arg(assert_cmd::cargo::cargo_bin("schedlab"))
                .env_remove("SCHEDLAB_DB")
                .env_remove("XDG_DATA_HOME");
            let mut cmd = assert_cmd::Command::from_std(cmd);
            cmd.timeout(COMMAND_DEADLINE);
            cmd
        } else {
            bin()
        };
        let out = cmd
            .args(words(command))
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let line = assert_refused(&out, command);
        assert!(
            line.contains("cannot open") || line.contains("cannot write"),
            "{command}: {line}"
        );
        assert!(line.contains("ermission denied"), "{command}: {line}");
    }
}
