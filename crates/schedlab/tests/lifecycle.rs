//! How runs end, with real signals and real processes: a hang-up (SIGHUP) in the middle of every
//! workload that runs tasks, SIGKILL of schedlab itself (the next reader must see the run
//! `abandoned`, and no task may outlive it), workers that stop, block or spin forever (the
//! watchdog must end the run at its deadline with the case failed and nothing left behind),
//! Ctrl-C while another process holds the database, a second Ctrl-C, and `--keep-going`. Work
//! sizes are tiny; deadlines in the assertions are generous on purpose.
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Iterations enough that no run below ends on its own before the test is done with it.
const MANY: &str = "1000";

/// `schedlab run ARGS` without warm-up, in the background (see `common::background`).
fn spawn(db: &Path, args: &[&str]) -> Running {
    background(db, &[&["run"], args, &words("--warmup 0 --quiet")].concat()).start()
}

fn only_run(db: &Path) -> Value {
    show_json(db, "1")["runs"][0].clone()
}

fn finished_iterations(run: &Value) -> u64 {
    run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["measured_iterations"].as_u64().unwrap())
        .sum()
}

/// SIGHUP in the middle of a run of `workload`: exit 129, status `interrupted` naming SIGHUP, the
/// finished iterations kept, no task left. Then SIGKILL of schedlab in the middle of another run:
/// every task dies with it, and the next reader lists the run `abandoned` with its iterations.
fn hang_up_then_kill(workload: &[&str]) {
    let (_d, db) = temp_db();
    let mut args = workload.to_vec();
    args.extend(["--iterations", MANY]);
    let mut child = spawn(&db, &args);
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    // Land inside an iteration rather than between two.
    std::thread::sleep(Duration::from_millis(30));
    send_signal(&child, libc::SIGHUP);
    let (code, stderr) = finish(child, Duration::from_secs(30));
    assert_eq!(code, Some(129), "{workload:?}: {stderr}");
    assert!(stderr.contains("interrupted by SIGHUP"), "{stderr}");
    assert_no_strays(&db);
    let run = only_run(&db);
    assert_eq!(run["status"], "interrupted", "{workload:?}");
    assert!(run["error"].as_str().unwrap().contains("SIGHUP"), "{run}");
    assert!(finished_iterations(&run) >= 1, "{workload:?}");

    let (_d, db) = temp_db();
    let mut child = spawn(&db, &args);
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(30));
    send_signal(&child, libc::SIGKILL);
    let (code, _) = finish(child, Duration::from_secs(10));
    assert_eq!(code, None, "killed by a signal");
    assert_no_strays(&db);
    let runs = json_of_success(&db, &words("runs --format json"))["runs"].clone();
    assert_eq!(runs[0]["status"], "abandoned", "{workload:?}: {runs}");
    assert!(runs[0]["measured_iterations"].as_u64().unwrap() >= 1);
    let run = only_run(&db);
    assert_eq!(run["status"], "abandoned");
    assert!(run["error"].as_str().unwrap().contains("is gone"), "{run}");
    let check = json_of_success(&db, &words("db check --format json"));
    assert_eq!(
        check["abandoned_runs"][0]["id"], runs[0]["id"],
        "db check lists it: {check}"
    );
    let text = stdout_of_success(&db, &words("db check"));
    assert!(
        text.contains("runs       1: 1 running (1 of them abandoned, below)"),
        "{text}"
    );
}

