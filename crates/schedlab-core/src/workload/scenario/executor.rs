//! Running a scenario's task groups, reusable beyond the scenario workload (a co-runner beside
//! another workload is "a scenario group"): [`GroupRun::prepare`] compiles the groups' phases,
//! makes the shared memory, pipes, result files and cgroups; [`GroupRun::start`] forks one
//! process per task, waits until every one has set its CPUs, has its work unit calibrated there
//! (by the group's first task), joined its cgroup and set its policy, and starts them all at one instant; [`GroupRun::wait`] waits
//! for them (stop signals and the iteration's deadline end them, as for every workload);
//! [`GroupRun::request_stop`] ends a run that has no end of its own; [`GroupRun::finish`] checks
//! that every task did its phases and tallies each group. However it ends — finished, failed, a
//! signal, the watchdog — dropping the run kills and reaps its tasks first and then removes its
//! cgroups.
use std::collections::BTreeMap;
use std::io::{Read, Seek};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use hdrhistogram::Histogram;

use super::engine::{self, Inbox, Shared, Step, TaskPlan};
use super::shared::{stage, Common, TaskSlot, NO_END, STOP_BIT};
use super::spec::{Group, Phase, Policy, Scenario, MAX_PHASES};
use super::super::tasks::{TaskLaunch, TaskMode};
use crate::latency;
use crate::sys::{self, AsFd, CpuController, CpuSettings, CpuShare, FutexScope, SchedRequest, SharedValue, Throttling};
use crate::{Error, Result};

/// The policy a group's tasks set on themselves; `None` for a group that gives none (its tasks
/// keep what schedlab runs with, as any workload's tasks do).
pub fn sched_request(group: &Group) -> Option<SchedRequest> {
    use sys::policy;
    let fair = |policy: u32| SchedRequest {
        policy,
        nice: group.nice.unwrap_or(0),
        runtime_ns: group.slice.map_or(0, |s| s.ns()),
        ..SchedRequest::default()
    };
    Some(match group.policy {
        Policy::Other if group.nice.is_none() && group.slice.is_none() => return None,
        Policy::Other => fair(policy::OTHER),
        Policy::Batch => fair(policy::BATCH),
        Policy::Idle => SchedRequest {
            policy: policy::IDLE,
            ..SchedRequest::default()
        },
        Policy::Fifo | Policy::Rr => SchedRequest {
            policy: if group.policy == Policy::Fifo {
                policy::FIFO
            } else {
                policy::RR
            },
            rt_priority: group.priority.unwrap_or(1),
            ..SchedRequest::default()
        },
        Policy::Deadline => {
            let period = group.period.map_or(0, |p| p.ns());
            SchedRequest {
                policy: policy::DEADLINE,
                runtime_ns: group.runtime.map_or(0, |r| r.ns()),
                deadline_ns: group.deadline.map_or(period, |d| d.ns()),
                period_ns: period,
                ..SchedRequest::default()
            }
        }
    })
}

/// The cgroup settings of a scenario's cgroup.
pub fn cpu_settings(cgroup: &super::spec::Cgroup) -> CpuSettings {
    CpuSettings {
        quota_ns: cgroup.quota.map(|q| q.ns()),
        period_ns: cgroup
            .period
            .map(|p| p.ns())
            .or(cgroup.quota.map(|_| 100_000_000)),
        share: cgroup
            .weight
            .map(CpuShare::Weight)
            .or(cgroup.shares.map(CpuShare::Shares)),
        idle: cgroup.idle,
    }
}

/// The cgroups a run made, removed when it is dropped (after its tasks are gone).
struct Cgroups {
    controller: Option<CpuController>,
    /// Name and directory of each, in the scenario's order.
    made: Vec<(String, PathBuf)>,
}

impl Cgroups {
    /// Makes `scenario`'s cgroups under `controller`, which a scenario with cgroups needs.
    fn make(scenario: &Scenario, controller: Option<CpuController>) -> Result<Cgroups> {
        let mut cgroups = Cgroups {
            controller,
            made: Vec::new(),
        };
        if scenario.cgroup.is_empty() {
            return Ok(cgroups);
        }
        let Some(controller) = cgroups.controller.clone() else {
            return Err(Error::invalid(
                "the scenario's cgroups need the cgroup cpu controller, which is not mounted",
            ));
        };
        for (name, cgroup) in &scenario.cgroup {
            let dir = controller
                .create(name, &cpu_settings(cgroup))
                .map_err(|e| failed(&format!("cannot make cgroup {name:?}"), e))?;
            cgroups.made.push((name.clone(), dir));
        }
        Ok(cgroups)
    }

