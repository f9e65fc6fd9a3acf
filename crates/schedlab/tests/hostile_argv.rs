//! Hostile command lines: every flag and argument of every subcommand, read from the binary's own
//! `-h` so the list cannot drift, given negative, huge, NaN, infinite, empty, control-character,
//! 100 kB and non-UTF-8 values. Each must end in exit 0 or in one `schedlab: …` line and exit 2
//! (exit 1 only where the value asks for a real failure), never a panic, a signal or a hang.
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod common;
use common::{expect_success, schedlab, schedlab_without_db, words};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
/// Far above anything an argv of this test should take; a hang is a bug, not a slow machine.
const TIMEOUT: Duration = Duration::from_secs(20);
/// Runs are process start-ups and small SQLite writes: a few at once keep both CPUs busy.
const THREADS: usize = 4;

fn hostile_values() -> Vec<OsString> {
    vec![
        "-1".into(),
        "0".into(),
        // 2^64: one past u64::MAX.
        "18446744073709551616".into(),
        "18446744073709551615".into(),
        // -2^63: i64::MIN, whose negation overflows.
        "-9223372036854775808".into(),
        "NaN".into(),
        "inf".into(),
        // Parses as an f64, to infinity.
        "1e309".into(),
        "".into(),
        "\u{1}\u{7f}\n".into(),
        // 100 kB of digits: an overflowing integer, an infinite float, a too-long file name.
        "9".repeat(100_000).into(),
        OsString::from_vec(b"f\xffo".to_vec()),
    ]
}

/// Flags whose accepted value asks for a real failure: exit 1 is right when stderr says so.
fn expected_failure(flag: &str) -> Option<&'static str> {
    match flag {
        // Shell commands, run as given: a value that is no command fails as the user's command.
        "--a" => Some("schedlab: the --a command"),
        "--b" => Some("schedlab: the --b command"),
        "--restore" => Some("schedlab: the --restore command"),
        // A daemon arm's command, run as given: one that is no command ends before it is ready.
        "--a-daemon" => Some("schedlab: the --a-daemon command"),
        "--b-daemon" => Some("schedlab: the --b-daemon command"),
        // The fake workload's test hooks.
        "--fail-at" => Some("(--fail-at)"),
        "--stall-at" => Some("(--iteration-timeout)"),
        _ => None,
    }
}

/// Flags that only mean something with another one (clap's `requires`): added so the value
/// under test reaches its own check, not only clap's. The second list is base flags to drop.
fn companions(flag: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match flag {
        "--until-ci" => (&["--max-iterations=3"], &[]),
        "--max-iterations" => (&["--until-ci=50"], &[]),
        "--max-rounds" => (&["--until-decided"], &["--rounds"]),
        // A stalled iteration would otherwise wait for the default deadline (30 s at least).
        "--stall-at" => (&["--iteration-timeout=1"], &[]),
        _ => (&[], &[]),
    }
}

/// Flags that take the place of a workload: given together with one they are refused before
/// their value is looked at.
fn replaces_workload(flag: &str) -> bool {
    matches!(flag, "--suite" | "--from" | "--show" | "--list")
}

#[derive(Debug, Clone)]
enum Arg {
    Flag(String),
    Opt(String, OsString),
    /// `--flag VALUE` as two arguments, where clap may take a `-1` for a flag.
    Spaced(String, OsString),
    Pos(String, OsString),
}

impl Arg {
    fn long(&self) -> Option<&str> {
        match self {
            Arg::Flag(l) | Arg::Opt(l, _) | Arg::Spaced(l, _) => Some(l),
            Arg::Pos(..) => None,
        }
    }

    /// `--flag=value` or a bare `--flag`, as written in the hand lists above.
    fn parse(text: &str) -> Arg {
        match text.split_once('=') {
            Some((flag, value)) => Arg::Opt(flag.into(), value.into()),
            None => Arg::Flag(text.into()),
        }
    }
}

#[derive(Debug, Clone)]
struct Level {
    name: String,
    args: Vec<Arg>,
}

/// What `schedlab PATH -h` lists.
#[derive(Debug, Default)]
struct Help {
    /// Long names, and whether each takes a value.
    flags: Vec<(String, bool)>,
    positionals: Vec<String>,
    commands: Vec<String>,
}

