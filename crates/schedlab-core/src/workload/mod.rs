//! Workloads: one file (or folder) each, whose parameter type implements [`WorkloadParams`] (its
//! definition) and whose runnable form implements [`Workload`], plus one line in the registry
//! below. How a workload is read from suite keys and stored runs is in `keys.rs`.
use serde::{Deserialize, Serialize};

pub use definition::{
    is_relative_count, parse_count, parse_task_count, relative_count, ComparisonLabel, Given,
    IterationInfo, IterationOutput, Param, ParamDef, ParamKind, Topology, Workload, WorkloadParams,
    RELATIVE_COUNT, RELATIVE_COUNT_LONG,
};
pub use keys::KeyError;
pub use tasks::TaskBudget;

use crate::Result;

pub mod definition;
mod keys;
pub mod param;
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

            /// Every list of metrics the case's runs may hold (see
            /// [`WorkloadParams::metric_lists`]).
            pub fn metric_lists(&self) -> &'static [&'static [crate::metric::MetricDef]] {
                match self {
                    $(WorkloadSpec::$variant(p) => p.metric_lists(),)+
                }
            }

            /// The metric `metric` restates, as the workload declares it now: stored runs keep
            /// no such declaration, so old runs are read as new ones.
            pub fn restates(&self, metric: &str) -> Option<crate::metric::Restates> {
                crate::metric::restatement_in(self.metric_lists(), metric)
            }

        }

        impl Serialize for WorkloadSpec {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                match self {
                    $(WorkloadSpec::$variant(params) => keys::Tagged {
                        workload: <$module::$params as WorkloadParams>::NAME,
                        params,
                    }
                    .serialize(serializer),)+
                }
            }
        }

        $(impl From<$module::$params> for WorkloadSpec {
            fn from(params: $module::$params) -> Self {
                WorkloadSpec::$variant(params)
            }
        })+

        #[cfg(test)]
        mod declared {
            use crate::metric::{Restatement, Role};

            /// A metric restates another of the same list, which restates nothing, has its role,
            /// and improves the other way when it is the reciprocal; each runnable (at its
            /// defaults) returns one of the lists its parameters declare.
            #[test]
            fn restatements_are_declared_within_a_list_and_lists_are_what_runs_return() {
                let defaults: Vec<super::WorkloadSpec> =
                    super::WORKLOADS.iter().map(|w| w.default_spec()).collect();
                let mut restating = 0;
                for spec in &defaults {
                    for list in spec.metric_lists() {
                        for def in list.iter() {
                            let Some(r) = def.restates else { continue };
                            restating += 1;
                            let of = list
                                .iter()
                                .find(|d| d.name == r.metric)
                                .unwrap_or_else(|| panic!("{}: {} not in its list", def.name, r.metric));
                            assert!(of.restates.is_none(), "{} restates a restatement", def.name);
                            assert_eq!(of.role, Role::Primary, "{}", def.name);
                            assert_eq!(def.role, Role::Primary, "{}", def.name);
                            let opposite = of.better != def.better;
                            assert_eq!(opposite, r.how == Restatement::Reciprocal, "{}", def.name);
                        }
                    }
                    if let Ok(workload) = spec.build() {
                        let returned = workload.metrics();
                        // No lists: the metrics are named from the user's input (a scenario's
                        // groups), and then none may restate another.
                        let dynamic = spec.metric_lists().is_empty()
                            && returned.iter().all(|d| d.restates.is_none());
                        assert!(
                            dynamic || spec.metric_lists().iter().any(|l| *l == returned),
                            "{}: metrics() returns a list metric_lists() does not name",
                            spec.kind()
                        );
                    }
                }
                assert!(restating >= 5);
            }

            /// Every workload's parameters are declared as they are stored (see the check).
            #[test]
            fn every_declaration_writes_the_field_its_key_names() {
                $(super::param::tests::check_declaration::<super::$module::$params>();)+
            }
        }

        /// Every workload, in the order `schedlab list` and the help show them.
        pub const WORKLOADS: &[WorkloadDefinition] = &[
            $(WorkloadDefinition::of::<$module::$params>(),)+
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
    Rump: rump => RumpParams,
    Contention: contention => ContentionParams,
    TimerLatency: timer_latency => TimerLatencyParams,
    External: external => ExternalParams,
    Scenario: scenario => ScenarioParams,
}

/// A workload's definition without its type: what the registry lists, the command line builds
/// its flags from and sets its parameters through, and suite files are read through.
pub struct WorkloadDefinition {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub reference_note: Option<&'static str>,
    /// Every flag's declaration, in help order.
    pub params: Params,
    from_command_line: fn(&[(usize, Given)]) -> Result<WorkloadSpec>,
    default_text: fn(usize) -> Option<String>,
    /// Reads the workload's own keys (without `workload`), as suite files and stored runs hold them.
    read: keys::Read<WorkloadSpec>,
}