    /// The throttling counts of each cgroup now, in the order they were made.
    fn throttling_each(&self) -> std::io::Result<Vec<Throttling>> {
        self.made
            .iter()
            .map(|(_, dir)| {
                self.controller
                    .as_ref()
                    .map_or(Ok(Throttling::default()), |c| c.throttling(dir))
            })
            .collect()
    }

    fn path(&self, name: &str) -> Option<&PathBuf> {
        self.made.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// Removes every cgroup; the first error, after trying them all.
    fn remove_all(&mut self) -> std::io::Result<()> {
        let mut first = Ok(());
        for (_, dir) in self.made.drain(..) {
            if let Err(e) = sys::remove_cgroup(&dir) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        let _ = self.remove_all();
    }
}

/// What one group did in the window, over its tasks.
#[derive(Debug, Clone)]
pub struct GroupOutcome {
    pub name: String,
    pub tasks: u64,
    pub loops: u64,
    /// The mean over its tasks of CPU time over the time from its start to its end.
    pub duty_cycle_pct: f64,
    /// Loops and work units per second, summed over its tasks (each over its own span).
    pub loops_per_sec: f64,
    pub run_units_per_sec: f64,
    pub run_requested_ns: u64,
    pub run_cpu_ns: u64,
    pub run_wall_ns: u64,
    pub periods: u64,
    pub missed: u64,
    pub wakeup: Histogram<u64>,
    pub lateness: Histogram<u64>,
}

impl GroupOutcome {
    /// `group`'s outcome before any task is added.
    fn empty(group: &Group) -> Self {
        GroupOutcome {
            name: group.name.clone(),
            tasks: group.count.0,
            loops: 0,
            duty_cycle_pct: 0.0,
            loops_per_sec: 0.0,
            run_units_per_sec: 0.0,
            run_requested_ns: 0,
            run_cpu_ns: 0,
            run_wall_ns: 0,
            periods: 0,
            missed: 0,
            wakeup: latency::new_latency_histogram(),
            lateness: latency::new_latency_histogram(),
        }
    }

    /// Adds what one of the group's tasks (`name`, its `slot`, its `loops`, its histograms) did;
    /// its duty cycle counts as one task's share of the mean.
    fn add_task(
        &mut self,
        name: &str,
        slot: &TaskSlot,
        loops: u64,
        wakeup: &Histogram<u64>,
        lateness: &Histogram<u64>,
    ) -> Result<()> {
        let cpu = slot.cpu_ns.load(Ordering::SeqCst);
        let span = slot.span_ns.load(Ordering::SeqCst).max(1);
        self.loops += loops;
        self.duty_cycle_pct += cpu as f64 / span as f64 * 100.0 / self.tasks as f64;
        self.loops_per_sec += loops as f64 * 1e9 / span as f64;
        self.run_units_per_sec += slot.run_units.load(Ordering::SeqCst) as f64 * 1e9 / span as f64;
        self.run_requested_ns += slot.run_requested_ns.load(Ordering::SeqCst);
        self.run_cpu_ns += slot.run_cpu_ns.load(Ordering::SeqCst);
        self.run_wall_ns += slot.run_wall_ns.load(Ordering::SeqCst);
        self.periods += slot.periods.load(Ordering::SeqCst);
        self.missed += slot.missed.load(Ordering::SeqCst);
        self.wakeup
            .add(wakeup)
            .map_err(|e| Error::failed(format!("{name}: {e:?}")))?;
        self.lateness
            .add(lateness)
            .map_err(|e| Error::failed(format!("{name}: {e:?}")))?;
        Ok(())
    }
}

/// What a finished run measured: each group, the throttling of each cgroup, and the median of
/// what the tasks measured a work unit to cost (their calibrations).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub groups: Vec<GroupOutcome>,
    pub work_unit_ns: f64,
    pub cgroups: Vec<(String, Throttling)>,
}

/// The tasks of one run of a scenario's groups.
pub struct GroupRun {
    /// Dropped first: its drop kills and reaps every task, so the cgroups are empty after.
    launch: Option<TaskLaunch>,
    shared: Arc<Shared>,
    cgroups: Cgroups,
    throttling_before: Vec<Throttling>,
    plans: Vec<TaskPlan>,
    /// Per task: its group's index and its name in messages (`group "rt" task 0`).
    group_of: Vec<usize>,
    names: Vec<String>,
    groups: Vec<Group>,
}

fn failed(what: &str, e: std::io::Error) -> Error {
    Error::failed(format!("{what}: {e}"))
}

impl GroupRun {
    /// Compiles `scenario`'s groups and makes what their tasks share, and its cgroups under
    /// `controller` (which a scenario with cgroups needs).
    pub fn prepare(scenario: &Scenario, controller: Option<CpuController>) -> Result<GroupRun> {
        let cgroups = Cgroups::make(scenario, controller)?;
        let tasks = Tasks::plan(scenario, &cgroups)?;
        // A result file per task and a pipe per receiving task, held by every task: the soft
        // limit goes up to the hard one, which validation checked them against.
        sys::raise_open_files_limit();
        let shared = make_shared(&tasks.receives)?;
        let throttling_before = cgroups
            .throttling_each()
            .map_err(|e| failed("cannot read a cgroup's cpu.stat", e))?;
        Ok(GroupRun {
            launch: None,
            shared: Arc::new(shared),
            cgroups,
            throttling_before,
            plans: tasks.plans,
            group_of: tasks.group_of,
            names: tasks.names,
            groups: scenario.group.clone(),
        })
    }

