//! The scenario workload's runnable form and its metrics, declared per group from the scenario
//! (`NAME_duty_cycle_pct`, `NAME_wakeup_p99_usec`, …) and per cgroup with a quota, plus the
//! calibration of the run phases. The names are made when the workload is built, once per case.
use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use super::executor::{GroupRun, Outcome};
use super::spec::{Phase, Scenario};
use super::super::definition::{IterationInfo, IterationOutput, Workload};
use crate::latency;
use crate::metric::{Better, MetricDef, Measurement};
use crate::{sys, Error, Result};

/// The wake-up latency percentiles reported, in tenths of a percent.
const WAKEUP_PERCENTILES: [(u32, &str, f64); 4] =
    [(500, "p50", 50.0), (900, "p90", 90.0), (990, "p99", 99.0), (999, "p99_9", 99.9)];
const LATENESS_PERCENTILES: [(u32, &str, f64); 2] = [(500, "p50", 50.0), (990, "p99", 99.0)];

/// Global metrics: the work unit's cost as the tasks measured it before each iteration (the
/// median over the tasks), and how far the run phases' CPU time strayed from what they asked for.
pub const WORK_UNIT_NSEC: MetricDef = MetricDef::secondary("work_unit_nsec", "nsec", Better::Lower);
pub const CALIBRATION_ERROR_PCT: MetricDef =
    MetricDef::secondary("calibration_error_pct", "%", Better::Lower);

/// A metric or distribution name made from a scenario, kept for the life of the process as
/// declarations need, once per distinct name however often a scenario is checked or built.
pub(crate) fn intern(text: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(name) = names.get(text.as_str()) {
        return name;
    }
    let name: &'static str = Box::leak(text.into_boxed_str());
    names.insert(name);
    name
}

/// What a group's phases make measurable.
struct Measures {
    run: bool,
    wakeups: bool,
    timer: bool,
}

fn measures(phases: &[Phase]) -> Measures {
    Measures {
        run: phases.iter().any(|p| matches!(p, Phase::Run(_))),
        wakeups: phases.iter().any(Phase::blocks),
        timer: phases.iter().any(|p| matches!(p, Phase::Timer(_))),
    }
}

/// Every metric a scenario declares, as (name, unit, better, role, shape) before names are made
/// static; in declaration order.
fn declared(scenario: &Scenario, prefix: &str) -> Vec<MetricDef> {
    let mut defs = Vec::new();
    let name = intern;
    for group in &scenario.group {
        let g = format!("{prefix}{}", group.name);
        let m = measures(&group.phases);
        defs.push(MetricDef::primary(name(format!("{g}_duty_cycle_pct")), "%", Better::Higher));
        defs.push(MetricDef::primary(name(format!("{g}_loops_per_sec")), "loops/sec", Better::Higher));
        if m.run {
            defs.push(MetricDef::primary(
                name(format!("{g}_run_units_per_sec")),
                "units/sec",
                Better::Higher,
            ));
            defs.push(MetricDef::primary(name(format!("{g}_run_wall_pct")), "%", Better::Lower));
            defs.push(MetricDef::secondary(name(format!("{g}_run_cpu_pct")), "%", Better::Lower));
        }
        if m.wakeups {
            let distribution = name(format!("{g}_wakeup"));
            for (_, p, q) in WAKEUP_PERCENTILES {
                defs.push(
                    MetricDef::primary(name(format!("{g}_wakeup_{p}_usec")), "usec", Better::Lower)
                        .quantile(distribution, q)
                        .optional(),
                );
            }
            defs.push(
                MetricDef::primary(name(format!("{g}_wakeup_max_usec")), "usec", Better::Lower)
                    .max_of(distribution)
                    .optional(),
            );
            defs.push(MetricDef::secondary_count(name(format!("{g}_wakeups_count")), Better::Higher));
        }
        if m.timer {
            let distribution = name(format!("{g}_lateness"));
            for (_, p, q) in LATENESS_PERCENTILES {
                defs.push(
                    MetricDef::primary(name(format!("{g}_lateness_{p}_usec")), "usec", Better::Lower)
                        .quantile(distribution, q),
                );
            }
            defs.push(
                MetricDef::primary(name(format!("{g}_lateness_max_usec")), "usec", Better::Lower)
                    .max_of(distribution),
            );
            defs.push(MetricDef::primary_count(
                name(format!("{g}_missed_deadlines_count")),
                Better::Lower,
            ));
            defs.push(MetricDef::secondary_count(name(format!("{g}_periods_count")), Better::Higher));
        }
    }
    for (c, cgroup) in &scenario.cgroup {
        if cgroup.quota.is_some() {
            defs.push(MetricDef::secondary_count(
                name(format!("{prefix}cgroup_{c}_throttled_count")),
                Better::Lower,
            ));
            defs.push(MetricDef::secondary(
                name(format!("{prefix}cgroup_{c}_throttled_usec")),
                "usec",
                Better::Lower,
            ));
        }
    }
    defs.push(prefixed(WORK_UNIT_NSEC, prefix));
    if scenario.group.iter().any(|g| measures(&g.phases).run) {
        defs.push(prefixed(CALIBRATION_ERROR_PCT, prefix));
    }
    defs
}

