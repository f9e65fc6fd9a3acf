//! Workloads: one file each behind the [`Workload`] trait, and [`WorkloadSpec`], the serialisable
//! parameters that name a workload in plans, suite files and stored runs.
use serde::{Deserialize, Serialize};

use crate::metric::{Measurement, MetricDef};
use crate::record::Attachment;
use crate::Result;

pub mod cpudl;
pub mod cpupri;
pub mod fake;
pub mod fanout;
pub mod messaging;
pub mod pipe;
pub mod semaphore;
pub mod syscall;
pub mod tasks;
pub mod wakeup;

/// Where an iteration sits in its case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterationInfo {
    /// 0-based, counting warm-up iterations first.
    pub index: u32,
    pub warmup: bool,
}

/// What one iteration produced: its metrics and any binary attachments (histograms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IterationOutput {
    pub measurements: Vec<Measurement>,
    pub attachments: Vec<Attachment>,
}

impl From<Vec<Measurement>> for IterationOutput {
    fn from(measurements: Vec<Measurement>) -> Self {
        IterationOutput {
            measurements,
            attachments: Vec::new(),
        }
    }
}

/// A measurement that can be repeated. Each iteration starts its tasks, times its own window
/// (nothing is allocated, logged or drawn inside it), checks its work, and returns its metrics.
pub trait Workload {
    /// The metrics a successful iteration returns: every one declared (an optional one only where
    /// it could be measured) and no other. This instance's answer, as the set can depend on the
    /// parameters (a mode); the runner holds every iteration to it.
    fn metrics(&self) -> &'static [MetricDef];

    /// Whether the iteration runs tasks whose CPU time, context switches and migrations the runner
    /// should measure (the fake workload does not).
    fn runs_tasks(&self) -> bool {
        true
    }

    fn run_iteration(&mut self, info: IterationInfo) -> Result<IterationOutput>;
}

/// A workload and its parameters, as written in suite files (`workload = "pipe"` plus the
/// workload's own keys) and stored with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "workload", rename_all = "lowercase")]
pub enum WorkloadSpec {
    Pipe(pipe::PipeParams),
    #[serde(alias = "hackbench")]
    Messaging(messaging::MessagingParams),
    Fake(fake::FakeParams),
    #[serde(alias = "schbench")]
    Wakeup(wakeup::WakeupParams),
    Semaphore(semaphore::SemaphoreParams),
    Syscall(syscall::SyscallParams),
    Fanout(fanout::FanoutParams),
    Cpudl(cpudl::CpudlParams),
    Cpupri(cpupri::CpupriParams),
}

impl WorkloadSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Pipe(_) => "pipe",
            WorkloadSpec::Messaging(_) => "messaging",
            WorkloadSpec::Fake(_) => "fake",
            WorkloadSpec::Wakeup(_) => "wakeup",
            WorkloadSpec::Semaphore(_) => "semaphore",
            WorkloadSpec::Syscall(_) => "syscall",
            WorkloadSpec::Fanout(_) => "fanout",
            WorkloadSpec::Cpudl(_) => "cpudl",
            WorkloadSpec::Cpupri(_) => "cpupri",
        }
    }

    pub fn validate(&self) -> Result<()> {
        match self {
            WorkloadSpec::Pipe(p) => p.validate(),
            WorkloadSpec::Messaging(p) => p.validate(),
            WorkloadSpec::Fake(p) => p.validate(),
            WorkloadSpec::Wakeup(p) => p.validate(),
            WorkloadSpec::Semaphore(p) => p.validate(),
            WorkloadSpec::Syscall(p) => p.validate(),
            WorkloadSpec::Fanout(p) => p.validate(),
            WorkloadSpec::Cpudl(p) => p.validate(),
            WorkloadSpec::Cpupri(p) => p.validate(),
        }
    }

    /// The canonical case name: the workload and every parameter that changes what is measured.
    pub fn case_name(&self) -> String {
        match self {
            WorkloadSpec::Pipe(p) => p.case_name(),
            WorkloadSpec::Messaging(p) => p.case_name(),
            WorkloadSpec::Fake(p) => p.case_name(),
            WorkloadSpec::Wakeup(p) => p.case_name(),
            WorkloadSpec::Semaphore(p) => p.case_name(),
            WorkloadSpec::Syscall(p) => p.case_name(),
            WorkloadSpec::Fanout(p) => p.case_name(),
            WorkloadSpec::Cpudl(p) => p.case_name(),
            WorkloadSpec::Cpupri(p) => p.case_name(),
        }
    }

    pub fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(match self {
            WorkloadSpec::Pipe(p) => Box::new(pipe::PipeWorkload::new(p.clone())),
            WorkloadSpec::Messaging(p) => Box::new(messaging::MessagingWorkload::new(p.clone())?),
            WorkloadSpec::Fake(p) => Box::new(fake::FakeWorkload::new(p.clone())),
            WorkloadSpec::Wakeup(p) => Box::new(wakeup::WakeupWorkload::new(p.clone())?),
            WorkloadSpec::Semaphore(p) => Box::new(semaphore::SemaphoreWorkload::new(p.clone())),
            WorkloadSpec::Syscall(p) => Box::new(syscall::SyscallWorkload::new(p.clone())),
            WorkloadSpec::Fanout(p) => Box::new(fanout::FanoutWorkload::new(p.clone())),
            WorkloadSpec::Cpudl(p) => Box::new(cpudl::CpudlWorkload::new(p.clone())),
            WorkloadSpec::Cpupri(p) => Box::new(cpupri::CpupriWorkload::new(p.clone())?),
        })
    }
}

