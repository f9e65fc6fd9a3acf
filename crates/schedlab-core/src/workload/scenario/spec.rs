//! A scenario as data: what a TOML scenario file (or a suite's `workload = "scenario"` case) holds,
//! what an rt-app file is read into (`rtapp.rs`), and what is stored with every run. Durations
//! are written with their unit (`"10ms"`, `"250us"`), task counts as numbers or relative to the
//! online CPUs (`"2x"`, `"50%"`, resolved when read). [`Scenario::check`] holds a scenario to every
//! rule that does not depend on the machine: names, ranges, policies and their parameters, locks
//! taken and released in order, and phases that can end. docs/scenarios.md describes the format.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::super::definition::relative_count;
use crate::cpu_list::CpuList;

/// The phases of one group's loop, at most.
pub const MAX_PHASES: usize = 64;
/// Named mutexes and barriers of a scenario, at most each.
pub const MAX_MUTEXES: usize = 16;
pub const MAX_BARRIERS: usize = 16;
/// Tasks of one group, at most (the machine's limits are checked besides).
pub const MAX_GROUP_TASKS: u64 = 4_096;
/// The longest scenario duration and the longest single phase.
const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;
const MAX_PHASE_NS: u64 = 60 * 1_000_000_000;
/// The EEVDF slice the kernel takes (it clamps sched_runtime to 0.1–100 ms).
const MIN_SLICE_NS: u64 = 100_000;
const MAX_SLICE_NS: u64 = 100_000_000;
/// SCHED_DEADLINE's limits: runtime at least 1 µs (the kernel: 2^10 ns), periods within
/// kernel.sched_deadline_period_{min,max}_us' defaults (100 µs to 4 s).
const MIN_DL_RUNTIME_NS: u64 = 1_024;
const MIN_DL_PERIOD_NS: u64 = 100_000;
const MAX_DL_PERIOD_NS: u64 = 4_000_000_000;
/// CFS bandwidth: quota at least 1 ms, period 1 ms to 1 s.
const MIN_QUOTA_NS: u64 = 1_000_000;
const MIN_CFS_PERIOD_NS: u64 = 1_000_000;
const MAX_CFS_PERIOD_NS: u64 = 1_000_000_000;
/// Longest group, cgroup and scenario name.
const MAX_NAME_CHARS: usize = 32;
const MAX_SCENARIO_NAME_CHARS: usize = 64;

/// A duration in integer nanoseconds, written with its unit: `"100ns"`, `"250us"` (or `µs`),
/// `"1.5ms"`, `"2s"`. A bare number is refused: nobody should have to guess the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span(pub u64);

impl Span {
    pub fn ns(self) -> u64 {
        self.0
    }

    pub fn parse(text: &str) -> Result<Span, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let scale: u64 = match unit.trim() {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "" => {
                return Err(format!(
                    "{text:?} has no unit: write it as \"10ms\", \"250us\", \"2s\" or \"100ns\""
                ))
            }
            other => return Err(format!("{text:?}: unknown unit {other:?} (ns, us, ms, s)")),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let plain = !number.is_empty()
            && !whole.is_empty()
            && fraction.chars().all(|c| c.is_ascii_digit())
            && whole.chars().all(|c| c.is_ascii_digit());
        if !plain {
            return Err(format!("{text:?} is not a duration like \"10ms\""));
        }
        let whole: u64 = whole.parse().map_err(|_| format!("{text:?} is too long"))?;
        let mut ns = whole
            .checked_mul(scale)
            .ok_or_else(|| format!("{text:?} is too long"))?;
        let mut place = scale;
        for digit in fraction.chars() {
            place /= 10;
            let d = u64::from(digit.to_digit(10).unwrap_or(0));
            if place == 0 {
                if d != 0 {
                    return Err(format!("{text:?} is finer than a nanosecond"));
                }
                continue;
            }
            ns += d * place;
        }
        Ok(Span(ns))
    }
}