/// A global metric under a prefix (`background_work_unit_nsec`); itself without one.
fn prefixed(def: MetricDef, prefix: &str) -> MetricDef {
    if prefix.is_empty() {
        return def;
    }
    MetricDef {
        name: intern(format!("{prefix}{}", def.name)),
        ..def
    }
}

/// The metric names a scenario would declare, for the check that none is declared twice (two
/// groups' names can collide: `a` with `a_wakeup`'s …) or is one the runner declares itself.
pub fn check_names(scenario: &Scenario) -> std::result::Result<(), String> {
    let defs = declared(scenario, "");
    for (i, def) in defs.iter().enumerate() {
        let twice = defs[..i].iter().any(|d| d.name == def.name)
            || crate::metric::secondary::all().any(|d| d.name == def.name);
        if twice {
            return Err(format!(
                "two metrics would be named {}: rename a group or cgroup",
                def.name
            ));
        }
    }
    Ok(())
}

pub struct ScenarioWorkload {
    scenario: Scenario,
    /// What every metric, distribution and attachment name starts with: empty for the case's own
    /// workload, [`BACKGROUND_PREFIX`] for its co-runners.
    prefix: &'static str,
    metrics: &'static [MetricDef],
}

impl ScenarioWorkload {
    pub fn new(scenario: Scenario) -> Self {
        ScenarioWorkload::prefixed(scenario, "")
    }

    fn prefixed(scenario: Scenario, prefix: &'static str) -> Self {
        let metrics = Box::leak(declared(&scenario, prefix).into_boxed_slice());
        ScenarioWorkload {
            scenario,
            prefix,
            metrics,
        }
    }

    fn def(&self, name: &str) -> MetricDef {
        *self
            .metrics
            .iter()
            .find(|d| d.name == name)
            .expect("every metric measured is declared")
    }

