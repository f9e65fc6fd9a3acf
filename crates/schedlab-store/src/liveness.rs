//! Dead runs: a run stays `running` in the store when its process dies without a word (SIGKILL,
//! the OOM killer, power loss, a reboot). Each run records who runs it (pid, process start time,
//! boot id, host); a reader that meets a `running` run checks that owner and shows the run as
//! `abandoned` when the process is gone, its pid now names another process, or the boot it ran in
//! has ended. The status is derived on every load and never written, so a judgement made from one
//! machine cannot damage what another one still runs.
use schedlab_core::record::RunStatus;
use schedlab_core::sys::{self, TaskStat};

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

/// The status a reader shows for a stored run: `abandoned` (with why) for a `running` run whose
/// owner is dead, else the stored status.
pub fn effective_status(
    stored: RunStatus,
    owner: &StoredOwner,
    here: &Here,
) -> (RunStatus, Option<String>) {
    if stored != RunStatus::Running {
        return (stored, None);
    }
    match judge(owner, here, &sys::process_stat) {
        Liveness::Dead(why) => (RunStatus::Abandoned, Some(format!("abandoned: {why}"))),
        Liveness::Alive | Liveness::CannotTell => (stored, None),
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
        let (status, why) = effective_status(RunStatus::Complete, &StoredOwner::default(), &here());
        assert_eq!((status, why), (RunStatus::Complete, None));
    }
}
