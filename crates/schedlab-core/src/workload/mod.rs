//! Workloads: one file each, whose parameter type implements [`WorkloadParams`] (its definition)
//! and whose runnable form implements [`Workload`], plus one line in the registry below.
use serde::{Deserialize, Serialize};

pub use definition::{
    parse_count, parse_task_count, relative_count, ComparisonLabel, IterationInfo, IterationOutput,
    ParamDef, ParamKind, Workload, WorkloadParams, RELATIVE_COUNT,
};
pub use tasks::TaskBudget;

use crate::{Error, Result};

pub mod definition;
pub mod tasks;
pub mod work_units;

/// The registry: one line per workload, `Variant: module => ParamsType`. It declares the module
/// and generates [`WorkloadSpec`] with its dispatch, its (de)serialisation as suite files and
/// stored runs write it (`workload = "pipe"` plus the workload's own keys) and [`WORKLOADS`].
macro_rules! registry {
    ($($variant:ident: $module:ident => $params:ident,)+) => {
        $(pub mod $module;)+

        /// A workload and its parameters, as written in suite files and stored with every run.
        #[derive(Debug, Clone, PartialEq)]
        pub enum WorkloadSpec {
            $($variant($module::$params),)+
        }

        impl WorkloadSpec {
            /// The workload's definition: name, summary, flags.
            pub fn definition(&self) -> &'static WorkloadDefinition {
                let name = match self {
                    $(WorkloadSpec::$variant(_) => <$module::$params as WorkloadParams>::NAME,)+
                };
                WorkloadDefinition::find(name).expect("every variant is registered")
            }

            /// The workload's name, as suite files and stored runs write it.
            pub fn kind(&self) -> &'static str {
                self.definition().name
            }

            /// Checks every parameter: single counts against their ranges, then the workload's
            /// own rules.
            pub fn validate(&self) -> Result<()> {
                match self {
                    $(WorkloadSpec::$variant(p) => p.validate(),)+
                }
            }

            /// The canonical case name: the workload and every parameter that changes what is
            /// measured.
            pub fn case_name(&self) -> String {
                match self {
                    $(WorkloadSpec::$variant(p) => p.case_name(),)+
                }
            }

            /// The same case with its work sizes multiplied by `factor` (`--scale`).
            pub fn scaled(&self, factor: f64) -> Result<WorkloadSpec> {
                match self {
                    $(WorkloadSpec::$variant(p) => p.scaled(factor).map(WorkloadSpec::$variant),)+
                }
            }

            /// Seconds per iteration by rule of thumb.
            pub fn estimate_sec(&self) -> f64 {
                match self {
                    $(WorkloadSpec::$variant(p) => p.estimate_sec(),)+
                }
            }

            pub fn comparison_label(&self, case_name: &str) -> ComparisonLabel {
                match self {
                    $(WorkloadSpec::$variant(p) => p.comparison_label(case_name),)+
                }
            }

            /// The parameters with every machine-independent default written out.
            pub fn settled(&self) -> WorkloadSpec {
                match self {
                    $(WorkloadSpec::$variant(p) => WorkloadSpec::$variant(p.settled()),)+
                }
            }

            pub fn build(&self) -> Result<Box<dyn Workload>> {
                match self {
                    $(WorkloadSpec::$variant(p) => p.build(),)+
                }
            }

        }

        impl Serialize for WorkloadSpec {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                match self {
                    $(WorkloadSpec::$variant(params) => Tagged {
                        workload: <$module::$params as WorkloadParams>::NAME,
                        params,
                    }
                    .serialize(serializer),)+
                }
            }
        }

        /// Every workload, in the order `schedlab list` and the help show them.
        pub const WORKLOADS: &[WorkloadDefinition] = &[
            $(WorkloadDefinition::of::<$module::$params>(|values| {
                serde_json::from_value(serde_json::Value::Object(values)).map(WorkloadSpec::$variant)
            }, <$module::$params as WorkloadParams>::adjust_command_line, || {
                serde_json::to_value(<$module::$params>::default()).unwrap_or_default()
            }),)+
        ];
    };
}