impl fmt::Display for Span {
    /// The largest unit that writes it whole: `10ms`, `1500us`, `2s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
            if ns >= scale && ns.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ns / scale);
            }
        }
        write!(f, "{ns}ns")
    }
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Span;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration with its unit, like \"10ms\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Span, E> {
                Span::parse(text).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Span, E> {
                Err(E::custom(format!(
                    "{n} has no unit: write it as a string, \"{n}us\" or \"{n}ms\""
                )))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Span, E> {
                Err(E::custom(format!(
                    "{n} has no unit: write it as a string, \"{n}us\" or \"{n}ms\""
                )))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Span, E> {
                Err(E::custom(format!("{n} has no unit: write it as \"{n}ms\"")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A group's task count: a number, or relative to the online CPUs (`"2x"`, `"50%"`), resolved
/// when the scenario is read; stored as the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TaskCount(pub u64);

impl Default for TaskCount {
    fn default() -> Self {
        TaskCount(1)
    }
}

impl<'de> Deserialize<'de> for TaskCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TaskCount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a task count: a number, or \"2x\" or \"50%\" of the online CPUs")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<TaskCount, E> {
                Ok(TaskCount(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<TaskCount, E> {
                u64::try_from(n)
                    .map(TaskCount)
                    .map_err(|_| E::custom(format!("count {n} is below 1")))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TaskCount, E> {
                relative_count(text, &crate::fingerprint::topology())
                    .map(TaskCount)
                    .map_err(|why| E::custom(format!("count {text:?}: {why}")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A scheduling policy, as `chrt` names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    #[default]
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    /// The kernel's name, for messages: `SCHED_FIFO`.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    fn as_str(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Deadline => "deadline",
        }
    }
}

/// CPUs a group's tasks may run on: `"0-1,3"` or `[0, 1, 3]`; stored as the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus(pub CpuList);

impl Serialize for Cpus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Cpus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Text(String),
            List(Vec<u32>),
        }
        match Given::deserialize(d)? {
            Given::Text(text) => text.parse().map(Cpus).map_err(serde::de::Error::custom),
            Given::List(list) => Ok(Cpus(CpuList::from(list))),
        }
    }
}

/// A timer's period and how a missed one is followed: `absolute` (the default) keeps every
/// deadline on the grid start + k × period, so a late task runs its next loops back to back;
/// `relative` (rt-app's default) sets the next deadline one period after the late arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    pub period: Span,
    pub relative: bool,
}

impl Serialize for Timer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !self.relative {
            return self.period.serialize(s);
        }
        #[derive(Serialize)]
        struct Full {
            period: Span,
            mode: &'static str,
        }
        Full {
            period: self.period,
            mode: "relative",
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Timer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Full {
            period: Span,
            #[serde(default)]
            mode: TimerMode,
        }
        #[derive(Deserialize, Default, PartialEq)]
        #[serde(rename_all = "lowercase")]
        enum TimerMode {
            #[default]
            Absolute,
            Relative,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Period(String),
            Full(Full),
        }
        match Given::deserialize(d)? {
            Given::Period(text) => Ok(Timer {
                period: Span::parse(&text).map_err(serde::de::Error::custom)?,
                relative: false,
            }),
            Given::Full(full) => Ok(Timer {
                period: full.period,
                relative: full.mode == TimerMode::Relative,
            }),
        }
    }
}

/// The system calls a `syscall` phase makes, each a real system call every time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Syscall {
    Getppid,
    Getpid,
    Getrlimit,
}

impl Syscall {
    /// The name a file gives it.
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Getppid => "getppid",
            Syscall::Getpid => "getpid",
            Syscall::Getrlimit => "getrlimit",
        }
    }
}

/// One step of a group's loop. In a file: `{ run = "1ms" }`, `{ timer = "10ms" }`, `"yield"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Burn CPU for this long as calibrated work units (rt-app's `run`).
    Run(Span),
    /// Burn CPU until this much wall-clock time has passed (rt-app's `runtime`).
    Spin(Span),
    /// Sleep this long from now.
    Sleep(Span),
    /// Sleep until the next period boundary.
    Timer(Timer),
    /// Take the named mutex (shared by every group that names it).
    Lock(String),
    Unlock(String),
    /// Post one wake-up to every task of the named group.
    Wake(String),
    /// Wait for a wake-up posted to this task.
    Wait,
    /// Wait until every task that uses the named barrier has reached it.
    Barrier(String),
    /// sched_yield.
    Yield,
    /// One system call.
    Syscall(Syscall),
    /// Write one message into the pipe of every task of the named group.
    Send(String),
    /// Read one message from this task's pipe.
    Recv,
}

impl Phase {
    /// How the phase is named in messages: `timer 10ms`, `lock m`.
    pub fn describe(&self) -> String {
        match self {
            Phase::Run(s) => format!("run {s}"),
            Phase::Spin(s) => format!("spin {s}"),
            Phase::Sleep(s) => format!("sleep {s}"),
            Phase::Timer(t) => format!("timer {}", t.period),
            Phase::Lock(m) => format!("lock {m}"),
            Phase::Unlock(m) => format!("unlock {m}"),
            Phase::Wake(g) => format!("wake {g}"),
            Phase::Wait => "wait".into(),
            Phase::Barrier(b) => format!("barrier {b}"),
            Phase::Yield => "yield".into(),
            Phase::Syscall(c) => format!("syscall {}", c.name()),
            Phase::Send(g) => format!("send {g}"),
            Phase::Recv => "recv".into(),
        }
    }

