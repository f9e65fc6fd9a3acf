//! Running another program (a reference tool the user built) as a workload's iteration: it
//! starts in a process group of its own with standard input closed and its output captured,
//! under a small reaper that kills the group when schedlab dies (however it dies), and is waited
//! for in a loop that notices stop signals and the iteration's deadline. However it ends, nothing
//! of its group outlives the iteration, nor schedlab. Part of the audited OS layer
//! (`crate::sys`).
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::PidfdFlags;

use super::handler::TASK_GROUP;
use super::process::ChildExit;
use super::raw::{raw_getpid, raw_getppid, raw_getrlimit_nofile};
use super::time::monotonic_ns;

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

/// Why `program` cannot be run, for the refusal: a path that exists is not an executable file (a
/// directory, or a file without an execute bit), else there is no such file (in `$PATH` when it
/// names no path).
pub fn why_not_runnable(program: &str) -> &'static str {
    if !program.contains('/') {
        return "no such executable file in $PATH";
    }
    match std::fs::metadata(program) {
        Ok(m) if m.is_dir() => "it is a directory",
        Ok(_) => "it is not executable (no execute permission)",
        Err(_) => "no such executable file",
    }
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
    let schedlab = raw_getpid();
    // SAFETY: the hook runs in the child std forked, after its standard streams and process group
    // are set up and just before exec; what it may do there is argued at `split_off_the_tool`.
    unsafe {
        command.pre_exec(move || split_off_the_tool(schedlab));
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

/// Sent to the reaper by the kernel when schedlab dies (its PR_SET_PDEATHSIG). Only a wake-up:
/// whether schedlab is gone, `getppid` says, so the signal chosen matters only in that it is
/// not one schedlab sends the group.
const PARENT_GONE: i32 = libc::SIGUSR1;

/// Runs in the child std forked for the command, just before exec, and forks once more: the
/// grandchild returns, to be exec'd as the tool, and the child stays behind as its reaper
/// ([`reap`]) and never returns. The reaper leads the process group, waits for the tool and
/// leaves as it did, so schedlab sees the tool's exit code or signal, and its usage (the reaper
/// reaps it), in the reaper's; but when schedlab dies, however it dies (SIGKILL, the OOM killer,
/// a crash), the reaper is told by PR_SET_PDEATHSIG and SIGKILLs the whole group. That signal
/// alone, on the tool, would reach the tool but not its children.
///
/// # Safety
///
/// Only for a forked child of a possibly multithreaded process about to exec: every call below
/// is a system call through libc or a raw one, save fork, which is glibc's and musl's own but
/// resets their locks in the child as the first fork did (the reaper is single-threaded), and
/// nothing allocates.
unsafe fn split_off_the_tool(schedlab: i64) -> io::Result<()> {
    // SAFETY: sigset operations on locals; sigprocmask, prctl, getpid and getppid affect this
    // process only.
    let before = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut before: libc::sigset_t = std::mem::zeroed();
        // Every signal blocked from here: the reaper acts on none but the two it waits for, and
        // the tool unblocks them itself, so none is lost between fork and exec.
        libc::sigprocmask(libc::SIG_SETMASK, &all, &mut before);
        if libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_GONE, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if raw_getppid() != schedlab {
            // schedlab died before the death signal was asked for: no tool.
            libc::_exit(1);
        }
        before
    };
    let reaper = raw_getpid();
    // SAFETY: see the function's safety section.
    let tool = unsafe { libc::fork() };
    if tool < 0 {
        return Err(io::Error::last_os_error());
    }
    if tool == 0 {
        // SAFETY: as above; the tool starts with the mask std left it (empty) and dies with
        // the reaper.
        unsafe {
            libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if raw_getppid() != reaper {
                libc::_exit(1);
            }
        }
        return Ok(());
    }
    // SAFETY: as above.
    unsafe { reap(tool, schedlab) }
}

