//! What a run produced: its status and, per case, every iteration's measurements — the raw samples
//! the store keeps and the reports summarise.
use serde::{Deserialize, Serialize};

pub use crate::attachment::Attachment;
use crate::fingerprint::Fingerprint;
use crate::metric::Measurement;
use crate::plan::{CaseSpec, RunPlan};
use crate::quiet::QuietMark;

/// How a run ended. `Running` is what the store holds while a run is in progress. `Partial` is a
/// run that `--keep-going` carried to its end past cases that failed: the others are complete,
/// but the run is not, so comparisons leave it out unless asked. `Abandoned` is never stored: it
/// is what a reader sees for a `running` run whose process no longer exists (killed with SIGKILL,
/// out of memory, power lost) or whose boot has ended; the store derives it on load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Partial,
    Interrupted,
    Failed,
    Abandoned,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Abandoned => "abandoned",
        }
    }

    /// A stored status. `abandoned` is not one (it is derived), so it does not parse.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "running" => Some(RunStatus::Running),
            "complete" => Some(RunStatus::Complete),
            "partial" => Some(RunStatus::Partial),
            "interrupted" => Some(RunStatus::Interrupted),
            "failed" => Some(RunStatus::Failed),
            _ => None,
        }
    }
}

/// Who runs a run: the process (pid and start time, which together survive pid reuse), the boot
/// and the host. Stored when the run begins, so a later reader can tell a live run from a dead one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOwner {
    pub pid: i32,
    /// Clock ticks after boot at which the process started (/proc/<pid>/stat field 22).
    pub start_ticks: Option<u64>,
    pub boot_id: Option<String>,
    pub host: String,
}

impl RunOwner {
    /// This process.
    pub fn current() -> Self {
        let (pid, start_ticks) = crate::sys::this_process();
        RunOwner {
            pid,
            start_ticks,
            boot_id: crate::sys::boot_id(),
            host: crate::sys::hostname(),
        }
    }
}

/// One iteration of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    /// 0-based position among all iterations of the case, warm-up ones first.
    pub index: u32,
    /// Warm-up iterations are stored but left out of summaries and comparisons.
    pub warmup: bool,
    /// Wall-clock start, nanoseconds since the Unix epoch.
    pub started_at_ns: i64,
    pub measurements: Vec<Measurement>,
    /// Binary data kept with the iteration, e.g. serialized latency histograms that can be merged
    /// and re-quantiled later.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// What the quiet-machine guard (`--quiet-below`) did before the iteration and whether it
    /// marked it disturbed; `None` for an iteration run without the guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<QuietMark>,
}

impl IterationRecord {
    /// Whether the guard marked it disturbed.
    pub fn disturbed(&self) -> bool {
        self.quiet.is_some_and(|q| q.disturbed.is_some())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    pub spec: CaseSpec,
    pub iterations: Vec<IterationRecord>,
    /// Why the case failed (a workload error, or the watchdog naming what was stuck); `None` for a
    /// case that completed or never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CaseRecord {
    /// The iterations that count: every one that is not a warm-up.
    pub fn measured(&self) -> impl Iterator<Item = &IterationRecord> {
        self.iterations.iter().filter(|it| !it.warmup)
    }
}

/// A whole run as stored: its plan, the machine it ran on, and every case's iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The store's id; `None` for a run that was not stored (`--no-store`).
    pub id: Option<i64>,
    pub label: Option<String>,
    pub plan: RunPlan,
    pub fingerprint: Fingerprint,
    pub started_at_ns: i64,
    pub ended_at_ns: Option<i64>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub cases: Vec<CaseRecord>,
}

impl RunRecord {
    /// The run's cases in the order its plan listed them, which is the order they ran unless the
    /// run shuffled them (a random-order suite, each visit of `ab` and `campaign`): reports of a
    /// 48-case matrix then read in the suite's order, as its reference tables do. Cases that are
    /// not the plan's, one by one, stay in the order they ran.
    pub fn cases_as_listed(&self) -> Vec<&CaseRecord> {
        self.plan
            .as_listed(self.cases.iter().collect(), |case| &case.spec.name)
    }
}

/// Which arm of an interleaved experiment a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    A,
    B,
}

impl Arm {
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::A => "a",
            Arm::B => "b",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "a" => Some(Arm::A),
            "b" => Some(Arm::B),
            _ => None,
        }
    }
}

/// A run's place in an interleaved experiment (`schedlab ab`, `schedlab campaign`): runs of arm A
/// and arm B with the same round were made next to each other and are compared as a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExperimentTag {
    pub experiment_id: i64,
    pub arm: Arm,
    pub round: u32,
}
