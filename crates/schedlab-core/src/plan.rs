//! The validated run plan: what the CLI's raw arguments or a suite file become after every check,
//! so the runner below it never sees unchecked input.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::quiet::{check_below_pct, check_wait_ms, QuietGuard};
use crate::workload::scenario::ScenarioParams;
use crate::workload::WorkloadSpec;
use crate::{Error, Result};

pub const DEFAULT_ITERATIONS: u32 = 5;
pub const DEFAULT_WARMUP: u32 = 1;
const MAX_ITERATIONS: u32 = 100_000;
/// The longest label a run may have.
pub const MAX_LABEL_CHARS: usize = 200;
/// The longest `--iteration-timeout`: 30 days.
const MAX_ITERATION_TIMEOUT_SEC: f64 = 30.0 * 86_400.0;
/// The longest pause between cases.
const MAX_COOLDOWN_SEC: f64 = 3600.0;
/// The largest `--scale`.
const MAX_SCALE: f64 = 1000.0;

/// One case: a workload with its parameters, named canonically so the same configuration gets the
/// same name in every run (which is how runs are matched up for comparison).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    pub name: String,
    pub workload: WorkloadSpec,
    /// Co-runners: workloads (a scenario's groups, or any other workload repeated) running beside
    /// every iteration of the workload, started before it and stopped after it (a suite case's
    /// `background`, `run --background`; [`crate::co_runner`]).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "read_co_runners"
    )]
    pub background: Vec<WorkloadSpec>,
}

/// A stored case's co-runners: a list of workloads, or, as runs stored before any workload could
/// be one, a scenario's own keys.
fn read_co_runners<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<WorkloadSpec>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Workloads(Vec<WorkloadSpec>),
        Scenario(ScenarioParams),
        Nothing(()),
    }
    Ok(match Stored::deserialize(deserializer)? {
        Stored::Workloads(specs) => specs,
        Stored::Scenario(params) => vec![WorkloadSpec::Scenario(params)],
        Stored::Nothing(()) => Vec::new(),
    })
}

impl CaseSpec {
    pub fn new(workload: WorkloadSpec) -> Result<Self> {
        workload.validate()?;
        Ok(CaseSpec {
            name: workload.case_name(),
            workload,
            background: Vec::new(),
        })
    }

    /// The case with `background` running beside each of its iterations, each checked as the
    /// workload it is; its name says so (`NAME beside pipe:loops=1000, scenario:hog@HASH`), so a
    /// case with co-runners is never matched with the same workload alone. A workload named twice
    /// is refused: its metrics would be stored under one name.
    pub fn beside(mut self, background: Vec<WorkloadSpec>) -> Result<Self> {
        if background.is_empty() {
            return Ok(self);
        }
        let mut names = Vec::new();
        for (i, co_runner) in background.iter().enumerate() {
            let refused = |e: Error| Error::invalid(format!("background of {}: {e}", self.name));
            if background[..i].iter().any(|b| b.kind() == co_runner.kind()) {
                return Err(refused(Error::invalid(format!(
                    "{} is named twice; give each workload once",
                    co_runner.kind()
                ))));
            }
            match co_runner {
                WorkloadSpec::Scenario(scenario) => {
                    WorkloadSpec::Scenario(scenario.as_checked_co_runner())
                        .validate()
                        .map_err(refused)?;
                }
                other => other.validate().map_err(refused)?,
            }
            names.push(co_runner.case_name());
        }
        self.name = format!("{} beside {}", self.name, names.join(", "));
        self.background = background;
        Ok(self)
    }
}

