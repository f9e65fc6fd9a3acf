//! How long a case's iteration will take, for `run --dry-run`: stored history of the same case
//! when there is some, else the workload's rule of thumb measured on a 2-CPU VM.
use crate::workload::WorkloadSpec;

/// Where an estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimateSource {
    /// The median wall time of this case's stored iterations.
    History,
    /// A per-workload formula (docs/suites.md).
    RuleOfThumb,
    Unknown,
}

impl EstimateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            EstimateSource::History => "history",
            EstimateSource::RuleOfThumb => "rule of thumb",
            EstimateSource::Unknown => "unknown",
        }
    }
}

/// Seconds per iteration by the workload's rule of thumb (each workload's `estimate_sec`, from
/// figures measured on a 2-vCPU VM).
pub fn rule_of_thumb_sec(spec: &WorkloadSpec) -> Option<f64> {
    Some(spec.estimate_sec()).filter(|sec| sec.is_finite())
}

/// The estimate for one iteration of `spec`, preferring `history` (median stored wall time).
pub fn iteration_sec(spec: &WorkloadSpec, history: Option<f64>) -> (Option<f64>, EstimateSource) {
    if let Some(h) = history {
        return (Some(h), EstimateSource::History);
    }
    match rule_of_thumb_sec(spec) {
        Some(sec) => (Some(sec), EstimateSource::RuleOfThumb),
        None => (None, EstimateSource::Unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::messaging::MessagingParams;
    use crate::workload::pipe::PipeParams;

    #[test]
    fn rules_of_thumb_follow_the_work() {
        let pipe = WorkloadSpec::Pipe(PipeParams {
            loops: 200_000,
            ..Default::default()
        });
        assert!((rule_of_thumb_sec(&pipe).unwrap() - 1.4).abs() < 1e-9);
        let hb = WorkloadSpec::Messaging(MessagingParams {
            groups: 4,
            loops: 1000,
            ..Default::default()
        });
        let sec = rule_of_thumb_sec(&hb).unwrap();
        assert!((1.5..3.0).contains(&sec), "{sec}");
        assert_eq!(
            iteration_sec(&pipe, Some(9.0)),
            (Some(9.0), EstimateSource::History)
        );
    }
}
