//! What a run produced: its status and, per case, every iteration's measurements — the raw samples
//! the store keeps and the reports summarise.
use serde::{Deserialize, Serialize};

use crate::fingerprint::Fingerprint;
use crate::metric::Measurement;
use crate::plan::{CaseSpec, RunPlan};

/// How a run ended. `Running` is what the store holds while a run is in progress (and what remains
/// if schedlab was killed with SIGKILL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "running" => Some(RunStatus::Running),
            "complete" => Some(RunStatus::Complete),
            "interrupted" => Some(RunStatus::Interrupted),
            "failed" => Some(RunStatus::Failed),
            _ => None,
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
}

/// A named binary blob of an iteration, with the encoding that reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    pub name: String,
    /// How `data` is encoded, e.g. `hdrhistogram-v2-deflate`.
    pub encoding: String,
    #[serde(skip)]
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    pub spec: CaseSpec,
    pub iterations: Vec<IterationRecord>,
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
