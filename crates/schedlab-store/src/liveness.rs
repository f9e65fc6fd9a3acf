//! Dead runs: a run stays `running` in the store when its process dies without a word (SIGKILL,
//! the OOM killer, power loss, a reboot). Each run records who runs it (pid, process start time,
//! boot id, host); a reader that meets a `running` run checks that owner and shows the run as
//! `abandoned` when the process is gone, its pid now names another process, or the boot it ran in
//! has ended. Another host's process cannot be looked up from here: its run reads `abandoned`
//! once it has stored nothing for longer than a live run of its plan can go quiet, with an hour to
//! spare for clocks that disagree ([`Silence`]). The status is derived on every load and never
//! written, so a judgement made from one machine cannot damage what another one still runs.
use std::time::{Duration, SystemTime};

use schedlab_core::plan::RunPlan;
use schedlab_core::record::RunStatus;
use schedlab_core::runner::{default_deadline_ns, DEADLINE_UNKNOWN_NS};
use schedlab_core::sys::{self, TaskStat};

use crate::retry::Patience;

/// The owner columns of a stored run. Runs stored before the owner was recorded have only the
/// fingerprint's boot id and host name, which still tell a run of an earlier boot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredOwner {
    pub pid: Option<i32>,
    pub start_ticks: Option<u64>,
    pub boot_id: Option<String>,
    pub host: Option<String>,
}

/// Where the reader runs: this boot and this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    pub boot_id: Option<String>,
    pub host: String,
}

impl Here {
    pub fn now() -> Self {
        Here {
            boot_id: sys::boot_id(),
            host: sys::hostname(),
        }
    }
}

/// What a reader can say about a `running` run's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// Dead, and why, as a phrase for the run's error text.
    Dead(String),
    /// Another host's run (its processes are not visible here), or an owner never recorded.
    CannotTell,
}

/// Judges `owner` from `here`; `probe` looks a pid up in this machine's process table.
pub fn judge(
    owner: &StoredOwner,
    here: &Here,
    probe: &dyn Fn(i32) -> Option<TaskStat>,
) -> Liveness {
    let Some(host) = owner.host.as_deref() else {
        return Liveness::CannotTell;
    };
    if host != here.host {
        return Liveness::CannotTell;
    }
    match (owner.boot_id.as_deref(), here.boot_id.as_deref()) {
        (Some(then), Some(now)) if then != now => {
            let short = then.get(..8).unwrap_or(then);
            return Liveness::Dead(format!(
                "the boot it ran in ({short}) has ended; the machine rebooted"
            ));
        }
        (Some(_), Some(_)) => {}
        _ => return Liveness::CannotTell,
    }
    let Some(pid) = owner.pid else {
        return Liveness::CannotTell;
    };
    let gone = |how: &str| {
        Liveness::Dead(format!(
            "the schedlab process that ran it (pid {pid} on {host}) {how}"
        ))
    };
    match probe(pid) {
        None => gone("is gone"),
        Some(stat) if owner.start_ticks.is_some_and(|t| t != stat.start_ticks) => {
            gone("is gone; the pid now names another process")
        }
        Some(stat) if stat.is_dead() => gone("has exited"),
        Some(_) => Liveness::Alive,
    }
}

/// What a reader can tell of a `running` run from what it stored, where it cannot see the run's
/// process: when the run last stored anything, and how long a live run of its plan can go without
/// storing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silence {
    /// The run's newest write, on the writer's clock: its start or its newest iteration's start.
    pub last_word_ns: i64,
    /// The longest a live run of this plan goes without storing, [`SILENCE_MARGIN`] included.
    pub allowed: Duration,
}

/// What a silence must exceed the plan's own bound by: clocks of two machines that disagree, and
/// what the bound leaves out (building a case's tasks, waiting for a failed case's threads).
pub const SILENCE_MARGIN: Duration = Duration::from_secs(3600);