    fn common(&self) -> &Common {
        &self.shared.common
    }

    fn slot(&self, task: usize) -> &TaskSlot {
        &self.shared.slots[task]
    }

    /// Forks every task, waits until all are set up, and starts them together; their loops end
    /// `duration_ns` after the start, or, with `None`, when their loop counts are done or
    /// [`GroupRun::request_stop`] is called. Returns the start (CLOCK_MONOTONIC, ns).
    pub fn start(&mut self, duration_ns: Option<u64>) -> Result<u64> {
        let total = self.plans.len();
        self.common().running.store(total as u32, Ordering::SeqCst);
        let mut launch = TaskLaunch::new(TaskMode::Process)?;
        for (plan, name) in self.plans.iter().zip(&self.names) {
            let shared = Arc::clone(&self.shared);
            let plan = plan.clone();
            launch.spawn(format!("scenario {name}"), move || {
                engine::run_task(&shared, &plan)
            })?;
        }
        launch.start()?;
        self.launch = Some(launch);
        // Until every task has joined its cgroup and set its CPUs and policy (untimed).
        loop {
            let ready = self.common().ready.load(Ordering::SeqCst);
            if ready as usize >= total {
                break;
            }
            if self.common().failed.load(Ordering::SeqCst) != 0 {
                // The task's exit says why; waiting for it names it.
                self.wait()?;
                return Err(Error::failed("a scenario task failed before the start"));
            }
            crate::error::check_stop()?;
            sys::futex_wait_until_in(&self.common().ready, ready, FutexScope::Shared, Some(10_000_000))
                .map_err(|e| failed("waiting for the tasks to start", e))?;
        }
        // Every task sleeps until one instant, so they start together whatever order they are
        // woken in: a lead of 2 ms and 50 µs a task.
        let lead = (2_000_000 + 50_000 * total as u64).min(100_000_000);
        let start = sys::monotonic_ns() + lead;
        let common = self.common();
        common.start_ns.store(start, Ordering::SeqCst);
        let end = duration_ns.map_or(NO_END, |d| start.saturating_add(d));
        common.end_ns.store(end, Ordering::SeqCst);
        common.go.store(1, Ordering::SeqCst);
        sys::futex_wake_in(&common.go, u32::MAX >> 1, FutexScope::Shared)
            .map_err(|e| failed("cannot start the tasks", e))?;
        Ok(start)
    }

    /// Ends a run started without a duration: every task stops at its next step boundary (a
    /// wait at once).
    pub fn request_stop(&self) -> Result<()> {
        engine::request_stop(&self.shared).map_err(|e| failed("cannot stop the tasks", e))
    }