    /// Whether the task may sleep in this phase until something else happens (and so the phase
    /// ends early when the window does).
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Phase::Sleep(_)
                | Phase::Timer(_)
                | Phase::Wait
                | Phase::Barrier(_)
                | Phase::Send(_)
                | Phase::Recv
        )
    }
}

/// A set of tasks alike: how many, how they are scheduled and where, and the phases they loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Names its metrics (`NAME_duty_cycle_pct`): lower case, digits and `_`.
    pub name: String,
    #[serde(default)]
    pub count: TaskCount,
    #[serde(default)]
    pub policy: Policy,
    /// SCHED_FIFO and SCHED_RR's priority, 1 to 99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// SCHED_OTHER and SCHED_BATCH's nice, -20 to 19.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// The EEVDF slice of SCHED_OTHER and SCHED_BATCH tasks (sched_attr.sched_runtime, 6.12 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<Span>,
    /// SCHED_DEADLINE's reservation: `runtime` every `period`, by `deadline` (default: period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Span>,
    /// The CPUs the tasks may run on (default: all schedlab may use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Cpus>,
    /// The scenario's cgroup the tasks run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// Loops of the phases each task runs (default: until the scenario's duration ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    pub phases: Vec<Phase>,
}

/// A cgroup of the scenario: CFS bandwidth (`quota` every `period`), weight against its
/// siblings (`weight`, v2's scale, or `shares`, v1's), and `idle` (cpu.idle).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cgroup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
}

/// A whole scenario: its groups, the cgroups they name, and how long an iteration runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Names the case (`scenario:NAME@…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How long each iteration runs (the tasks loop their phases until then); without it every
    /// group needs `loops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Span>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cgroup: BTreeMap<String, Cgroup>,
    #[serde(default)]
    pub group: Vec<Group>,
}

/// `a_name`: a letter, then lower-case letters, digits and `_` (it goes into metric names).
fn check_name(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= MAX_NAME_CHARS;
    if well_formed {
        Ok(())
    } else {
        Err(format!(
            "{what} name {name:?} must start with a lower-case letter and hold only lower-case \
             letters, digits and _ (at most {MAX_NAME_CHARS}): it names metrics"
        ))
    }
}

impl Group {
    /// One task named `name` under `policy`, looping `phases`, with nothing else asked of the
    /// kernel: no priority, nice, slice or reservation, every CPU, no cgroup, until the end.
    pub fn new(name: String, policy: Policy, phases: Vec<Phase>) -> Group {
        Group {
            name,
            count: TaskCount(1),
            policy,
            priority: None,
            nice: None,
            slice: None,
            runtime: None,
            deadline: None,
            period: None,
            cpus: None,
            cgroup: None,
            loops: None,
            phases,
        }
    }

    /// `group "rt"`, as messages name it.
    pub fn label(&self) -> String {
        format!("group {:?}", self.name)
    }

    fn check(&self) -> Result<(), String> {
        let label = self.label();
        check_name("group", &self.name)?;
        if self.count.0 == 0 || self.count.0 > MAX_GROUP_TASKS {
            return Err(format!(
                "{label}: count must be between 1 and {MAX_GROUP_TASKS}, not {}",
                self.count.0
            ));
        }
        self.check_policy()?;
        if let Some(cpus) = &self.cpus {
            if cpus.0.is_empty() {
                return Err(format!("{label}: cpus names no CPU"));
            }
        }
        if self.loops == Some(0) {
            return Err(format!("{label}: loops must be at least 1"));
        }
        if self.phases.is_empty() {
            return Err(format!("{label} has no phases"));
        }
        if self.phases.len() > MAX_PHASES {
            return Err(format!(
                "{label} has {} phases, more than {MAX_PHASES}",
                self.phases.len()
            ));
        }
        for (i, phase) in self.phases.iter().enumerate() {
            let at = || format!("{label}, phase {} ({})", i + 1, phase.describe());
            match phase {
                Phase::Run(s) | Phase::Spin(s) | Phase::Sleep(s)
                    if s.0 == 0 || s.0 > MAX_PHASE_NS =>
                {
                    return Err(format!("{}: must be above 0 and at most 60s", at()));
                }
                Phase::Timer(t) if t.period.0 < 1_000 || t.period.0 > MAX_PHASE_NS => {
                    return Err(format!("{}: the period must be 1us to 60s", at()));
                }
                _ => {}
            }
        }
        self.check_locks()
    }

