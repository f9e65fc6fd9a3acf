//! From the decoded scheduler and system-call events of a probed iteration to the explanatory
//! metrics, for the workload's own tasks: first which tasks those are (the threads of this
//! process other than the runner's, and every task they or the runner created, transitively),
//! then, in time order, each task's run-queue delays (from its wake-up, or its preemption, to its
//! next switch onto a CPU, as bcc's runqlat counts them), where each wake-up placed it, its
//! migrations, voluntary and involuntary switches and system calls. Tasks are grouped by their
//! command name up to its first digit (`fanout worker 3` is `fanout worker`); every metric is
//! given per group and over all tasks (group `None`).
use std::collections::{BTreeMap, HashMap, HashSet};

use hdrhistogram::Histogram;

use super::records::{Comm, Event, Kind};
use super::syscalls::syscall_name;
use crate::latency;
use crate::metric::{Better, Measurement, MetricDef};

/// An explanatory metric of one task group (`None`: all the workload's tasks, or the machine).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeMeasurement {
    pub group: Option<String>,
    pub measurement: Measurement,
}

/// The preemption mark of `sched_switch`'s `prev_state` (TASK_REPORT_MAX since Linux 4.14):
/// the task left the CPU runnable.
const PREEMPTED_STATE: i64 = 0x100;

/// Where the events came from and what bounds them.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// This process: its threads are the workload's, but for the runner's.
    pub own_pid: u32,
    /// The thread that ran the iteration (it creates the tasks and waits for them).
    pub runner_tid: u32,
    /// Events after this time are not read: a ring filled up here, and what the other CPUs
    /// recorded later would be judged without their counterparts.
    pub cutoff_ns: Option<u64>,
    /// The last-level cache and NUMA node of each CPU, by CPU number (`None`: unknown).
    pub llc_of: Vec<Option<u32>>,
    pub node_of: Vec<Option<u32>>,
}

/// Which tracepoints were recorded: a metric that needs one that was not is left out, never 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    pub switch: bool,
    pub waking: bool,
    pub wakeup: bool,
    pub wakeup_new: bool,
    pub migrate: bool,
    pub sys_exit: bool,
}

/// The explanatory metrics and, per group and over all, the run-queue delay histogram.
#[derive(Debug, Default)]
pub struct Explained {
    pub measurements: Vec<ProbeMeasurement>,
    pub histograms: Vec<(Option<String>, Histogram<u64>)>,
    /// How many tasks were the workload's.
    pub tasks: usize,
}

pub const RUNQ_DELAY: &str = "runq_delay";
const fn runq(name: &'static str) -> MetricDef {
    MetricDef::explanatory(name, "usec", Better::Lower)
}
pub const RUNQ_DELAY_P50_USEC: MetricDef = runq("runq_delay_p50_usec").quantile(RUNQ_DELAY, 50.0);
pub const RUNQ_DELAY_P90_USEC: MetricDef = runq("runq_delay_p90_usec").quantile(RUNQ_DELAY, 90.0);
pub const RUNQ_DELAY_P99_USEC: MetricDef = runq("runq_delay_p99_usec").quantile(RUNQ_DELAY, 99.0);
pub const RUNQ_DELAY_MAX_USEC: MetricDef = runq("runq_delay_max_usec").max_of(RUNQ_DELAY);
pub const RUNQ_DELAY_MEAN_USEC: MetricDef = runq("runq_delay_mean_usec");
pub const RUNQ_DELAY_TOTAL_USEC: MetricDef = runq("runq_delay_total_usec");
pub const RUNQ_DELAY_COUNT: MetricDef =
    MetricDef::explanatory("runq_delay_count", "count", Better::Lower).count();
pub const TASKS_COUNT: MetricDef =
    MetricDef::explanatory("tasks_count", "count", Better::Lower).count();
pub const WAKEUPS_COUNT: MetricDef =
    MetricDef::explanatory("wakeups_count", "count", Better::Lower).count();