/// Everything the runner needs, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The suite the cases came from, if any.
    pub suite: Option<String>,
    pub label: Option<String>,
    pub iterations: u32,
    pub warmup: u32,
    pub cases: Vec<CaseSpec>,
    /// Pause between cases, milliseconds.
    #[serde(default)]
    pub cooldown_ms: u64,
    /// The seed the case order was shuffled with; `None` when cases run as listed.
    #[serde(default)]
    pub order_seed: Option<u64>,
    /// The `--scale` factor already applied to the cases' work sizes.
    #[serde(default = "one")]
    pub scale: f64,
    /// Adaptive stopping: add iterations until each case's CI half-width is under this percent.
    #[serde(default)]
    pub until_ci_pct: Option<f64>,
    /// Adaptive stopping: the most measured iterations a case may get.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// The watchdog's deadline for every iteration, in milliseconds (`--iteration-timeout`);
    /// `None` is the default rule ([`crate::runner::default_deadline_ns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_timeout_ms: Option<u64>,
    /// A case that fails (its workload, or the watchdog) is recorded and the run goes on to the
    /// next case (`--keep-going`); the run then ends `partial` (`failed` if every case failed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_going: bool,
    /// Seconds per iteration this host's stored history leads a run to expect, by case name
    /// ([`crate::estimate::expectations`]); only cases with history of their own or of their
    /// workload. The watchdog's first deadline and a reader's patience with a silent run of
    /// another host go by it where it exceeds the rule of thumb.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expected_sec: BTreeMap<String, f64>,
    /// Probed iterations per case, run after its measured ones (`--explain`; 0: none). What they
    /// measure is stored apart from the measured iterations ([`crate::probe`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub explain: u32,
    /// One profiled iteration per case after those (`--profile`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
    /// The quiet-machine guard (`--quiet-below`, `--quiet-wait`): wait before each iteration
    /// until the CPU pressure is below a limit, or mark it disturbed ([`crate::quiet`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<QuietGuard>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The most probed iterations a case may get.
pub const MAX_EXPLAIN_ITERATIONS: u32 = 100;

fn one() -> f64 {
    1.0
}