    fn check_policy(&self) -> Result<(), String> {
        let label = self.label();
        let policy = self.policy;
        let name = policy.as_str();
        match (policy, self.priority) {
            (Policy::Fifo | Policy::Rr, None) => {
                return Err(format!("{label}: policy {name} needs a priority, 1 to 99"))
            }
            (Policy::Fifo | Policy::Rr, Some(p)) if !(1..=99).contains(&p) => {
                return Err(format!(
                    "{label}: priority must be between 1 and 99 for {name}, not {p}"
                ))
            }
            (Policy::Fifo | Policy::Rr, Some(_)) | (_, None) => {}
            (_, Some(_)) => {
                return Err(format!(
                    "{label}: priority is for fifo and rr; {name} takes nice (other, batch)"
                ))
            }
        }
        if let Some(nice) = self.nice {
            if !matches!(policy, Policy::Other | Policy::Batch) {
                return Err(format!(
                    "{label}: nice is for other and batch, not {name}"
                ));
            }
            if !(-20..=19).contains(&nice) {
                return Err(format!("{label}: nice must be between -20 and 19, not {nice}"));
            }
        }
        if let Some(slice) = self.slice {
            if !matches!(policy, Policy::Other | Policy::Batch) {
                return Err(format!(
                    "{label}: slice (the EEVDF slice) is for other and batch, not {name}"
                ));
            }
            if !(MIN_SLICE_NS..=MAX_SLICE_NS).contains(&slice.0) {
                return Err(format!(
                    "{label}: slice must be between 100us and 100ms, not {slice}"
                ));
            }
        }
        let reservation = [self.runtime, self.deadline, self.period];
        if policy != Policy::Deadline {
            if reservation.iter().any(Option::is_some) {
                return Err(format!(
                    "{label}: runtime, deadline and period are for policy deadline, not {name}"
                ));
            }
            return Ok(());
        }
        let (Some(runtime), Some(period)) = (self.runtime, self.period) else {
            return Err(format!(
                "{label}: policy deadline needs runtime and period (deadline defaults to the \
                 period)"
            ));
        };
        let deadline = self.deadline.unwrap_or(period);
        if runtime.0 < MIN_DL_RUNTIME_NS {
            return Err(format!("{label}: runtime {runtime} is below 1024ns"));
        }
        if runtime > period {
            return Err(format!(
                "{label}: runtime {runtime} exceeds its period {period}"
            ));
        }
        if runtime > deadline || deadline > period {
            return Err(format!(
                "{label}: SCHED_DEADLINE needs runtime <= deadline <= period, not {runtime} <= \
                 {deadline} <= {period}"
            ));
        }
        if !(MIN_DL_PERIOD_NS..=MAX_DL_PERIOD_NS).contains(&period.0) {
            return Err(format!(
                "{label}: period must be between 100us and 4s (the kernel's default limits), \
                 not {period}"
            ));
        }
        if self.cpus.is_some() {
            return Err(format!(
                "{label}: SCHED_DEADLINE tasks cannot be pinned (the kernel refuses an affinity \
                 narrower than their root domain); leave out cpus"
            ));
        }
        Ok(())
    }

    /// Every lock is released before the loop ends, by the same task, in the reverse order of
    /// taking (no mutex taken twice, none released that is not held).
    fn check_locks(&self) -> Result<(), String> {
        let mut held: Vec<&str> = Vec::new();
        for (i, phase) in self.phases.iter().enumerate() {
            let at = || format!("{}, phase {} ({})", self.label(), i + 1, phase.describe());
            match phase {
                Phase::Lock(m) => {
                    if held.contains(&m.as_str()) {
                        return Err(format!("{}: {m} is held already: it would never end", at()));
                    }
                    held.push(m);
                }
                Phase::Unlock(m) => match held.last() {
                    Some(top) if *top == m => {
                        held.pop();
                    }
                    Some(top) if held.contains(&m.as_str()) => {
                        return Err(format!(
                            "{}: release {top} first (locks are released in the reverse order of \
                             taking)",
                            at()
                        ))
                    }
                    _ => return Err(format!("{}: {m} is not held", at())),
                },
                Phase::Wait | Phase::Barrier(_) | Phase::Recv if !held.is_empty() => {
                    return Err(format!(
                        "{}: waits while holding {}: the task that should wake it may need the \
                         lock, and it would never end",
                        at(),
                        held.join(", ")
                    ))
                }
                _ => {}
            }
        }
        if let Some(m) = held.last() {
            return Err(format!(
                "{}: {m} is still held at the end of the loop: unlock it in the same loop",
                self.label()
            ));
        }
        Ok(())
    }