const fn share(name: &'static str, better: Better) -> MetricDef {
    MetricDef::explanatory(name, "%", better)
}
/// Wake-ups that placed the task on the CPU its waker ran on.
pub const WAKEUPS_WAKER_CPU_PCT: MetricDef = share("wakeups_waker_cpu_pct", Better::Higher);
/// Wake-ups that placed the task on another CPU than its waker's.
pub const WAKEUPS_CROSS_CPU_PCT: MetricDef = share("wakeups_cross_cpu_pct", Better::Lower);
/// ... on another CPU that was idle when the task was queued.
pub const WAKEUPS_IDLE_CPU_PCT: MetricDef = share("wakeups_idle_cpu_pct", Better::Higher);
/// ... on another CPU that was running a task when the task was queued.
pub const WAKEUPS_BUSY_CPU_PCT: MetricDef = share("wakeups_busy_cpu_pct", Better::Lower);
/// ... on a CPU of another last-level cache than its waker's.
pub const WAKEUPS_CROSS_LLC_PCT: MetricDef = share("wakeups_cross_llc_pct", Better::Lower);
/// ... on a CPU of another NUMA node than its waker's.
pub const WAKEUPS_CROSS_NODE_PCT: MetricDef = share("wakeups_cross_node_pct", Better::Lower);
/// Wake-ups that placed the task on another CPU than the one it last ran on.
pub const WAKEUPS_MIGRATED_PCT: MetricDef = share("wakeups_migrated_pct", Better::Lower);
pub const MIGRATIONS_COUNT: MetricDef =
    MetricDef::explanatory("migrations_count", "count", Better::Lower).count();
pub const MIGRATIONS_PER_TASK: MetricDef =
    MetricDef::explanatory("migrations_per_task", "task", Better::Lower);
pub const VOLUNTARY_SWITCHES_COUNT: MetricDef =
    MetricDef::explanatory("voluntary_switches_count", "count", Better::Lower).count();
pub const INVOLUNTARY_SWITCHES_COUNT: MetricDef =
    MetricDef::explanatory("involuntary_switches_count", "count", Better::Lower).count();
pub const SYSCALLS_COUNT: MetricDef =
    MetricDef::explanatory("syscalls_count", "count", Better::Lower).count();

/// Counts of one task or one group.
#[derive(Debug, Clone, Default)]
struct Counts {
    tasks: u64,
    voluntary: u64,
    involuntary: u64,
    migrations: u64,
    wakeups: u64,
    /// Wake-ups whose waker's CPU is known (a `sched_waking` before the `sched_wakeup`).
    placed: u64,
    waker_cpu: u64,
    cross_cpu: u64,
    idle_cpu: u64,
    busy_cpu: u64,
    cross_llc: u64,
    cross_node: u64,
    /// Wake-ups of a task that had run before (so a last CPU is known), and those that moved it.
    rewoken: u64,
    migrated: u64,
    syscalls: BTreeMap<i64, u64>,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.tasks += other.tasks;
        self.voluntary += other.voluntary;
        self.involuntary += other.involuntary;
        self.migrations += other.migrations;
        self.wakeups += other.wakeups;
        self.placed += other.placed;
        self.waker_cpu += other.waker_cpu;
        self.cross_cpu += other.cross_cpu;
        self.idle_cpu += other.idle_cpu;
        self.busy_cpu += other.busy_cpu;
        self.cross_llc += other.cross_llc;
        self.cross_node += other.cross_node;
        self.rewoken += other.rewoken;
        self.migrated += other.migrated;
        for (id, n) in &other.syscalls {
            *self.syscalls.entry(*id).or_default() += n;
        }
    }
}

/// The group of a task: its command name up to the first digit, without trailing spaces.
pub fn group_of(comm: &Comm) -> String {
    let end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
    let name = String::from_utf8_lossy(&comm[..end]);
    let cut = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let group = name[..cut].trim_end();
    if group.is_empty() {
        name.trim().to_string()
    } else {
        group.to_string()
    }
}

