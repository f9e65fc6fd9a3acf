//! Daemon arms: an A/B arm that is a long-running command, a sched_ext scheduler such as
//! `scx_rusty`, rather than a setting applied once. Before each of the arm's runs the daemon is
//! started (`sh -c`, a process group of its own, its output in a log) and given time to be
//! ready; before and after the run it must still be running and, when the arm names the
//! scheduler it loads, sched_ext must be enabled with that scheduler; after the run it is
//! stopped (SIGTERM to its group, SIGKILL after a grace). A daemon that died, or a scheduler the
//! kernel ejected, fails the run with what happened instead of measuring the default scheduler
//! under the arm's name.
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use schedlab_core::sched_ext::{Mismatch, SchedExt};
use schedlab_core::sys::{self, Background};

use crate::child::{console_tail, describe_exit};
use crate::failure::Failure;

/// How long a stopped daemon has to exit after SIGTERM (a BPF scheduler unloads itself) before
/// its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often readiness is looked at.
const POLL: Duration = Duration::from_millis(50);

/// What an arm runs beside its runs, as the experiment stores it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmDaemon {
    /// The shell command; `None` for an arm without a daemon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The sched_ext scheduler the command loads, as `root/ops` names it (`rusty`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scx: Option<String>,
}

/// The daemons of both arms and how long each has to get ready.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Daemons {
    pub a: ArmDaemon,
    pub b: ArmDaemon,
    /// `--daemon-ready`: seconds; `None` for the default ([`Daemons::ready_within`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_sec: Option<f64>,
}

impl Daemons {
    /// Whether either arm has a daemon; without one, nothing here runs and nothing is checked.
    pub fn any(&self) -> bool {
        self.a.command.is_some() || self.b.command.is_some()
    }

    /// Whether an arm names a sched_ext scheduler: then the other arm, without one, is held to
    /// the kernel's own scheduler too (a scheduler left loaded would be measured under its name).
    fn names_a_scheduler(&self) -> bool {
        self.a.scx.is_some() || self.b.scx.is_some()
    }

    /// How long a daemon has to get ready: with a scheduler named, the most to wait for
    /// sched_ext to show it (30 s by default: a scheduler's BPF programs are verified as it
    /// loads); without, how long it must stay up before the first run (1 s by default).
    fn ready_within(&self, arm: &ArmDaemon) -> Duration {
        let default = if arm.scx.is_some() { 30.0 } else { 1.0 };
        Duration::from_secs_f64(self.ready_sec.unwrap_or(default))
    }

    /// Checked before anything runs: a scheduler named without a command to load it.
    pub fn validate(&self) -> Result<(), Failure> {
        for (name, arm) in [("a", &self.a), ("b", &self.b)] {
            if arm.scx.is_some() && arm.command.is_none() {
                return Err(Failure::bad_input(format!(
                    "--{name}-scx names the scheduler --{name}-daemon loads; give --{name}-daemon"
                )));
            }
        }
        Ok(())
    }

    /// Checked before an experiment on this boot measures anything: a scheduler named on a
    /// kernel without sched_ext would stop it at that arm's first visit, after the other arm's.
    pub fn check_kernel(&self) -> Result<(), Failure> {
        let named = [("a", &self.a), ("b", &self.b)]
            .into_iter()
            .find_map(|(arm, spec)| spec.scx.as_ref().map(|name| (arm, name)));
        match named {
            Some((arm, name)) if SchedExt::read().state.is_none() => Err(Failure::bad_input(
                no_sched_ext(&format!("--{arm}-scx"), name),
            )),
            _ => Ok(()),
        }
    }

    /// Starts arm `arm`'s daemon (`"a"` or `"b"`) and waits until it is ready; for an arm
    /// without one, checks the kernel's own scheduler is in place when the other arm names one.
    pub fn start(&self, arm: &str) -> Result<Running, Failure> {
        let spec = if arm == "a" { &self.a } else { &self.b };
        let flag = format!("--{arm}-daemon");
        let Some(command) = &spec.command else {
            let mut running = Running {
                flag,
                command: String::new(),
                scx: None,
                hold_to_default: self.names_a_scheduler(),
                daemon: None,
                log: None,
            };
            // The other arm's scheduler, just stopped, may take a moment to unload.
            let deadline = sys::monotonic_ns().saturating_add(STOP_GRACE.as_nanos() as u64);
            while running.check("before").is_err() && sys::monotonic_ns() < deadline {
                std::thread::sleep(POLL);
            }
            running.check("before")?;
            return Ok(running);
        };
        let folder = tempfile::Builder::new()
            .prefix("schedlab-daemon-")
            .tempdir()
            .map_err(|e| Failure::failed(format!("cannot make a folder for {flag}'s log: {e}")))?;
        let log = folder.path().join("daemon.log");
        let argv = ["sh".to_string(), "-c".to_string(), command.clone()];
        let daemon = Background::start(&argv, &[], &log).map_err(|e| {
            Failure::failed(format!(
                "cannot start the {flag} command `{command}`: {e:?}"
            ))
        })?;
        let mut running = Running {
            flag,
            command: command.clone(),
            scx: spec.scx.clone(),
            hold_to_default: false,
            daemon: Some(daemon),
            log: Some((folder, log)),
        };
        running.wait_until_ready(self.ready_within(spec))?;
        Ok(running)
    }
}