    /// Waits until every task has ended; a task that failed ends the run, named with where it
    /// failed.
    pub fn wait(&mut self) -> Result<()> {
        let Some(launch) = self.launch.as_mut() else {
            return Err(Error::failed("the scenario's tasks were not started"));
        };
        match launch.wait_all() {
            Ok(_) => Ok(()),
            Err(Error::RunFailed(message)) => Err(Error::failed(match self.failure() {
                Some(why) => format!("{message} ({why})"),
                None => message,
            })),
            Err(e) => Err(e),
        }
    }

    /// Where the first task that failed was, from its slot: `while setting SCHED_FIFO priority 50`,
    /// `in phase 2 (lock m)`.
    fn failure(&self) -> Option<String> {
        let task = self.common().failed.load(Ordering::SeqCst).checked_sub(1)? as usize;
        let slot = self.slot(task);
        let group = &self.groups[*self.group_of.get(task)?];
        let at = slot.stage.load(Ordering::SeqCst);
        let errno = slot.errno.load(Ordering::SeqCst);
        let what = match at {
            stage::CALIBRATING => "calibrating its work unit".to_string(),
            stage::JOINING_CGROUP => format!("joining cgroup {:?}", group.cgroup.clone().unwrap_or_default()),
            stage::SETTING_AFFINITY => "setting its CPUs".to_string(),
            stage::SETTING_POLICY => format!("setting {}", group.policy.kernel_name()),
            stage::READY => "waiting for the start".to_string(),
            stage::REPORTING => "writing its results".to_string(),
            s if s >= stage::PHASE => {
                let phase = (s - stage::PHASE) as usize;
                let name = group.phases.get(phase).map(Phase::describe).unwrap_or_default();
                let check = if errno == 0 { ": a check of its work failed" } else { "" };
                format!("in phase {} ({name}){check}", phase + 1)
            }
            _ => return None,
        };
        Some(format!("{} failed while {what}", self.names[task]).replace("while in", "in"))
    }

    /// Checks that every task did its phases, removes the cgroups, and tallies each group.
    pub fn finish(mut self) -> Result<Outcome> {
        let outcome = self.verify_and_tally();
        self.launch = None;
        let throttling: Vec<(String, Throttling)> = match &self.cgroups.controller {
            Some(controller) => self
                .cgroups
                .made
                .iter()
                .zip(&self.throttling_before)
                .map(|((name, dir), before)| {
                    controller
                        .throttling(dir)
                        .map(|now| (name.clone(), now.saturating_sub(*before)))
                        .map_err(|e| failed(&format!("cannot read cgroup {name:?}'s cpu.stat"), e))
                })
                .collect::<Result<_>>()?,
            None => Vec::new(),
        };
        self.cgroups
            .remove_all()
            .map_err(|e| failed("cannot remove the scenario's cgroup", e))?;
        let groups = outcome?;
        let mut units: Vec<u64> = (0..self.plans.len())
            .map(|task| self.slot(task).unit_ps.load(Ordering::SeqCst))
            .collect();
        units.sort_unstable();
        Ok(Outcome {
            groups,
            work_unit_ns: units.get(units.len() / 2).copied().unwrap_or(0) as f64 / 1_000.0,
            cgroups: throttling,
        })
    }

    /// Checks what every task reports and tallies it into its group's outcome; then that the
    /// mutexes' own counts agree with the lock phases done.
    fn verify_and_tally(&self) -> Result<Vec<GroupOutcome>> {
        let mut outcomes: Vec<GroupOutcome> = self.groups.iter().map(GroupOutcome::empty).collect();
        let mut acquisitions = [0u64; super::spec::MAX_MUTEXES];
        for task in 0..self.plans.len() {
            let (loops, done) = self.verify_counts(task)?;
            for (step, &count) in self.plans[task].steps.iter().zip(&done) {
                if let Step::Lock { mutex } = step {
                    acquisitions[*mutex] += count;
                }
            }
            self.verify_deliveries(task)?;
            let (wakeup, lateness) = self.histograms(task)?;
            let g = self.group_of[task];
            outcomes[g].add_task(&self.names[task], self.slot(task), loops, &wakeup, &lateness)?;
        }
        self.verify_mutexes(&acquisitions)?;
        Ok(outcomes)
    }