impl Silence {
    /// From the run's plan, its start and the starts of its stored iterations (in any order).
    /// Between two writes a live run spends at most one iteration (cut at its deadline), a
    /// cooldown, and the store's patience with a database that does not answer. The deadline is
    /// `--iteration-timeout`, else at most 10 × the slower of the longest gap between writes
    /// seen so far and the case's estimate, and never under the deadline of a first iteration
    /// nothing is known about.
    pub fn of(plan: &RunPlan, started_at_ns: i64, iteration_starts: &[i64]) -> Silence {
        let mut writes = iteration_starts.to_vec();
        writes.push(started_at_ns);
        writes.sort_unstable();
        let longest_gap: Vec<u64> = writes
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]).max(0) as u64)
            .max()
            .into_iter()
            .collect();
        let deadline_ns = match plan.iteration_timeout_ms {
            Some(ms) => ms.saturating_mul(1_000_000),
            None => plan
                .cases
                .iter()
                .map(|case| {
                    let estimate = schedlab_core::estimate::deadline_basis_sec(plan, case);
                    default_deadline_ns(&longest_gap, estimate)
                })
                .fold(DEADLINE_UNKNOWN_NS, u64::max),
        };
        let allowed = Duration::from_nanos(deadline_ns)
            .saturating_add(Duration::from_millis(plan.cooldown_ms))
            .saturating_add(Patience::default().total)
            .saturating_add(SILENCE_MARGIN);
        Silence {
            last_word_ns: writes.last().copied().unwrap_or(started_at_ns),
            allowed,
        }
    }

    /// Why the run is dead, if it has been quiet for longer than it may be at `now_ns`.
    pub fn judge(&self, host: Option<&str>, now_ns: i64) -> Option<String> {
        let quiet = Duration::from_nanos(now_ns.saturating_sub(self.last_word_ns).max(0) as u64);
        if quiet <= self.allowed {
            return None;
        }
        let since = SystemTime::UNIX_EPOCH + Duration::from_nanos(self.last_word_ns.max(0) as u64);
        let minutes =
            |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs() / 60 * 60));
        Some(format!(
            "nothing stored since {} ({} ago) by its process on {}, which cannot be looked up from \
             here; a live run of its plan stores at least every {}",
            humantime::format_rfc3339_seconds(since),
            minutes(quiet),
            host.unwrap_or("an unrecorded host"),
            minutes(self.allowed),
        ))
    }
}

/// The status a reader shows for a stored run: `abandoned` (with why) for a `running` run whose
/// owner is dead, or, where the owner cannot be looked up, which has been silent too long;
/// else the stored status. `silence` is asked only for such a run.
pub fn effective_status(
    stored: RunStatus,
    owner: &StoredOwner,
    here: &Here,
    silence: impl FnOnce() -> Option<Silence>,
) -> (RunStatus, Option<String>) {
    if stored != RunStatus::Running {
        return (stored, None);
    }
    match why_dead(owner, here, silence) {
        Some(why) => (RunStatus::Abandoned, Some(format!("abandoned: {why}"))),
        None => (stored, None),
    }
}

