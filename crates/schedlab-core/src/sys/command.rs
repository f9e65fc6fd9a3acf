//! Running another program (a reference tool the user built) as a workload's iteration: it
//! starts in a process group of its own with standard input closed and its output captured, dies
//! with schedlab (PDEATHSIG), and is waited for in a loop that notices stop signals and the
//! iteration's deadline. However it ends, nothing of its group outlives the iteration. Part of
//! the audited OS layer (`crate::sys`).
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::PidfdFlags;

use super::process::ChildExit;
use super::time::monotonic_ns;
use super::watchdog::TASK_GROUP;

/// Output kept per stream; a tool that prints more is not one schedlab parses.
pub const MAX_OUTPUT_BYTES: usize = 16 << 20;
/// How often the wait looks at the child and the stop condition when no output arrives (a signal
/// also wakes it at once).
const WAKE_MS: i64 = 200;
/// How long a stopped command's group gets to exit after SIGTERM before SIGKILL.
const GRACE_NS: u64 = 1_000_000_000;

/// A command that ran to its end.
#[derive(Debug)]
pub struct CommandRun {
    pub exit: ChildExit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[derive(Debug)]
pub enum CommandError {
    /// It could not be started (no such file, not executable).
    Spawn(io::Error),
    /// `stop` said so: the group was ended (SIGTERM, then SIGKILL) and reaped. What it had
    /// printed is kept for the message.
    Stopped {
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    },
    /// It printed more than [`MAX_OUTPUT_BYTES`] on one stream; it was killed.
    TooMuchOutput,
    Io(io::Error),
}

/// Where `program` is: itself when it names a path (has a `/`), else the first executable file of
/// that name in `$PATH`; `None` when there is no such file.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|path| executable(path))
}

/// Runs `argv` to its end, or until `stop()` (checked whenever the wait wakes) asks it to stop.
pub fn run_command(argv: &[String], stop: &dyn Fn() -> bool) -> Result<CommandRun, CommandError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| CommandError::Spawn(io::Error::other("no command")))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs in the forked child before exec and calls only prctl, which is
    // async-signal-safe and touches no memory of the parent's.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(CommandError::Spawn)?;
    let group = child.id() as i32;
    TASK_GROUP.store(group, Ordering::SeqCst);
    let result = wait_for(&mut child, group, stop);
    // Whatever the command left in its group (workers a killed tool did not reap, daemons) goes
    // with it.
    signal_group(group, libc::SIGKILL);
    let _ = child.wait();
    let _ = TASK_GROUP.compare_exchange(group, 0, Ordering::SeqCst, Ordering::SeqCst);
    result
}

fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill has no memory effects; `group` is the process group of a child we have not
    // reaped, or one that is empty now (ESRCH, ignored).
    unsafe { libc::kill(-group, signal) };
}

/// Reads both streams until they close and the child has exited. The wait also wakes when the
/// child exits (a pidfd, where the kernel has them: Linux 5.3), not only when output comes: a
/// child's streams close as it exits, a moment before it can be reaped, and a wait that then
/// slept until its next wake would add up to [`WAKE_MS`] to the iteration's time.
fn wait_for(
    child: &mut Child,
    group: i32,
    stop: &dyn Fn() -> bool,
) -> Result<CommandRun, CommandError> {
    let mut fds: [Option<OwnedFd>; 2] = [
        child.stdout.take().map(OwnedFd::from),
        child.stderr.take().map(OwnedFd::from),
    ];
    let exited = rustix::process::Pid::from_raw(child.id() as i32)
        .and_then(|pid| rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok());
    let mut out: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut exit: Option<ChildExit> = None;
    let mut buf = vec![0u8; 64 * 1024];
    let wake = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: WAKE_MS * 1_000_000,
    };
    loop {
        if stop() {
            terminate(child, group);
            let [stdout, stderr] = out;
            return Err(CommandError::Stopped { stdout, stderr });
        }
        if exit.is_none() {
            if let Some(status) = child.try_wait().map_err(CommandError::Io)? {
                exit = Some(child_exit(status));
                // Stragglers would hold the pipes open; the iteration is over.
                signal_group(group, libc::SIGKILL);
            }
        }
        let open: Vec<usize> = (0..2).filter(|&i| fds[i].is_some()).collect();
        if open.is_empty() {
            if let Some(exit) = exit {
                let [stdout, stderr] = out;
                return Ok(CommandRun {
                    exit,
                    stdout,
                    stderr,
                });
            }
        }
        // The open streams, and the child's exit while it runs (once it has exited its pidfd
        // stays readable). Both streams closed, the child still running, and no pidfd: this
        // waits for the next wake (or a signal).
        let ready: Vec<bool> = {
            let mut polled: Vec<PollFd> = open
                .iter()
                .filter_map(|&i| fds[i].as_ref())
                .chain(exited.as_ref().filter(|_| exit.is_none()))
                .map(|fd| PollFd::new(fd, PollFlags::IN))
                .collect();
            match rustix::event::poll(&mut polled, Some(&wake)) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(e) => return Err(CommandError::Io(e.into())),
            }
            polled.iter().map(|p| !p.revents().is_empty()).collect()
        };
        for (&i, ready) in open.iter().zip(ready) {
            let Some(fd) = fds[i].as_ref().filter(|_| ready) else {
                continue;
            };
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => fds[i] = None,
                Ok(n) => {
                    if out[i].len() + n > MAX_OUTPUT_BYTES {
                        terminate(child, group);
                        return Err(CommandError::TooMuchOutput);
                    }
                    out[i].extend_from_slice(&buf[..n]);
                }
                Err(Errno::INTR) | Err(Errno::AGAIN) => {}
                Err(e) => return Err(CommandError::Io(e.into())),
            }
        }
    }
}

