//! How long a case's iteration will take, for `run --dry-run` and the watchdog's first deadline:
//! stored history of the same case on this host when there is some; else the workload's rule of
//! thumb (measured on a 2-CPU VM) scaled by how this host ran the workload's other cases; else
//! the bare rule of thumb.
use std::collections::BTreeMap;

use crate::plan::{CaseSpec, RunPlan};
use crate::workload::WorkloadSpec;

/// Where an estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimateSource {
    /// The median wall time of this case's latest iterations stored from this host.
    History,
    /// The rule of thumb times the median ratio of history to rule of thumb over the same
    /// workload's other cases stored from this host.
    ScaledRuleOfThumb,
    /// A per-workload formula (docs/suites.md).
    RuleOfThumb,
    Unknown,
}

impl EstimateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            EstimateSource::History => "history",
            EstimateSource::ScaledRuleOfThumb => "scaled rule of thumb",
            EstimateSource::RuleOfThumb => "rule of thumb",
            EstimateSource::Unknown => "unknown",
        }
    }
}

/// A case this host has run before: the median wall time of its latest measured iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredCase {
    pub name: String,
    pub workload: WorkloadSpec,
    pub median_sec: f64,
}

/// One iteration's expected seconds and where they came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub sec: Option<f64>,
    pub source: EstimateSource,
    /// With [`EstimateSource::ScaledRuleOfThumb`]: how many times the rule of thumb this host
    /// took, and over how many of the workload's cases.
    pub host_factor: Option<(f64, usize)>,
}

/// Seconds per iteration by the workload's rule of thumb (each workload's `estimate_sec`, from
/// figures measured on a 2-vCPU VM).
pub fn rule_of_thumb_sec(spec: &WorkloadSpec) -> Option<f64> {
    Some(spec.estimate_sec()).filter(|sec| sec.is_finite())
}

/// The estimate for one iteration of `case` on a host that has run `measured`.
pub fn iteration_estimate(case: &CaseSpec, measured: &[MeasuredCase]) -> Estimate {
    if let Some(m) = measured.iter().find(|m| m.name == case.name) {
        return Estimate {
            sec: Some(m.median_sec),
            source: EstimateSource::History,
            host_factor: None,
        };
    }
    let Some(rule) = rule_of_thumb_sec(&case.workload) else {
        return Estimate {
            sec: None,
            source: EstimateSource::Unknown,
            host_factor: None,
        };
    };
    match host_factor(case.workload.kind(), measured) {
        Some((factor, cases)) => Estimate {
            sec: Some(rule * factor),
            source: EstimateSource::ScaledRuleOfThumb,
            host_factor: Some((factor, cases)),
        },
        None => Estimate {
            sec: Some(rule),
            source: EstimateSource::RuleOfThumb,
            host_factor: None,
        },
    }
}

/// How many times its rule of thumb this host took for the workload `kind`: the median of
/// history over rule of thumb across its measured cases, with their count. A host is rarely
/// like the VM the rules were measured on (even that VM: pipe round trips cost 7 µs there one
/// day and 44 µs another), but it is slower or faster at one workload's cases alike.
fn host_factor(kind: &str, measured: &[MeasuredCase]) -> Option<(f64, usize)> {
    let ratios: Vec<f64> = measured
        .iter()
        .filter(|m| m.workload.kind() == kind)
        .filter_map(|m| Some(m.median_sec / rule_of_thumb_sec(&m.workload)?))
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let median = schedlab_stats::summary::median(&ratios).ok()?;
    Some((median, ratios.len()))
}

/// What a run of `cases` expects of each case on a host that has run `measured`, by case name:
/// the cases with history or a scaled rule of thumb (the others have only the rule of thumb,
/// which the plan need not carry).
pub fn expectations(cases: &[CaseSpec], measured: &[MeasuredCase]) -> BTreeMap<String, f64> {
    cases
        .iter()
        .filter_map(|case| {
            let estimate = iteration_estimate(case, measured);
            match estimate.source {
                EstimateSource::History | EstimateSource::ScaledRuleOfThumb => {
                    Some((case.name.clone(), estimate.sec?))
                }
                EstimateSource::RuleOfThumb | EstimateSource::Unknown => None,
            }
        })
        .collect()
}

