//! The `fake` workload: deterministic synthetic results drawn from a seeded generator, so the
//! whole pipeline (plan → runner → store → report) can be tested without timing anything. It can
//! also fail at a chosen iteration or sleep, to exercise failure and interruption handling, and —
//! test hooks for the watchdog — run two tasks per iteration, one of which stalls forever at a
//! chosen iteration: stopped (a process in SIGSTOP), blocked (a thread waiting for a wake-up that
//! never comes) or spinning (an endless loop), the ways real workers get stuck.
use std::sync::atomic::AtomicU32;

use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::definition::{field, Choice, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{Better, MetricDef};
use crate::sys::{task_code, TaskCode};
use crate::{sys, Error, Result};

pub const USEC_PER_OP: MetricDef = MetricDef::primary("usec_per_op", "usec", Better::Lower);
pub const OPS_PER_SEC: MetricDef =
    MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher).reciprocal_of(USEC_PER_OP);
const METRICS: &[MetricDef] = &[USEC_PER_OP, OPS_PER_SEC];

/// Where the stalling task of the test hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StallIn {
    Thread,
    Process,
}

impl Choice for StallIn {
    const ALL: &'static [Self] = &[StallIn::Thread, StallIn::Process];

    fn name(self) -> &'static str {
        match self {
            StallIn::Thread => "thread",
            StallIn::Process => "process",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FakeParams {
    /// The centre of the generated `usec_per_op` values.
    pub value_usec: f64,
    /// Standard deviation of the generated values, in percent of the centre.
    pub spread_pct: f64,
    /// Generator seed: run-to-run noise, so it is not part of the case name.
    pub seed: u64,
    /// Makes every value this much larger, as a slower kernel would: the "change" a comparison
    /// should find. Not part of the case name either.
    pub effect_pct: f64,
    /// Fail with a run error at this 0-based iteration (warm-ups count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_at: Option<u32>,
    /// Sleep this long in every iteration (interruptible), for testing signals.
    pub sleep_ms: u64,
    /// Test hook: every iteration runs two tasks, and at this 0-based iteration (warm-ups count)
    /// the second one never finishes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_at: Option<u32>,
    /// Test hook: the tasks are threads (default) or processes. A stalled process stops itself
    /// with SIGSTOP; a stalled thread waits on a futex nobody wakes (a lost wake-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_in: Option<StallIn>,
    /// Test hook: the stalled task spins in an endless loop instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stall_spin: bool,
}

impl Default for FakeParams {
    fn default() -> Self {
        FakeParams {
            value_usec: 100.0,
            spread_pct: 1.0,
            seed: 1,
            effect_pct: 0.0,
            fail_at: None,
            sleep_ms: 0,
            stall_at: None,
            stall_in: None,
            stall_spin: false,
        }
    }
}

const MAX_ITERATION_INDEX: u64 = u32::MAX as u64;

impl WorkloadParams for FakeParams {
    const NAME: &'static str = "fake";
    const SUMMARY: &'static str = "deterministic synthetic results, for testing the pipeline";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(value_usec), "value-usec", ParamKind::Number)
            .value("USEC")
            .help("Centre of the generated usec_per_op values.")
            .details("Centre of the generated `usec_per_op` values (above 0, at most 10^12)."),
        Param::new(field!(spread_pct), "spread-pct", ParamKind::Number)
            .value("PCT")
            .help("Standard deviation of the values, percent of the centre.")
            .details("Standard deviation, percent of the centre (0 to 50)."),
        Param::new(field!(seed), "seed", ParamKind::Count { min: 0, max: u64::MAX })
            .value("SEED")
            .help("Seed of the generator (run-to-run noise; not part of the case name).")
            .details("Generator seed: the same seed gives the same values (run-to-run noise: not part of the case name)."),
        Param::new(field!(effect_pct), "effect-pct", ParamKind::Number)
            .value("PCT")
            .help("Make every value this many percent larger, as a slower kernel would (not part of the case name).")
            .details("Make every value this many percent larger, as a slower kernel would (not part of the case name)."),
        Param::new(field!(fail_at), "fail-at", ParamKind::Count { min: 0, max: MAX_ITERATION_INDEX })
            .value("N")
            .help("Fail at this 0-based iteration (warm-ups count).")
            .details("Fail at this 0-based iteration (warm-ups count)."),
        Param::new(field!(sleep_ms), "sleep-ms", ParamKind::Count { min: 0, max: 3_600_000 })
            .value("MS")
            .help("Sleep this long in each iteration.")
            .details("Sleep in each iteration (interruptible)."),
        Param::new(field!(stall_at), "stall-at", ParamKind::Count { min: 0, max: MAX_ITERATION_INDEX })
            .value("N")
            .help("Test hook: run two tasks per iteration, and at this 0-based iteration one never finishes.")
            .details("Test hook for the watchdog: every iteration runs two tasks, `fake worker 0` and `fake worker 1`, and at this 0-based iteration (warm-ups count) worker 1 never finishes."),
        Param::new(
            field!(stall_in),
            "stall-in",
            ParamKind::Choice(&[
                ("thread", "The tasks are threads; the stalled one waits for a wake-up that never comes"),
                ("process", "The tasks are processes; the stalled one stops itself with SIGSTOP"),
            ]),
        )
        .value("WHERE")
        .help("Test hook, with --stall-at: the tasks are threads (a lost wake-up) or processes (SIGSTOP) [default: thread]")
            .details("Test hook, with `--stall-at`: `thread` (the default), the tasks are threads and the stalled one waits on a futex nobody wakes (a lost wake-up); `process`, they are forked processes and the stalled one stops itself with SIGSTOP (a stopped worker)."),
        Param::new(field!(stall_spin), "stall-spin", ParamKind::Switch)
            .help("Test hook: the stalled task spins in an endless loop instead.")
            .details("Test hook, with `--stall-at`: the stalled task spins in an endless loop instead."),
    ];

    fn check_rules(&self) -> Result<()> {
        // Bounded so that the values, with any effect and spread, stay finite.
        if !(self.value_usec > 0.0 && self.value_usec <= 1e12) {
            return Err(Error::param("value_usec", "must be above 0 and at most 10^12"));
        }
        if !(self.spread_pct.is_finite() && (0.0..=50.0).contains(&self.spread_pct)) {
            return Err(Error::param("spread_pct", "must be between 0 and 50"));
        }
        if !(self.effect_pct.is_finite() && self.effect_pct > -90.0 && self.effect_pct < 1000.0) {
            return Err(Error::param("effect_pct", "must be between -90 and 1000"));
        }
        if self.stall_at.is_none() && (self.stall_in.is_some() || self.stall_spin) {
            return Err(Error::invalid(
                "--stall-in and --stall-spin say how a task stalls; --stall-at says when",
            ));
        }
        Ok(())
    }

    /// Two workers at the iteration that stalls, else none.
    fn task_budget(&self) -> TaskBudget {
        match self.stall_at {
            Some(_) => TaskBudget::tasks(2, "tasks", ""),
            None => TaskBudget::NONE,
        }
    }

    fn case_name(&self) -> String {
        format!("fake:value={} spread={}", self.value_usec, self.spread_pct)
    }

    fn estimate_sec(&self) -> f64 {
        self.sleep_ms as f64 / 1000.0
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(FakeWorkload::new(self.clone())))
    }
}