/// One line of `schedlab list`.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
}

pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "pipe",
        aliases: &[],
        summary: "two tasks ping-pong a 4-byte token over two pipes (perf bench sched pipe)",
    },
    WorkloadInfo {
        name: "messaging",
        aliases: &["hackbench"],
        summary: "groups of senders and receivers over sockets or pipes (hackbench, perf bench sched messaging)",
    },
    WorkloadInfo {
        name: "fake",
        aliases: &[],
        summary: "deterministic synthetic results, for testing the pipeline",
    },
    WorkloadInfo {
        name: "wakeup",
        aliases: &["schbench"],
        summary: "message threads wake workers via futexes: wakeup and request latency, RPS (schbench)",
    },
    WorkloadInfo {
        name: "semaphore",
        aliases: &[],
        summary: "producer and consumer hand items through two futex semaphores; block, spin or adaptive waits (seed 001, Jiny's sem test)",
    },
    WorkloadInfo {
        name: "syscall",
        aliases: &[],
        summary: "threads making raw system calls in a tight loop: getpid, getrlimit, /dev/null writes, /dev/zero reads",
    },
    WorkloadInfo {
        name: "fanout",
        aliases: &[],
        summary: "a dispatcher and worker threads over bounded channels, one /dev/null write per message (seed 001's server.go)",
    },
    WorkloadInfo {
        name: "cpudl",
        aliases: &[],
        summary: "the sched/deadline CPU heap (orig, bugfix, fast) timed or checked in lock step (cpudl-bench)",
    },
    WorkloadInfo {
        name: "cpupri",
        aliases: &[],
        summary: "RT cpupri priority masks set and searched by many threads, shared or per-NUMA-node bitmaps",
    },
];

/// The parameters of a workload (by the name suites give it, aliases included) that count tasks —
/// groups, workers, threads, message threads — and so may be given relative to the machine in a
/// suite (`threads = "2x"`, `groups = "50%"`). Sizes of work and modelled CPUs are not.
pub fn machine_relative_keys(workload: &str) -> &'static [&'static str] {
    match workload {
        "messaging" | "hackbench" => &["groups"],
        "wakeup" | "schbench" => &["message_threads", "workers"],
        "syscall" | "cpupri" => &["threads"],
        "fanout" => &["workers"],
        _ => &[],
    }
}

/// Shared validation of a count-like parameter.
pub(crate) fn check_range(flag: &str, value: u64, min: u64, max: u64) -> Result<()> {
    if value < min || value > max {
        return Err(crate::Error::invalid(format!(
            "--{flag} must be between {min} and {max}, not {value}"
        )));
    }
    Ok(())
}