/// Fisher–Yates over splitmix64: the one shuffle of case orders, the same on every machine.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    for i in (1..items.len()).rev() {
        state = crate::rng::splitmix64(state);
        let j = (state % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Runs are matched up, and a run's iterations grouped, by case name: two cases of one plan with
/// one name and different parameters (a matrix over a parameter the workload's case name leaves
/// out, such as `fake`'s `seed`) would have their iterations stored as one case's.
fn refuse_cases_sharing_a_name(cases: &[CaseSpec]) -> Result<()> {
    for (i, a) in cases.iter().enumerate() {
        let Some(b) = cases[i + 1..]
            .iter()
            .find(|b| b.name == a.name && b.workload != a.workload)
        else {
            continue;
        };
        let differ = match (
            serde_json::to_value(&a.workload),
            serde_json::to_value(&b.workload),
        ) {
            (Ok(serde_json::Value::Object(x)), Ok(serde_json::Value::Object(y))) => {
                // A key either side sets (one that the other leaves to its default is unset).
                let mut keys: Vec<&String> = x.keys().collect();
                keys.extend(y.keys().filter(|k| !x.contains_key(*k)));
                let shown =
                    |v: Option<&serde_json::Value>| v.map_or("unset".into(), |v| v.to_string());
                keys.into_iter()
                    .filter(|key| x.get(*key) != y.get(*key))
                    .map(|key| format!("{key} {} and {}", shown(x.get(key)), shown(y.get(key))))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            _ => "their parameters".to_string(),
        };
        return Err(Error::invalid(format!(
            "two cases are named `{}` but differ ({differ}): the case name leaves that out, so \
             their iterations would be stored as one case's; vary a parameter the name shows, or \
             run them apart",
            a.name
        )));
    }
    Ok(())
}

impl RunPlan {
    pub fn new(
        suite: Option<String>,
        label: Option<String>,
        iterations: u32,
        warmup: u32,
        workloads: Vec<WorkloadSpec>,
    ) -> Result<Self> {
        check_iterations(iterations)
            .map_err(|why| Error::invalid(format!("--iterations {why}")))?;
        check_warmup(warmup).map_err(|why| Error::invalid(format!("--warmup {why}")))?;
        if let Some(label) = &label {
            validate_label(label)?;
        }
        if workloads.is_empty() {
            return Err(Error::invalid("the plan has no cases"));
        }
        let cases = workloads
            .into_iter()
            .map(CaseSpec::new)
            .collect::<Result<Vec<_>>>()?;
        refuse_cases_sharing_a_name(&cases)?;
        Ok(RunPlan {
            suite,
            label,
            iterations,
            warmup,
            cases,
            cooldown_ms: 0,
            order_seed: None,
            scale: 1.0,
            until_ci_pct: None,
            max_iterations: None,
            iteration_timeout_ms: None,
            keep_going: false,
            expected_sec: BTreeMap::new(),
            explain: 0,
            profile: false,
            quiet: None,
        })
    }

    /// Gives each case the co-runners listed for it (none: an empty list), in the order of the cases
    /// as made; names that then collide are refused as any would be.
    pub fn with_backgrounds(mut self, backgrounds: Vec<Vec<WorkloadSpec>>) -> Result<Self> {
        self.cases = self
            .cases
            .into_iter()
            .zip(backgrounds.into_iter().chain(std::iter::repeat(Vec::new())))
            .map(|(case, background)| case.beside(background))
            .collect::<Result<_>>()?;
        refuse_cases_sharing_a_name(&self.cases)?;
        Ok(self)
    }

    /// Gives every iteration a deadline of `seconds` instead of the default rule.
    /// The deadline is kept in milliseconds, so less than one is refused rather than made one.
    pub fn with_iteration_timeout_sec(mut self, seconds: f64) -> Result<Self> {
        check_iteration_timeout_sec(seconds)
            .map_err(|why| Error::invalid(format!("--iteration-timeout {why}")))?;
        self.iteration_timeout_ms = Some(((seconds * 1000.0).round() as u64).max(1));
        Ok(self)
    }

    /// Holds every iteration to the quiet-machine guard: below `below_pct` CPU pressure, waiting
    /// at most `wait_ms` for it.
    pub fn with_quiet(mut self, below_pct: f64, wait_ms: u64) -> Result<Self> {
        check_below_pct(below_pct).map_err(|why| Error::invalid(format!("--quiet-below {why}")))?;
        check_wait_ms(wait_ms).map_err(|why| Error::invalid(format!("--quiet-wait {why}")))?;
        self.quiet = Some(QuietGuard { below_pct, wait_ms });
        Ok(self)
    }

    /// Adds `explain` probed iterations and, with `profile`, one profiled iteration to every
    /// case, after its measured ones.
    pub fn with_probes(mut self, explain: u32, profile: bool) -> Result<Self> {
        if explain > MAX_EXPLAIN_ITERATIONS {
            return Err(Error::invalid(format!(
                "--explain takes at most {MAX_EXPLAIN_ITERATIONS} probed iterations per case, not \
                 {explain}"
            )));
        }
        self.explain = explain;
        self.profile = profile;
        Ok(self)
    }

    pub fn with_keep_going(mut self, keep_going: bool) -> Self {
        self.keep_going = keep_going;
        self
    }

    pub fn with_cooldown_ms(mut self, cooldown_ms: u64) -> Self {
        self.cooldown_ms = cooldown_ms;
        self
    }

    pub fn with_scale(mut self, scale: f64) -> Self {
        self.scale = scale;
        self
    }

    /// Shuffles the cases with `seed` (Fisher–Yates over splitmix64) and records the seed, so the
    /// same seed gives the same order on every machine.
    pub fn shuffled(mut self, seed: u64) -> Self {
        shuffle(&mut self.cases, seed);
        self.order_seed = Some(seed);
        self
    }

    /// For each case in the order it ran, its place in the order it was listed in (the suite's,
    /// before [`RunPlan::shuffled`]): reports list a random-order run's cases as the suite does.
    pub fn listed_positions(&self) -> Vec<usize> {
        let mut positions: Vec<usize> = (0..self.cases.len()).collect();
        if let Some(seed) = self.order_seed {
            shuffle(&mut positions, seed);
        }
        positions
    }

    /// `items`, one per case of this plan in the order they ran (as `name` tells), put in the
    /// order the cases were listed; left as they are when they are not this plan's cases one by
    /// one (a run that stored other cases than it planned).
    pub fn as_listed<T>(&self, items: Vec<T>, name: impl Fn(&T) -> &str) -> Vec<T> {
        let as_planned = items.len() == self.cases.len()
            && items
                .iter()
                .zip(&self.cases)
                .all(|(item, planned)| name(item) == planned.name);
        if !as_planned {
            return items;
        }
        let mut by_position: Vec<(usize, T)> =
            self.listed_positions().into_iter().zip(items).collect();
        by_position.sort_by_key(|(position, _)| *position);
        by_position.into_iter().map(|(_, item)| item).collect()
    }

    /// Adaptive stopping: after the planned iterations, keep adding iterations to every case
    /// whose confidence interval is still wider than `ci_pct` percent, up to `max_iterations`.
    /// It stops on interval width, never on a p-value.
    pub fn with_adaptive_stopping(mut self, ci_pct: f64, max_iterations: u32) -> Result<Self> {
        check_until_ci(ci_pct).map_err(|why| Error::invalid(format!("--until-ci {why}")))?;
        if max_iterations < self.iterations || max_iterations > MAX_ITERATIONS {
            return Err(Error::invalid(format!(
                "--max-iterations must be between --iterations ({}) and {MAX_ITERATIONS}, not {max_iterations}",
                self.iterations
            )));
        }
        self.until_ci_pct = Some(ci_pct);
        self.max_iterations = Some(max_iterations);
        Ok(self)
    }
}

/// Measured iterations per case: why `iterations` is refused, a reason that follows the flag
/// (`--iterations`) or the suite key (`iterations`).
pub fn check_iterations(iterations: u32) -> std::result::Result<(), String> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(format!(
            "must be between 1 and {MAX_ITERATIONS}, not {iterations}"
        ));
    }
    Ok(())
}

