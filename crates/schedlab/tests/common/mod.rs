//! Helpers shared by the end-to-end tests: command lines written as one line; the binary on a
//! temporary database; its output as text or JSON once it has succeeded, and the check that bad
//! input is refused; fixture files and the command lines several files use; lookups in the JSON
//! report; and runs in the background for a test to signal, killed if the test fails before
//! waiting for them and waited for with a deadline, with the checks that no task outlives them
//! and that the database they leave is sound. A foreground command is killed when it outlives a
//! deadline, so a hang fails its test rather than holding the suite.
// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

pub mod summaries;
mod test_dir;

// As the helpers below, each test binary uses some of these.
#[allow(unused_imports)]
pub use test_dir::{resummarise, temp_db, temp_dir, TestDir};

use std::ffi::OsStr;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// The words of a command line as the user would type it, `"run pipe --loops 1000"`, split on
/// ASCII white space into argv. For arguments without white space inside them (temporary
/// directories' paths qualify); an argument that has some, a label or a quoted text, is pushed
/// on its own, or the argv stays an array.
pub fn words(line: &str) -> Vec<&str> {
    line.split_ascii_whitespace().collect()
}

/// How long one foreground command may take before it is killed and its test fails: every
/// command a test runs is a short one, so reaching this means a hang, which would otherwise hold
/// the test binary (and CI) until an outer limit.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(600);

/// The schedlab binary with its database at `db`, no XDG data home to fall back on, and killed
/// if it outlives `COMMAND_DEADLINE`.
pub fn schedlab(db: &Path) -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("SCHEDLAB_DB", db)
        .env_remove("XDG_DATA_HOME")
        .timeout(COMMAND_DEADLINE);
    cmd
}

/// The schedlab binary for commands that read no database (`-h`, `list`), killed if it outlives
/// `COMMAND_DEADLINE`.
pub fn schedlab_without_db() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.timeout(COMMAND_DEADLINE);
    cmd
}