/// The reaper's life (see [`split_off_the_tool`]): with every signal blocked, it waits for the
/// tool's end (SIGCHLD) or schedlab's (PARENT_GONE), without a wake of its own. It keeps no
/// descriptor but the standard three, which the tool has too: one std's spawn waits on until
/// exec would otherwise keep schedlab waiting, and the pipes close when both are done with them.
///
/// # Safety
///
/// As for [`split_off_the_tool`], whose process this is.
unsafe fn reap(tool: i32, schedlab: i64) -> ! {
    // SAFETY: close_range, waitpid, kill and sigtimedwait are system calls that touch only
    // `status` and the local set.
    unsafe {
        close_from(3);
        let mut wake: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut wake);
        libc::sigaddset(&mut wake, libc::SIGCHLD);
        libc::sigaddset(&mut wake, PARENT_GONE);
        loop {
            let mut status = 0;
            match libc::waitpid(tool, &mut status, libc::WNOHANG) {
                reaped if reaped == tool => leave_as(status),
                -1 if io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) => {
                    libc::_exit(127)
                }
                _ => {}
            }
            if raw_getppid() != schedlab {
                // The group: the tool, whatever it started that stayed in it, and the reaper.
                libc::kill(0, libc::SIGKILL);
            }
            // Blocked signals stay pending, so one that came since the checks ends this at once.
            libc::sigtimedwait(&wake, std::ptr::null_mut(), std::ptr::null());
        }
    }
}

/// Ends the reaper as the tool ended (`status`, from waitpid): with its exit code, or killed by
/// its signal, without a core dump of this copy of schedlab.
///
/// # Safety
///
/// As for [`split_off_the_tool`], whose process this is.
unsafe fn leave_as(status: i32) -> ! {
    // SAFETY: prctl, signal, kill, sigprocmask and _exit concern this process only.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(raw_getpid() as i32, signal);
            let mut only: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            // Not reached for a signal that can end a process.
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Closes every descriptor from `first` up: close_range (Linux 5.9), else one by one up to the
/// limit on descriptors.
///
/// # Safety
///
/// Only where no descriptor from `first` up is owned by anything that will use it again: a
/// process that will exit without returning.
unsafe fn close_from(first: u32) {
    // SAFETY: close_range and close only close descriptors; see the safety section.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) == 0 {
            return;
        }
        let top = raw_getrlimit_nofile().unwrap_or(1024).min(1 << 20);
        for fd in u64::from(first)..top {
            libc::close(fd as i32);
        }
    }
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
    terminate_within(child, group, GRACE_NS);
}

/// [`terminate`] with `grace_ns` for the child to exit.
fn terminate_within(child: &mut Child, group: i32, grace_ns: u64) {
    signal_group(group, libc::SIGTERM);
    signal_group(group, libc::SIGCONT);
    let deadline = monotonic_ns().saturating_add(grace_ns);
    while monotonic_ns() < deadline {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) => super::time::sleep_ns(10_000_000),
        }
    }
    signal_group(group, libc::SIGKILL);
    let _ = child.wait();
}

/// A command that runs beside schedlab's own work (a host load beside a guest) until schedlab
/// stops it: in a process group of its own, with standard input closed and its output in a file,
/// under the same reaper as [`run_command`]'s commands, so it ends with schedlab however schedlab
/// ends. Dropping it stops it too.
pub struct Background {
    child: Option<Child>,
    group: i32,
}