fn help(path: &[String]) -> Help {
    let out = schedlab_without_db().args(path).arg("-h").output().unwrap();
    assert!(out.status.success(), "schedlab {path:?} -h failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut help = Help::default();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') {
            section = line;
            continue;
        }
        let trimmed = line.trim_start();
        // An entry's line starts at most six columns in; help wrapped onto the next lines
        // starts further in (and may begin with a flag it names).
        if line.len() - trimmed.len() > 6 {
            continue;
        }
        // Flags sit under "Options:" and under headings of their own ("Run options:",
        // "Decision options:", "ministat options:").
        let section = if section.ends_with("options:") || section.ends_with("Options:") {
            "Options:"
        } else {
            section
        };
        match section {
            "Commands:" => {
                let name = trimmed.split_whitespace().next().unwrap();
                if name != "help" {
                    help.commands.push(name.to_string());
                }
            }
            "Arguments:" => {
                let names = trimmed.split("  ").next().unwrap();
                for name in names.split_whitespace() {
                    // `<NAME>`, `<NAME>...`, and optional ones: `[NAME]...`.
                    let name = name.trim_start_matches(['<', '[']).trim_end_matches("...");
                    let name = name.trim_end_matches(['>', ']']).to_string();
                    if !help.positionals.contains(&name) {
                        help.positionals.push(name);
                    }
                }
            }
            "Options:" => {
                // `-x, --long <VALUE>  text` or `    --long  text`.
                let spec = trimmed.split("  ").next().unwrap();
                let spec = match spec.split_once(", ") {
                    Some((short, rest)) if short.len() == 2 => rest,
                    _ => spec,
                };
                let Some(spec) = spec.strip_prefix("--") else {
                    continue;
                };
                let (name, rest) = spec.split_once(' ').unwrap_or((spec, ""));
                if name != "help" && name != "version" {
                    help.flags
                        .push((format!("--{name}"), rest.trim_start().starts_with('<')));
                }
            }
            _ => {}
        }
    }
    help
}