/// Warm-up iterations per case, as [`check_iterations`].
pub fn check_warmup(warmup: u32) -> std::result::Result<(), String> {
    if warmup > MAX_ITERATIONS {
        return Err(format!("must be at most {MAX_ITERATIONS}, not {warmup}"));
    }
    Ok(())
}

/// The pause between cases in seconds (`--cooldown`, a suite's `cooldown_sec`), as
/// [`check_iterations`].
pub fn check_cooldown_sec(seconds: f64) -> std::result::Result<(), String> {
    if !(seconds.is_finite() && (0.0..=MAX_COOLDOWN_SEC).contains(&seconds)) {
        return Err(format!(
            "must be between 0 and {MAX_COOLDOWN_SEC}, not {seconds}"
        ));
    }
    Ok(())
}

/// The factor `--scale` multiplies every work size by, as [`check_iterations`].
pub fn check_scale(factor: f64) -> std::result::Result<(), String> {
    if !(factor.is_finite() && factor > 0.0 && factor <= MAX_SCALE) {
        return Err(format!(
            "must be above 0 and at most {MAX_SCALE}, not {factor}"
        ));
    }
    Ok(())
}

/// Every iteration's deadline in seconds (`--iteration-timeout`), as [`check_iterations`]; it
/// is kept in milliseconds, so less than one is refused rather than made one.
pub fn check_iteration_timeout_sec(seconds: f64) -> std::result::Result<(), String> {
    if !(seconds.is_finite() && (0.001..=MAX_ITERATION_TIMEOUT_SEC).contains(&seconds)) {
        return Err(format!(
            "must be a number of seconds from 0.001 (a millisecond, its resolution) to \
             {MAX_ITERATION_TIMEOUT_SEC} (30 days), not {seconds}"
        ));
    }
    Ok(())
}

/// Adaptive stopping's confidence-interval half-width in percent (`--until-ci`), as
/// [`check_iterations`].
pub fn check_until_ci(ci_pct: f64) -> std::result::Result<(), String> {
    if !(ci_pct.is_finite() && ci_pct > 0.0 && ci_pct < 100.0) {
        return Err(format!(
            "must be a percentage above 0 and below 100, not {ci_pct}"
        ));
    }
    Ok(())
}

/// Labels name runs on the command line, where an all-digit word means a run id.
pub fn validate_label(label: &str) -> Result<()> {
    check_label(label).map_err(|why| Error::invalid(format!("--label {why}")))
}

