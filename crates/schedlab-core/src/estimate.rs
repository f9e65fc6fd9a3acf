//! How long a case's iteration will take, for `run --dry-run`: stored history of the same case
//! when there is some, else a rule of thumb per workload measured on a 2-CPU VM, else unknown.
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

fn param(params: &serde_json::Value, key: &str) -> Option<f64> {
    params.get(key).and_then(serde_json::Value::as_f64)
}

fn flag(params: &serde_json::Value, key: &str) -> bool {
    params
        .get(key)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// Seconds per iteration by rule of thumb, from figures measured here (2 vCPUs): a pipe round
/// trip costs about 7 µs between processes and 5 µs between threads; a hackbench message about
/// 1.2 µs over sockets and 0.5 µs over pipes, plus about 1 ms to start each task.
pub fn rule_of_thumb_sec(spec: &WorkloadSpec) -> Option<f64> {
    let params = serde_json::to_value(spec).ok()?;
    match spec.kind() {
        "pipe" => {
            let per_op = if flag(&params, "threads") { 5e-6 } else { 7e-6 };
            Some(param(&params, "loops")? * per_op)
        }
        "messaging" => {
            let (groups, fds, loops) = (
                param(&params, "groups")?,
                param(&params, "fds")?,
                param(&params, "loops")?,
            );
            let per_message = if flag(&params, "pipe") {
                0.5e-6
            } else {
                1.2e-6
            };
            Some(groups * fds * fds * loops * per_message + groups * fds * 2.0 * 1e-3)
        }
        "wakeup" => Some(param(&params, "runtime")? + param(&params, "warmup_sec").unwrap_or(0.0)),
        "fake" => Some(param(&params, "sleep_ms")? / 1000.0),
        _ => None,
    }
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