/// Files every command line may use: a database with two labelled fake runs (`a`, `b`), a
/// calibration (id 1) and a campaign `c` whose kernels this machine never runs (so `campaign
/// next` never runs a slot or a reboot command), data files for `stat`, and a file where a
/// directory is expected.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let fixture = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        let setup = [
            "run -q --iterations=3 --warmup=0 --label=a fake",
            "run -q --iterations=3 --warmup=0 --label=b fake --seed=2",
            "calibrate -q --runs=3 --pause=0 --iterations=2 --warmup=0 --label=cal fake",
            "campaign start c --a-kernel=not-this-kernel-a --b-kernel=not-this-kernel-b \
             --boots=4 fake",
        ];
        for line in setup {
            expect_success(schedlab(&fixture.db()).args(words(line)));
        }
        std::fs::write(fixture.path("x.txt"), "1\n2\n3\n4\n5\n").unwrap();
        std::fs::write(fixture.path("y.txt"), "2\n3\n4\n5\n6\n").unwrap();
        std::fs::write(fixture.path("not-a-dir"), "").unwrap();
        fixture
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn db(&self) -> PathBuf {
        self.path("results.db")
    }

    /// A fresh copy of the database for one command line, which may write to it.
    fn copy_db_to(&self, dir: &Path) -> PathBuf {
        // The -shm index is SQLite's to rebuild; the -wal file holds data if it is not empty.
        for name in ["results.db", "results.db-wal"] {
            if self.path(name).exists() {
                std::fs::copy(self.path(name), dir.join(name)).unwrap();
            }
        }
        dir.join("results.db")
    }

    /// The base command line of a subcommand: complete and valid, and fast whatever value one of
    /// its flags gets. Fake runs really run (one iteration, instantly); any other workload runs
    /// nothing: `run --dry-run`, and for `ab` and `calibrate` (which have no dry run) a
    /// database that cannot be created, which they open only after checking every flag.
    fn base(&self, path: &[String]) -> Vec<Level> {
        let level = |name: &str, args: &[&str]| Level {
            name: name.to_string(),
            args: args.iter().map(|a| Arg::parse(a)).collect(),
        };
        let pos = |level: &mut Level, name: &str, value: &Path| {
            level
                .args
                .push(Arg::Pos(name.to_string(), value.as_os_str().to_owned()));
        };
        let unwritable = format!("--db={}", self.path("not-a-dir/results.db").display());
        let fast = ["--iterations=1", "--warmup=0", "--quiet"];
        let p: Vec<&str> = path.iter().map(String::as_str).collect();
        let mut levels = self.base_of(&p, &level, &pos, &unwritable, &fast);
        // A user's tool, wherever a workload goes: a parser and a command after `--` (`render`
        // puts it there).
        if let Some(external) = levels.last_mut().filter(|l| l.name == "external") {
            if external.args.is_empty() {
                external.args.push(Arg::parse("--parser=plain"));
                pos(external, "CMD", Path::new("/bin/true"));
            }
        }
        levels
    }

    fn base_of(
        &self,
        p: &[&str],
        level: &dyn Fn(&str, &[&str]) -> Level,
        pos: &dyn Fn(&mut Level, &str, &Path),
        unwritable: &str,
        fast: &[&str; 3],
    ) -> Vec<Level> {
        let path = p;
        match p {
            ["list"] | ["runs"] | ["env"] | ["hosts"] => vec![level(p[0], &[])],
            ["history"] | ["changes"] => {
                let mut history = level(p[0], &[]);
                pos(&mut history, "CASE", Path::new("fake:value=100 spread=1"));
                vec![history]
            }
            ["run"] | ["run", "fake"] => vec![level("run", fast), level("fake", &[])],
            ["run", w] => vec![level("run", &["--dry-run"]), level(w, &[])],
            ["ab"] | ["ab", "fake"] => {
                let mut args = words("--a=true --b=true --rounds=1");
                args.extend(fast);
                vec![level("ab", &args), level("fake", &[])]
            }
            ["ab", w] => vec![
                level("ab", &["--a=true", "--b=true", "--rounds=1", unwritable]),
                level(w, &[]),
            ],
            ["calibrate"] | ["calibrate", "fake"] => {
                let mut args = words("--runs=3 --pause=0");
                args.extend(fast);
                vec![level("calibrate", &args), level("fake", &[])]
            }
            ["calibrate", w] => vec![
                level("calibrate", &["--runs=3", "--pause=0", unwritable]),
                level(w, &[]),
            ],
            ["campaign", "start", rest @ ..] => {
                let mut start = level(
                    "start",
                    &words("--a-kernel=not-this-kernel-a --b-kernel=not-this-kernel-b"),
                );
                pos(&mut start, "NAME", Path::new("c2"));
                let workload = rest.first().copied().unwrap_or("fake");
                vec![level("campaign", &[]), start, level(workload, &[])]
            }
            ["campaign", action @ ("next" | "run" | "status")] => {
                let mut next = level(action, &[]);
                pos(&mut next, "NAME", Path::new("c"));
                vec![level("campaign", &[]), next]
            }
            ["show"] => {
                let mut show = level("show", &[]);
                pos(&mut show, "RUN-ID|LABEL", Path::new("a"));
                vec![show]
            }
            ["compare"] | ["report"] => {
                let mut compare = level(p[0], &[]);
                if p[0] == "report" {
                    compare.args.push(Arg::parse("--html=report.html"));
                }
                pos(&mut compare, "BASE", Path::new("a"));
                pos(&mut compare, "CAND", Path::new("b"));
                vec![compare]
            }
            ["import"] => {
                let mut import = level("import", &["--tool=plain"]);
                pos(&mut import, "FILE", &self.path("x.txt"));
                vec![import]
            }
            ["stat"] => {
                let mut stat = level("stat", &[]);
                pos(&mut stat, "FILE", &self.path("x.txt"));
                pos(&mut stat, "FILE", &self.path("y.txt"));
                vec![stat]
            }
            ["db", action] => vec![level("db", &[]), level(action, &[])],
            ["completions"] => {
                let mut completions = level("completions", &[]);
                pos(&mut completions, "SHELL", Path::new("bash"));
                vec![completions]
            }
            ["man"] => vec![level("man", &[])],
            ["push"] => {
                let to = format!("--to={}", self.path("pushed.db").display());
                vec![level("push", &[&to])]
            }
            _ => panic!("schedlab {path:?} is new: give it a base command line in Fixture::base"),
        }
    }
}