/// Checks that `out` exited 0; `what` names the command in the message, beside its stderr.
pub fn assert_succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` and checks it succeeded (see `assert_succeeded`).
pub fn expect_success(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert_succeeded(&out, &format!("{cmd:?}"));
    out
}

/// The stdout of `schedlab ARGS`, which must succeed.
pub fn stdout_of_success(db: &Path, args: &[impl AsRef<OsStr>]) -> String {
    String::from_utf8(expect_success(schedlab(db).args(args)).stdout).unwrap()
}

/// Runs `cmd`, which must succeed, and checks that its stdout holds each of `needles`.
pub fn assert_stdout_contains(cmd: &mut Command, needles: &[&str]) {
    let stdout = String::from_utf8(expect_success(cmd).stdout).unwrap();
    for needle in needles {
        assert!(stdout.contains(needle), "{needle:?} is not in:\n{stdout}");
    }
}

/// Checks that `schedlab list` names each of `names`.
pub fn assert_list_names(names: &[&str]) {
    let (_d, db) = temp_db();
    assert_stdout_contains(schedlab(&db).arg("list"), names);
}

/// `output` read as JSON; when it is not, the test fails showing it.
pub fn json_of(output: &[u8]) -> Value {
    serde_json::from_slice(output).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(output));
    })
}

/// The JSON on the stdout of `schedlab ARGS`, which must succeed.
pub fn json_of_success(db: &Path, args: &[impl AsRef<OsStr>]) -> Value {
    json_of(&expect_success(schedlab(db).args(args)).stdout)
}

/// `schedlab show RUN --format json`: the runs stored under a run id or a label.
pub fn show_json(db: &Path, run: &str) -> Value {
    json_of_success(db, &["show", run, "--format", "json"])
}

/// Checks that `out` is bad input refused: exit code 2 and exactly one line on stderr, starting
/// `schedlab: `, never a panic. `what` names the command in the messages. Returns stderr.
pub fn assert_refused(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{what} printed more than one line: {stderr}"
    );
    assert!(stderr.starts_with("schedlab: "), "{what}: {stderr}");
    stderr
}

/// Runs schedlab with `args` and checks it refused them as bad input (see `assert_refused`);
/// returns stderr.
pub fn assert_bad_input(db: &Path, args: &[impl AsRef<OsStr> + Debug]) -> String {
    let out = schedlab(db).args(args).output().unwrap();
    assert_refused(&out, &format!("{args:?}"))
}

/// Checks that schedlab refuses each of the command `lines` as bad input (see `assert_bad_input`).
pub fn assert_each_bad_input(db: &Path, lines: &[&str]) {
    for line in lines {
        assert_bad_input(db, &words(line));
    }
}

/// Checks that schedlab refuses each command line as bad input with a message that contains its
/// needle (see `assert_bad_input`); returns the messages, in order.
pub fn assert_each_refusal_names<L: AsRef<str>>(db: &Path, cases: &[(L, &str)]) -> Vec<String> {
    cases
        .iter()
        .map(|(line, needle)| {
            let line = line.as_ref();
            let stderr = assert_bad_input(db, &words(line));
            assert!(
                stderr.contains(needle),
                "{line:?} should say {needle:?}: {stderr}"
            );
            stderr
        })
        .collect()
}

/// Writes `contents` to the file `name` in `dir`; returns its path.
pub fn write_file(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A temporary database with the file `name` of `contents` beside it: a test's suite or
/// scenario. The folder, the database's path and the file's.
pub fn temp_db_with(name: &str, contents: impl AsRef<[u8]>) -> (TestDir, PathBuf, PathBuf) {
    let (dir, db) = temp_db();
    let file = write_file(dir.path(), name, contents);
    (dir, db, file)
}

/// The path of the reference tools' output `name` that the import tests read (schedlab-core's
/// fixtures), whole as one argument.
pub fn import_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-core/tests/fixtures/import")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// `schedlab run --suite SUITE EXTRA`, which must succeed.
pub fn run_suite(db: &Path, suite: &Path, extra: &[&str]) {
    expect_success(
        schedlab(db)
            .args(words("run --suite"))
            .arg(suite)
            .args(extra),
    );
}

/// A suite of three fake cases of 100, 200 and 50 µs (0.5 % spread, 8 iterations after one
/// warm-up), seeded `seed`, `seed + 1` and `seed + 2`, each changed by its percentage in
/// `effects` (positive: slower).
pub fn three_fake_cases(seed: u64, effects: [f64; 3]) -> String {
    let mut text = String::from("description = \"three fake cases\"\niterations = 8\nwarmup = 1\n");
    for (i, (value, effect)) in [100.0, 200.0, 50.0].iter().zip(effects).enumerate() {
        text.push_str(&format!(
            "[[case]]\nworkload = \"fake\"\nvalue_usec = {value}\nspread_pct = 0.5\nseed = {}\neffect_pct = {effect}\n",
            seed + i as u64
        ));
    }
    text
}

/// `ab` with settings that do nothing, for command lines about its own flags.
pub const AB_OF_NOTHING: [&str; 5] = ["ab", "--a", "true", "--b", "true"];

/// `campaign start c --a-kernel A --b-kernel B REST`, for command lines about its own flags.
pub fn campaign_start<'a>(a_kernel: &'a str, b_kernel: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    campaign_start_named("c", a_kernel, b_kernel, rest)
}

/// As [`campaign_start`], for the campaign `name`.
pub fn campaign_start_named<'a>(
    name: &'a str,
    a_kernel: &'a str,
    b_kernel: &'a str,
    rest: &[&'a str],
) -> Vec<&'a str> {
    let head = [
        "campaign",
        "start",
        name,
        "--a-kernel",
        a_kernel,
        "--b-kernel",
        b_kernel,
    ];
    [&head[..], rest].concat()
}

/// The element of the JSON array `list` whose `field` is `value`.
pub fn find_where<'a, T>(list: &'a Value, field: &str, value: T) -> &'a Value
where
    Value: PartialEq<T>,
    T: std::fmt::Debug,
{
    list.as_array()
        .unwrap()
        .iter()
        .find(|element| element[field] == value)
        .unwrap_or_else(|| panic!("no element with {field} {value:?} in {list}"))
}

/// A metric of a case in the JSON report, by name.
pub fn metric<'a>(case: &'a Value, name: &str) -> &'a Value {
    find_where(&case["metrics"], "name", name)
}

/// The first value a case in the JSON report has for the metric `name`.
pub fn first_value(case: &Value, name: &str) -> f64 {
    metric(case, name)["values"][0].as_f64().unwrap()
}

/// Whether a case in the JSON report has the metric `name`.
pub fn has_metric(case: &Value, name: &str) -> bool {
    case["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == name)
}

/// `schedlab ARGS --db DB` as a process to start (with [`Start::start`]) and signal: stdout
/// discarded, stderr kept, and nothing in the environment to choose another database. The
/// database is named on the command line, not in the environment, so that every task the run
/// forks carries its path in its command line, where `assert_no_strays` looks for them; before a
/// `--`, whatever follows which is an external tool's own command line.
pub fn background(db: &Path, args: &[&str]) -> StdCommand {
    let (own, tool) = args.split_at(args.iter().position(|a| *a == "--").unwrap_or(args.len()));
    let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin("schedlab"));
    cmd.env_remove("SCHEDLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .args(own)
        .arg("--db")
        .arg(db)
        .args(tool)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// A process a test started, killed when dropped unless it has been waited for: a test that
/// fails between starting a long run and waiting for it unwinds through this, so the run (and
/// the hogs some tests start) does not go on beside the next tests, or after the test binary.
/// It derefs to the `Child` for `id`, `try_wait` and the like; wait for it with
/// [`Running::output_within`] or [`finish`], which have a deadline.
pub struct Running {
    child: Child,
    /// The child leads a process group of its own (started with `process_group(0)`), whose
    /// members may outlive it: the group is killed on drop even once the child is reaped.
    leads_group: bool,
}

/// `Command::spawn` returning a [`Running`].
pub trait Start {
    fn start(&mut self) -> Running;
}

impl Start for StdCommand {
    fn start(&mut self) -> Running {
        let program = self.get_program().to_string_lossy().into_owned();
        let child = self
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let pid = child.id() as libc::pid_t;
        // SAFETY: getpgid has no memory effects; the pid is our child, not reaped yet.
        let leads_group = unsafe { libc::getpgid(pid) } == pid;
        Running { child, leads_group }
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // A group the child led lives on after the child is reaped while any member does, and
        // its id is not reused meanwhile; once none does, the id would have to come round the
        // whole pid space to name another group within a test.
        if self.leads_group {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        // `try_wait` answers from the status it kept once the process was reaped, so a pid that
        // may belong to someone else by now is never signalled.
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: kill has no memory effects; the pid is our child, not reaped yet.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Reads `pipe` to its end on a thread of its own: the other pipe may fill meanwhile, and the end
/// may never come (a task the process started can hold the pipe open after it exits).
fn read_in_background(mut pipe: impl std::io::Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// What `reader` read, if its pipe closed before `deadline`.
fn read_by(
    reader: Option<JoinHandle<Vec<u8>>>,
    deadline: Instant,
    name: &str,
) -> Result<Vec<u8>, String> {
    let Some(reader) = reader else {
        return Ok(Vec::new());
    };
    while !reader.is_finished() {
        if Instant::now() > deadline {
            return Err(format!(
                "the process ended but its {name} stayed open: a task it started still holds it"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(reader.join().unwrap())
}

impl Running {
    /// Waits, within `limit`, for the process to end and for its piped stdout and stderr to
    /// close; when either takes longer the process is killed and the error says which did.
    pub fn try_output_within(mut self, limit: Duration) -> Result<Output, String> {
        let deadline = Instant::now() + limit;
        let stdout = self.child.stdout.take().map(read_in_background);
        let stderr = self.child.stderr.take().map(read_in_background);
        let status = loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                break status;
            }
            if Instant::now() > deadline {
                // Dropping `self` kills the process.
                return Err(format!(
                    "the process did not end within {limit:?}; killed it"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let describe = |e: String| format!("{e} ({limit:?} after the wait began)");
        Ok(Output {
            status,
            stdout: read_by(stdout, deadline, "stdout").map_err(describe)?,
            stderr: read_by(stderr, deadline, "stderr").map_err(describe)?,
        })
    }

    /// As [`Running::try_output_within`], failing the test when the limit passes.
    pub fn output_within(self, limit: Duration) -> Output {
        self.try_output_within(limit)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Waits until the run `child` makes on `db` has stored an iteration, failing if the run ends
/// first or `within` passes.
pub fn wait_for_a_stored_iteration(db: &Path, child: &mut Running, within: Duration) {
    let deadline = Instant::now() + within;
    while stored_iterations(db) < 1 {
        assert!(Instant::now() < deadline, "no iteration was stored in time");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Iterations stored so far (0 while the database does not exist yet).
pub fn stored_iterations(db: &Path) -> i64 {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.query_row("SELECT count(*) FROM iterations", [], |r| r.get(0))
        .unwrap_or(0)
}

pub fn send_signal(child: &Running, signal: i32) {
    // SAFETY: kill has no memory effects; the pid is our own child, not reaped yet.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// [`finish`] with a limit no run a test signals to stop comes near, even on a loaded machine.
pub fn exit_code_and_stderr(child: Running) -> (Option<i32>, String) {
    finish(child, Duration::from_secs(120))
}

/// Waits for the run to end (within `limit`, or the test fails and the run is killed) and
/// returns its exit code (none when a signal killed it) and stderr.
pub fn finish(child: Running, limit: Duration) -> (Option<i32>, String) {
    let output = child
        .try_output_within(limit)
        .unwrap_or_else(|e| panic!("the run: {e}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// No process of the run on `db` is left, five seconds after it ended: schedlab and the tasks it
/// forks all carry the database path (see `background`).
pub fn assert_no_strays(db: &Path) {
    let marker = db.to_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "stray tasks: {:?}",
            processes_mentioning(marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Processes whose command line mentions `marker` (forked tasks share their parent's).
pub fn processes_mentioning(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmdline).contains(marker) {
                found.push(pid);
            }
        }
    }
    found
}

/// The one value `sql` selects from `db`.
pub fn sql_value<T: rusqlite::types::FromSql>(db: &Path, sql: &str) -> T {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// Stores wakeup latency percentiles as a schedlab before V7 did (by name alone, with no
/// definition) in the first case of every iteration of the runs labelled `label`: a fixed curve
/// `scale` times over, a little higher in every second and third iteration. Their runs are
/// summarised again, as the upgrade to V9 summarised such a schedlab's runs.
pub fn store_named_wakeup_latencies(db: &Path, label: &str, scale: f64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    for (name, usec) in [
        ("wakeup_p50_usec", 6.0),
        ("wakeup_p90_usec", 11.0),
        ("wakeup_p99_usec", 38.0),
        ("wakeup_p99_9_usec", 140.0),
        ("wakeup_max_usec", 850.0),
    ] {
        conn.execute(
            "INSERT INTO measurements (iteration_id, name, unit, better, role, value)
             SELECT i.id, ?1, 'usec', 'lower', 'primary', ?2 * (1 + (i.position % 3) * 0.02)
             FROM iterations i JOIN cases c ON i.case_id = c.id JOIN runs r ON c.run_id = r.id
             WHERE c.position = 0 AND r.label = ?3",
            rusqlite::params![name, usec * scale, label],
        )
        .unwrap();
    }
    drop(conn);
    resummarise(db);
}

/// A run on `db` that a signal ended left the database sound, the run stored `interrupted`.
pub fn assert_interrupted_in_a_sound_database(db: &Path) {
    assert_eq!(sql_value::<String>(db, "PRAGMA integrity_check"), "ok");
    assert_eq!(
        sql_value::<String>(db, "SELECT status FROM runs"),
        "interrupted"
    );
}

/// The plan `schedlab run ARGS --dry-run --format json` would run.
pub fn dry_plan(db: &Path, args: &[&str]) -> Value {
    let argv = [&["run"], args, &["--dry-run", "--format", "json"]].concat();
    json_of_success(db, &argv)["plan"].clone()
}

/// The one case's workload parameters of `schedlab run ARGS`.
pub fn workload(db: &Path, args: &[&str]) -> Value {
    let plan = dry_plan(db, args);
    assert_eq!(plan["cases"].as_array().unwrap().len(), 1, "{plan}");
    plan["cases"][0]["workload"].clone()
}

// The undo statements are the store's, written once for its tests and these.
#[path = "../../../schedlab-store/tests/support/downgrade.rs"]
mod downgrade;
#[allow(unused_imports)]
pub use downgrade::{downgrade, downgrade_to_v8, UNDO_V9};