/// The seconds the watchdog expects of an iteration of `case` before any has finished: the
/// larger of the rule of thumb and what the plan expects from this host's history, so history
/// from a faster day never shortens the deadline below the rule's.
pub fn deadline_basis_sec(plan: &RunPlan, case: &CaseSpec) -> Option<f64> {
    let expected = plan.expected_sec.get(&case.name).copied();
    match (rule_of_thumb_sec(&case.workload), expected) {
        (Some(rule), Some(expected)) => Some(rule.max(expected)),
        (rule, expected) => rule.or(expected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::messaging::MessagingParams;
    use crate::workload::pipe::PipeParams;

    fn pipe(loops: u64) -> CaseSpec {
        CaseSpec::new(WorkloadSpec::Pipe(PipeParams {
            loops,
            ..Default::default()
        }))
        .unwrap()
    }

    fn messaging(groups: u64) -> CaseSpec {
        CaseSpec::new(WorkloadSpec::Messaging(MessagingParams {
            groups,
            loops: 1000,
            ..Default::default()
        }))
        .unwrap()
    }

    fn measured(case: &CaseSpec, median_sec: f64) -> MeasuredCase {
        MeasuredCase {
            name: case.name.clone(),
            workload: case.workload.clone(),
            median_sec,
        }
    }

    #[test]
    fn rules_of_thumb_follow_the_work() {
        assert!((rule_of_thumb_sec(&pipe(200_000).workload).unwrap() - 1.4).abs() < 1e-9);
        let sec = rule_of_thumb_sec(&messaging(4).workload).unwrap();
        assert!((1.5..3.0).contains(&sec), "{sec}");
    }

    #[test]
    fn a_case_with_history_is_expected_to_take_what_it_took() {
        let case = pipe(200_000);
        let estimate = iteration_estimate(&case, &[measured(&case, 9.0)]);
        assert_eq!(
            (estimate.sec, estimate.source),
            (Some(9.0), EstimateSource::History)
        );
    }

    #[test]
    fn a_new_case_takes_the_rule_of_thumb_as_this_host_ran_its_workload() {
        // This host took 6× and 8× the rule for two pipe cases: a third is expected at 7×.
        let history = [
            measured(&pipe(100_000), 6.0 * 0.7),
            measured(&pipe(400_000), 8.0 * 2.8),
            measured(&messaging(2), 1.0),
        ];
        let estimate = iteration_estimate(&pipe(1_000_000), &history);
        assert_eq!(estimate.source, EstimateSource::ScaledRuleOfThumb);
        let (factor, cases) = estimate.host_factor.unwrap();
        assert!((factor - 7.0).abs() < 1e-9, "{factor}");
        assert_eq!(cases, 2, "only the pipe cases speak for pipe");
        assert!((estimate.sec.unwrap() - 49.0).abs() < 1e-6);
        // A workload this host has never run keeps its bare rule.
        let fresh = CaseSpec::new(WorkloadSpec::Syscall(Default::default())).unwrap();
        assert_eq!(
            iteration_estimate(&fresh, &history).source,
            EstimateSource::RuleOfThumb
        );
    }

    #[test]
    fn the_plan_carries_what_history_says_and_the_deadline_never_drops_below_the_rule() {
        let (slow, fast, new) = (pipe(100_000), pipe(200_000), pipe(300_000));
        let history = [measured(&slow, 7.0), measured(&fast, 0.1)];
        let workloads = [&slow, &fast, &new].map(|c| c.workload.clone());
        let mut plan = RunPlan::new(None, None, 5, 1, workloads.to_vec()).unwrap();
        plan.expected_sec = expectations(&plan.cases, &history);
        assert_eq!(plan.expected_sec.len(), 3, "{:?}", plan.expected_sec);
        assert_eq!(deadline_basis_sec(&plan, &slow), Some(7.0));
        // History faster than the rule (1.4 s) leaves the rule as the basis.
        assert_eq!(deadline_basis_sec(&plan, &fast), Some(1.4));
        // The median of 10× and 1/14 × the rule.
        let basis = deadline_basis_sec(&plan, &new).unwrap();
        assert!(
            (basis - 2.1 * (10.0 + 1.0 / 14.0) / 2.0).abs() < 1e-6,
            "{basis}"
        );
    }
}