fn render(levels: &[Level]) -> Vec<OsString> {
    let mut argv = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        argv.push(OsString::from(&level.name));
        let mut positionals = Vec::new();
        for arg in &level.args {
            match arg {
                Arg::Flag(flag) => argv.push(flag.into()),
                Arg::Opt(flag, value) => {
                    let mut opt = OsString::from(format!("{flag}="));
                    opt.push(value);
                    argv.push(opt);
                }
                Arg::Spaced(flag, value) => argv.extend([flag.into(), value.clone()]),
                Arg::Pos(_, value) => positionals.push(value.clone()),
            }
        }
        // Only after the last subcommand can `--` say that a value like `-1` is no flag.
        let last = i + 1 == levels.len();
        let command = level
            .args
            .iter()
            .any(|a| matches!(a, Arg::Pos(name, _) if name == "CMD"));
        if last && (command || positionals.iter().any(|v| v.as_bytes().starts_with(b"-"))) {
            argv.push("--".into());
        }
        argv.extend(positionals);
    }
    argv
}

struct Case {
    argv: Vec<OsString>,
    /// A value for SCHEDLAB_DB instead of the fresh copy of the fixture's database.
    db_env: Option<OsString>,
    /// A stderr fragment that makes exit 1 right (see `expected_failure`).
    failure: Option<&'static str>,
}

fn cases(fixture: &Fixture) -> Vec<Case> {
    let values = hostile_values();
    let switch_values: Vec<OsString> = vec!["0".into(), "\u{1}\u{7f}\n".into()];
    let mut cases = Vec::new();
    // Every subcommand, with the flags it adds to its parent's (global flags are listed again
    // under each subcommand).
    let mut pending: Vec<(Vec<String>, BTreeSet<String>)> = vec![(Vec::new(), BTreeSet::new())];
    let mut seen_commands = 0;
    while let Some((path, parent_flags)) = pending.pop() {
        let help = help(&path);
        let flags: BTreeSet<String> = help.flags.iter().map(|(f, _)| f.clone()).collect();
        for command in &help.commands {
            let mut sub = path.clone();
            sub.push(command.clone());
            pending.push((sub, flags.clone()));
        }
        seen_commands += 1;
        if path.is_empty() {
            // An unknown or hostile subcommand name.
            for value in &values {
                cases.push(Case {
                    argv: vec![value.clone()],
                    db_env: None,
                    failure: None,
                });
            }
            continue;
        }
        let own: Vec<&(String, bool)> = help
            .flags
            .iter()
            .filter(|(f, _)| !parent_flags.contains(f))
            .collect();
        if own.is_empty() && help.positionals.is_empty() {
            continue;
        }
        let base = fixture.base(&path);
        let at = path.len() - 1;
        let mut with = |edit: &dyn Fn(&mut Vec<Level>), failure| {
            let mut levels = base.clone();
            edit(&mut levels);
            cases.push(Case {
                argv: render(&levels),
                db_env: None,
                failure,
            });
        };
        for (flag, takes_value) in own {
            let set = |levels: &mut Vec<Level>, arg: Arg| {
                let (add, drop) = companions(flag);
                let level = &mut levels[at];
                level
                    .args
                    .retain(|a| a.long() != Some(flag) && !drop.contains(&a.long().unwrap_or("")));
                level.args.extend(add.iter().map(|a| Arg::parse(a)));
                level.args.push(arg);
                if replaces_workload(flag) {
                    levels.truncate(at + 1);
                }
            };
            // The flag on its own: a valid switch, or a value missing.
            with(&|l| set(l, Arg::Flag(flag.clone())), expected_failure(flag));
            // An option given each hostile value; clap refuses a switch given any value alike,
            // so two values do.
            let values = if *takes_value {
                &values
            } else {
                &switch_values
            };
            for value in values {
                with(
                    &|l| set(l, Arg::Opt(flag.clone(), value.clone())),
                    expected_failure(flag),
                );
            }
            if *takes_value {
                with(
                    &|l| set(l, Arg::Spaced(flag.clone(), "-1".into())),
                    expected_failure(flag),
                );
            }
        }
        for name in &help.positionals {
            let known = base[at]
                .args
                .iter()
                .any(|a| matches!(a, Arg::Pos(n, _) if n == name));
            assert!(
                known,
                "{path:?} has a new argument <{name}>: add it to Fixture::base"
            );
            for value in &values {
                with(
                    &|levels| {
                        let slot = levels[at]
                            .args
                            .iter_mut()
                            .find_map(|a| match a {
                                Arg::Pos(n, v) if n == name => Some(v),
                                _ => None,
                            })
                            .unwrap();
                        *slot = value.clone();
                    },
                    None,
                );
            }
        }
    }
    assert!(seen_commands > 40, "only {seen_commands} subcommands found");
    // The database named by the environment, as a reader and as a writer see it.
    for value in &values {
        for line in ["runs", "run -q --iterations=1 --warmup=0 fake"] {
            cases.push(Case {
                argv: words(line).into_iter().map(OsString::from).collect(),
                db_env: Some(value.clone()),
                failure: None,
            });
        }
    }
    cases
}