/// The workload's tasks among those the events name: every task the runner thread created, and
/// every task those created, transitively (`sched_wakeup_new` names the creator as the current
/// task), with the threads of the processes among them. Without `sched_wakeup_new`, the threads
/// of this process other than the runner's.
fn workload_tasks(events: &[Event], ctx: &Context, by_creation: bool) -> HashSet<u32> {
    let mut tids: HashSet<u32> = HashSet::new();
    let mut tgids: HashSet<u32> = HashSet::new();
    if !by_creation {
        tgids.insert(ctx.own_pid);
    }
    // A task is seen creating others before the records of those others, and a process's
    // threads after the process: twice over the events settles every order.
    for _ in 0..2 {
        for e in events {
            let current_is_ours = e.tid != 0
                && e.tid != ctx.runner_tid
                && (tids.contains(&e.tid) || tgids.contains(&e.pid));
            if current_is_ours {
                tids.insert(e.tid);
                if e.pid != ctx.own_pid || !by_creation {
                    tgids.insert(e.pid);
                }
            }
            if let Kind::WakeupNew { pid, .. } = e.kind {
                if current_is_ours || e.tid == ctx.runner_tid {
                    tids.insert(pid);
                }
            }
        }
    }
    tids
}

/// Explains the events of one probed iteration, which must be in time order.
pub fn explain(events: &[Event], ctx: &Context, recorded: Recorded) -> Explained {
    let ours = workload_tasks(events, ctx, recorded.wakeup_new);
    let cutoff = ctx.cutoff_ns.unwrap_or(u64::MAX);
    let mut walk = Walk::new(&ours, ctx);
    for e in events.iter().take_while(|e| e.time_ns <= cutoff) {
        walk.event(e);
    }
    let grouped = Grouped::of(&walk);
    let mut out = Explained {
        tasks: walk.per_task.len(),
        ..Explained::default()
    };
    let scopes = std::iter::once((None, &grouped.all, Some(&grouped.all_histogram))).chain(
        grouped
            .groups
            .iter()
            .map(|(name, counts)| (Some(name.clone()), counts, grouped.histograms.get(name))),
    );
    for (group, counts, histogram) in scopes {
        let mut scope = Scope {
            group,
            out: &mut out.measurements,
        };
        scope.push_all(counts, histogram, recorded, ctx);
    }
    out.histograms = std::iter::once((None, grouped.all_histogram))
        .chain(grouped.histograms.into_iter().map(|(g, h)| (Some(g), h)))
        .filter(|(_, h)| !h.is_empty())
        .collect();
    out
}

/// What a walk through the events keeps: per task of the workload its counts, its command name,
/// since when it is queued, the CPU of its pending waker and the CPU it last ran on; per CPU what
/// it runs; and every run-queue delay, in the order they ended.
struct Walk<'a> {
    ours: &'a HashSet<u32>,
    ctx: &'a Context,
    per_task: HashMap<u32, Counts>,
    comms: HashMap<u32, Comm>,
    queued_at: HashMap<u32, u64>,
    waker_cpu: HashMap<u32, u32>,
    last_cpu: HashMap<u32, u32>,
    /// What each CPU runs (0: its idle task), once a switch on it says so.
    running: HashMap<u32, u32>,
    delays: Vec<(u32, u64)>,
}

impl<'a> Walk<'a> {
    fn new(ours: &'a HashSet<u32>, ctx: &'a Context) -> Self {
        Walk {
            ours,
            ctx,
            per_task: HashMap::new(),
            comms: HashMap::new(),
            queued_at: HashMap::new(),
            waker_cpu: HashMap::new(),
            last_cpu: HashMap::new(),
            running: HashMap::new(),
            delays: Vec::new(),
        }
    }