registry! {
    Pipe: pipe => PipeParams,
    Messaging: messaging => MessagingParams,
    Fake: fake => FakeParams,
    Wakeup: wakeup => WakeupParams,
    Semaphore: semaphore => SemaphoreParams,
    Syscall: syscall => SyscallParams,
    Fanout: fanout => FanoutParams,
    Cpudl: cpudl => CpudlParams,
    Cpupri: cpupri => CpupriParams,
    Contention: contention => ContentionParams,
    External: external => ExternalParams,
    Scenario: scenario => ScenarioParams,
}

type ValueMap = serde_json::Map<String, serde_json::Value>;

/// A workload's definition without its type: what the registry lists, the command line builds
/// its flags from, and suite files are read through.
pub struct WorkloadDefinition {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub reference_note: Option<&'static str>,
    pub params: &'static [ParamDef],
    /// Reads the workload's own keys (without `workload`).
    read: fn(ValueMap) -> serde_json::Result<WorkloadSpec>,
    adjust_command_line: fn(&mut ValueMap) -> Result<()>,
    defaults: fn() -> serde_json::Value,
}

impl std::fmt::Debug for WorkloadDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadDefinition")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl WorkloadDefinition {
    const fn of<P: WorkloadParams>(
        read: fn(ValueMap) -> serde_json::Result<WorkloadSpec>,
        adjust_command_line: fn(&mut ValueMap) -> Result<()>,
        defaults: fn() -> serde_json::Value,
    ) -> Self {
        WorkloadDefinition {
            name: P::NAME,
            aliases: P::ALIASES,
            summary: P::SUMMARY,
            reference_note: P::REFERENCE_NOTE,
            params: P::PARAMS,
            read,
            adjust_command_line,
            defaults,
        }
    }

    /// By name or alias.
    pub fn find(name: &str) -> Option<&'static WorkloadDefinition> {
        WORKLOADS
            .iter()
            .find(|w| w.name == name || w.aliases.contains(&name))
    }

    pub fn param(&self, key: &str) -> Option<&'static ParamDef> {
        self.params.iter().find(|p| p.key == key)
    }

    /// The default of a parameter as help shows it (`1000000`, `block`); `None` when it has none
    /// (an optional parameter whose help says what happens without it, or a switch).
    pub fn default_text(&self, key: &str) -> Option<String> {
        match (self.defaults)().get(key)? {
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// The workload's parameters from the values given on the command line (suite keys, the
    /// command-line text already turned into suite values), defaults for the rest. Errors name
    /// the flag.
    pub fn from_command_line(&self, mut values: ValueMap) -> Result<WorkloadSpec> {
        (self.adjust_command_line)(&mut values)?;
        self.read_keys(values).map_err(|e| match e {
            KeyError::Range(error) => error,
            KeyError::Value { key, reason } => {
                match key.as_deref().and_then(|key| self.param(key)) {
                    Some(def) => Error::invalid(format!("--{}: {reason}", def.long)),
                    None => Error::invalid(reason),
                }
            }
        })
    }

    /// Reads the workload's own keys (without `workload`), defaults for the rest. A whole number
    /// out of its parameter's range is [`KeyError::Range`], checked first so that a number too
    /// big for the type it is read into (`--fail-at 4294967296`) gets the range, not serde's
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
                    format!("must be between {min} and {max}, not {negative}"),
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

    /// The workload with every parameter at its default.
    pub fn default_spec(&self) -> WorkloadSpec {
        (self.read)(ValueMap::new()).expect("the defaults read back (tested)")
    }

    /// docs/cli.md's flag table of this workload.
    pub fn markdown_flags(&self) -> String {
        definition::markdown_flags(self.params, |key| self.default_text(key))
    }

    /// The keys `--scale` multiplies, for help and docs.
    pub fn work_size_keys(&self) -> impl Iterator<Item = &'static ParamDef> {
        self.params.iter().filter(|p| p.work_size)
    }
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
struct Tagged<'a, P> {
    workload: &'static str,
    #[serde(flatten)]
    params: &'a P,
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