/// An argument short enough to read in a failure message.
fn show_arg(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    if text.len() > 40 {
        let head: String = text.chars().take(20).collect();
        format!("{head:?}…({} bytes)", text.len())
    } else {
        format!("{text:?}")
    }
}

fn describe(case: &Case) -> String {
    let argv: Vec<String> = case.argv.iter().map(|a| show_arg(a)).collect();
    match &case.db_env {
        Some(db) => format!("SCHEDLAB_DB={} schedlab {}", show_arg(db), argv.join(" ")),
        None => format!("schedlab {}", argv.join(" ")),
    }
}

/// Runs one case in a directory of its own (its working directory, HOME and database) and
/// returns what is wrong with how it ended, if anything.
fn check(fixture: &Fixture, case: &Case) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let db = fixture.copy_db_to(&work);
    // Files, not pipes: a 100 kB value echoed in a message must not fill a pipe nobody reads.
    let stdout = std::fs::File::create(dir.path().join("stdout")).unwrap();
    let stderr_path = dir.path().join("stderr");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let mut child = Command::new(BIN)
        .args(&case.argv)
        .env(
            "SCHEDLAB_DB",
            case.db_env.as_deref().unwrap_or(db.as_os_str()),
        )
        .env("HOME", &work)
        .env_remove("XDG_DATA_HOME")
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Its own process group, so a timeout kills the workload's tasks too.
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id() as i32;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > TIMEOUT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Whatever happened, nothing it started outlives it.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let Some(status) = status else {
        let _ = child.wait();
        return Some(format!(
            "{}: still running after {TIMEOUT:?}",
            describe(case)
        ));
    };
    let stderr = String::from_utf8_lossy(&std::fs::read(&stderr_path).unwrap()).into_owned();
    let shown = if stderr.len() > 600 {
        let head: String = stderr.chars().take(600).collect();
        format!("{head}…({} bytes)", stderr.len())
    } else {
        stderr.clone()
    };
    let wrong = |why: &str| Some(format!("{}: {why}; stderr: {shown}", describe(case)));
    if stderr.contains("panicked") || status.code() == Some(101) {
        return wrong("panicked");
    }
    match status.code() {
        Some(0) => None,
        Some(2) => {
            let lines = stderr.trim_end().lines().count();
            if lines != 1 || !stderr.starts_with("schedlab: ") {
                wrong("exit 2 without exactly one `schedlab: ` line")
            } else {
                None
            }
        }
        Some(1) => match case.failure {
            Some(fragment) if stderr.lines().any(|l| l.contains(fragment)) => None,
            _ => wrong("exit 1: a failed run, where only bad input was given"),
        },
        Some(code) => wrong(&format!("exit {code}")),
        None => wrong(&format!("killed by {status}")),
    }
}

#[test]
fn hostile_command_lines_end_in_exit_0_or_one_line_and_exit_2() {
    let started = Instant::now();
    let fixture = Fixture::new();
    // Workloads `list` names are the ones `run` offers: the subcommands walked above.
    let list = schedlab_without_db().arg("list").output().unwrap();
    let run_help = help(&["run".to_string()]);
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        if let Some(rest) = line.strip_prefix("workload") {
            let name = rest.split_whitespace().next().unwrap();
            assert!(run_help.commands.iter().any(|c| c == name), "{name}");
        }
    }
    let cases = cases(&fixture);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                if let Some(failure) = check(&fixture, case) {
                    failures.lock().unwrap().push(failure);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    println!(
        "{} hostile command lines in {:.1} s, {} wrong",
        cases.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} command lines ended wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