pub struct FakeWorkload {
    params: FakeParams,
}

impl FakeWorkload {
    pub fn new(params: FakeParams) -> Self {
        FakeWorkload { params }
    }
}

/// An approximately standard normal draw for (seed, index): the sum of 12 uniforms minus 6.
fn normal_draw(seed: u64, index: u32) -> f64 {
    let mut state = seed.wrapping_mul(0x1000_0000_01B3) ^ u64::from(index);
    let mut sum = 0.0;
    for _ in 0..12 {
        state = crate::rng::splitmix64(state);
        sum += (state >> 11) as f64 / (1u64 << 53) as f64;
    }
    sum - 6.0
}

impl Workload for FakeWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn runs_tasks(&self) -> bool {
        self.params.stall_at.is_some()
    }

    fn run_iteration(&mut self, info: IterationInfo) -> Result<IterationOutput> {
        if let Some(stall_at) = self.params.stall_at {
            let mode = match self.params.stall_in.unwrap_or(StallIn::Thread) {
                StallIn::Thread => TaskMode::Threads,
                StallIn::Process => TaskMode::Process,
            };
            let stall = stall_at == info.index;
            let spin = self.params.stall_spin;
            let mut launch = TaskLaunch::new(mode)?;
            launch.spawn("fake worker 0", || task_code::OK)?;
            launch.spawn("fake worker 1", move || {
                if stall {
                    stall_forever(mode, spin)
                } else {
                    task_code::OK
                }
            })?;
            launch.start()?;
            launch.wait_all()?;
        }
        if self.params.fail_at == Some(info.index) {
            return Err(Error::failed(format!(
                "fake workload failed at iteration {} as asked (--fail-at)",
                info.index
            )));
        }
        let deadline = sys::monotonic_ns() + self.params.sleep_ms * 1_000_000;
        while sys::monotonic_ns() < deadline {
            crate::error::check_stop()?;
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let z = normal_draw(self.params.seed, info.index);
        let centre = self.params.value_usec * (1.0 + self.params.effect_pct / 100.0);
        let usec = centre * (1.0 + self.params.spread_pct / 100.0 * z);
        let usec = usec.max(centre * 0.01);
        Ok(vec![USEC_PER_OP.value(usec), OPS_PER_SEC.value(1e6 / usec)].into())
    }
}