impl Background {
    /// Starts `argv` with `env` added to schedlab's environment, its stdout and stderr to `log`.
    pub fn start(
        argv: &[String],
        env: &[(&str, std::ffi::OsString)],
        log: &Path,
    ) -> Result<Self, CommandError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| CommandError::Spawn(io::Error::other("no command")))?;
        let out = std::fs::File::create(log).map_err(CommandError::Io)?;
        let err = out.try_clone().map_err(CommandError::Io)?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let schedlab = raw_getpid();
        // SAFETY: as in `run_command`: the hook runs in the forked child just before exec.
        unsafe {
            command.pre_exec(move || split_off_the_tool(schedlab));
        }
        let child = command.spawn().map_err(CommandError::Spawn)?;
        let group = child.id() as i32;
        Ok(Background {
            child: Some(child),
            group,
        })
    }

    /// How the command ended, once it has (without waiting).
    pub fn exited(&mut self) -> Option<ChildExit> {
        let child = self.child.as_mut()?;
        child.try_wait().ok().flatten().map(child_exit)
    }

    /// Ends the command's group: SIGTERM, up to `grace_ns` for it to exit, then SIGKILL. Returns
    /// how it ended when it had ended before it was asked to.
    pub fn stop(mut self, grace_ns: u64) -> Option<ChildExit> {
        let ended = self.exited();
        if let Some(mut child) = self.child.take() {
            terminate_within(&mut child, self.group, grace_ns);
        }
        ended
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(&mut child, self.group);
        }
    }
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

    /// A SIGKILLed task on a busy machine can still show as running while it exits, so it gets a
    /// few seconds to be gone or a zombie; a survivor fails.
    fn assert_gone_soon(pid: i32) {
        let state = || super::super::proc::process_stat(pid).map(|s| s.state);
        let gone = || matches!(state(), None | Some('Z') | Some('X'));
        let deadline = monotonic_ns() + 5_000_000_000;
        while !gone() && monotonic_ns() < deadline {
            super::super::time::sleep_ns(10_000_000);
        }
        assert!(gone(), "pid {pid} still runs: {:?}", state());
    }

    #[test]
    fn output_and_exit_code_are_kept() {
        let run = run_command(&sh("echo out; echo err >&2; exit 3"), &|| false).unwrap();
        assert_eq!(run.stdout, b"out\n");
        assert_eq!(run.stderr, b"err\n");
        assert_eq!(run.exit, ChildExit::Code(3));
    }

    /// The reaper between schedlab and the tool leaves as the tool did.
    #[test]
    fn a_signal_that_killed_the_tool_is_kept() {
        for signal in [libc::SIGTERM, libc::SIGKILL, libc::SIGUSR2] {
            let run = run_command(&sh(&format!("kill -{signal} $$")), &|| false).unwrap();
            assert_eq!(run.exit, ChildExit::Signal(signal));
        }
        let run = run_command(&sh("exit 255"), &|| false).unwrap();
        assert_eq!(run.exit, ChildExit::Code(255));
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
        // The grandchild was our child's child: once killed, init reaps it.
        assert_gone_soon(pid);
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

    /// A background command's group is ended by `stop`, a grandchild it left running with it,
    /// and one that ended by itself says how.
    #[test]
    fn a_background_command_ends_with_its_group() {
        let dir = std::env::temp_dir().join(format!("schedlab-bg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("pid");
        let script = format!(
            "sleep 600 & echo $! > {}; echo \"$LOAD_NAME\"; wait",
            marker.display()
        );
        let log = dir.join("log");
        let mut load =
            Background::start(&sh(&script), &[("LOAD_NAME", "hog".into())], &log).unwrap();
        let deadline = monotonic_ns() + 10_000_000_000;
        while !std::fs::read_to_string(&marker).is_ok_and(|t| t.ends_with('\n')) {
            assert!(monotonic_ns() < deadline, "the command did not start");
            super::super::time::sleep_ns(10_000_000);
        }
        assert_eq!(load.exited(), None);
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(load.stop(GRACE_NS), None, "it was running when stopped");
        assert_gone_soon(pid);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hog\n");

        let mut short = Background::start(&sh("exit 3"), &[], &log).unwrap();
        let deadline = monotonic_ns() + 10_000_000_000;
        while short.exited().is_none() {
            assert!(monotonic_ns() < deadline, "exit 3 did not end");
            super::super::time::sleep_ns(10_000_000);
        }
        assert_eq!(short.stop(GRACE_NS), Some(ChildExit::Code(3)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