    /// Takes in one event; only those about the workload's tasks count, but every switch says
    /// what its CPU runs.
    fn event(&mut self, e: &Event) {
        let ours = self.ours;
        match e.kind {
            Kind::Switch {
                prev,
                prev_state,
                prev_comm,
                next,
                next_comm,
            } => {
                self.running.insert(e.cpu, next);
                if ours.contains(&prev) {
                    self.left(e.time_ns, prev, prev_state, prev_comm);
                }
                if ours.contains(&next) {
                    self.came_on(e.time_ns, e.cpu, next, next_comm);
                }
            }
            Kind::Waking { pid } if ours.contains(&pid) => {
                self.waker_cpu.insert(pid, e.cpu);
            }
            Kind::Wakeup {
                pid,
                target_cpu,
                comm,
            } if ours.contains(&pid) => self.woken(e.time_ns, pid, target_cpu, comm),
            Kind::WakeupNew { pid, comm, .. } if ours.contains(&pid) => {
                self.comms.insert(pid, comm);
                self.queued_at.insert(pid, e.time_ns);
                self.per_task.entry(pid).or_default();
            }
            Kind::Migrate { pid } if ours.contains(&pid) => {
                self.per_task.entry(pid).or_default().migrations += 1;
            }
            Kind::SysExit { id } if ours.contains(&e.tid) => {
                *self
                    .per_task
                    .entry(e.tid)
                    .or_default()
                    .syscalls
                    .entry(id)
                    .or_default() += 1;
            }
            _ => {}
        }
    }

    /// `prev` left its CPU: still runnable (preempted, so queued from now on) or of its own accord.
    fn left(&mut self, time_ns: u64, prev: u32, prev_state: i64, prev_comm: Comm) {
        self.comms.insert(prev, prev_comm);
        let counts = self.per_task.entry(prev).or_default();
        if prev_state == 0 || prev_state & PREEMPTED_STATE != 0 {
            counts.involuntary += 1;
            self.queued_at.insert(prev, time_ns);
        } else {
            counts.voluntary += 1;
        }
    }

    /// `next` came on `cpu`: its run-queue delay, if it was queued, ends here.
    fn came_on(&mut self, time_ns: u64, cpu: u32, next: u32, next_comm: Comm) {
        self.comms.insert(next, next_comm);
        self.per_task.entry(next).or_default();
        if let Some(at) = self.queued_at.remove(&next) {
            self.delays.push((next, time_ns.saturating_sub(at)));
        }
        self.last_cpu.insert(next, cpu);
    }

    /// `pid` was woken onto `target_cpu`'s run queue: where that is from its waker's CPU, when
    /// known, and whether it moved the task from the CPU it last ran on.
    fn woken(&mut self, time_ns: u64, pid: u32, target_cpu: u32, comm: Comm) {
        self.comms.insert(pid, comm);
        self.queued_at.insert(pid, time_ns);
        let counts = self.per_task.entry(pid).or_default();
        counts.wakeups += 1;
        if let Some(from) = self.waker_cpu.remove(&pid) {
            counts.place(from, target_cpu, self.running.get(&target_cpu), self.ctx);
        }
        if let Some(&last) = self.last_cpu.get(&pid) {
            counts.rewoken += 1;
            if last != target_cpu {
                counts.migrated += 1;
            }
        }
    }
}

impl Counts {
    /// A wake-up whose waker ran on `from` placed the task on `to`, which was running
    /// `running_on_to` (`None`: not known yet).
    fn place(&mut self, from: u32, to: u32, running_on_to: Option<&u32>, ctx: &Context) {
        self.placed += 1;
        if from == to {
            self.waker_cpu += 1;
        } else {
            self.cross_cpu += 1;
            match running_on_to {
                Some(0) => self.idle_cpu += 1,
                Some(_) => self.busy_cpu += 1,
                None => {}
            }
            let differ = |of: &[Option<u32>]| {
                let at = |cpu: u32| of.get(cpu as usize).copied().flatten();
                matches!((at(from), at(to)), (Some(a), Some(b)) if a != b)
            };
            if differ(&ctx.llc_of) {
                self.cross_llc += 1;
            }
            if differ(&ctx.node_of) {
                self.cross_node += 1;
            }
        }
    }
}

/// A walk's counts and run-queue delays per task group, and over all the workload's tasks.
struct Grouped {
    groups: BTreeMap<String, Counts>,
    histograms: BTreeMap<String, Histogram<u64>>,
    all: Counts,
    all_histogram: Histogram<u64>,
}