/// An arm's daemon while its run goes on (or, for an arm without one, what it is held to).
pub struct Running {
    flag: String,
    command: String,
    scx: Option<String>,
    /// An arm without a daemon while the other names a scheduler: no BPF scheduler may be loaded.
    hold_to_default: bool,
    daemon: Option<Background>,
    log: Option<(tempfile::TempDir, PathBuf)>,
}

impl Running {
    fn wait_until_ready(&mut self, within: Duration) -> Result<(), Failure> {
        let deadline = sys::monotonic_ns().saturating_add(within.as_nanos() as u64);
        loop {
            self.alive("while it started")?;
            let now = sys::monotonic_ns();
            match &self.scx {
                Some(name) => match SchedExt::read().check(Some(name)) {
                    Ok(()) => return Ok(()),
                    Err(Mismatch::Missing) => {
                        return Err(Failure::bad_input(no_sched_ext(&self.scx_flag(), name)));
                    }
                    Err(mismatch) if now >= deadline => {
                        return Err(Failure::failed(format!(
                            "the {} command `{}` did not load the sched_ext scheduler {name} \
                             within {} s: {}{}",
                            self.flag,
                            self.command,
                            within.as_secs_f64(),
                            describe(&mismatch),
                            self.said()
                        )));
                    }
                    Err(_) => {}
                },
                None if now >= deadline => return Ok(()),
                None => {}
            }
            std::thread::sleep(POLL);
        }
    }

    fn scx_flag(&self) -> String {
        self.flag.replace("-daemon", "-scx")
    }

    /// The daemon's last line of output, for a message (`; it said: …`), or nothing.
    fn said(&self) -> String {
        self.log
            .as_ref()
            .and_then(|(_, log)| console_tail(log).pop())
            .map(|line| format!("; it said: {line}"))
            .unwrap_or_default()
    }

    fn alive(&mut self, when: &str) -> Result<(), Failure> {
        let Some(daemon) = &mut self.daemon else {
            return Ok(());
        };
        match daemon.exited() {
            None => Ok(()),
            Some(exit) => Err(Failure::failed(format!(
                "the {} command `{}` ended ({}) {when}{}",
                self.flag,
                self.command,
                describe_exit(exit),
                self.said()
            ))),
        }
    }

    /// Whether the arm is as it should be `when` (`before` or `after` its run): the daemon
    /// running and its scheduler loaded, or no BPF scheduler for an arm held to the default.
    pub fn check(&mut self, when: &str) -> Result<(), Failure> {
        let at = format!("{when} the run");
        self.alive(&at)?;
        let expected = match (&self.scx, self.hold_to_default) {
            (Some(name), _) => Some(name.as_str()),
            (None, true) => None,
            (None, false) => return Ok(()),
        };
        SchedExt::read().check(expected).map_err(|mismatch| {
            let whose = match expected {
                Some(name) => format!(
                    "the {} command `{}`'s scheduler {name}",
                    self.flag, self.command
                ),
                None => format!("the kernel's own scheduler ({} gives no daemon)", self.flag),
            };
            Failure::failed(format!(
                "{whose} is not the one scheduling {at}: {}{}",
                describe(&mismatch),
                self.said()
            ))
        })
    }

    /// Stops the daemon: SIGTERM to its group (a BPF scheduler unloads itself), SIGKILL to the
    /// group after [`STOP_GRACE`], so nothing it started outlives it. Had it ended since the
    /// check after the run, that run was measured with it all the same.
    pub fn stop(mut self) {
        if let Some(daemon) = self.daemon.take() {
            daemon.stop(STOP_GRACE.as_nanos() as u64);
        }
    }
}

fn no_sched_ext(flag: &str, name: &str) -> String {
    format!(
        "{flag} names the sched_ext scheduler {name}, but this kernel has no sched_ext ({} is \
         missing; Linux 6.12 or later with CONFIG_SCHED_CLASS_EXT)",
        schedlab_core::sched_ext::SYSFS_DIR
    )
}

/// What sched_ext shows instead of what was expected, for a message.
fn describe(mismatch: &Mismatch) -> String {
    match mismatch {
        Mismatch::Missing => "this kernel has no sched_ext".to_string(),
        Mismatch::NotEnabled { state } => format!(
            "sched_ext is {state} (a scheduler the kernel ejected leaves the default one \
             scheduling)"
        ),
        Mismatch::OtherScheduler { ops: Some(ops) } => format!("sched_ext runs {ops}"),
        Mismatch::OtherScheduler { ops: None } => {
            "sched_ext is enabled with no scheduler named".to_string()
        }
        Mismatch::Loaded { ops } => format!(
            "the BPF scheduler {} is loaded",
            ops.as_deref().unwrap_or("(unnamed)")
        ),
    }
}