/// Never returns: the way a worker gets stuck, for the watchdog's tests.
fn stall_forever(mode: TaskMode, spin: bool) -> TaskCode {
    if spin {
        let mut x = 0u64;
        loop {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }
    let never_woken = AtomicU32::new(0);
    loop {
        match mode {
            TaskMode::Process => {
                let _ = sys::stop_self();
            }
            TaskMode::Threads => {
                let _ = sys::futex_wait(&never_woken, 0, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_values() {
        let run = |seed| {
            let mut w = FakeWorkload::new(FakeParams {
                seed,
                ..Default::default()
            });
            (0..5)
                .map(|i| {
                    w.run_iteration(IterationInfo {
                        index: i,
                        warmup: false,
                    })
                    .unwrap()
                    .measurements[0]
                        .value
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn fails_where_asked() {
        let mut w = FakeWorkload::new(FakeParams {
            fail_at: Some(1),
            ..Default::default()
        });
        assert!(w
            .run_iteration(IterationInfo {
                index: 0,
                warmup: true
            })
            .is_ok());
        assert!(w
            .run_iteration(IterationInfo {
                index: 1,
                warmup: false
            })
            .is_err());
    }

    #[test]
    fn stall_hooks_need_stall_at_and_run_tasks_otherwise() {
        let hooks = FakeParams {
            stall_in: Some(StallIn::Process),
            ..Default::default()
        };
        assert!(hooks
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--stall-at"));
        // Before its stall iteration, the fake runs its two tasks and returns.
        let params = FakeParams {
            stall_at: Some(5),
            stall_in: Some(StallIn::Process),
            ..Default::default()
        };
        params.validate().unwrap();
        let mut w = FakeWorkload::new(params.clone());
        assert!(w.runs_tasks());
        let out = w
            .run_iteration(IterationInfo::FIRST)
            .unwrap();
        assert_eq!(out.measurements.len(), 2);
        assert_eq!(params.case_name(), FakeParams::default().case_name());
    }

    #[test]
    fn draws_are_centred() {
        let mean: f64 = (0..10_000).map(|i| normal_draw(3, i)).sum::<f64>() / 10_000.0;
        assert!(mean.abs() < 0.05, "mean {mean}");
    }
}
