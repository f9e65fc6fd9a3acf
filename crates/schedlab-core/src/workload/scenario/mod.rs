//! The `scenario` workload: task groups described as data — a TOML file, a suite's
//! `workload = "scenario"` case, or rt-app's JSON — each with a count, a policy (nice, real-time
//! priority, deadline reservation, EEVDF slice), CPUs, a cgroup, and phases looped until the
//! window ends. docs/scenarios.md describes the format.
//!
//! This file is only the glue to the workload registry (the parameters, their one flag `--file`,
//! how a case is named and stored); the format is `spec.rs` and `rtapp.rs`, the machine's checks
//! `machine.rs`, the tasks `engine.rs` over `shared.rs`, their launch and verification
//! `executor.rs` (reusable for groups run beside another workload), the metrics `metrics.rs`.
use serde::{Deserialize, Serialize};

use super::definition::{ComparisonLabel, ParamDef, ParamKind, Workload, WorkloadParams};
use super::tasks::TaskBudget;
use crate::{Error, Result};

mod engine;
mod executor;
mod machine;
mod metrics;
mod rtapp;
mod shared;
pub mod spec;

pub use engine::{calibrate, Calibration};
pub use executor::{GroupOutcome, GroupRun, Outcome};
pub use spec::Scenario;

/// A scenario and where it was read from (kept with the run; the scenario itself is stored whole,
/// so a stored run never reads the file again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioParams {
    pub source: Option<String>,
    pub scenario: Scenario,
}

impl Default for ScenarioParams {
    fn default() -> Self {
        ScenarioParams {
            source: None,
            scenario: spec::example(),
        }
    }
}

/// Reads a scenario file: rt-app's JSON by the `.json` extension, else TOML. A scenario without a
/// name is named after the file.
pub fn read_scenario_file(path: &str) -> std::result::Result<Scenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read scenario file {path}: {e}"))?;
    let file = std::path::Path::new(path);
    let stem = file
        .file_stem()
        .map_or_else(|| "scenario".to_string(), |s| s.to_string_lossy().into_owned());
    let read = if file.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        rtapp::from_rtapp(&text, &stem)
    } else {
        spec::from_toml(&text)
    };
    let mut scenario = read.map_err(|e| format!("scenario file {path}: {e}"))?;
    scenario.name.get_or_insert(stem);
    Ok(scenario)
}

impl Serialize for ScenarioParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stored<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            source: &'a Option<String>,
            #[serde(flatten)]
            scenario: &'a Scenario,
        }
        Stored {
            source: &self.source,
            scenario: &self.scenario,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ScenarioParams {
    /// `file = "PATH"` alone reads that file; otherwise the keys are the scenario's own (as a
    /// suite case or a stored run writes them); no key at all is the example scenario.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        use serde_json::Value;
        let mut keys = serde_json::Map::<String, Value>::deserialize(d)?;
        let source = match keys.remove("source") {
            Some(Value::String(source)) => Some(source),
            Some(_) => return Err(D::Error::custom("`source` must be text")),
            None => None,
        };
        if let Some(file) = keys.remove("file") {
            let Value::String(path) = file else {
                return Err(D::Error::custom("`file` must be a path"));
            };
            if let Some(key) = keys.keys().next() {
                return Err(D::Error::custom(format!(
                    "give either `file` or the scenario's own keys (like `{key}`), not both"
                )));
            }
            let scenario = read_scenario_file(&path).map_err(D::Error::custom)?;
            return Ok(ScenarioParams {
                source: Some(path),
                scenario,
            });
        }
        if keys.is_empty() && source.is_none() {
            return Ok(ScenarioParams::default());
        }
        let scenario = Scenario::deserialize(Value::Object(keys)).map_err(D::Error::custom)?;
        Ok(ScenarioParams { source, scenario })
    }
}

/// `--file PATH` as the value a suite file holds: the path (read when the case is).
fn file_value(text: &str) -> std::result::Result<serde_json::Value, String> {
    crate::plan::check_printable(text)?;
    Ok(serde_json::Value::String(text.to_string()))
}

const SCENARIO_NOTE: &str = "docs/scenarios.md describes the file: TOML (groups, their policies, \
CPUs, cgroups and phases), or rt-app's JSON by the .json extension. A suite names a scenario with \
workload = \"scenario\" and either file = \"PATH\" or the scenario's keys inline.";

impl ScenarioParams {
    /// `scenario rt.toml: `, as errors start.
    fn prefixed(&self, error: String) -> Error {
        let what = match &self.source {
            Some(source) => format!("scenario {source}"),
            None => format!("scenario {:?}", self.scenario.display_name()),
        };
        Error::invalid(format!("{what}: {error}"))
    }

    /// A short hash of everything that changes what is measured, for the case name.
    fn fingerprint(&self) -> u32 {
        let unnamed = Scenario {
            name: None,
            ..self.scenario.clone()
        };
        let text = serde_json::to_string(&unnamed).unwrap_or_default();
        // FNV-1a, folded to 32 bits: a name for a case, not a defence.
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        (hash ^ (hash >> 32)) as u32
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
    const PARAMS: &'static [ParamDef] = &[ParamDef::new(
        "file",
        "file",
        ParamKind::Text { parse: file_value },
    )
    .value("PATH")
    .help("The scenario file: TOML, or rt-app's JSON by its .json extension.")
    .details(
        "The scenario file: TOML, or rt-app's JSON by its `.json` extension \
         (docs/scenarios.md); read once, and stored whole with the run. Without it, \
         one task runs 1 ms every 10 ms for 1 s.",
    )];

    fn check_rules(&self) -> Result<()> {
        self.scenario.check().map_err(|e| self.prefixed(e))?;
        metrics::check_names(&self.scenario).map_err(|e| self.prefixed(e))?;
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
            self.fingerprint()
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

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(metrics::ScenarioWorkload::new(
            self.scenario.clone(),
        )))
    }
}
