//! A scenario case's parameters, the scenario file they are read from (`--file`), and how a case
//! is written in suite files and stored runs: `file = "PATH"` alone, or the
//! scenario's own keys (with `source`, the file it was read from), and the hash of the stored form
//! that names the case. The keys arrive as JSON (`workload::keys`), which is why this file, apart
//! from the command line's `--file`, reads them; the command line never comes through here.
use serde::{Deserialize, Serialize};

use super::rtapp;
use super::spec::{self, Scenario};

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

/// A short hash of everything that changes what is measured, for the case name.
pub(super) fn fingerprint(scenario: &Scenario) -> u32 {
    let unnamed = Scenario {
        name: None,
        ..scenario.clone()
    };
    let text = serde_json::to_string(&unnamed).unwrap_or_default();
    // FNV-1a, folded to 32 bits: a name for a case, not a defence.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (hash ^ (hash >> 32)) as u32
}