/// Ends the command's group: SIGTERM with a SIGCONT (a stopped process acts on nothing until it
/// runs again), up to [`GRACE_NS`] for the child to exit, then SIGKILL; the child is reaped.
fn terminate(child: &mut Child, group: i32) {
    signal_group(group, libc::SIGTERM);
    signal_group(group, libc::SIGCONT);
    let deadline = monotonic_ns().saturating_add(GRACE_NS);
    while monotonic_ns() < deadline {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) => super::time::sleep_ns(10_000_000),
        }
    }
    signal_group(group, libc::SIGKILL);
    let _ = child.wait();
}

fn child_exit(status: std::process::ExitStatus) -> ChildExit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ChildExit::Code(code),
        (None, Some(signal)) => ChildExit::Signal(signal),
        (None, None) => ChildExit::Code(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn output_and_exit_code_are_kept() {
        let run = run_command(&sh("echo out; echo err >&2; exit 3"), &|| false).unwrap();
        assert_eq!(run.stdout, b"out\n");
        assert_eq!(run.stderr, b"err\n");
        assert_eq!(run.exit, ChildExit::Code(3));
    }

    #[test]
    fn a_stop_ends_the_whole_group() {
        // The shell starts a grandchild that would outlive it; both must be gone after the stop.
        let marker = std::env::temp_dir().join(format!("schedlab-cmd-{}", std::process::id()));
        let script = format!(
            "sleep 600 & echo $! > {}; echo started; wait",
            marker.display()
        );
        let started = std::cell::Cell::new(0u32);
        let err = run_command(&sh(&script), &|| {
            // Stop once the grandchild's pid is written (a few wakes in).
            started.set(started.get() + 1);
            std::fs::read_to_string(&marker).is_ok_and(|t| t.ends_with('\n'))
        })
        .unwrap_err();
        let CommandError::Stopped { .. } = err else {
            panic!("{err:?}")
        };
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let _ = std::fs::remove_file(&marker);
        // The grandchild was our child's child: once killed, init reaps it. A SIGKILLed task on a
        // busy machine can still show as running while it exits, so it gets a few seconds to be
        // gone or a zombie; a survivor (sleeping in `sleep 600`) fails.
        let gone = || {
            let state = super::super::proc::process_stat(pid).map(|s| s.state);
            matches!(state, None | Some('Z') | Some('X'))
        };
        let deadline = monotonic_ns() + 5_000_000_000;
        while !gone() && monotonic_ns() < deadline {
            super::super::time::sleep_ns(10_000_000);
        }
        let state = super::super::proc::process_stat(pid).map(|s| s.state);
        assert!(gone(), "{state:?}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let err = run_command(&["/nonexistent/tool".into()], &|| false).unwrap_err();
        assert!(matches!(err, CommandError::Spawn(_)), "{err:?}");
        assert_eq!(find_program("/nonexistent/tool"), None);
        assert!(find_program("sh").is_some());
        use std::os::unix::fs::PermissionsExt;
        let plain = std::env::temp_dir().join(format!("schedlab-plain-{}", std::process::id()));
        std::fs::write(&plain, "echo hi\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let found = find_program(plain.to_str().unwrap());
        let _ = std::fs::remove_file(&plain);
        assert_eq!(found, None, "not executable");
    }
}
