//! A workload as suite files and stored runs write it: `workload = "pipe"` and the workload's own
//! keys, which are its parameter type's fields, read by serde (the command line sets the same
//! fields through each parameter's declaration instead, `definition::from_command_line`). Errors
//! name the key at fault, so a suite file can point at its line.
//! Nothing here names the registry (`mod.rs`), which uses this.
use serde::{Deserialize, Serialize};

use super::definition::WorkloadParams;
use super::param::{out_of_range, ParamDef, ParamKind};
use crate::Error;

/// A suite case's or stored run's keys, as read.
pub(super) type ValueMap = serde_json::Map<String, serde_json::Value>;

/// Reads a workload's own keys (without `workload`) into `S`, defaults for the rest.
pub(super) type Read<S> = fn(ValueMap) -> serde_json::Result<S>;

/// [`Read`] of the workload whose parameter type is `P`.
pub(super) fn read<P: WorkloadParams, S: From<P>>(values: ValueMap) -> serde_json::Result<S> {
    serde_json::from_value::<P>(serde_json::Value::Object(values)).map(S::from)
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

/// Reads a workload's own keys (without `workload`) by `read`, defaults for the rest. A whole
/// number out of its parameter's range (one of `params`) is [`KeyError::Range`], checked first
/// so that a number too big for the type it is read into (`fail_at = 4294967296`) gets the
/// range, not serde's "expected u32"; a value that does not read is the key at fault with
/// serde's reason, found by reading each key on its own, as the error of the whole table names
/// no key.
pub(super) fn read_keys<'a, S>(
    params: impl IntoIterator<Item = &'a ParamDef>,
    read: Read<S>,
    values: ValueMap,
) -> std::result::Result<S, KeyError> {
    for def in params {
        let ParamKind::Count { min, max } = def.kind else {
            continue;
        };
        let Some(serde_json::Value::Number(n)) = values.get(def.key) else {
            continue;
        };
        let out_of_range = match (n.as_u64(), n.as_i64()) {
            (Some(n), _) => def.check(n).err(),
            (None, Some(negative)) => Some(Error::param(def.key, out_of_range(negative, min, max))),
            _ => None,
        };
        if let Some(error) = out_of_range {
            return Err(KeyError::Range(error));
        }
    }
    read(values.clone()).map_err(|whole| {
        let at_fault = values.iter().find_map(|(key, value)| {
            let alone = ValueMap::from_iter([(key.clone(), value.clone())]);
            read(alone).err().map(|e| (key.clone(), e.to_string()))
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

/// The `workload` key's name, taken out of `fields`.
pub(super) fn take_workload_name(fields: &mut ValueMap) -> std::result::Result<String, KeyError> {
    match fields.remove("workload") {
        Some(serde_json::Value::String(name)) => Ok(name),
        Some(_) => Err(KeyError::Value {
            key: Some("workload".into()),
            reason: "`workload` must be a workload's name".into(),
        }),
        None => Err(KeyError::Value {
            key: None,
            reason: "missing field `workload`".into(),
        }),
    }
}

/// A `workload` that names none of `names`.
pub(super) fn unknown_workload(name: &str, names: &[&str]) -> KeyError {
    KeyError::Value {
        key: Some("workload".into()),
        reason: format!(
            "unknown workload `{name}`, expected one of {}",
            names.join(", ")
        ),
    }
}

/// A stored workload's keys, as they were stored: no range is checked here.
pub(super) fn stored_keys<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<ValueMap, D::Error> {
    ValueMap::deserialize(deserializer)
}

/// A workload's parameters with the `workload` key first, as suite files write them.
#[derive(Serialize)]
pub(super) struct Tagged<'a, P> {
    pub workload: &'static str,
    #[serde(flatten)]
    pub params: &'a P,
}
