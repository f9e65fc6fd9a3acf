//! What one iteration of `contention` runs: the testcase, the families it belongs to (which
//! decide the tasks, the checks and the parameters that apply), and the settings in the units
//! the tasks use.
use serde::{Deserialize, Serialize};

use crate::sys::FutexScope;
use crate::workload::definition::Choice;
use crate::workload::tasks::TaskMode;

/// The testcase every task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Testcase {
    Getppid,
    SchedYield,
    Mmap,
    PageFault,
    FcntlLock,
    PipeWriters,
    PipeLoopback,
    FutexWakeStorm,
    Tas,
    Ticket,
    Mcs,
    PthreadMutex,
    FutexMutex,
}

impl Testcase {
    pub const ALL: [Testcase; 13] = [
        Testcase::Getppid,
        Testcase::SchedYield,
        Testcase::Mmap,
        Testcase::PageFault,
        Testcase::FcntlLock,
        Testcase::PipeWriters,
        Testcase::PipeLoopback,
        Testcase::FutexWakeStorm,
        Testcase::Tas,
        Testcase::Ticket,
        Testcase::Mcs,
        Testcase::PthreadMutex,
        Testcase::FutexMutex,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Testcase::Getppid => "getppid",
            Testcase::SchedYield => "sched-yield",
            Testcase::Mmap => "mmap",
            Testcase::PageFault => "page-fault",
            Testcase::FcntlLock => "fcntl-lock",
            Testcase::PipeWriters => "pipe-writers",
            Testcase::PipeLoopback => "pipe-loopback",
            Testcase::FutexWakeStorm => "futex-wake-storm",
            Testcase::Tas => "tas",
            Testcase::Ticket => "ticket",
            Testcase::Mcs => "mcs",
            Testcase::PthreadMutex => "pthread-mutex",
            Testcase::FutexMutex => "futex-mutex",
        }
    }

    /// Whether it is a lock of user space, timed and probed (threads only).
    pub(super) fn is_user_lock(self) -> bool {
        matches!(
            self,
            Testcase::Tas
                | Testcase::Ticket
                | Testcase::Mcs
                | Testcase::PthreadMutex
                | Testcase::FutexMutex
        )
    }

    /// Whether it runs a critical section of `--work` units under a lock.
    pub(super) fn has_critical_section(self) -> bool {
        self == Testcase::FcntlLock || self.is_user_lock()
    }

    /// Whether it maps memory each time (`--map-kib`).
    pub(super) fn maps(self) -> bool {
        matches!(self, Testcase::Mmap | Testcase::PageFault)
    }
}

impl Choice for Testcase {
    const ALL: &'static [Self] = &Testcase::ALL;

    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// What one iteration runs, in the units the tasks use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Config {
    pub(super) testcase: Testcase,
    /// Tasks whose ops the metrics count (slots `0..workers`).
    pub(super) workers: usize,
    /// Tasks that serve them (pipe readers, the storm's waker; slots after the workers).
    pub(super) helpers: usize,
    pub(super) mode: TaskMode,
    pub(super) warmup_ns: u64,
    pub(super) duration_ns: u64,
    pub(super) map_bytes: usize,
    pub(super) work: u64,
    pub(super) write_bytes: usize,
    pub(super) sample_every: u64,
    pub(super) map_only: bool,
    pub(super) file_per_task: bool,
}

impl Config {
    pub(super) fn all_tasks(&self) -> usize {
        self.workers + self.helpers
    }

    /// Task `t` as messages name it.
    pub(super) fn task_name(&self, t: usize) -> String {
        match self.testcase {
            Testcase::PipeWriters if t < self.workers => format!("pipe writer {t}"),
            Testcase::PipeWriters => format!("pipe reader {}", t - self.workers),
            Testcase::FutexWakeStorm if t < self.workers => format!("futex waiter {t}"),
            Testcase::FutexWakeStorm => "futex waker".to_string(),
            _ => format!("{} task {t}", self.testcase.as_str()),
        }
    }

    pub(super) fn futex_scope(&self) -> FutexScope {
        match self.mode {
            TaskMode::Threads => FutexScope::Private,
            TaskMode::Process => FutexScope::Shared,
        }
    }
}