    /// Task `task`'s loops and the count of each of its phases, once checked: it reported, did
    /// at least one loop (all of them when the run ends by count), and each phase once a loop.
    fn verify_counts(&self, task: usize) -> Result<(u64, Vec<u64>)> {
        let slot = self.slot(task);
        let name = &self.names[task];
        let group = &self.groups[self.group_of[task]];
        let at = slot.stage.load(Ordering::SeqCst);
        if at != stage::DONE {
            return Err(Error::failed(format!(
                "{name} did not finish its report (stage {at})"
            )));
        }
        let loops = slot.loops.load(Ordering::SeqCst);
        if loops == 0 {
            return Err(Error::failed(format!(
                "{name} completed no loop of its phases in the window: it was starved, or \
                 one loop takes longer than the scenario's duration"
            )));
        }
        if let (Some(wanted), false) = (group.loops, self.ends_by_time()) {
            if loops != wanted {
                return Err(Error::failed(format!(
                    "{name} did {loops} loops of {wanted}"
                )));
            }
        }
        let done: Vec<u64> = slot.done[..group.phases.len()]
            .iter()
            .map(|d| d.load(Ordering::SeqCst))
            .collect();
        check_phase_counts(name, group, loops, &done)?;
        if slot.done[group.phases.len()..MAX_PHASES]
            .iter()
            .any(|d| d.load(Ordering::SeqCst) != 0)
        {
            return Err(Error::failed(format!("{name} counted phases it does not have")));
        }
        Ok((loops, done))
    }

    /// Every wake-up posted to task `task` was taken or is still there; every message sent to it
    /// was read or is still in its pipe (which this drains).
    fn verify_deliveries(&self, task: usize) -> Result<()> {
        let slot = self.slot(task);
        let name = &self.names[task];
        let posted = slot.posted.load(Ordering::SeqCst);
        let taken = slot.taken.load(Ordering::SeqCst);
        let left = u64::from(slot.tokens.load(Ordering::SeqCst) & !STOP_BIT);
        if posted != taken + left {
            return Err(Error::failed(format!(
                "{name}: {posted} wake-ups were posted but {taken} taken and {left} left"
            )));
        }
        if let Some(inbox) = &self.shared.inboxes[task] {
            let (unread, unread_tags) = drain(inbox)?;
            let sent = slot.sent.load(Ordering::SeqCst);
            let received = slot.received.load(Ordering::SeqCst);
            let tags = slot.received_tags.load(Ordering::SeqCst).wrapping_add(unread_tags);
            if sent != received + unread || tags != slot.sent_tags.load(Ordering::SeqCst) {
                return Err(Error::failed(format!(
                    "{name}: {sent} messages were sent to it, {received} read and {unread} \
                     left, or their tags do not add up"
                )));
            }
        }
        Ok(())
    }

    /// Each mutex counted, inside it, as many acquisitions as the tasks did lock phases on it,
    /// and is free at the end.
    fn verify_mutexes(&self, acquisitions: &[u64; super::spec::MAX_MUTEXES]) -> Result<()> {
        for (i, mutex) in self.common().mutexes.iter().enumerate() {
            let counted = mutex.acquisitions.load(Ordering::SeqCst);
            let holder = mutex.holder.load(Ordering::SeqCst);
            if counted != acquisitions[i] || holder != 0 {
                return Err(Error::failed(format!(
                    "mutex {i}: {counted} acquisitions counted inside it, {} lock phases done, \
                     holder {holder} at the end: exclusion failed",
                    acquisitions[i]
                )));
            }
        }
        Ok(())
    }

    /// Whether the run's loops end at a time (a duration, or a stop), so loop counts may fall
    /// short of a group's `loops`.
    fn ends_by_time(&self) -> bool {
        self.common().end_ns.load(Ordering::SeqCst) != NO_END
    }

