//! Every command on a PostgreSQL store (`--db postgres://…` or `SCHEDLAB_DB`), against the real
//! server `scripts/with-postgres` starts; and `schedlab push` from a laptop's SQLite file into it,
//! twice; a run whose connection drops, and Ctrl-C while the server is unreachable or another
//! session holds a lock on the run's tables. Without a server, plain `cargo test` skips these
//! with a notice (`scripts/check` fails).
// PostgreSQL is half of what this checks: a build without the `postgres` feature skips it whole.
#![cfg(feature = "postgres")]
mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use predicates::prelude::*;
use schedlab_store::testing::{fresh_pg_database, HeldTables};

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string()
}

/// Runs the fake workload for `iterations` iterations into `db`, labelled `label`.
fn store_fake_run(db: &Path, label: &str, iterations: u32) {
    schedlab(db)
        .args(words(&format!(
            "run --label {label} --quiet fake --iterations {iterations}"
        )))
        .assert()
        .success();
}

#[test]
fn every_command_works_on_postgresql() {
    let Some(url) = fresh_pg_database("cli_every_command") else {
        return;
    };
    let db = Path::new(&url);
    // Readers before any writer: an empty database.
    assert_stdout_contains(schedlab(db).arg("runs"), &["no stored runs in postgres://"]);
    for label in ["base", "base", "new"] {
        store_fake_run(db, label, 3);
    }
    let runs = json_of_success(db, &words("runs --format json"))["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 3);
    assert_eq!(show_json(db, "base")["runs"].as_array().unwrap().len(), 2);
    assert_stdout_contains(
        schedlab(db).args(words("show 1 --format csv")),
        &["usec_per_op"],
    );
    assert_stdout_contains(schedlab(db).args(words("compare base new")), &["fake"]);
    // The fleet view and the history read through the same trait.
    let host = runs[0]["hostname"].as_str().unwrap().to_string();
    assert_stdout_contains(schedlab(db).arg("hosts"), &[host.as_str()]);
    let only_here =
        json_of_success(db, &["runs", "--host", &host, "--format", "json"])["runs"].clone();
    assert_eq!(only_here.as_array().unwrap().len(), 3);
    let case = show_json(db, "new")["runs"][0]["cases"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let history = json_of_success(db, &["history", &case, "--format", "json"]);
    assert!(history.to_string().contains("base"), "{history}");
    schedlab(db).args(["changes", &case]).assert().success();
    // An import stores through it too.
    let numbers = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(numbers.path(), "1.5\n1.6\n1.4\n").unwrap();
    schedlab(db)
        .args(words("import --tool plain --label imported"))
        .arg(numbers.path())
        .assert()
        .success();
    assert_eq!(
        show_json(db, "imported")["runs"].as_array().unwrap().len(),
        1
    );
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    schedlab(db)
        .args(words("report base new --html"))
        .arg(&html)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    schedlab(db)
        .args(words("run --dry-run fake --iterations 3"))
        .assert()
        .success();
    schedlab(db)
        .args(words(
            "ab --a true --b true --rounds 1 --label gov fake --iterations 2 --warmup 0",
        ))
        .assert()
        .success();
    schedlab(db).args(words("show gov-b")).assert().success();
    schedlab(db)
        .args(words(&format!(
            "campaign start k --a-kernel {} --b-kernel other-kernel --boots 4 fake --iterations 2",
            kernel()
        )))
        .assert()
        .success();
    assert_stdout_contains(
        schedlab(db).args(words("campaign next k")),
        &["next: boot kernel other-kernel"],
    );
    assert_stdout_contains(
        schedlab(db).args(words("campaign status k")),
        &["1 of 4 boots done"],
    );
    assert_stdout_contains(
        schedlab(db).args(words("campaign status")),
        &["campaign k · running · 1 of 4 boots done"],
    );
    schedlab(db)
        .args(words(
            "calibrate --runs 3 --label cal --quiet fake --iterations 3",
        ))
        .assert()
        .success();
    assert_stdout_contains(schedlab(db).args(words("calibrate --list")), &["cal"]);
    let check = json_of_success(db, &words("db check --format json"));
    assert_eq!(check["ok"], true);
    assert_eq!(
        check["database_schema_version"],
        check["known_schema_version"]
    );
    assert!(check["runs_by_status"]["complete"].as_i64().unwrap() >= 8);
    assert_stdout_contains(
        schedlab(db).args(words("db upgrade")),
        &["nothing to upgrade"],
    );
    // The URL's password is never printed; a server that is not there is bad input.
    schedlab(Path::new(
        "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=5",
    ))
    .arg("runs")
    .assert()
    .code(2)
    .stderr(predicate::str::contains("hunter2").not());
}

/// A test box's SQLite file pushed into the fleet's database twice: everything once.
#[test]
fn push_twice_copies_nothing_twice() {
    let Some(url) = fresh_pg_database("cli_push") else {
        return;
    };
    let (_d, file) = temp_db();
    for label in ["a", "a", "b"] {
        store_fake_run(&file, label, 2);
    }
    let first = json_of_success(&file, &["push", "--to", &url, "--format", "json"]);
    assert_eq!(first["copied"].as_array().unwrap().len(), 3);
    let second = json_of_success(&file, &["push", "--to", &url, "--format", "json"]);
    assert_eq!(second["copied"].as_array().unwrap().len(), 0);
    assert_eq!(second["already_there"], 3);
    assert_stdout_contains(
        schedlab(&file).args(["push", "--to", &url]),
        &["0 copied, 3 already there"],
    );
    let fleet = Path::new(&url);
    assert_eq!(show_json(fleet, "a")["runs"].as_array().unwrap().len(), 2);
    // --since in the future copies nothing; a bad one and a push into itself are bad input.
    let later = json_of_success(
        &file,
        &words(&format!("push --to {url} --since 2200-01-01 --format json")),
    );
    assert_eq!(later["already_there"], 0);
    schedlab(&file)
        .args(["push", "--to", &url, "--since", "soon"])
        .assert()
        .code(2);
    schedlab(&file)
        .args(words("push --to"))
        .arg(&file)
        .assert()
        .code(2);
    // And back into a new file, from the fleet.
    let (_d2, copy) = temp_db();
    let back = json_of_success(
        fleet,
        &["push", "--to", copy.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(back["copied"].as_array().unwrap().len(), 3);
}

/// A URL whose host is a directory reaches the server over its Unix socket there, as libpq's
/// `host=/run/postgresql` does: the same database as over TCP.
#[test]
fn a_unix_socket_host_reaches_the_same_database() {
    let Some(tcp) = fresh_pg_database("cli_unix_socket") else {
        return;
    };
    let dir = std::env::var("SCHEDLAB_TEST_PG_SOCKET_DIR")
        .expect("scripts/with-postgres sets SCHEDLAB_TEST_PG_SOCKET_DIR beside the URL");
    // postgres://postgres@127.0.0.1:PORT/NAME → the same user, port and database by socket.
    let (authority, database) = tcp
        .strip_prefix("postgres://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let (user, host_port) = authority.split_once('@').unwrap();
    let port = host_port.rsplit_once(':').unwrap().1;
    let socket = format!("postgres://{user}@/{database}?host={dir}&port={port}");
    schedlab(Path::new(&socket))
        .args(words(
            "run --label by-socket --quiet fake --iterations 2 --warmup 0",
        ))
        .assert()
        .success();
    let over_tcp = json_of_success(Path::new(&tcp), &words("runs --format json"))["runs"].clone();
    assert_eq!(over_tcp.as_array().unwrap().len(), 1);
    assert_eq!(over_tcp[0]["label"], "by-socket");
    let check = json_of_success(Path::new(&socket), &words("db check --format json"));
    assert_eq!(check["ok"], true);
    assert_eq!(check["runs_by_status"]["complete"], 1);
    // A socket directory with no server in it is bad input, not a hang or a panic.
    let nowhere = tempfile::tempdir().unwrap();
    let missing = format!(
        "postgres://{user}@/{database}?host={}&port={port}",
        nowhere.path().display()
    );
    let out = schedlab(Path::new(&missing)).arg("runs").output().unwrap();
    assert_refused(&out, "a socket directory without a server");
}

/// A TCP relay between schedlab and the server that the test can break: `drop_connections`
/// ends every relayed connection, as a server restart or a network blip does; `refuse` makes
/// every later connection end at once, as an unreachable server does; `freeze` keeps taking what
/// either side sends and passes nothing on, as a server stopped with SIGSTOP does (its kernel
/// still acknowledges every byte, so no timeout of the connection's fires).
struct Relay {
    port: u16,
    refusing: Arc<AtomicBool>,
    frozen: Arc<AtomicBool>,
    relayed: Arc<Mutex<Vec<TcpStream>>>,
}

/// Copies `from` to `to` until either ends, holding what it read while `frozen` is set.
fn pass_on(mut from: TcpStream, mut to: TcpStream, frozen: &AtomicBool) {
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buffer) {
        while frozen.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
        if to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

impl Relay {
    fn to(server: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let refusing = Arc::new(AtomicBool::new(false));
        let frozen = Arc::new(AtomicBool::new(false));
        let relayed = Arc::new(Mutex::new(Vec::new()));
        let (server, refuse, list) = (server.to_string(), refusing.clone(), relayed.clone());
        let freeze = frozen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if refuse.load(Ordering::SeqCst) {
                    continue;
                }
                let upstream = TcpStream::connect(&server).unwrap();
                let mut list = list.lock().unwrap();
                for (from, to) in [
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap()),
                    (upstream.try_clone().unwrap(), client.try_clone().unwrap()),
                ] {
                    let frozen = freeze.clone();
                    std::thread::spawn(move || pass_on(from, to, &frozen));
                }
                list.extend([client, upstream]);
            }
        });
        Relay {
            port,
            refusing,
            frozen,
            relayed,
        }
    }

    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    fn drop_connections(&self) {
        for stream in self.relayed.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    fn refuse(&self) {
        self.refusing.store(true, Ordering::SeqCst);
        self.drop_connections();
    }
}

/// `url` with its server reached through `relay`.
fn through(relay: &Relay, url: &str) -> String {
    let host_port = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    url.replacen(host_port, &format!("127.0.0.1:{}", relay.port), 1)
}

/// The relay for the server of `url`.
fn relay_for(url: &str) -> Relay {
    Relay::to(url.split('@').nth(1).unwrap().split('/').next().unwrap())
}

/// A long run of the fake workload storing an iteration every 50 ms into `url`, started in the
/// background.
fn fake_run_into(url: &str) -> Running {
    background(
        Path::new(url),
        &words("run fake --sleep-ms 50 --iterations 1000 --warmup 0 --quiet"),
    )
    .start()
}

/// Iterations the run at `url` has stored, as a reader beside it sees them.
fn pg_iterations(url: &str) -> i64 {
    let runs = json_of_success(Path::new(url), &words("runs --format json"))["runs"].clone();
    runs[0]["measured_iterations"].as_i64().unwrap_or(0)
}

/// Waits until the run `child` has stored more than `than` iterations at `url`.
fn wait_for_more_iterations(url: &str, than: i64, child: &mut Running) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stored = pg_iterations(url);
        if stored > than {
            return stored;
        }
        assert!(
            Instant::now() < deadline,
            "no iteration stored beyond {than}"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A long fake run storing into `url` through a relay, once it has stored an iteration: the
/// relay, the run, and the iterations stored so far.
fn relayed_fake_run(url: &str) -> (Relay, Running, i64) {
    let relay = relay_for(url);
    let mut child = fake_run_into(&through(&relay, url));
    let stored = wait_for_more_iterations(url, 0, &mut child);
    (relay, child, stored)
}

/// Checks that the newest run at `url` reads abandoned with at least `stored` iterations.
fn assert_abandoned_with(url: &str, stored: i64) {
    let runs = json_of_success(Path::new(url), &words("runs --format json"))["runs"].clone();
    assert_eq!(runs[0]["status"], "abandoned", "{runs}");
    let kept = runs[0]["measured_iterations"].as_i64().unwrap();
    assert!(kept >= stored, "{kept} < {stored}");
}

/// A run whose connection drops reconnects and goes on storing; with the server unreachable, the
/// store would retry for its patience (15 minutes), but Ctrl-C ends the run within its grace,
/// saying what it waited for, and the next reader sees the run abandoned with what it stored.
#[test]
fn a_dropped_connection_is_reopened_and_ctrl_c_does_not_wait_for_the_server() {
    let Some(direct) = fresh_pg_database("cli_dropped_connection") else {
        return;
    };
    let (relay, mut child, before) = relayed_fake_run(&direct);
    relay.drop_connections();
    let after_drop = wait_for_more_iterations(&direct, before, &mut child);

    relay.refuse();
    std::thread::sleep(Duration::from_secs(1));
    send_signal(&child, libc::SIGINT);
    // The store's patience is 15 minutes; its grace after a signal is 5 s.
    let (code, stderr) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("SIGINT arrived while the results database")
            && stderr.contains("next command shows it abandoned"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("hunter2") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert_abandoned_with(&direct, after_drop);
}

/// Another session's lock on the run's tables (a migration, `VACUUM FULL`, a `LOCK TABLE`) is
/// waited for in bounded steps, each retried as a busy database is: Ctrl-C ends the run within
/// its grace instead of waiting for the lock, and once the lock is gone the next reader sees the
/// run abandoned with every iteration it stored.
#[test]
fn ctrl_c_does_not_wait_out_a_lock_another_session_holds() {
    let Some(url) = fresh_pg_database("cli_held_lock") else {
        return;
    };
    let mut child = fake_run_into(&url);
    let before = wait_for_more_iterations(&url, 0, &mut child);
    let held = HeldTables::lock(&url, &["runs"]);
    std::thread::sleep(Duration::from_secs(1));
    send_signal(&child, libc::SIGINT);
    // The lock is held until the run has ended.
    let (code, stderr) = finish(child, Duration::from_secs(60));
    drop(held);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("SIGINT arrived while the results database")
            && stderr.contains("another session holds a lock")
            && stderr.contains("next command shows it abandoned"),
        "{stderr}"
    );
    assert_abandoned_with(&url, before);
}

/// A server that takes a statement and never answers (stopped with SIGSTOP, hung) holds a store
/// call in a wait no signal interrupts. The clean stop is bounded all the same: 30 s after SIGINT
/// schedlab quits as a second Ctrl-C would, saying why, and the next reader sees the run
/// abandoned with what it stored.
#[test]
fn a_server_that_never_answers_holds_a_stop_for_30_s_at_most() {
    let Some(direct) = fresh_pg_database("cli_frozen_server") else {
        return;
    };
    let (relay, child, before) = relayed_fake_run(&direct);
    relay.freeze();
    // An iteration ends every 50 ms; its store call is now held.
    std::thread::sleep(Duration::from_secs(1));
    send_signal(&child, libc::SIGINT);
    let signalled = Instant::now();
    let (code, stderr) = finish(child, Duration::from_secs(90));
    let took = signalled.elapsed();
    relay.drop_connections();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        took >= Duration::from_secs(schedlab_core::sys::STOP_BOUND_SECS - 1),
        "{took:?}: {stderr}"
    );
    assert!(
        stderr.contains("did not finish within 30 s of the stop signal")
            && stderr.contains("reads abandoned"),
        "{stderr}"
    );
    assert_abandoned_with(&direct, before);
}