impl Grouped {
    fn of(walk: &Walk) -> Self {
        let group = |tid: &u32| {
            walk.comms
                .get(tid)
                .map_or_else(|| "?".to_string(), group_of)
        };
        let mut groups: BTreeMap<String, Counts> = BTreeMap::new();
        for (tid, counts) in &walk.per_task {
            let g = groups.entry(group(tid)).or_default();
            g.add(counts);
            g.tasks += 1;
        }
        let mut histograms: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
        let mut all_histogram = latency::new_latency_histogram();
        for (tid, delay) in &walk.delays {
            latency::record(
                histograms
                    .entry(group(tid))
                    .or_insert_with(latency::new_latency_histogram),
                *delay,
            );
            latency::record(&mut all_histogram, *delay);
        }
        let mut all = Counts::default();
        for counts in groups.values() {
            all.add(counts);
        }
        Grouped {
            groups,
            histograms,
            all,
            all_histogram,
        }
    }
}

/// Where the metrics of one scope go: a task group's, or all the tasks' (`group` `None`).
struct Scope<'a> {
    group: Option<String>,
    out: &'a mut Vec<ProbeMeasurement>,
}

impl Scope<'_> {
    fn push(&mut self, def: MetricDef, value: f64) {
        self.push_measurement(def.value(value));
    }

    fn push_measurement(&mut self, measurement: Measurement) {
        self.out.push(ProbeMeasurement {
            group: self.group.clone(),
            measurement,
        });
    }

    /// The scope's metrics from its counts and run-queue delays: each one whose tracepoints
    /// were recorded.
    fn push_all(
        &mut self,
        counts: &Counts,
        histogram: Option<&Histogram<u64>>,
        recorded: Recorded,
        ctx: &Context,
    ) {
        self.push(TASKS_COUNT, counts.tasks as f64);
        if recorded.switch && recorded.wakeup {
            self.push_runq_delays(histogram);
        }
        if recorded.wakeup {
            self.push(WAKEUPS_COUNT, counts.wakeups as f64);
        }
        if recorded.wakeup && recorded.waking && counts.placed > 0 {
            self.push_placements(counts, recorded, ctx);
        }
        if recorded.wakeup && recorded.switch && counts.rewoken > 0 {
            self.push(
                WAKEUPS_MIGRATED_PCT,
                100.0 * counts.migrated as f64 / counts.rewoken as f64,
            );
        }
        if recorded.migrate {
            self.push(MIGRATIONS_COUNT, counts.migrations as f64);
            if counts.tasks > 0 {
                self.push(
                    MIGRATIONS_PER_TASK,
                    counts.migrations as f64 / counts.tasks as f64,
                );
            }
        }
        if recorded.switch {
            self.push(VOLUNTARY_SWITCHES_COUNT, counts.voluntary as f64);
            self.push(INVOLUNTARY_SWITCHES_COUNT, counts.involuntary as f64);
        }
        if recorded.sys_exit {
            self.push(SYSCALLS_COUNT, counts.syscalls.values().sum::<u64>() as f64);
            for (id, n) in &counts.syscalls {
                self.push_measurement(syscall_count_metric(*id, *n));
            }
        }
    }

    /// How many run-queue delays, and their quantiles, when there were some.
    fn push_runq_delays(&mut self, histogram: Option<&Histogram<u64>>) {
        let delays = histogram.map_or(0, |h| h.len());
        self.push(RUNQ_DELAY_COUNT, delays as f64);
        if let Some(h) = histogram.filter(|h| !h.is_empty()) {
            let usec = |ns: u64| ns as f64 / 1e3;
            self.push(RUNQ_DELAY_P50_USEC, usec(h.value_at_quantile(0.50)));
            self.push(RUNQ_DELAY_P90_USEC, usec(h.value_at_quantile(0.90)));
            self.push(RUNQ_DELAY_P99_USEC, usec(h.value_at_quantile(0.99)));
            self.push(RUNQ_DELAY_MAX_USEC, usec(h.max()));
            self.push(RUNQ_DELAY_MEAN_USEC, h.mean() / 1e3);
            self.push(RUNQ_DELAY_TOTAL_USEC, h.mean() * h.len() as f64 / 1e3);
        }
    }

    /// Where the placed wake-ups (`counts.placed`, not 0) put the tasks, as shares of them; the
    /// cache and node shares only where the topology is known.
    fn push_placements(&mut self, counts: &Counts, recorded: Recorded, ctx: &Context) {
        let pct = |n: u64| 100.0 * n as f64 / counts.placed as f64;
        self.push(WAKEUPS_WAKER_CPU_PCT, pct(counts.waker_cpu));
        self.push(WAKEUPS_CROSS_CPU_PCT, pct(counts.cross_cpu));
        if recorded.switch {
            self.push(WAKEUPS_IDLE_CPU_PCT, pct(counts.idle_cpu));
            self.push(WAKEUPS_BUSY_CPU_PCT, pct(counts.busy_cpu));
        }
        if ctx.llc_of.iter().any(Option::is_some) {
            self.push(WAKEUPS_CROSS_LLC_PCT, pct(counts.cross_llc));
        }
        if ctx.node_of.iter().any(Option::is_some) {
            self.push(WAKEUPS_CROSS_NODE_PCT, pct(counts.cross_node));
        }
    }
}

