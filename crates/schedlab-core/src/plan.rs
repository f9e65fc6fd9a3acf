//! The validated run plan: what the CLI's raw arguments or a suite file become after every check,
//! so the runner below it never sees unchecked input.
use serde::{Deserialize, Serialize};

use crate::workload::WorkloadSpec;
use crate::{Error, Result};

pub const DEFAULT_ITERATIONS: u32 = 5;
pub const DEFAULT_WARMUP: u32 = 1;
const MAX_ITERATIONS: u32 = 100_000;
const MAX_LABEL_CHARS: usize = 200;

/// One case: a workload with its parameters, named canonically so the same configuration gets the
/// same name in every run (which is how runs are matched up for comparison).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    pub name: String,
    pub workload: WorkloadSpec,
}

impl CaseSpec {
    pub fn new(workload: WorkloadSpec) -> Result<Self> {
        workload.validate()?;
        Ok(CaseSpec {
            name: workload.case_name(),
            workload,
        })
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
}

impl RunPlan {
    pub fn new(
        suite: Option<String>,
        label: Option<String>,
        iterations: u32,
        warmup: u32,
        workloads: Vec<WorkloadSpec>,
    ) -> Result<Self> {
        if iterations == 0 || iterations > MAX_ITERATIONS {
            return Err(Error::invalid(format!(
                "--iterations must be between 1 and {MAX_ITERATIONS}, not {iterations}"
            )));
        }
        if warmup > MAX_ITERATIONS {
            return Err(Error::invalid(format!(
                "--warmup must be at most {MAX_ITERATIONS}, not {warmup}"
            )));
        }
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
        Ok(RunPlan {
            suite,
            label,
            iterations,
            warmup,
            cases,
        })
    }
}

/// Labels name runs on the command line, where an all-digit word means a run id.
pub fn validate_label(label: &str) -> Result<()> {
    if label.trim().is_empty() {
        return Err(Error::invalid("--label must not be empty"));
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(Error::invalid(format!(
            "--label is longer than {MAX_LABEL_CHARS} characters"
        )));
    }
    if label.chars().all(|c| c.is_ascii_digit()) {
        return Err(Error::invalid(format!(
            "--label {label:?} is all digits, which would read as a run id; add a letter"
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(Error::invalid(
            "--label must not contain control characters",
        ));
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
    fn names_cases_canonically() {
        let plan = RunPlan::new(None, Some("base".into()), 3, 1, vec![fake()]).unwrap();
        assert_eq!(plan.cases[0].name, fake().case_name());
    }
}