/// The declarations of a workload's parameters, untyped, in help order: `for def in
/// definition.params`.
#[derive(Clone, Copy)]
pub struct Params {
    at: fn(usize) -> Option<&'static ParamDef>,
}

impl Params {
    pub fn iter(self) -> impl Iterator<Item = &'static ParamDef> {
        (0..).map_while(move |index| (self.at)(index))
    }

    /// The `index`-th declaration, as [`WorkloadDefinition::from_command_line`] takes it.
    pub fn get(self, index: usize) -> Option<&'static ParamDef> {
        (self.at)(index)
    }
}

impl IntoIterator for Params {
    type Item = &'static ParamDef;
    type IntoIter = Box<dyn Iterator<Item = &'static ParamDef>>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// [`definition::from_command_line`] as the registry lists it.
fn spec_from_command_line<P: WorkloadParams>(given: &[(usize, Given)]) -> Result<WorkloadSpec>
where
    WorkloadSpec: From<P>,
{
    definition::from_command_line::<P>(given).map(WorkloadSpec::from)
}

impl std::fmt::Debug for WorkloadDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadDefinition")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl WorkloadDefinition {
    const fn of<P: WorkloadParams>() -> Self
    where
        WorkloadSpec: From<P>,
    {
        WorkloadDefinition {
            name: P::NAME,
            aliases: P::ALIASES,
            summary: P::SUMMARY,
            reference_note: P::REFERENCE_NOTE,
            params: Params {
                at: definition::param_at::<P>,
            },
            from_command_line: spec_from_command_line::<P>,
            default_text: definition::default_text::<P>,
            read: keys::read::<P, WorkloadSpec>,
        }
    }

    /// By name or alias.
    pub fn find(name: &str) -> Option<&'static WorkloadDefinition> {
        WORKLOADS
            .iter()
            .find(|w| w.name == name || w.aliases.contains(&name))
    }

    /// The parameter whose suite key is `key` (errors name the key; the command line says its flag).
    pub fn param(&self, key: &str) -> Option<&'static ParamDef> {
        self.params.iter().find(|p| p.key == key)
    }

    /// The default of the `index`-th parameter as help shows it (`1000000`, `block`); `None`
    /// when it has none (an optional parameter whose help says what happens without it, or a
    /// switch).
    pub fn default_text(&self, index: usize) -> Option<String> {
        (self.default_text)(index)
    }

    /// The workload's parameters from the flags given on the command line, each by its place in
    /// [`Self::params`] with its value, written into its typed field; defaults for the rest.
    /// Errors name the key.
    pub fn from_command_line(&self, given: &[(usize, Given)]) -> Result<WorkloadSpec> {
        (self.from_command_line)(given)
    }

    /// The workload with every parameter at its default.
    pub fn default_spec(&self) -> WorkloadSpec {
        (self.read)(Default::default()).expect("the defaults read back (tested)")
    }

    /// docs/cli.md's flag table of this workload.
    pub fn markdown_flags(&self) -> String {
        definition::markdown_flags(self.params, |index| self.default_text(index))
    }

    /// The keys `--scale` multiplies, for help and docs.
    pub fn work_size_keys(&self) -> impl Iterator<Item = &'static ParamDef> {
        self.params.iter().filter(|p| p.work_size)
    }
}

impl WorkloadDefinition {
    /// Reads the workload's own keys (without `workload`), defaults for the rest; an error
    /// names the key at fault where one is (see [`keys::read_keys`]).
    pub fn read_keys(&self, values: keys::ValueMap) -> std::result::Result<WorkloadSpec, KeyError> {
        keys::read_keys(self.params, self.read, values)
    }
}

impl WorkloadSpec {
    /// A workload from its keys as a suite case writes them (`workload` and the workload's own);
    /// an error knows the key at fault where one is.
    pub fn from_keys(mut fields: keys::ValueMap) -> std::result::Result<WorkloadSpec, KeyError> {
        WorkloadSpec::tagged_definition(&mut fields)?.read_keys(fields)
    }

    /// The definition the `workload` key names, taken out of `fields`.
    fn tagged_definition(
        fields: &mut keys::ValueMap,
    ) -> std::result::Result<&'static WorkloadDefinition, KeyError> {
        let name = keys::take_workload_name(fields)?;
        WorkloadDefinition::find(&name).ok_or_else(|| {
            let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
            keys::unknown_workload(&name, &names)
        })
    }
}

impl<'de> Deserialize<'de> for WorkloadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        // Stored runs are read as they were stored: no range is checked here
        // ([`WorkloadSpec::validate`]).
        let mut fields = keys::stored_keys(deserializer)?;
        let definition = WorkloadSpec::tagged_definition(&mut fields).map_err(D::Error::custom)?;
        (definition.read)(fields).map_err(D::Error::custom)
    }
}