    fn measure(&self, outcome: &Outcome) -> IterationOutput {
        let mut out = IterationOutput::default();
        let value = |name: String, v: f64, out: &mut Vec<Measurement>| {
            out.push(self.def(&name).value(v));
        };
        let usec = |ns: u64| ns as f64 / 1_000.0;
        let mut requested_all = 0u64;
        let mut cpu_all = 0u64;
        let prefix = self.prefix;
        for (group, o) in self.scenario.group.iter().zip(&outcome.groups) {
            let g = format!("{prefix}{}", group.name);
            let m = measures(&group.phases);
            let list = &mut out.measurements;
            value(format!("{g}_duty_cycle_pct"), o.duty_cycle_pct, list);
            value(format!("{g}_loops_per_sec"), o.loops_per_sec, list);
            if m.run {
                let requested = o.run_requested_ns.max(1) as f64;
                value(format!("{g}_run_units_per_sec"), o.run_units_per_sec, list);
                value(format!("{g}_run_wall_pct"), o.run_wall_ns as f64 / requested * 100.0, list);
                value(format!("{g}_run_cpu_pct"), o.run_cpu_ns as f64 / requested * 100.0, list);
                requested_all += o.run_requested_ns;
                cpu_all += o.run_cpu_ns;
            }
            if m.wakeups {
                if !o.wakeup.is_empty() {
                    for (pm, p, _) in WAKEUP_PERCENTILES {
                        let at = latency::value_at(&o.wakeup, pm).unwrap_or(0);
                        value(format!("{g}_wakeup_{p}_usec"), usec(at), list);
                    }
                    value(format!("{g}_wakeup_max_usec"), usec(o.wakeup.max()), list);
                    out.attachments
                        .push(latency::attachment(&format!("{g}_wakeup_latency_ns"), &o.wakeup));
                }
                value(format!("{g}_wakeups_count"), o.wakeup.len() as f64, list);
            }
            if m.timer {
                for (pm, p, _) in LATENESS_PERCENTILES {
                    let at = latency::value_at(&o.lateness, pm).unwrap_or(0);
                    value(format!("{g}_lateness_{p}_usec"), usec(at), list);
                }
                value(format!("{g}_lateness_max_usec"), usec(o.lateness.max()), list);
                value(format!("{g}_missed_deadlines_count"), o.missed as f64, list);
                value(format!("{g}_periods_count"), o.periods as f64, list);
                if !o.lateness.is_empty() {
                    out.attachments
                        .push(latency::attachment(&format!("{g}_lateness_ns"), &o.lateness));
                }
            }
        }
        for (c, throttling) in &outcome.cgroups {
            if self.scenario.cgroup.get(c).is_some_and(|cg| cg.quota.is_some()) {
                let list = &mut out.measurements;
                value(format!("{prefix}cgroup_{c}_throttled_count"), throttling.throttled_periods as f64, list);
                value(format!("{prefix}cgroup_{c}_throttled_usec"), usec(throttling.throttled_ns), list);
            }
        }
        out.measurements
            .push(prefixed(WORK_UNIT_NSEC, prefix).value(outcome.work_unit_ns));
        if requested_all > 0 {
            let error = (cpu_all as f64 / requested_all as f64 - 1.0).abs() * 100.0;
            out.measurements
                .push(prefixed(CALIBRATION_ERROR_PCT, prefix).value(error));
        }
        out
    }
}

impl Workload for ScenarioWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        self.metrics
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let mut run = prepare(&self.scenario)?;
        run.start(self.scenario.duration.map(|d| d.ns()))?;
        run.wait()?;
        let outcome = run.finish()?;
        Ok(self.measure(&outcome))
    }
}

/// The scenario's groups, ready to start (its cgroups made).
fn prepare(scenario: &Scenario) -> Result<GroupRun> {
    let controller = if scenario.cgroup.is_empty() {
        None
    } else {
        Some(sys::cpu_controller().ok_or_else(|| {
            Error::invalid("the scenario's cgroups need the cgroup cpu controller, which is not mounted")
        })?)
    };
    GroupRun::prepare(scenario, controller)
}

/// What the metrics of a case's co-runners start with.
pub const BACKGROUND_PREFIX: &str = "background_";

/// A case's co-runners: a scenario whose groups are started before each iteration of the case's
/// workload and stopped after it, their own metrics (throughput, duty cycle, wake-ups) stored
/// with the iteration under [`BACKGROUND_PREFIX`].
pub struct Background {
    workload: ScenarioWorkload,
}

/// Co-runners started for one iteration; dropped without [`BackgroundRun::stop`], they are killed
/// and their cgroups removed, as any group run's.
pub struct BackgroundRun<'a> {
    owner: &'a Background,
    run: GroupRun,
}

impl Background {
    pub fn new(scenario: Scenario) -> Self {
        Background {
            workload: ScenarioWorkload::prefixed(scenario, BACKGROUND_PREFIX),
        }
    }

    /// The metrics every iteration of the case gets from its co-runners.
    pub fn metrics(&self) -> &'static [MetricDef] {
        self.workload.metrics
    }

    /// Starts the co-runners; they run until stopped, or until their `duration` or `loops` end.
    pub fn start(&self) -> Result<BackgroundRun<'_>> {
        let scenario = &self.workload.scenario;
        let mut run = prepare(scenario)?;
        run.start(scenario.duration.map(|d| d.ns()))?;
        Ok(BackgroundRun { owner: self, run })
    }
}

impl BackgroundRun<'_> {
    /// Stops the co-runners, checks that every task did its phases, and measures them.
    pub fn stop(mut self) -> Result<IterationOutput> {
        self.run.request_stop()?;
        self.run.wait()?;
        let outcome = self.run.finish()?;
        Ok(self.owner.workload.measure(&outcome))
    }
}