/// Why a `running` run is dead: its owner is gone, or, where the owner cannot be looked up, the
/// run has been silent too long; `None` while it may live.
pub fn why_dead(
    owner: &StoredOwner,
    here: &Here,
    silence: impl FnOnce() -> Option<Silence>,
) -> Option<String> {
    match judge(owner, here, &sys::process_stat) {
        Liveness::Dead(why) => Some(why),
        Liveness::Alive => None,
        Liveness::CannotTell => {
            silence().and_then(|s| s.judge(owner.host.as_deref(), sys::realtime_ns()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "11111111-2222-3333-4444-555555555555";

    fn here() -> Here {
        Here {
            boot_id: Some(BOOT.into()),
            host: "lab1".into(),
        }
    }

    fn owner(pid: i32, start: u64) -> StoredOwner {
        StoredOwner {
            pid: Some(pid),
            start_ticks: Some(start),
            boot_id: Some(BOOT.into()),
            host: Some("lab1".into()),
        }
    }

    fn process(start: u64, state: char) -> Option<TaskStat> {
        Some(TaskStat {
            state,
            cpu_ticks: 0,
            start_ticks: start,
        })
    }

    #[test]
    fn a_live_owner_keeps_the_run_running() {
        assert_eq!(
            judge(&owner(10, 500), &here(), &|_| process(500, 'S')),
            Liveness::Alive
        );
    }

    #[test]
    fn a_missing_reused_or_zombie_pid_is_dead() {
        let dead = |probe: &dyn Fn(i32) -> Option<TaskStat>| {
            matches!(judge(&owner(10, 500), &here(), probe), Liveness::Dead(_))
        };
        assert!(dead(&|_| None));
        assert!(dead(&|_| process(777, 'S')), "pid reused");
        assert!(dead(&|_| process(500, 'Z')), "exited, not reaped");
    }

    #[test]
    fn an_ended_boot_is_dead_whatever_the_pid() {
        let mut old = owner(10, 500);
        old.boot_id = Some("99999999-2222-3333-4444-555555555555".into());
        let verdict = judge(&old, &here(), &|_| process(500, 'R'));
        assert!(
            matches!(&verdict, Liveness::Dead(why) if why.contains("99999999")),
            "{verdict:?}"
        );
    }

    #[test]
    fn another_host_or_an_unknown_owner_cannot_be_judged() {
        let mut elsewhere = owner(10, 500);
        elsewhere.host = Some("lab2".into());
        assert_eq!(judge(&elsewhere, &here(), &|_| None), Liveness::CannotTell);
        let mut unknown_pid = owner(10, 500);
        unknown_pid.pid = None;
        assert_eq!(
            judge(&unknown_pid, &here(), &|_| None),
            Liveness::CannotTell
        );
        assert_eq!(
            judge(&StoredOwner::default(), &here(), &|_| None),
            Liveness::CannotTell
        );
    }

    #[test]
    fn only_running_runs_are_judged() {
        let silence = || -> Option<Silence> { panic!("a finished run's silence was asked for") };
        let (status, why) = effective_status(
            RunStatus::Complete,
            &StoredOwner::default(),
            &here(),
            silence,
        );
        assert_eq!((status, why), (RunStatus::Complete, None));
    }

    const SEC: i64 = 1_000_000_000;

    fn fake_plan() -> RunPlan {
        let fake = schedlab_core::workload::WorkloadSpec::Fake(Default::default());
        RunPlan::new(None, None, 5, 1, vec![fake]).unwrap()
    }

    /// Patience (15 min) and the margin (1 h) come on top of the plan's own bound.
    fn beyond_plan(allowed: Duration) -> u64 {
        (allowed - Patience::default().total - SILENCE_MARGIN).as_secs()
    }

    #[test]
    fn a_runs_allowed_silence_follows_its_plan_and_its_slowest_iterations() {
        let plan = fake_plan();
        let start = 1_000 * SEC;
        // Nothing known yet: the deadline of a first iteration nothing is known about.
        let fresh = Silence::of(&plan, start, &[]);
        assert_eq!(fresh.last_word_ns, start);
        assert_eq!(
            beyond_plan(fresh.allowed),
            DEADLINE_UNKNOWN_NS / 1_000_000_000
        );
        // Iterations 200 s apart: a live run may take 10 × that for one.
        let slow = Silence::of(&plan, start, &[start + 700 * SEC, start + 500 * SEC]);
        assert_eq!(slow.last_word_ns, start + 700 * SEC);
        assert_eq!(beyond_plan(slow.allowed), 5_000);
        // A cooldown between cases adds to it.
        let cooled = RunPlan {
            cooldown_ms: 120_000,
            ..plan.clone()
        };
        assert_eq!(beyond_plan(Silence::of(&cooled, start, &[]).allowed), 720);
        // --iteration-timeout is the deadline itself, however slow the iterations were.
        let timed = RunPlan {
            iteration_timeout_ms: Some(10_000),
            ..plan
        };
        let slow_but_timed = Silence::of(&timed, start, &[start + 500 * SEC]);
        assert_eq!(beyond_plan(slow_but_timed.allowed), 10);
    }

    #[test]
    fn another_hosts_run_is_abandoned_only_after_its_allowed_silence() {
        let silence = Silence {
            last_word_ns: 1_000 * SEC,
            allowed: Duration::from_secs(7_200),
        };
        assert_eq!(silence.judge(Some("lab7"), (1_000 + 7_200) * SEC), None);
        let why = silence.judge(Some("lab7"), (1_000 + 7_201) * SEC).unwrap();
        assert!(
            why.contains("nothing stored since 1970-01-01T00:16:40Z (2h ago)")
                && why.contains("on lab7")
                && why.contains("at least every 2h"),
            "{why}"
        );
        // A clock behind the writer's reads as no silence at all.
        assert_eq!(silence.judge(None, 0), None);

        let elsewhere = StoredOwner {
            host: Some("lab7".into()),
            ..owner(10, 500)
        };
        let long_ago = Silence {
            last_word_ns: 0,
            allowed: SILENCE_MARGIN,
        };
        let (status, why) =
            effective_status(RunStatus::Running, &elsewhere, &here(), || Some(long_ago));
        assert_eq!(status, RunStatus::Abandoned);
        assert!(why
            .unwrap()
            .starts_with("abandoned: nothing stored since 1970"));
        let recent = Silence {
            last_word_ns: sys::realtime_ns(),
            allowed: SILENCE_MARGIN,
        };
        let (status, _) =
            effective_status(RunStatus::Running, &elsewhere, &here(), || Some(recent));
        assert_eq!(status, RunStatus::Running);
        // This host's live run is judged by its process, never by its silence.
        let me = std::process::id() as i32;
        let alive = owner(me, sys::process_stat(me).unwrap().start_ticks);
        let (status, _) = effective_status(RunStatus::Running, &alive, &here(), || Some(long_ago));
        assert_eq!(status, RunStatus::Running);
    }
}
