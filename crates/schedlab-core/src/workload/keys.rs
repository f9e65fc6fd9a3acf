//! A workload as suite files and stored runs write it: `workload = "pipe"` and the workload's own
//! keys, which are its parameter type's fields, read by serde (the command line sets the same
//! fields through each parameter's declaration instead, `definition::from_command_line`). Errors
//! name the key at fault, so a suite file can point at its line.
use serde::{Deserialize, Serialize};

use super::{ParamKind, WorkloadDefinition, WorkloadParams, WorkloadSpec, WORKLOADS};
use crate::Error;

type ValueMap = serde_json::Map<String, serde_json::Value>;

/// Reads a workload's own keys (without `workload`), defaults for the rest.
pub(super) type Read = fn(ValueMap) -> serde_json::Result<WorkloadSpec>;

/// [`Read`] of the workload whose parameter type is `P`.
pub(super) fn read<P: WorkloadParams>(values: ValueMap) -> serde_json::Result<WorkloadSpec>
where
    WorkloadSpec: From<P>,
{
    serde_json::from_value::<P>(serde_json::Value::Object(values)).map(WorkloadSpec::from)
}

/// Why a workload's keys do not read ([`WorkloadDefinition::read_keys`]).
#[derive(Debug)]
pub enum KeyError {
    /// A whole number out of its parameter's range: an [`Error::InvalidParam`].
    Range(Error),
    /// A value that does not read as its parameter (a wrong type, an unknown key or choice):
    /// the key when one alone is at fault, and serde's reason.
    Value { key: Option<String>, reason: String },
}

impl KeyError {
    /// The key at fault, if the error knows it.
    pub fn key(&self) -> Option<&str> {
        match self {
            KeyError::Range(Error::InvalidParam { key, .. }) => Some(key),
            KeyError::Range(_) => None,
            KeyError::Value { key, .. } => key.as_deref(),
        }
    }
}

impl std::fmt::Display for KeyError {
    /// A sentence that names its key: `loops must be between 1 and 10, not 0`, `loops: invalid
    /// type: boolean `true`, expected u64`, or serde's own where it names the key already
    /// (`unknown field `loopz``, `unknown workload `x``).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::Range(Error::InvalidParam { key, reason }) => write!(f, "{key} {reason}"),
            KeyError::Range(error) => write!(f, "{error}"),
            KeyError::Value {
                key: Some(key),
                reason,
            } if !reason.contains(&format!("`{key}`")) => write!(f, "{key}: {reason}"),
            KeyError::Value { reason, .. } => write!(f, "{reason}"),
        }
    }
}

impl WorkloadDefinition {
    /// Reads the workload's own keys (without `workload`), defaults for the rest. A whole number
    /// out of its parameter's range is [`KeyError::Range`], checked first so that a number too
    /// big for the type it is read into (`fail_at = 4294967296`) gets the range, not serde's
    /// "expected u32"; a value that does not read is the key at fault with serde's reason,
    /// found by reading each key on its own, as the error of the whole table names no key.
    pub fn read_keys(&self, values: ValueMap) -> std::result::Result<WorkloadSpec, KeyError> {
        for def in self.params {
            let ParamKind::Count { min, max } = def.kind else {
                continue;
            };
            let Some(serde_json::Value::Number(n)) = values.get(def.key) else {
                continue;
            };
            let out_of_range = match (n.as_u64(), n.as_i64()) {
                (Some(n), _) => def.check(n).err(),
                (None, Some(negative)) => Some(Error::param(
                    def.key,
                    super::param::out_of_range(negative, min, max),
                )),
                _ => None,
            };
            if let Some(error) = out_of_range {
                return Err(KeyError::Range(error));
            }
        }
        (self.read)(values.clone()).map_err(|whole| {
            let at_fault = values.iter().find_map(|(key, value)| {
                let alone = ValueMap::from_iter([(key.clone(), value.clone())]);
                (self.read)(alone)
                    .err()
                    .map(|e| (key.clone(), e.to_string()))
            });
            match at_fault {
                Some((key, reason)) => KeyError::Value {
                    key: Some(key),
                    reason,
                },
                None => KeyError::Value {
                    key: None,
                    reason: whole.to_string(),
                },
            }
        })
    }
}

impl WorkloadSpec {
    /// A workload from its keys as a suite case writes them (`workload` and the workload's own);
    /// an error knows the key at fault where one is.
    pub fn from_keys(mut fields: ValueMap) -> std::result::Result<WorkloadSpec, KeyError> {
        WorkloadSpec::tagged_definition(&mut fields)?.read_keys(fields)
    }

    /// The definition the `workload` key names, taken out of `fields`.
    fn tagged_definition(
        fields: &mut ValueMap,
    ) -> std::result::Result<&'static WorkloadDefinition, KeyError> {
        let name = match fields.remove("workload") {
            Some(serde_json::Value::String(name)) => name,
            Some(_) => {
                return Err(KeyError::Value {
                    key: Some("workload".into()),
                    reason: "`workload` must be a workload's name".into(),
                })
            }
            None => {
                return Err(KeyError::Value {
                    key: None,
                    reason: "missing field `workload`".into(),
                })
            }
        };
        WorkloadDefinition::find(&name).ok_or_else(|| {
            let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
            KeyError::Value {
                key: Some("workload".into()),
                reason: format!(
                    "unknown workload `{name}`, expected one of {}",
                    names.join(", ")
                ),
            }
        })
    }
}

/// A workload's parameters with the `workload` key first, as suite files write them.
#[derive(Serialize)]
pub(super) struct Tagged<'a, P> {
    pub workload: &'static str,
    #[serde(flatten)]
    pub params: &'a P,
}

impl<'de> Deserialize<'de> for WorkloadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        // Stored runs are read as they were stored: no range is checked here ([`WorkloadSpec::validate`]).
        let mut fields = ValueMap::deserialize(deserializer)?;
        let definition = WorkloadSpec::tagged_definition(&mut fields).map_err(D::Error::custom)?;
        (definition.read)(fields).map_err(D::Error::custom)
    }
}