/// Why `label` cannot name runs, as [`check_iterations`] says it.
pub fn check_label(label: &str) -> std::result::Result<(), String> {
    if label.trim().is_empty() {
        return Err("must not be empty".to_string());
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(format!("is longer than {MAX_LABEL_CHARS} characters"));
    }
    if label.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "{label:?} is all digits, which would read as a run id; add a letter"
        ));
    }
    if label.chars().any(char::is_control) {
        return Err("must not contain control characters".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fake::FakeParams;

    fn fake() -> WorkloadSpec {
        WorkloadSpec::Fake(FakeParams::default())
    }

    /// A case's co-runners are stored as a list of workloads; runs stored when only a scenario
    /// could be one kept the scenario's own keys, and read as that one co-runner.
    #[test]
    fn co_runners_are_read_as_stored_now_and_before() {
        let pipe: WorkloadSpec =
            serde_json::from_value(serde_json::json!({"workload": "pipe", "loops": 500})).unwrap();
        let case = CaseSpec::new(fake())
            .unwrap()
            .beside(vec![pipe.clone()])
            .unwrap();
        assert!(
            case.name.ends_with(" beside pipe:process loops=500"),
            "{}",
            case.name
        );
        let stored = serde_json::to_value(&case).unwrap();
        assert_eq!(stored["background"][0]["workload"], "pipe", "{stored}");
        let read: CaseSpec = serde_json::from_value(stored).unwrap();
        assert_eq!(read, case);

        let mut before = serde_json::to_value(CaseSpec::new(fake()).unwrap()).unwrap();
        before["background"] = serde_json::json!({
            "name": "hog",
            "group": [{"name": "hog", "phases": [{"run": "1ms"}]}]
        });
        let read: CaseSpec = serde_json::from_value(before).unwrap();
        assert!(
            matches!(&read.background[..], [WorkloadSpec::Scenario(s)] if s.scenario.group[0].name == "hog"),
            "{read:?}"
        );
        let alone: CaseSpec =
            serde_json::from_value(serde_json::to_value(CaseSpec::new(fake()).unwrap()).unwrap())
                .unwrap();
        assert!(alone.background.is_empty());
        let twice = CaseSpec::new(fake())
            .unwrap()
            .beside(vec![pipe.clone(), pipe]);
        assert!(twice
            .unwrap_err()
            .to_string()
            .contains("pipe is named twice"));
    }

    #[test]
    fn rejects_zero_iterations() {
        let err = RunPlan::new(None, None, 0, 0, vec![fake()]).unwrap_err();
        assert!(err.to_string().contains("--iterations"));
    }

    #[test]
    fn rejects_numeric_label() {
        let err = RunPlan::new(None, Some("123".into()), 1, 0, vec![fake()]).unwrap_err();
        assert!(err.to_string().contains("run id"));
    }

    #[test]
    fn shuffling_is_reproducible_and_recorded() {
        let specs: Vec<WorkloadSpec> = (0..10)
            .map(|i| {
                WorkloadSpec::Fake(FakeParams {
                    value_usec: 1.0 + f64::from(i),
                    ..Default::default()
                })
            })
            .collect();
        let plan = RunPlan::new(None, None, 1, 0, specs).unwrap();
        let names = |p: &RunPlan| p.cases.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let a = plan.clone().shuffled(42);
        assert_eq!(names(&a), names(&plan.clone().shuffled(42)));
        assert_ne!(names(&a), names(&plan));
        assert_eq!(a.order_seed, Some(42));
        let mut sorted = names(&a);
        sorted.sort();
        let mut original = names(&plan);
        original.sort();
        assert_eq!(sorted, original);
        // The listed order comes back from the shuffled plan alone.
        let listed = a.listed_positions();
        let mut unshuffled = vec![String::new(); listed.len()];
        for (case, &position) in a.cases.iter().zip(&listed) {
            unshuffled[position] = case.name.clone();
        }
        assert_eq!(unshuffled, names(&plan));
        assert_eq!(plan.listed_positions(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn adaptive_stopping_needs_sane_bounds() {
        let plan = RunPlan::new(None, None, 5, 1, vec![fake()]).unwrap();
        assert!(plan.clone().with_adaptive_stopping(2.0, 4).is_err());
        assert!(plan.clone().with_adaptive_stopping(0.0, 10).is_err());
        assert_eq!(
            plan.with_adaptive_stopping(2.0, 10).unwrap().max_iterations,
            Some(10)
        );
    }

    #[test]
    fn iteration_timeouts_must_be_sane() {
        let plan = RunPlan::new(None, None, 5, 1, vec![fake()]).unwrap();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e12] {
            let err = plan.clone().with_iteration_timeout_sec(bad).unwrap_err();
            assert!(err.to_string().contains("--iteration-timeout"), "{bad}");
        }
        let plan = plan.with_iteration_timeout_sec(0.25).unwrap();
        assert_eq!(plan.iteration_timeout_ms, Some(250));
        // A plan stored before these settings existed still reads.
        let mut json = serde_json::to_value(&plan).unwrap();
        json.as_object_mut().unwrap().remove("iteration_timeout_ms");
        let back: RunPlan = serde_json::from_value(json).unwrap();
        assert_eq!((back.iteration_timeout_ms, back.keep_going), (None, false));
    }

    #[test]
    fn names_cases_canonically() {
        let plan = RunPlan::new(None, Some("base".into()), 3, 1, vec![fake()]).unwrap();
        assert_eq!(plan.cases[0].name, fake().case_name());
    }
}