/// One test per workload that runs tasks: `hang_up_then_kill` on each of its command lines.
macro_rules! hang_up_then_kill_tests {
    ($($(#[$doc:meta])* $name:ident: [$($line:literal),+ $(,)?],)+) => {$(
        $(#[$doc])*
        #[test]
        fn $name() {
            $(hang_up_then_kill(&words($line));)+
        }
    )+};
}

hang_up_then_kill_tests! {
    pipe_processes: ["pipe --loops 5000"],
    pipe_threads: ["pipe --loops 5000 -T"],
    messaging_processes: ["messaging -g 1 -f 4 -l 300"],
    messaging_threads: ["messaging -g 1 -f 4 -l 300 -T"],
    wakeup_threads: ["wakeup -r 1 -t 1"],
    semaphore_threads: ["semaphore --items 5000 --work 100"],
    semaphore_processes: ["semaphore --items 5000 --work 100 --processes"],
    syscall_threads: ["syscall --threads 2 --calls 50000"],
    /// More spinning threads than CPUs, queued on an MCS lock when the hang-up comes: every queued
    /// waiter must still get its turn and leave.
    contention_threads: ["contention --testcase mcs --tasks 4 --duration 1 --warmup-sec 0"],
    /// Processes asleep in fcntl record locks and a futex storm's waiters asleep on their futex.
    contention_processes: [
        "contention --testcase fcntl-lock --tasks 3 --processes --duration 1 --warmup-sec 0",
        "contention --testcase futex-wake-storm --tasks 4 --processes --duration 1 --warmup-sec 0",
    ],
    fanout_threads: ["fanout --workers 4 --rounds 500 --work 100"],
    /// SCHED_FIFO 99 timer threads asleep in clock_nanosleep: the policy goes with them.
    timer_latency_threads: ["timer-latency --loops 100"],
}

/// Holds `db`'s write lock, as another process's long transaction would, once the run `child`
/// is storing into it, and returns `settle` later: the run, which stores an iteration every
/// 50 ms, is waiting for the lock by then.
fn hold_the_write_lock(db: &Path, child: &mut Running, settle: Duration) -> rusqlite::Connection {
    wait_for_a_stored_iteration(db, child, Duration::from_secs(60));
    let holder = rusqlite::Connection::open(db).unwrap();
    holder.busy_timeout(Duration::from_secs(30)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(settle);
    holder
}

/// A fake run storing an iteration every 50 ms into a database of its own, interrupted by
/// SIGINT while another connection holds the database's write lock (`holder`); `kept` is what
/// the run had stored by then.
struct HeldRun {
    _dir: common::TestDir,
    db: std::path::PathBuf,
    child: Running,
    holder: rusqlite::Connection,
    kept: u64,
}

fn interrupt_a_run_behind_a_held_lock() -> HeldRun {
    interrupt_a_run_waiting_on_a_held_lock_for(Duration::from_secs(1))
}

/// As [`interrupt_a_run_behind_a_held_lock`], with the signal `waiting` into the run's wait.
fn interrupt_a_run_waiting_on_a_held_lock_for(waiting: Duration) -> HeldRun {
    let (dir, db) = temp_db();
    let line = format!("fake --sleep-ms 50 --iterations {MANY}");
    let mut child = spawn(&db, &words(&line));
    let holder = hold_the_write_lock(&db, &mut child, waiting);
    let kept = stored_iterations(&db) as u64;
    send_signal(&child, libc::SIGINT);
    HeldRun {
        _dir: dir,
        db,
        child,
        holder,
        kept,
    }
}

/// Once the lock is released: the run reads abandoned, with every iteration it stored.
fn assert_abandoned_with_what_it_kept(db: &Path, holder: rusqlite::Connection, kept: u64) {
    holder.execute_batch("ROLLBACK").unwrap();
    let run = only_run(db);
    assert_eq!(run["status"], "abandoned", "{run}");
    assert_eq!(finished_iterations(&run), kept);
}

/// Ctrl-C while another process holds the database: the store would wait minutes for it, but a
/// stop signal cuts that to its grace. Held throughout, the run ends 130 saying what it waited
/// for, keeps what it stored, and the next reader sees it abandoned; released within the grace,
/// the run's end is recorded as for any Ctrl-C.
#[test]
fn ctrl_c_does_not_wait_out_a_busy_database() {
    let held = interrupt_a_run_behind_a_held_lock();
    // The store's patience is 15 minutes; its grace after a signal is 5 s.
    let (code, stderr) = finish(held.child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("SIGINT arrived while the results database")
            && stderr.contains("database is locked")
            && stderr.contains(&format!(
                "keeps what it stored ({})",
                schedlab_core::words::counted(held.kept as usize, "measured iteration")
            )),
        "{stderr}"
    );
    assert_no_strays(&held.db);
    assert_abandoned_with_what_it_kept(&held.db, held.holder, held.kept);

    let held = interrupt_a_run_behind_a_held_lock();
    std::thread::sleep(Duration::from_millis(500));
    held.holder.execute_batch("ROLLBACK").unwrap();
    let (code, stderr) = finish(held.child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let run = only_run(&held.db);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert_eq!(
        finished_iterations(&run),
        stored_iterations(&held.db) as u64,
        "{run}"
    );
}

/// Ctrl-C half a second into the run's wait for a held lock: the grace runs from the signal, not
/// from the end of the lock wait under way when it came (SQLite's 5 s busy timeout, which no
/// signal interrupts). The holder lets go 7.5 s after the signal, by when schedlab has given up:
/// the run's end is not recorded and it reads abandoned. Counted from the end of that wait, the
/// grace would last until about 9.5 s after the signal, and the run would end `interrupted`.
#[test]
fn a_stop_behind_a_held_lock_gives_up_5_s_after_the_signal() {
    let HeldRun {
        _dir,
        db,
        mut child,
        holder,
        kept,
    } = interrupt_a_run_waiting_on_a_held_lock_for(Duration::from_millis(500));
    let signalled = Instant::now();
    while child.try_wait().unwrap().is_none() && signalled.elapsed() < Duration::from_millis(7500) {
        std::thread::sleep(Duration::from_millis(20));
    }
    holder.execute_batch("ROLLBACK").unwrap();
    let (code, stderr) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("SIGINT arrived while the results database"),
        "{stderr}"
    );
    // The message says how long after the signal the wait ended: the grace, and no less.
    let waited: f64 = stderr
        .split("stopped waiting ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|secs| secs.parse().ok())
        .unwrap_or_else(|| panic!("no time in {stderr}"));
    assert!((5.0..7.5).contains(&waited), "{stderr}");
    let run = only_run(&db);
    assert_eq!(run["status"], "abandoned", "{run}");
    assert_eq!(finished_iterations(&run), kept);
}

/// Ctrl-C twice: the second one does not wait for the clean stop (here a store waiting out a
/// held database) but ends schedlab at once, by SIGINT, as a shell expects; nothing is left
/// running and the run reads abandoned with what it stored. A hang-up delivered twice, as a
/// dropped ssh session can deliver it, is still a clean stop.
/// Ctrl-Z (SIGTSTP) or SIGSTOP while an iteration is measured puts the pause in its time: the
/// iteration is thrown away and run again, so the run completes with every iteration it planned
/// and none as long as the pause. (Had the stop fallen between two iterations, there would be
/// nothing to throw away, and the same holds.)
#[test]
fn an_iteration_measured_across_a_stop_is_run_again() {
    let (_dir, db) = temp_db();
    let mut child = spawn(&db, &words("pipe --loops 10000 --threaded --iterations 4"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored_iterations(&db) < 1 {
        assert!(Instant::now() < deadline, "no iteration stored");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    send_signal(&child, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(3));
    send_signal(&child, libc::SIGCONT);
    let (code, stderr) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{stderr}");
    let run = only_run(&db);
    assert_eq!(run["status"], "complete", "{run}");
    let case = &run["cases"][0];
    assert_eq!(case["measured_iterations"], 4, "{case}");
    let wall = case["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "wall_time_sec")
        .unwrap();
    let longest = wall["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(longest < 2.5, "an iteration kept the 3 s pause: {wall}");
}

/// Sends a run that is stopping already its second SIGINT and checks it died by SIGINT, as
/// without a handler; returns what it said on stderr.
fn second_ctrl_c(child: Running) -> String {
    send_signal(&child, libc::SIGINT);
    let output = child.output_within(Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&output.status),
        Some(libc::SIGINT),
        "{:?}: {stderr}",
        output.status
    );
    stderr
}

#[test]
fn a_second_ctrl_c_quits_at_once_and_a_second_hang_up_does_not() {
    let held = interrupt_a_run_behind_a_held_lock();
    std::thread::sleep(Duration::from_millis(200));
    let stderr = second_ctrl_c(held.child);
    assert!(stderr.contains("a second Ctrl-C: quitting now"), "{stderr}");
    assert_no_strays(&held.db);
    assert_abandoned_with_what_it_kept(&held.db, held.holder, held.kept);

    let line = format!("fake --sleep-ms 50 --iterations {MANY}");
    let (_d, db) = temp_db();
    let mut child = spawn(&db, &words(&line));
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    send_signal(&child, libc::SIGHUP);
    send_signal(&child, libc::SIGHUP);
    let (code, stderr) = finish(child, Duration::from_secs(30));
    assert_eq!(code, Some(129), "{stderr}");
    assert_eq!(only_run(&db)["status"], "interrupted");
}

#[test]
fn sigquit_is_a_clean_stop_and_an_ignored_sighup_stays_ignored() {
    let (_d, db) = temp_db();
    let line = format!("fake --sleep-ms 50 --iterations {MANY}");
    let mut child = spawn(&db, &words(&line));
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    send_signal(&child, libc::SIGQUIT);
    let (code, stderr) = finish(child, Duration::from_secs(10));
    assert_eq!(code, Some(131), "{stderr}");
    assert!(stderr.contains("interrupted by SIGQUIT"), "{stderr}");
    assert_eq!(only_run(&db)["status"], "interrupted");

    // As under `nohup`: SIGHUP ignored when schedlab starts.
    let (_d, db) = temp_db();
    let mut command = background(
        &db,
        &words("run fake --sleep-ms 50 --iterations 6 --warmup 0"),
    );
    let mut child = ignoring(libc::SIGHUP, &mut command).start();
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    send_signal(&child, libc::SIGHUP);
    let (code, stderr) = finish(child, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(only_run(&db)["status"], "complete");
}

/// `run external` of a shell that answers SIGTERM by starting `sleep TRAPPED` and exiting only
/// after it, with a child `sleep 600` to wait for meanwhile: a tool whose processes outlive its
/// first process unless the whole group is killed. Returns the run and the tool's process group
/// once the shell's child is running.
fn run_a_tool_with_children(db: &Path) -> (Running, i32) {
    let script = "trap 'sleep 300; exit 1' TERM; sleep 600 & wait";
    // Not `spawn`: its flags would land after `--`, in the tool's arguments.
    let run = words("run external --parser plain --iterations 3 --warmup 0 --quiet");
    let mut child = background(db, &[&run[..], &["--", "/bin/sh", "-c", script]].concat()).start();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the tool did not start");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        // The tool's group is named by schedlab's one child, which leads it.
        if let Some(&group) = children_of(child.id()).first() {
            if members_named(group, "sleep 600") > 0 {
                return (child, group);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A process as /proc/PID/stat has it.
struct ProcStat {
    pid: i32,
    state: char,
    parent: u32,
    group: i32,
}

/// Every process /proc lists now (those that end while it is read are passed over).
fn processes() -> Vec<ProcStat> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command, which may hold spaces and parentheses: state, parent, group.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().take(3).collect();
        let [state, parent, group] = fields[..] else {
            continue;
        };
        let (Some(state), Ok(parent), Ok(group)) =
            (state.chars().next(), parent.parse(), group.parse())
        else {
            continue;
        };
        found.push(ProcStat {
            pid,
            state,
            parent,
            group,
        });
    }
    found
}

/// The processes of `group` that are alive (a zombie has ended), with their command lines.
fn live_members_of(group: i32) -> Vec<(i32, String)> {
    processes()
        .into_iter()
        .filter(|p| p.group == group && !matches!(p.state, 'Z' | 'X'))
        .map(|p| {
            let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (p.pid, cmdline.trim_end().to_string())
        })
        .collect()
}

/// How many live processes of `group` run `command` (their command line, arguments included).
fn members_named(group: i32, command: &str) -> usize {
    live_members_of(group)
        .iter()
        .filter(|(_, cmdline)| cmdline == command)
        .count()
}

/// Fails unless every process of `group` is gone within a few seconds (a SIGKILLed process can
/// take a moment to exit on a busy machine); kills the survivors first, so a failure leaves
/// nothing behind either.
fn assert_group_gone(group: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !live_members_of(group).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors = live_members_of(group);
    if !survivors.is_empty() {
        // SAFETY: kill has no memory effects; the group is the tool's, which the test started.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    assert!(
        survivors.is_empty(),
        "the tool's group outlived schedlab: {survivors:?}"
    );
}

/// Ctrl-C twice during `run external`, the second while the tool's shell is still in its SIGTERM
/// trap: schedlab quits at once, saying so in one line, and nothing of the tool's process group
/// outlives it (the shell would die with schedlab, but not the `sleep` its trap started).
#[test]
fn a_second_ctrl_c_during_external_leaves_nothing_of_the_tool() {
    let (_d, db) = temp_db();
    let (mut child, group) = run_a_tool_with_children(&db);
    send_signal(&child, libc::SIGINT);
    // The clean stop has sent the group SIGTERM once the trap runs; it waits 1 s for the shell.
    let deadline = Instant::now() + Duration::from_secs(30);
    while members_named(group, "sleep 300") == 0 {
        assert!(Instant::now() < deadline, "the tool's trap did not run");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    let stderr = second_ctrl_c(child);
    assert_group_gone(group);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(
        stderr.starts_with("schedlab: a second Ctrl-C: quitting now"),
        "{stderr:?}"
    );
    assert_eq!(only_run(&db)["status"], "abandoned");
}

/// SIGKILL of schedlab during `run external`: the tool's children go too, not only the tool
/// (which alone PR_SET_PDEATHSIG would reach), and the next reader sees the run abandoned.
#[test]
fn sigkill_during_external_leaves_nothing_of_the_tool() {
    let (_d, db) = temp_db();
    let (child, group) = run_a_tool_with_children(&db);
    send_signal(&child, libc::SIGKILL);
    let (code, _) = finish(child, Duration::from_secs(10));
    assert_eq!(code, None, "killed by a signal");
    assert_group_gone(group);
    assert_eq!(only_run(&db)["status"], "abandoned");
}

/// What `common::Running` promises a test that fails before waiting for its run: the run, left
/// unwaited as the failure unwinds, is killed and reaped, and every task it started goes with it;
/// a process that leads a group of its own takes the whole group along, even once it has exited.
#[test]
fn a_run_a_failing_test_leaves_is_killed_with_its_tasks() {
    let (_d, db) = temp_db();
    let mut pid = 0;
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let line = format!("messaging -g 1 -f 2 -l 3000 --iterations {MANY}");
        let mut child = spawn(&db, &words(&line));
        wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
        pid = child.id() as libc::pid_t;
        panic!("a failing step, with the run going");
    }));
    assert!(failed.is_err());
    // SAFETY: signal 0 only asks whether the pid exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    let error = std::io::Error::last_os_error().raw_os_error();
    assert!(!alive && error == Some(libc::ESRCH), "{pid} is still there");
    assert_no_strays(&db);

    let mut shell = std::process::Command::new("sh");
    std::os::unix::process::CommandExt::process_group(&mut shell, 0);
    let shell = shell.args(["-c", "sleep 600 & wait"]).start();
    let group = shell.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(30);
    while members_named(group, "sleep 600") == 0 {
        assert!(Instant::now() < deadline, "the shell's child did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(shell);
    assert_group_gone(group);

    // A leader that has exited and been reaped, its group living on in a member.
    let mut shell = std::process::Command::new("sh");
    std::os::unix::process::CommandExt::process_group(&mut shell, 0);
    let mut shell = shell.args(["-c", "sleep 600 & exit 0"]).start();
    let group = shell.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(30);
    while members_named(group, "sleep 600") == 0 || shell.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the shell did not start its child and exit"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(shell);
    assert_group_gone(group);
}

/// Started with SIGCHLD ignored, which exec keeps from whatever started schedlab: the kernel would
/// reap its children itself, so that a wait for one fails, and the reaper of `external`, which
/// sleeps until SIGCHLD, would wait for the iteration's deadline. Every run completes as usual.
#[test]
fn an_inherited_ignored_sigchld_changes_no_run() {
    let external = &["external", "--parser", "plain", "--", "sh", "-c", "echo 5"][..];
    for workload in [
        external,
        &words("messaging --process --groups 1 --loops 10"),
        &words("pipe --loops 1000"),
    ] {
        let (_d, db) = temp_db();
        let common = words("run --iterations 2 --warmup 0 --iteration-timeout 5 -q");
        let mut command = background(&db, &[&common[..], workload].concat());
        let child = ignoring(libc::SIGCHLD, &mut command).start();
        let (code, stderr) = finish(child, Duration::from_secs(60));
        assert_eq!(code, Some(0), "{workload:?}: {stderr}");
        assert_eq!(only_run(&db)["status"], "complete", "{workload:?}");
    }
}

/// `command`, to start with `signal` ignored.
fn ignoring(signal: i32, command: &mut std::process::Command) -> &mut std::process::Command {
    // SAFETY: signal() is async-signal-safe, as required between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, move || {
            libc::signal(signal, libc::SIG_IGN);
            Ok(())
        })
    }
}

/// The pids whose parent is `parent`.
fn children_of(parent: u32) -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|p| p.parent == parent)
        .map(|p| p.pid)
        .collect()
}

fn state_of(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Puts one task of the running iteration in SIGSTOP (retrying when the iteration it belonged to
/// ended first); returns its pid.
fn stop_a_worker(child: &mut Running) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "no worker could be stopped");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        if let Some(&pid) = children_of(child.id()).first() {
            // SAFETY: kill has no memory effects; at worst the pid has just exited.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            std::thread::sleep(Duration::from_millis(50));
            if state_of(pid) == Some('T') {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// After a run a stopped task ended: its one line and its failed case's error both name the task,
/// and no task is left running. The run, for what else the caller checks.
fn failed_naming_the_stopped(db: &Path, stderr: &str, stopped: i32) -> Value {
    let named = format!("pid {stopped}, stopped");
    assert!(stderr.contains(&named), "{stderr}");
    assert_no_strays(db);
    let run = only_run(db);
    assert_eq!(run["status"], "failed");
    let case_error = run["cases"][0]["error"].as_str().unwrap();
    assert!(case_error.contains(&named), "{case_error}");
    run
}

/// A worker process in SIGSTOP: the run ends at its deadline, naming the stopped task; the case is
/// stored failed with that message; nothing is left running.
fn stopped_worker_ends_at_the_deadline(workload: &[&str]) {
    let (_d, db) = temp_db();
    let mut args = workload.to_vec();
    args.extend(["--iterations", MANY, "--iteration-timeout", "2"]);
    let mut child = spawn(&db, &args);
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    let stopped = stop_a_worker(&mut child);
    let stopped_at = Instant::now();
    let (code, stderr) = finish(child, Duration::from_secs(20));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stopped_at.elapsed() < Duration::from_secs(2 + 10),
        "took {:?}",
        stopped_at.elapsed()
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no result within 2 s"), "{stderr}");
    let run = failed_naming_the_stopped(&db, &stderr, stopped);
    assert!(
        finished_iterations(&run) >= 1,
        "finished iterations are kept"
    );
}

/// At default settings (no `--iteration-timeout`, the default warm-up) a worker stopped with
/// SIGSTOP in the first iteration of a case whose iterations take about 15 s here ends the case
/// within 90 s, named: the watchdog's first look (at twice the estimate, 36 s) finds it, long
/// before the deadline (ten times the estimate). Before the looks it held the run about 9 minutes.
#[test]
fn a_worker_stopped_in_the_first_iteration_ends_the_case_at_the_first_look() {
    let (_d, db) = temp_db();
    let args = words("run semaphore --processes --items 2000000 --quiet");
    let mut child = background(&db, &args).start();
    let stopped = stop_a_worker(&mut child);
    let stopped_at = Instant::now();
    let (code, stderr) = finish(child, Duration::from_secs(180));
    let took = stopped_at.elapsed();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(took < Duration::from_secs(90), "took {took:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("iteration 1 (warm-up): a task was found stopped"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("  "),
        "one line, one space apart: {stderr:?}"
    );
    failed_naming_the_stopped(&db, &stderr, stopped);
}

#[test]
fn stopped_messaging_worker() {
    stopped_worker_ends_at_the_deadline(&words("messaging -g 1 -f 2 -l 3000"));
}

#[test]
fn stopped_semaphore_process() {
    stopped_worker_ends_at_the_deadline(&words("semaphore --items 20000 --work 100 --processes"));
}

/// A stall injected into the fake's second task: the run ends at the deadline with the case
/// failed, naming the task and how it was stuck.
fn stall_ends_at_the_deadline(hooks: &[&str], named: &str, how: &str) {
    let (_d, db) = temp_db();
    let mut args = words("fake --stall-at 1");
    args.extend(hooks);
    args.extend(words("--iterations 3 --iteration-timeout 1"));
    let child = spawn(&db, &args);
    let (code, stderr) = finish(child, Duration::from_secs(15));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("fake worker 1 ({named}")),
        "{stderr}"
    );
    assert!(stderr.contains(how), "{stderr}");
    assert!(!stderr.contains("fake worker 0"), "{stderr}");
    assert_no_strays(&db);
    let run = only_run(&db);
    assert_eq!(run["status"], "failed");
    assert!(run["cases"][0]["error"].as_str().unwrap().contains(how));
    assert_eq!(run["cases"][0]["measured_iterations"], 1);
}

#[test]
fn lost_wakeup_in_a_thread() {
    stall_ends_at_the_deadline(&words("--stall-in thread"), "tid ", "blocked");
}

#[test]
fn endless_loop_in_a_thread() {
    stall_ends_at_the_deadline(&words("--stall-in thread --stall-spin"), "tid ", "running");
}

#[test]
fn endless_loop_in_a_process() {
    stall_ends_at_the_deadline(&words("--stall-in process --stall-spin"), "pid ", "running");
}

#[test]
fn keep_going_runs_the_next_case_after_a_deadline() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "two.toml",
        "description = \"a stalling case, then a healthy one\"\n\
         [[case]]\nworkload = \"fake\"\nvalue_usec = 1\nstall_at = 1\nstall_in = \"process\"\n\
         [[case]]\nworkload = \"fake\"\nvalue_usec = 2\n",
    );
    let suite = suite.to_str().unwrap();
    let common = "--iterations 2 --iteration-timeout 1";
    let line = format!("--suite {suite} --keep-going {common}");
    let (code, stderr) = finish(spawn(&db, &words(&line)), Duration::from_secs(15));
    assert_eq!(code, Some(1), "{stderr}");
    assert_no_strays(&db);
    let run = only_run(&db);
    assert_eq!(run["status"], "partial");
    assert!(run["cases"][0]["error"]
        .as_str()
        .unwrap()
        .contains("stopped"));
    assert_eq!(run["cases"][1]["measured_iterations"], 2, "{run}");
    assert!(run["cases"][1].get("error").is_none());

    // Without --keep-going the run ends at the failed case.
    let (_d, db) = temp_db();
    let line = format!("--suite {suite} {common}");
    let (code, _) = finish(spawn(&db, &words(&line)), Duration::from_secs(15));
    assert_eq!(code, Some(1));
    assert_eq!(only_run(&db)["cases"][1]["measured_iterations"], 0);
}

/// An overnight matrix under `--keep-going`: a failing case does not stop the others, the run
/// ends `partial` with exit 1, every reader lists it so, and comparisons leave it out unless
/// `--include-incomplete`.
#[test]
fn keep_going_ends_partial_and_comparisons_leave_it_out() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "matrix.toml",
        "description = \"a matrix with one broken case\"\niterations = 3\nwarmup = 0\n\
         [[case]]\nworkload = \"fake\"\n[case.matrix]\nvalue_usec = [1, 2, 3]\n\
         [[case]]\nworkload = \"fake\"\nvalue_usec = 4\nfail_at = 1\n",
    );
    let suite = suite.to_str().unwrap();
    let run = |label: &str, extra: &[&str]| {
        schedlab(&db)
            .args(words(&format!(
                "run --suite {suite} --label {label} --quiet"
            )))
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run("night", &["--keep-going"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "schedlab: partial run: 1 of 4 cases failed (--keep-going ran the others): "
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("--fail-at") && stderr.contains("stored as run 1"),
        "{stderr}"
    );
    let shown = show_json(&db, "night");
    let night = &shown["runs"][0];
    assert_eq!(night["status"], "partial");
    assert_eq!(night["cases"][2]["measured_iterations"], 3);
    assert_eq!(night["cases"][3]["measured_iterations"], 1);
    assert!(night["cases"][3]["error"]
        .as_str()
        .unwrap()
        .contains("--fail-at"));
    assert!(stdout_of_success(&db, &words("show night")).contains(" · partial · "));
    assert_eq!(
        json_of_success(&db, &words("runs --format json"))["runs"].clone()[0]["status"],
        "partial"
    );
    assert!(stdout_of_success(&db, &["runs"]).contains("partial"));
    let check = json_of_success(&db, &words("db check --format json"));
    assert_eq!(check["runs_by_status"]["partial"], 1, "{check}");

    // A complete run of the healthy cases to compare with: the partial run is left out, and
    // named, unless asked for.
    let healthy = write_file(
        dir.path(),
        "healthy.toml",
        "description = \"the healthy cases\"\niterations = 3\nwarmup = 0\n\
         [[case]]\nworkload = \"fake\"\n[case.matrix]\nvalue_usec = [1, 2, 3]\n",
    );
    run_suite(&db, &healthy, &words("--label base --quiet"));
    let stderr = assert_bad_input(&db, &words("compare base night"));
    assert!(
        stderr.contains("night has no complete run (run 1 partial)"),
        "{stderr}"
    );
    let doc = json_of_success(
        &db,
        &words("compare base night --include-incomplete --format json"),
    );
    // Three healthy cases × two metrics; the broken case is not in the base.
    assert_eq!(doc["rows"].as_array().unwrap().len(), 6);
    assert_eq!(doc["candidates"][0]["run_ids"], serde_json::json!([1]));
}

#[test]
fn bad_watchdog_and_stall_flags_are_bad_input() {
    let (_d, db) = temp_db();
    assert_each_bad_input(
        &db,
        &[
            "run fake --iteration-timeout 0",
            "run fake --iteration-timeout -1",
            "run fake --iteration-timeout nan",
            "run fake --iteration-timeout inf",
            "run fake --iteration-timeout 1e30",
            "run fake --iteration-timeout 18446744073709551616",
            "run fake --stall-in thread",
            "run fake --stall-spin",
            "run fake --stall-at -1",
            "run fake --stall-at 1 --stall-in fiber",
            "run fake --keep-going=yes",
        ],
    );
    // An empty value is a word of its own, which a line cannot show.
    assert_bad_input(&db, &["run", "fake", "--iteration-timeout", ""]);
}