    /// The wake-up and lateness histograms task `task` wrote into its result file.
    fn histograms(&self, task: usize) -> Result<(Histogram<u64>, Histogram<u64>)> {
        let what = |e: std::io::Error| failed(&format!("cannot read {}'s results", self.names[task]), e);
        let fd = self.shared.results[task].try_clone().map_err(what)?;
        let mut file = std::fs::File::from(fd);
        file.rewind().map_err(what)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(what)?;
        let mut rest = bytes.as_slice();
        let mut next = || -> Result<Histogram<u64>> {
            let bad = || Error::failed(format!("{}'s results are truncated", self.names[task]));
            let (len, tail) = rest.split_at_checked(8).ok_or_else(bad)?;
            let len = u64::from_le_bytes(len.try_into().map_err(|_| bad())?) as usize;
            let (data, tail) = tail.split_at_checked(len).ok_or_else(bad)?;
            rest = tail;
            latency::decode(data).map_err(Error::failed)
        };
        Ok((next()?, next()?))
    }
}

/// The tasks of a scenario's groups, the groups' tasks numbered one after another.
struct Tasks {
    plans: Vec<TaskPlan>,
    /// Per task: its group's index, its name in messages (`group "rt" task 0`), and whether it
    /// receives messages (and so needs a pipe).
    group_of: Vec<usize>,
    names: Vec<String>,
    receives: Vec<bool>,
}

impl Tasks {
    /// Every task's plan: its group's phases compiled to steps, its cgroup's directory (made by
    /// `cgroups`), its CPUs and policy.
    fn plan(scenario: &Scenario, cgroups: &Cgroups) -> Result<Tasks> {
        let names = StepNames::of(scenario);
        let mut tasks = Tasks {
            plans: Vec::with_capacity(names.total),
            group_of: Vec::with_capacity(names.total),
            names: Vec::with_capacity(names.total),
            receives: vec![false; names.total],
        };
        for (g, group) in scenario.group.iter().enumerate() {
            let steps = names.compile(group);
            let cgroup = match &group.cgroup {
                Some(name) => Some(cgroups.path(name).cloned().ok_or_else(|| {
                    Error::failed(format!("cgroup {name:?} was not made"))
                })?),
                None => None,
            };
            for i in 0..group.count.0 as usize {
                let index = names.first[g] + i;
                tasks.receives[index] = group.phases.contains(&Phase::Recv);
                tasks.plans.push(TaskPlan {
                    index,
                    calibrator: names.first[g],
                    cgroup: cgroup.clone(),
                    cpus: group.cpus.as_ref().map(|c| c.0.as_slice().to_vec()),
                    sched: sched_request(group),
                    loops: group.loops,
                    steps: Arc::clone(&steps),
                });
                tasks.group_of.push(g);
                tasks.names.push(format!("group {:?} task {i}", group.name));
            }
        }
        Ok(tasks)
    }
}

/// What the names in a scenario's phases stand for as indices: each group's first task, each
/// mutex, each barrier (with its parties: every task of the groups that wait at it).
struct StepNames<'a> {
    scenario: &'a Scenario,
    first: Vec<usize>,
    total: usize,
    mutexes: BTreeMap<&'a str, usize>,
    barriers: BTreeMap<&'a str, (usize, u32)>,
}

impl<'a> StepNames<'a> {
    fn of(scenario: &'a Scenario) -> Self {
        let mut first = Vec::with_capacity(scenario.group.len());
        let mut total = 0usize;
        for group in &scenario.group {
            first.push(total);
            total += group.count.0 as usize;
        }
        let mut mutexes: BTreeMap<&str, usize> = BTreeMap::new();
        let mut barriers: BTreeMap<&str, (usize, u32)> = BTreeMap::new();
        for group in &scenario.group {
            for phase in &group.phases {
                match phase {
                    Phase::Lock(m) => {
                        let next = mutexes.len();
                        mutexes.entry(m).or_insert(next);
                    }
                    Phase::Barrier(b) => {
                        let next = barriers.len();
                        barriers.entry(b).or_insert((next, 0)).1 += group.count.0 as u32;
                    }
                    _ => {}
                }
            }
        }
        StepNames {
            scenario,
            first,
            total,
            mutexes,
            barriers,
        }
    }

    /// The tasks of group `name`: the first one's index and how many.
    fn tasks_of(&self, name: &str) -> (usize, usize) {
        self.scenario
            .group
            .iter()
            .position(|g| g.name == name)
            .map(|i| (self.first[i], self.scenario.group[i].count.0 as usize))
            .unwrap_or((0, 0))
    }