/// `syscall_<name>_count`: how many times the tasks returned from one system call.
pub fn syscall_count_metric(id: i64, count: u64) -> crate::metric::Measurement {
    let name = match syscall_name(id) {
        Some(name) => format!("syscall_{name}_count"),
        None => format!("syscall_{id}_count"),
    };
    crate::metric::Measurement {
        name,
        unit: "count".into(),
        better: Better::Lower,
        role: crate::metric::Role::Explanatory,
        shape: crate::metric::MetricShape::Count,
        distribution: None,
        value: count as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comm(name: &str) -> Comm {
        let mut c = [0u8; 16];
        c[..name.len()].copy_from_slice(name.as_bytes());
        c
    }

    fn at(time_ns: u64, cpu: u32, pid: u32, tid: u32, kind: Kind) -> Event {
        Event {
            time_ns,
            cpu,
            pid,
            tid,
            kind,
        }
    }

    fn switch(prev: u32, prev_state: i64, next: u32) -> Kind {
        Kind::Switch {
            prev,
            prev_state,
            prev_comm: comm(if prev == 0 {
                "swapper/0"
            } else {
                "sem producer 1"
            }),
            next,
            next_comm: comm(if next == 0 {
                "swapper/0"
            } else {
                "sem consumer"
            }),
        }
    }

    const ALL: Recorded = Recorded {
        switch: true,
        waking: true,
        wakeup: true,
        wakeup_new: true,
        migrate: true,
        sys_exit: true,
    };

    fn value(out: &Explained, group: Option<&str>, name: &str) -> Option<f64> {
        out.measurements
            .iter()
            .find(|m| m.group.as_deref() == group && m.measurement.name == name)
            .map(|m| m.measurement.value)
    }

    /// The runner (tid 100 of pid 100) creates a producer (a process, 200) and a consumer (a
    /// thread, 101); another program (pid 300) runs beside them and is not theirs, nor is
    /// another thread of this process (102, a test harness's).
    fn scenario(consumer_cpu: u32) -> Vec<Event> {
        // A system call's exit: at `ns` on `cpu`, thread `tid` of process `pid`.
        let sys_exit = |ns, cpu, pid, tid, id| at(ns, cpu, pid, tid, Kind::SysExit { id });
        let new = |pid, name| Kind::WakeupNew {
            pid,
            target_cpu: 0,
            comm: comm(name),
        };
        vec![
            at(1, 0, 100, 100, new(200, "schedlab")),
            at(2, 0, 100, 100, new(101, "schedlab")),
            // The producer on CPU 0 wakes the consumer: queued at 10, on a CPU at 15.
            at(9, 0, 200, 200, Kind::Waking { pid: 101 }),
            at(
                10,
                consumer_cpu,
                200,
                200,
                Kind::Wakeup {
                    pid: 101,
                    target_cpu: consumer_cpu,
                    comm: comm("sem consumer"),
                },
            ),
            at(15, consumer_cpu, 0, 0, switch(0, 0, 101)),
            sys_exit(16, consumer_cpu, 100, 101, libc::SYS_write),
            sys_exit(17, consumer_cpu, 100, 101, libc::SYS_write),
            // Someone else's system calls are not counted.
            sys_exit(18, 1, 300, 300, libc::SYS_write),
            sys_exit(19, 1, 100, 102, libc::SYS_write),
            at(20, 0, 200, 200, switch(200, 1, 0)),
            sys_exit(21, 0, 200, 200, libc::SYS_futex),
            at(30, 1, 300, 300, Kind::Migrate { pid: 300 }),
            at(31, 1, 300, 300, Kind::Migrate { pid: 200 }),
        ]
    }

    fn context() -> Context {
        Context {
            own_pid: 100,
            runner_tid: 100,
            cutoff_ns: None,
            llc_of: vec![Some(0), Some(0)],
            node_of: vec![Some(0), Some(0)],
        }
    }

    #[test]
    fn a_wakeup_onto_another_cpu_is_cross_cpu_and_its_delay_counted() {
        let out = explain(&scenario(1), &context(), ALL);
        assert_eq!(
            out.tasks, 2,
            "producer and consumer, not the runner or pid 300"
        );
        assert_eq!(value(&out, None, "wakeups_count"), Some(1.0));
        assert_eq!(value(&out, None, "wakeups_cross_cpu_pct"), Some(100.0));
        assert_eq!(value(&out, None, "wakeups_waker_cpu_pct"), Some(0.0));
        assert_eq!(value(&out, None, "wakeups_cross_llc_pct"), Some(0.0));
        assert_eq!(value(&out, None, "runq_delay_count"), Some(1.0));
        assert_eq!(value(&out, None, "runq_delay_max_usec"), Some(0.005));
        assert_eq!(value(&out, None, "syscall_write_count"), Some(2.0));
        assert_eq!(
            value(&out, Some("sem consumer"), "syscall_write_count"),
            Some(2.0)
        );
        assert_eq!(
            value(&out, Some("sem producer"), "syscall_write_count"),
            None
        );
        assert_eq!(value(&out, None, "migrations_count"), Some(1.0));
        assert_eq!(value(&out, None, "voluntary_switches_count"), Some(1.0));
        assert_eq!(value(&out, None, "involuntary_switches_count"), Some(0.0));
        assert_eq!(out.histograms.len(), 2, "all, and the consumer's group");
    }

    #[test]
    fn a_wakeup_onto_the_wakers_cpu_is_not_cross_cpu() {
        let out = explain(&scenario(0), &context(), ALL);
        assert_eq!(value(&out, None, "wakeups_cross_cpu_pct"), Some(0.0));
        assert_eq!(value(&out, None, "wakeups_waker_cpu_pct"), Some(100.0));
    }

    #[test]
    fn what_was_not_recorded_is_left_out_not_zero() {
        let recorded = Recorded {
            sys_exit: false,
            migrate: false,
            waking: false,
            ..ALL
        };
        let out = explain(&scenario(1), &context(), recorded);
        for name in [
            "syscalls_count",
            "syscall_write_count",
            "migrations_count",
            "wakeups_cross_cpu_pct",
        ] {
            assert_eq!(value(&out, None, name), None, "{name}");
        }
        assert!(value(&out, None, "runq_delay_p99_usec").is_some());
    }

    #[test]
    fn events_after_the_cutoff_are_not_read() {
        let ctx = Context {
            cutoff_ns: Some(16),
            ..context()
        };
        let out = explain(&scenario(1), &ctx, ALL);
        assert_eq!(value(&out, None, "syscall_write_count"), Some(1.0));
        assert_eq!(value(&out, None, "voluntary_switches_count"), Some(0.0));
    }

    #[test]
    fn groups_are_names_up_to_the_first_digit() {
        assert_eq!(group_of(&comm("fanout worker 1")), "fanout worker");
        assert_eq!(group_of(&comm("receiver 3 of g")), "receiver");
        assert_eq!(group_of(&comm("pipe ping")), "pipe ping");
        assert_eq!(group_of(&comm("7zip")), "7zip");
    }
}