    /// How many times one loop has `phase`.
    fn per_loop(&self, wanted: impl Fn(&Phase) -> bool) -> u64 {
        self.phases.iter().filter(|p| wanted(p)).count() as u64
    }
}

impl Cgroup {
    fn check(&self, name: &str) -> Result<(), String> {
        let label = format!("cgroup {name:?}");
        check_name("cgroup", name)?;
        if let Some(quota) = self.quota {
            if quota.0 < MIN_QUOTA_NS {
                return Err(format!("{label}: quota must be at least 1ms, not {quota}"));
            }
        }
        if let Some(period) = self.period {
            if !(MIN_CFS_PERIOD_NS..=MAX_CFS_PERIOD_NS).contains(&period.0) {
                return Err(format!(
                    "{label}: period must be between 1ms and 1s, not {period}"
                ));
            }
            if self.quota.is_none() {
                return Err(format!("{label}: a period without a quota limits nothing"));
            }
        }
        if self.weight.is_some() && self.shares.is_some() {
            return Err(format!(
                "{label}: give weight (cgroup v2's scale) or shares (v1's), not both"
            ));
        }
        if let Some(w) = self.weight {
            if !(1..=10_000).contains(&w) {
                return Err(format!("{label}: weight must be between 1 and 10000, not {w}"));
            }
        }
        if let Some(s) = self.shares {
            if !(2..=262_144).contains(&s) {
                return Err(format!("{label}: shares must be between 2 and 262144, not {s}"));
            }
        }
        if self.idle == Some(true) && (self.weight.is_some() || self.shares.is_some()) {
            return Err(format!(
                "{label}: an idle cgroup has the minimum weight; leave out weight and shares"
            ));
        }
        Ok(())
    }
}