    /// `group`'s phases as steps; each timer of the loop numbered in its order.
    fn compile(&self, group: &Group) -> Arc<[Step]> {
        let mut timers = 0;
        let steps: Vec<Step> = group
            .phases
            .iter()
            .map(|phase| match phase {
                Phase::Run(span) => Step::Run {
                    requested_ns: span.ns(),
                },
                Phase::Spin(span) => Step::Spin { ns: span.ns() },
                Phase::Sleep(span) => Step::Sleep { ns: span.ns() },
                Phase::Timer(timer) => {
                    timers += 1;
                    Step::Timer {
                        period_ns: timer.period.ns(),
                        timer: timers - 1,
                        relative: timer.relative,
                    }
                }
                Phase::Lock(m) => Step::Lock { mutex: self.mutexes[m.as_str()] },
                Phase::Unlock(m) => Step::Unlock { mutex: self.mutexes[m.as_str()] },
                Phase::Wake(target) => {
                    let (first, count) = self.tasks_of(target);
                    Step::Wake { first, count }
                }
                Phase::Wait => Step::Wait,
                Phase::Barrier(b) => {
                    let (barrier, parties) = self.barriers[b.as_str()];
                    Step::Barrier { barrier, parties }
                }
                Phase::Yield => Step::Yield,
                Phase::Syscall(call) => Step::Syscall(*call),
                Phase::Send(target) => {
                    let (first, count) = self.tasks_of(target);
                    Step::Send { first, count }
                }
                Phase::Recv => Step::Recv,
            })
            .collect();
        steps.into()
    }
}

/// What the tasks share: the common words, a slot, a result file per task, and a pipe per task
/// that `receives`.
fn make_shared(receives: &[bool]) -> Result<Shared> {
    let total = receives.len();
    let (stop_read, stop_write) = sys::pipe().map_err(|e| failed("cannot make a pipe", e))?;
    Ok(Shared {
        common: SharedValue::new().map_err(|e| failed("cannot map shared memory", e))?,
        slots: (0..total)
            .map(|_| SharedValue::new())
            .collect::<std::io::Result<_>>()
            .map_err(|e| failed("cannot map shared memory", e))?,
        inboxes: receives
            .iter()
            .map(|&receives| receives.then(inbox).transpose())
            .collect::<std::io::Result<_>>()
            .map_err(|e| failed("cannot make a task's pipe", e))?,
        results: (0..total)
            .map(|_| sys::memfd("schedlab-scenario-task"))
            .collect::<std::io::Result<_>>()
            .map_err(|e| failed("cannot make a result file", e))?,
        stop_read,
        stop_write,
    })
}

impl Drop for GroupRun {
    fn drop(&mut self) {
        // The tasks first (killed and reaped), then their cgroups, which must be empty.
        self.launch = None;
        let _ = self.cgroups.remove_all();
    }
}

/// A task's pipe for messages, both ends non-blocking (a full or empty pipe waits in poll, which
/// also watches for the stop), as large as the kernel allows a user without privilege (1 MiB).
fn inbox() -> std::io::Result<Inbox> {
    let (read, write) = sys::pipe()?;
    sys::set_nonblocking(read.as_fd())?;
    sys::set_nonblocking(write.as_fd())?;
    let _ = sys::set_pipe_size(write.as_fd(), 1 << 20);
    Ok(Inbox { read, write })
}

