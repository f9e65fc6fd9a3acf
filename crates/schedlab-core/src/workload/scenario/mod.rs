//! The `scenario` workload: task groups described as data — a TOML file, a suite's
//! `workload = "scenario"` case, or rt-app's JSON — each with a count, a policy (nice, real-time
//! priority, deadline reservation, EEVDF slice), CPUs, a cgroup, and phases looped until the
//! window ends. docs/scenarios.md describes the format.
//!
//! This file is only the glue to the workload registry (the parameters, their one flag `--file`,
//! how a case is named and stored); the format is `spec.rs` and `rtapp.rs`, the machine's checks
//! `machine.rs`, the tasks `engine.rs` over `shared.rs`, their launch and verification
//! `executor.rs` (reusable for groups run beside another workload), the metrics `metrics.rs`.
use super::definition::{ComparisonLabel, Param, ParamKind, Workload, WorkloadParams};
use super::param::{Field, FieldValue, Given};
use super::tasks::TaskBudget;
use crate::metric::MetricDef;
use crate::{Error, Result};

mod engine;
mod executor;
mod machine;
mod metrics;
mod rtapp;
mod shared;
pub mod spec;
mod stored;

pub use engine::{calibrate, Calibration};
pub use executor::{GroupOutcome, GroupRun, Outcome};
pub use metrics::{Background, BackgroundRun, BACKGROUND_PREFIX};
pub(crate) use metrics::intern;
pub use spec::Scenario;
pub use stored::{read_scenario_file, ScenarioParams};

/// `--file PATH`: the file is read when the flag is, and the scenario in it replaces the example.
fn set_file(params: &mut ScenarioParams, given: Given) -> Result<()> {
    let path = String::from_given(given).map_err(|reason| Error::param("file", reason))?;
    crate::words::check_printable(&path).map_err(|reason| Error::param("file", reason))?;
    params.scenario = read_scenario_file(&path).map_err(|reason| Error::param("file", reason))?;
    params.source = Some(path);
    Ok(())
}

const SCENARIO_NOTE: &str = "docs/scenarios.md describes the file: TOML (groups, their policies, \
CPUs, cgroups and phases), or rt-app's JSON by the .json extension. A suite names a scenario with \
workload = \"scenario\" and either file = \"PATH\" or the scenario's keys inline.";

impl ScenarioParams {
    /// What is wrong with the scenario whatever the machine (a FIFO group without a priority, a
    /// phase that never ends, two metrics of one name): a suite file is refused for it when it
    /// is read, as for a value out of range; the machine's checks come with the plan.
    pub fn check_file(&self) -> Result<()> {
        self.scenario.check().map_err(|e| self.prefixed(e))?;
        metrics::check_names(&self.scenario).map_err(|e| self.prefixed(e))
    }

    /// The scenario as a co-runner is checked: co-runners are stopped from outside and need no
    /// end of their own, so one without a duration is checked as if it had one; everything else
    /// about it is checked as any scenario's.
    pub fn as_checked_co_runner(&self) -> ScenarioParams {
        let mut checked = self.clone();
        checked.scenario.duration = checked.scenario.duration.or(Some(spec::Span(1_000_000_000)));
        checked
    }

    /// `scenario rt.toml: `, as errors start.
    fn prefixed(&self, error: String) -> Error {
        let what = match &self.source {
            Some(source) => format!("scenario {source}"),
            None => format!("scenario {:?}", self.scenario.display_name()),
        };
        Error::invalid(format!("{what}: {error}"))
    }

    fn descriptors(&self) -> u64 {
        let receivers: u64 = self
            .scenario
            .group
            .iter()
            .filter(|g| g.phases.contains(&spec::Phase::Recv))
            .map(|g| g.count.0)
            .sum();
        self.scenario.task_count() + 2 * receivers + 2
    }
}

impl WorkloadParams for ScenarioParams {
    const NAME: &'static str = "scenario";
    const SUMMARY: &'static str = "task groups described as data (TOML, or an rt-app JSON file): \
policies, priorities, deadline reservations, EEVDF slices, CPUs, cgroups and looped phases";
    const REFERENCE_NOTE: Option<&'static str> = Some(SCENARIO_NOTE);
    // The key is `file`, as a suite writes it; a stored run keeps the path as `source` beside
    // the scenario itself, which is why the field is not made by `field!`.
    const PARAMS: &'static [Param<Self>] = &[Param::new(
        Field {
            key: "file",
            set: set_file,
            get: |params: &Self| params.source.value(),
        },
        "file",
        ParamKind::Text,
    )
    .value("PATH")
    .help("The scenario file: TOML, or rt-app's JSON by its .json extension.")
    .details(
        "The scenario file: TOML, or rt-app's JSON by its `.json` extension \
         (docs/scenarios.md); read once, and stored whole with the run. Without it, \
         one task runs 1 ms every 10 ms for 1 s.",
    )];

    fn check_rules(&self) -> Result<()> {
        self.check_file()?;
        machine::check_machine(&self.scenario).map_err(|e| self.prefixed(e))
    }

    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(
            self.scenario.task_count(),
            "tasks",
            "give the scenario's groups smaller counts",
        )
        .holding(self.descriptors())
    }

    fn case_name(&self) -> String {
        format!(
            "scenario:{}@{:08x}",
            self.scenario.display_name(),
            stored::fingerprint(&self.scenario)
        )
    }

    fn estimate_sec(&self) -> f64 {
        let setup = 0.1;
        if let Some(duration) = self.scenario.duration {
            return duration.ns() as f64 / 1e9 + setup;
        }
        let longest = self
            .scenario
            .group
            .iter()
            .map(|g| {
                let per_loop: u64 = g
                    .phases
                    .iter()
                    .map(|p| match p {
                        spec::Phase::Run(s) | spec::Phase::Spin(s) | spec::Phase::Sleep(s) => {
                            s.ns()
                        }
                        spec::Phase::Timer(t) => t.period.ns(),
                        _ => 0,
                    })
                    .sum();
                g.loops.unwrap_or(1) as f64 * per_loop as f64 / 1e9
            })
            .fold(0.0, f64::max);
        longest + setup
    }

    fn comparison_label(&self, case_name: &str) -> ComparisonLabel {
        ComparisonLabel {
            short: case_name.to_string(),
            load: format!("{} tasks", self.scenario.task_count()),
        }
    }

    /// A scenario's metrics are named after its groups, made when it is read; none restates
    /// another, so a reader of stored runs finds no declaration to look up.
    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(metrics::ScenarioWorkload::new(
            self.scenario.clone(),
        )))
    }
}