impl Scenario {
    /// The name a case takes: `name`, else `scenario`.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("scenario")
    }

    pub fn task_count(&self) -> u64 {
        self.group.iter().map(|g| g.count.0).sum()
    }

    pub fn group(&self, name: &str) -> Option<&Group> {
        self.group.iter().find(|g| g.name == name)
    }

    /// Every rule that does not depend on the machine; the message names the group, phase or
    /// cgroup at fault.
    pub fn check(&self) -> Result<(), String> {
        if let Some(name) = &self.name {
            if crate::words::check_printable(name).is_err()
                || name.chars().count() > MAX_SCENARIO_NAME_CHARS
            {
                return Err(format!(
                    "name {name:?} must be printable text of at most {MAX_SCENARIO_NAME_CHARS} \
                     characters"
                ));
            }
        }
        if let Some(d) = self.duration {
            if d.0 < 1_000_000 || d.0 > MAX_DURATION_NS {
                return Err(format!("duration must be between 1ms and 24h, not {d}"));
            }
        }
        if self.group.is_empty() {
            return Err("the scenario has no group ([[group]] tables)".into());
        }
        let mut names = BTreeSet::new();
        for group in &self.group {
            group.check()?;
            if !names.insert(group.name.as_str()) {
                return Err(format!("{} is named twice", group.label()));
            }
            if let Some(cgroup) = &group.cgroup {
                if !self.cgroup.contains_key(cgroup) {
                    return Err(format!(
                        "{}: cgroup {cgroup:?} is not declared ([cgroup.{cgroup}])",
                        group.label()
                    ));
                }
            }
        }
        for (name, cgroup) in &self.cgroup {
            cgroup.check(name)?;
            if !self.group.iter().any(|g| g.cgroup.as_deref() == Some(name)) {
                return Err(format!("cgroup {name:?} is declared but no group runs in it"));
            }
        }
        self.check_targets()?;
        self.check_lock_order()?;
        self.check_ending()
    }

    /// Every group a phase names exists and does what answers it.
    fn check_targets(&self) -> Result<(), String> {
        let mut mutexes = BTreeSet::new();
        let mut barriers: BTreeMap<&str, u64> = BTreeMap::new();
        for group in &self.group {
            for (i, phase) in group.phases.iter().enumerate() {
                let at = || format!("{}, phase {} ({})", group.label(), i + 1, phase.describe());
                match phase {
                    Phase::Wake(target) | Phase::Send(target) => {
                        let Some(other) = self.group(target) else {
                            return Err(format!("{}: there is no group {target:?}", at()));
                        };
                        let (answer, word) = match phase {
                            Phase::Wake(_) => (Phase::Wait, "wait"),
                            _ => (Phase::Recv, "recv"),
                        };
                        if !other.phases.contains(&answer) {
                            return Err(format!(
                                "{}: group {target:?} never does `{word}`, so it would pile up",
                                at()
                            ));
                        }
                    }
                    Phase::Lock(m) => {
                        mutexes.insert(m.as_str());
                    }
                    Phase::Barrier(b) => {
                        *barriers.entry(b.as_str()).or_default() += group.count.0;
                    }
                    _ => {}
                }
            }
        }
        for group in &self.group {
            for (word, answer, given_by) in [("wait", Phase::Wait, "wakes"), ("recv", Phase::Recv, "sends to")] {
                let answered = self.group.iter().any(|other| {
                    other.phases.iter().any(|p| match (p, &answer) {
                        (Phase::Wake(t), Phase::Wait) | (Phase::Send(t), Phase::Recv) => *t == group.name,
                        _ => false,
                    })
                });
                if group.phases.contains(&answer) && !answered {
                    return Err(format!(
                        "{} does `{word}` but no group {given_by} it: it would never end",
                        group.label()
                    ));
                }
            }
        }
        if mutexes.len() > MAX_MUTEXES {
            return Err(format!("{} mutexes, more than {MAX_MUTEXES}", mutexes.len()));
        }
        if barriers.len() > MAX_BARRIERS {
            return Err(format!("{} barriers, more than {MAX_BARRIERS}", barriers.len()));
        }
        for (name, parties) in barriers {
            if parties < 2 {
                return Err(format!(
                    "barrier {name:?} has one task: a barrier needs at least two"
                ));
            }
        }
        Ok(())
    }

    /// No two mutexes are taken in opposite orders by different groups (a deadlock that would
    /// never end).
    fn check_lock_order(&self) -> Result<(), String> {
        let mut before: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for group in &self.group {
            let mut held: Vec<&str> = Vec::new();
            for phase in &group.phases {
                match phase {
                    Phase::Lock(m) => {
                        for h in &held {
                            before.entry(h).or_default().insert(m);
                        }
                        held.push(m);
                    }
                    Phase::Unlock(m) => held.retain(|h| h != m),
                    _ => {}
                }
            }
        }
        for (a, after) in &before {
            for b in after {
                if before.get(b).is_some_and(|s| s.contains(a)) {
                    return Err(format!(
                        "mutexes {a} and {b} are taken in both orders (by different groups or \
                         loops): the tasks could deadlock and never end"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Without a duration, every group needs its loops and every wait, message and barrier an
    /// answer for each of its loops, or the iteration could never end.
    fn check_ending(&self) -> Result<(), String> {
        if self.duration.is_some() {
            return Ok(());
        }
        for group in &self.group {
            if group.loops.is_none() {
                return Err(format!(
                    "{} loops forever: give it `loops`, or the scenario a `duration`",
                    group.label()
                ));
            }
        }
        let loops = |g: &Group| g.loops.unwrap_or(0);
        for group in &self.group {
            for (word, answer, posted_by) in [
                ("wait", Phase::Wait, "wake"),
                ("recv", Phase::Recv, "send"),
            ] {
                let needed = loops(group) * group.per_loop(|p| *p == answer);
                if needed == 0 {
                    continue;
                }
                // Each wake or send reaches every task of the group it names.
                let given: u64 = self
                    .group
                    .iter()
                    .map(|other| {
                        let per_loop = other.per_loop(|p| match (p, &answer) {
                            (Phase::Wake(t), Phase::Wait) | (Phase::Send(t), Phase::Recv) => {
                                *t == group.name
                            }
                            _ => false,
                        });
                        loops(other) * per_loop * other.count.0
                    })
                    .sum();
                if given < needed {
                    return Err(format!(
                        "{} can never end: each task does `{word}` {needed} times but is given \
                         only {given} ({posted_by} phases × loops × tasks); give the scenario a \
                         `duration`, or balance the loops",
                        group.label()
                    ));
                }
            }
        }
        let mut barrier_hits: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
        for group in &self.group {
            for phase in &group.phases {
                if let Phase::Barrier(b) = phase {
                    let hits = loops(group) * group.per_loop(|p| p == phase);
                    barrier_hits.entry(b).or_default().insert(hits);
                }
            }
        }
        for (barrier, hits) in barrier_hits {
            if hits.len() > 1 {
                return Err(format!(
                    "barrier {barrier:?} can never end: its tasks reach it different numbers of \
                     times ({}); give the scenario a `duration`, or balance the loops",
                    hits.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The scenario `schedlab run scenario` runs without a file: one task that runs 1 ms every 10 ms
/// for a second.
pub fn example() -> Scenario {
    Scenario {
        name: Some("periodic".into()),
        duration: Some(Span(1_000_000_000)),
        cgroup: BTreeMap::new(),
        group: vec![Group::new(
            "periodic".into(),
            Policy::Other,
            vec![
                Phase::Run(Span(1_000_000)),
                Phase::Timer(Timer {
                    period: Span(10_000_000),
                    relative: false,
                }),
            ],
        )],
    }
}

/// Reads a TOML scenario file's text; the error is one line with the line and column.
pub fn from_toml(text: &str) -> Result<Scenario, String> {
    toml::from_str(text).map_err(|e: toml::de::Error| {
        let reason = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("line {line}, column {column}: {reason}")
            }
            None => reason,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_and_write_their_unit() {
        for (text, ns, back) in [
            ("10ms", 10_000_000, "10ms"),
            ("250us", 250_000, "250us"),
            ("250µs", 250_000, "250us"),
            ("1.5ms", 1_500_000, "1500us"),
            ("2s", 2_000_000_000, "2s"),
            ("100ns", 100, "100ns"),
            ("0.000000001s", 1, "1ns"),
        ] {
            let span = Span::parse(text).unwrap();
            assert_eq!(span.ns(), ns, "{text}");
            assert_eq!(span.to_string(), back, "{text}");
        }
        for bad in ["10", "ms", "1.2.3ms", "-1ms", "1e3ms", "10 min", "0.5ns", ""] {
            assert!(Span::parse(bad).is_err(), "{bad}");
        }
        let err = serde_json::from_str::<Span>("1000").unwrap_err().to_string();
        assert!(err.contains("has no unit"), "{err}");
    }

    fn parse(text: &str) -> Scenario {
        from_toml(text).unwrap_or_else(|e| panic!("{e}"))
    }

    const PERIODIC: &str = r#"
name = "rt beside a hog"
duration = "2s"

[cgroup.half]
quota = "50ms"
period = "100ms"

[[group]]
name = "rt"
policy = "fifo"
priority = 50
cpus = "0"
phases = [{ timer = "1ms" }, { run = "100us" }]

[[group]]
name = "hog"
count = "1x"
nice = 19
cpus = [0]
cgroup = "half"
phases = [{ run = "10ms" }, "yield"]
"#;

    #[test]
    fn a_file_reads_and_round_trips() {
        let s = parse(PERIODIC);
        s.check().unwrap();
        assert_eq!(s.group[0].phases[0], Phase::Timer(Timer { period: Span(1_000_000), relative: false }));
        assert_eq!(s.group[1].phases[1], Phase::Yield);
        assert_eq!(s.group[1].count.0, u64::from(crate::fingerprint::online_cpu_count()));
        let text = toml::to_string(&s).unwrap();
        assert_eq!(parse(&text), s, "{text}");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(serde_json::from_value::<Scenario>(json).unwrap(), s);
    }

    fn refused(text: &str) -> String {
        match from_toml(text) {
            Err(e) => e,
            Ok(s) => s.check().expect_err("refused"),
        }
    }

    fn one_group(settings: &str, phases: &str) -> String {
        format!("duration = \"1s\"\n[[group]]\nname = \"g\"\n{settings}\nphases = [{phases}]\n")
    }

    #[test]
    fn bad_input_is_named() {
        for (text, says) in [
            (one_group("policy = \"fifo\"\npriority = 100", "\"yield\""), "between 1 and 99 for fifo, not 100"),
            (one_group("policy = \"fifo\"", "\"yield\""), "needs a priority"),
            (one_group("policy = \"deadline\"\nruntime = \"20ms\"\nperiod = \"10ms\"", "\"yield\""), "runtime 20ms exceeds its period 10ms"),
            (one_group("policy = \"deadline\"\nruntime = \"1ms\"", "\"yield\""), "needs runtime and period"),
            (one_group("policy = \"deadline\"\nruntime = \"1ms\"\nperiod = \"10ms\"\ncpus = \"0\"", "\"yield\""), "cannot be pinned"),
            (one_group("nice = 20", "\"yield\""), "between -20 and 19"),
            (one_group("policy = \"fifo\"\npriority = 1\nnice = 1", "\"yield\""), "nice is for other"),
            (one_group("priority = 5", "\"yield\""), "priority is for fifo and rr"),
            (one_group("slice = \"1s\"", "\"yield\""), "slice must be between"),
            (one_group("polcy = \"fifo\"", "\"yield\""), "unknown field `polcy`"),
            (one_group("", "{ tmer = \"1ms\" }"), "unknown variant `tmer`"),
            (one_group("", "{ run = 1000 }"), "has no unit"),
            (one_group("", "{ lock = \"m\" }"), "m is still held at the end of the loop"),
            (one_group("", "{ unlock = \"m\" }"), "m is not held"),
            (one_group("", "{ lock = \"m\" }, { lock = \"m\" }"), "held already"),
            (one_group("", "{ lock = \"m\" }, \"wait\", { unlock = \"m\" }"), "waits while holding m"),
            (one_group("", "{ wake = \"nobody\" }"), "there is no group \"nobody\""),
            (one_group("", "{ wake = \"g\" }"), "never does `wait`"),
            (one_group("", "\"wait\""), "does `wait` but no group wakes it"),
            (one_group("", "\"recv\""), "does `recv` but no group sends to it"),
            (one_group("cgroup = \"c\"", "\"yield\""), "cgroup \"c\" is not declared"),
            (one_group("", ""), "has no phases"),
            (one_group("name2 = 1", "\"yield\""), "unknown field `name2`"),
            ("[[group]]\nname = \"g\"\nphases = [\"yield\"]\n".to_string(), "loops forever"),
            ("duration = \"1s\"\n[[group]]\nname = \"Bad\"\nphases = [\"yield\"]\n".to_string(), "must start with a lower-case letter"),
            ("duration = \"1s\"\nspeed = 1\n".to_string(), "unknown field `speed`"),
            ("duration = \"1s\"\n".to_string(), "has no group"),
        ] {
            let err = refused(&text);
            assert!(err.contains(says), "{text}\n→ {err}\n(expected {says:?})");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn phases_that_could_never_end_are_refused() {
        let unbalanced = r#"
[[group]]
name = "waiter"
loops = 10
phases = ["wait"]
[[group]]
name = "waker"
loops = 5
phases = [{ wake = "waiter" }]
"#;
        assert!(refused(unbalanced).contains("can never end"));
        assert!(parse(&unbalanced.replace("loops = 5", "loops = 10")).check().is_ok());
        // With a duration the window ends them.
        assert!(parse(&format!("duration = \"1s\"\n{unbalanced}")).check().is_ok());
        let crossed = r#"
duration = "1s"
[[group]]
name = "a"
phases = [{ lock = "x" }, { lock = "y" }, { unlock = "y" }, { unlock = "x" }]
[[group]]
name = "b"
phases = [{ lock = "y" }, { lock = "x" }, { unlock = "x" }, { unlock = "y" }]
"#;
        assert!(refused(crossed).contains("taken in both orders"), "{}", refused(crossed));
        let barrier = r#"
[[group]]
name = "a"
loops = 3
phases = [{ barrier = "b" }]
[[group]]
name = "c"
loops = 4
phases = [{ barrier = "b" }]
"#;
        assert!(refused(barrier).contains("barrier \"b\" can never end"));
        let lonely = "duration = \"1s\"\n[[group]]\nname = \"a\"\nphases = [{ barrier = \"b\" }]\n";
        assert!(refused(lonely).contains("at least two"));
    }

    #[test]
    fn cgroups_are_checked() {
        let with = |table: &str| {
            format!("duration = \"1s\"\n[cgroup.c]\n{table}\n[[group]]\nname = \"g\"\ncgroup = \"c\"\nphases = [\"yield\"]\n")
        };
        assert!(parse(&with("quota = \"50ms\"\nperiod = \"100ms\"\nweight = 50")).check().is_ok());
        for (table, says) in [
            ("quota = \"100us\"", "at least 1ms"),
            ("quota = \"5ms\"\nperiod = \"2s\"", "between 1ms and 1s"),
            ("period = \"10ms\"", "limits nothing"),
            ("weight = 5\nshares = 10", "not both"),
            ("weight = 0", "between 1 and 10000"),
            ("idle = true\nweight = 5", "idle cgroup"),
            ("quota = 5", "has no unit"),
        ] {
            let err = refused(&with(table));
            assert!(err.contains(says), "{table}: {err}");
        }
        let unused = "duration = \"1s\"\n[cgroup.c]\n[[group]]\nname = \"g\"\nphases = [\"yield\"]\n";
        assert!(refused(unused).contains("no group runs in it"));
    }

    #[test]
    fn the_example_is_valid() {
        example().check().unwrap();
    }
}