/// Reads what is left in a task's pipe after it ended: how many messages and the sum of their
/// tags.
fn drain(inbox: &Inbox) -> Result<(u64, u64)> {
    let mut messages = 0u64;
    let mut tags = 0u64;
    let mut message = [0u8; 16];
    loop {
        match sys::read_interruptible(inbox.read.as_fd(), &mut message) {
            Ok(16) => {
                messages += 1;
                tags = tags.wrapping_add(u64::from_le_bytes(
                    message[8..].try_into().unwrap_or_default(),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok((messages, tags)),
            Ok(n) => return Err(Error::failed(format!("a task's pipe held a part message ({n} bytes)"))),
            Err(e) => return Err(failed("cannot read a task's pipe", e)),
        }
    }
}

/// A task's count of each phase after `loops` whole loops: each phase `loops` times, and the first
/// phases once more where the window's end cut a last loop short (never the last phase: a loop
/// whose last phase was done is a loop done).
fn check_phase_counts(name: &str, group: &Group, loops: u64, done: &[u64]) -> Result<()> {
    let cut_after = done.iter().take_while(|&&count| count == loops + 1).count();
    let whole = cut_after < done.len() && done[cut_after..].iter().all(|&count| count == loops);
    if whole {
        return Ok(());
    }
    let (i, count) = done
        .iter()
        .enumerate()
        .skip(cut_after)
        .find(|(_, &count)| count != loops)
        .map_or((done.len() - 1, done[done.len() - 1]), |(i, &count)| (i, count));
    Err(Error::failed(format!(
        "{name} did phase {} ({}) {count} times in {loops} loops",
        i + 1,
        group.phases[i].describe()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::spec::{from_toml, Span};

    /// A run without an end of its own, as a co-runner beside another workload would be: every
    /// kind of waiting phase ends when it is told to stop, and what the tasks did adds up.
    #[test]
    fn a_run_without_an_end_stops_when_told_and_adds_up() {
        let scenario = from_toml(
            r#"
[[group]]
name = "waker"
phases = [{ timer = "2ms" }, { wake = "waiter" }, { send = "reader" }, { run = "50us" }]
[[group]]
name = "waiter"
count = 2
phases = ["wait", { lock = "m" }, { syscall = "getpid" }, { unlock = "m" }]
[[group]]
name = "reader"
phases = ["recv", { lock = "m" }, "yield", { unlock = "m" }, { barrier = "b" }]
[[group]]
name = "sleeper"
phases = [{ sleep = "1ms" }, { barrier = "b" }]
"#,
        )
        .unwrap();
        let mut run = GroupRun::prepare(&scenario, None).unwrap();
        run.start(None).unwrap();
        sys::sleep_ns(300_000_000);
        run.request_stop().unwrap();
        run.wait().unwrap();
        let outcome = run.finish().unwrap();
        let loops: Vec<u64> = outcome.groups.iter().map(|g| g.loops).collect();
        assert!(loops.iter().all(|&l| l >= 5), "{loops:?}");
        // Each waiter is woken once per waker loop, give or take the loop the stop cut short.
        assert!(loops[1] <= 2 * loops[0] + 2, "{loops:?}");
        assert!(outcome.groups[0].periods >= 5);
        assert!(!outcome.groups[1].wakeup.is_empty());
        // Every task calibrated its work unit: a loop of a few instructions.
        assert!(outcome.work_unit_ns > 0.01 && outcome.work_unit_ns < 100.0, "{outcome:?}");
    }

    #[test]
    fn phase_counts_are_whole_loops_and_one_cut_short() {
        let group = from_toml("[[group]]\nname = \"g\"\nloops = 1\nphases = [\"yield\", \"yield\", \"yield\"]\n")
            .unwrap()
            .group
            .remove(0);
        for good in [[5, 5, 5], [6, 5, 5], [6, 6, 5]] {
            check_phase_counts("t", &group, 5, &good).unwrap();
        }
        for bad in [[5, 6, 5], [4, 5, 5], [6, 6, 6], [7, 5, 5], [6, 5, 6]] {
            assert!(check_phase_counts("t", &group, 5, &bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn groups_ask_for_their_policies() {
        let scenario = from_toml(
            r#"
duration = "1s"
[[group]]
name = "plain"
phases = ["yield"]
[[group]]
name = "nice"
nice = 5
slice = "3ms"
phases = ["yield"]
[[group]]
name = "rt"
policy = "rr"
priority = 7
phases = ["yield"]
[[group]]
name = "dl"
policy = "deadline"
runtime = "1ms"
period = "10ms"
phases = ["yield"]
"#,
        )
        .unwrap();
        let requests: Vec<Option<SchedRequest>> = scenario.group.iter().map(sched_request).collect();
        assert_eq!(requests[0], None);
        let nice = requests[1].unwrap();
        assert_eq!((nice.policy, nice.nice, nice.runtime_ns), (sys::policy::OTHER, 5, 3_000_000));
        let rt = requests[2].unwrap();
        assert_eq!((rt.policy, rt.rt_priority), (sys::policy::RR, 7));
        let dl = requests[3].unwrap();
        assert_eq!(
            (dl.policy, dl.runtime_ns, dl.deadline_ns, dl.period_ns),
            (sys::policy::DEADLINE, 1_000_000, 10_000_000, 10_000_000)
        );
        let _ = Span(1);
    }
}
