//! What defines a workload, once: the [`WorkloadParams`] trait its parameter type implements,
//! one [`Param`] per parameter (`param.rs`), and the [`Workload`] trait of what it builds and
//! runs. The same items feed the command line (the binary builds its flags from these), suite
//! files (the keys), `--help`, docs/cli.md, shell completions and the man page, as ripgrep's
//! `flags/defs.rs` does for its flags. No command-line library type appears here: the binary
//! turns a [`ParamDef`] into a flag and what it matched into a [`Given`].
use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

pub(crate) use super::param::field;
pub use super::param::{
    check_range, out_of_range, Applies, Choice, Field, FieldValue, Given, Param, ParamDef,
    ParamKind, ParamValue,
};
use super::tasks::TaskBudget;
use crate::attachment::Attachment;
use crate::metric::{Measurement, MetricDef};
use crate::{Error, Result};

/// Where an iteration sits in its case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterationInfo {
    /// 0-based, counting warm-up iterations first.
    pub index: u32,
    pub warmup: bool,
}

impl IterationInfo {
    /// A case's first iteration, measured (no warm-up): what workloads' tests run.
    #[cfg(test)]
    pub(crate) const FIRST: IterationInfo = IterationInfo {
        index: 0,
        warmup: false,
    };
}

/// What one iteration produced: its metrics and any binary attachments (histograms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IterationOutput {
    pub measurements: Vec<Measurement>,
    pub attachments: Vec<Attachment>,
}

impl From<Vec<Measurement>> for IterationOutput {
    fn from(measurements: Vec<Measurement>) -> Self {
        IterationOutput {
            measurements,
            attachments: Vec::new(),
        }
    }
}

/// A measurement that can be repeated. Each iteration starts its tasks, times its own window
/// (nothing is allocated, logged or drawn inside it), checks its work, and returns its metrics.
pub trait Workload {
    /// The metrics a successful iteration returns: every one declared (an optional one only where
    /// it could be measured) and no other. This instance's answer, as the set can depend on the
    /// parameters (a mode); the runner holds every iteration to it.
    fn metrics(&self) -> &'static [MetricDef];

    /// Whether the iteration runs tasks whose CPU time, context switches and migrations the runner
    /// should measure (the fake workload does not).
    fn runs_tasks(&self) -> bool {
        true
    }

    fn run_iteration(&mut self, info: IterationInfo) -> Result<IterationOutput>;
}

/// The schedtests "case" and "load" columns of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonLabel {
    pub short: String,
    pub load: String,
}

/// What each workload's parameter type is: the one place its name, flags, defaults, checks, case
/// name, scaling, run-time estimate, comparison label and runnable form are defined. A workload
/// is this impl in its own file plus one line in the registry (`workload/mod.rs`).
pub trait WorkloadParams:
    Debug + Clone + PartialEq + Default + Serialize + DeserializeOwned + 'static
{
    /// The name on the command line, in suite files and in stored runs.
    const NAME: &'static str;
    /// Other names that select it (a reference tool's).
    const ALIASES: &'static [&'static str] = &[];
    /// One line for `schedlab list` and the command's help.
    const SUMMARY: &'static str;
    /// A note under the command's help: how the reference tool's flags are taken.
    const REFERENCE_NOTE: Option<&'static str> = None;
    /// Every flag, in help order; the command line sets them in this order.
    const PARAMS: &'static [Param<Self>];

    /// The workload's own rules: parameters that must fit together or with this machine. The
    /// range of each count and where each parameter applies are checked from [`Self::PARAMS`]
    /// before, by [`Self::validate`].
    fn check_rules(&self) -> Result<()>;

    /// What one iteration starts at once (tasks, and descriptors beyond schedlab's own), which
    /// [`Self::validate`] holds to this machine's limits: declared by every workload, so that
    /// none can forget the check.
    fn task_budget(&self) -> TaskBudget;

    /// Every check: each count against its range, each parameter against the cases it applies
    /// to, the workload's own rules, then its task budget against this machine's limits.
    fn validate(&self) -> Result<()> {
        check_counts(self)?;
        check_applicable(self)?;
        self.check_rules()?;
        self.task_budget().check()
    }

    /// The canonical case name: the workload and every parameter that changes what is measured.
    fn case_name(&self) -> String;

    /// The mode or testcase the case runs, named when a parameter that does not apply to it is
    /// refused (`--work applies to … only, not mmap`).
    fn mode_name(&self) -> Option<String> {
        None
    }

    /// The same case with its work sizes (the `work_size` parameters of [`Self::PARAMS`])
    /// multiplied by `factor`, each rounded and at least 1: the declaration is what is scaled.
    fn scaled(&self, factor: f64) -> Result<Self> {
        let mut scaled = self.clone();
        for param in Self::PARAMS.iter().filter(|param| param.def.work_size) {
            let (Some(field), Some(ParamValue::Count(n))) = (param.field, param.get(self)) else {
                continue;
            };
            (field.set)(&mut scaled, Given::Count(scale_count(n, factor)))?;
        }
        Ok(scaled)
    }

    /// Seconds one iteration takes by rule of thumb on a 2-vCPU machine, for `--dry-run` and the
    /// default deadline when no stored history exists.
    fn estimate_sec(&self) -> f64;

    /// schedtests' case and load columns; the case name and no load unless the workload has a
    /// natural load parameter.
    fn comparison_label(&self, case_name: &str) -> ComparisonLabel {
        ComparisonLabel {
            short: case_name.to_string(),
            load: "-".to_string(),
        }
    }

    /// What the command line implies beyond its flags, done once they are all set (`external`
    /// asks perf for its version).
    fn finish_command_line(&mut self) -> Result<()> {
        Ok(())
    }

    /// The parameters with each default that means the same on every machine written out, as
    /// the case ran (cpudl's `variant`): what `compare --across` reads, so that a case which left
    /// the key out lands on its value's side. Defaults that depend on the machine stay unset.
    fn settled(&self) -> Self {
        self.clone()
    }

    fn build(&self) -> Result<Box<dyn Workload>>;

    /// Every list of metrics the workload's runs may hold, one per mode (the lists its
    /// runnable's [`Workload::metrics`] returns): where a reader of stored runs finds what a
    /// metric is declared as, such as which metric it restates, without building anything.
    fn metric_lists(&self) -> &'static [&'static [MetricDef]];
}

/// A work size times `factor`, rounded, at least 1.
fn scale_count(value: u64, factor: f64) -> u64 {
    ((value as f64 * factor).round() as u64).max(1)
}

/// Checks every counted parameter of `params` against its range in its declaration.
fn check_counts<P: WorkloadParams>(params: &P) -> Result<()> {
    for param in P::PARAMS {
        if let Some(ParamValue::Count(n)) = param.get(params) {
            param.def.check(n)?;
        }
    }
    Ok(())
}

/// Refuses a parameter given (other than its default) to a case it does not apply to, rather
/// than ignoring it.
fn check_applicable<P: WorkloadParams>(params: &P) -> Result<()> {
    let default = P::default();
    for param in P::PARAMS.iter().filter(|param| !param.applies(params)) {
        if param.get(params) == param.get(&default) {
            continue;
        }
        let to = param.def.applies_to.unwrap_or("other cases");
        let not = params
            .mode_name()
            .map_or_else(String::new, |mode| format!(", not {mode}"));
        return Err(Error::param(
            param.def.key,
            format!("applies to {to} only{not}"),
        ));
    }
    Ok(())
}

/// The parameters the command line gave, each by its place in [`WorkloadParams::PARAMS`] with its
/// value, set in that order over the defaults: a count is held to its range, a reference tool's
/// flag without counterpart is refused with the reason, a count of 0 where 0 means off leaves its
/// parameter unset. Each parameter is found by its declaration, not by its name; errors name the
/// key.
pub fn from_command_line<P: WorkloadParams>(given: &[(usize, Given)]) -> Result<P> {
    let mut params = P::default();
    for (index, param) in P::PARAMS.iter().enumerate() {
        let Some((_, value)) = given.iter().find(|(at, _)| *at == index) else {
            continue;
        };
        if let ParamKind::Refused { tool, why, .. } = param.def.kind {
            return Err(Error::invalid(format!(
                "{tool}'s {} is not supported: {why}",
                param.def.spelling()
            )));
        }
        let Some(field) = param.field else {
            continue;
        };
        if let Given::Count(n) = *value {
            if param.def.zero_off && n == 0 {
                continue;
            }
            param.def.check(n)?;
        }
        (field.set)(&mut params, value.clone())?;
    }
    params.finish_command_line()?;
    Ok(params)
}

/// The case-name words of the parameters declared [`Param::in_case_name`] that apply to the case,
/// in declaration order: `map-kib=4096`, or for a switch that is on, `map-only`.
pub fn case_words<P: WorkloadParams>(params: &P) -> Vec<String> {
    P::PARAMS
        .iter()
        .filter(|param| param.applies(params))
        .filter_map(|param| {
            let word = param.def.case_word?;
            match param.get(params)? {
                ParamValue::Switch(true) => Some(word.to_string()),
                ParamValue::Switch(false) | ParamValue::Unset => None,
                value => Some(format!("{word}={}", value.shown()?)),
            }
        })
        .collect()
}

/// The default of the `index`-th parameter as help shows it (`1000000`, `block`); `None` when it
/// has none (an optional parameter whose help says what happens without it, or a switch).
pub fn default_text<P: WorkloadParams>(index: usize) -> Option<String> {
    P::PARAMS.get(index)?.get(&P::default())?.shown()
}

/// The declaration of the `index`-th parameter, as the registry lists them untyped.
pub fn param_at<P: WorkloadParams>(index: usize) -> Option<&'static ParamDef> {
    P::PARAMS.get(index).map(|param| &param.def)
}

/// The flag as docs/cli.md's tables spell it: `` `-l`, `--loops N` `` with its aliases.
fn markdown_spelling(def: &ParamDef) -> String {
    let value = if def.takes_value() && !def.value_name.is_empty() {
        format!(" {}", def.value_name)
    } else {
        String::new()
    };
    if matches!(def.kind, ParamKind::Command) {
        return format!("`-- {} ARGS…`", def.value_name);
    }
    let mut text = match def.short {
        Some(short) => format!("`-{short}`, `--{}{value}`", def.long),
        None => format!("`--{}{value}`", def.long),
    };
    let aliases: Vec<String> = def
        .short_aliases
        .iter()
        .map(|s| format!("`-{s}`"))
        .chain(def.aliases.iter().map(|a| format!("`--{a}`")))
        .collect();
    match aliases.len() {
        0 => {}
        1 => text.push_str(&format!(" (alias {})", aliases[0])),
        _ => text.push_str(&format!(" (aliases {})", aliases.join(", "))),
    }
    text
}

/// docs/cli.md's flag table of a workload and its refused reference flags, generated from the
/// definition (a test keeps the file equal to this).
pub fn markdown_flags<'a>(
    params: impl IntoIterator<Item = &'a ParamDef>,
    default_text: impl Fn(usize) -> Option<String>,
) -> String {
    let mut out = String::from("| flag | default | meaning |\n|---|---|---|\n");
    let mut refused = Vec::new();
    for (index, def) in params.into_iter().enumerate() {
        if let ParamKind::Refused { tool, why, .. } = def.kind {
            refused.push(format!("{} ({tool}: {why})", markdown_spelling(def)));
            continue;
        }
        let mut meaning = def.whole_help().replace('|', "\\|");
        if def.task_count {
            if !meaning.ends_with('.') {
                meaning.push('.');
            }
            meaning.push_str(
                " Also relative to the machine: `2x`, `50%` of the online CPUs, `1n` per NUMA \
                 node, `1xn`, `50%n` of a node's CPUs, with an optional `-K` (`1xn-1`); rounded \
                 down, at least 1.",
            );
        }
        let default = match def.kind {
            ParamKind::Switch => "off".to_string(),
            _ => default_text(index).map_or_else(|| "—".to_string(), |d| format!("`{d}`")),
        };
        out.push_str(&format!(
            "| {} | {default} | {meaning} |\n",
            markdown_spelling(def)
        ));
    }
    if !refused.is_empty() {
        out.push_str(&format!(
            "\nRefused, exit 2 with the reason: {}.\n",
            refused.join("; ")
        ));
    }
    out
}

/// What a count relative to the machine is counted on: its online CPUs and its NUMA nodes (a
/// guest's vCPUs and nodes for a guest's suite; a made-up machine in tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub online_cpus: u32,
    pub numa_nodes: u32,
}

impl Topology {
    /// A machine of `online_cpus` CPUs on `numa_nodes` nodes (each at least 1).
    pub fn new(online_cpus: u32, numa_nodes: u32) -> Self {
        Topology {
            online_cpus: online_cpus.max(1),
            numa_nodes: numa_nodes.max(1),
        }
    }

    /// A node's CPUs as mmtests counts them (`NUMCPUS / NUMNODES`, rounded down), at least 1.
    pub fn cpus_per_node(&self) -> u32 {
        (self.online_cpus / self.numa_nodes).max(1)
    }

    /// The machine in words, for an error about a count resolved on it.
    pub fn describe(&self) -> String {
        let nodes = if self.numa_nodes == 1 {
            "1 NUMA node".to_string()
        } else {
            format!("{} NUMA nodes", self.numa_nodes)
        };
        format!("{} online CPUs, {nodes}", self.online_cpus)
    }
}

/// A relative count's `-K` at its end, if it has one: `("1xn", 1)` of `"1xn-1"`.
fn split_offset(given: &str) -> (&str, Option<&str>) {
    match given.rsplit_once('-') {
        Some((base, offset))
            if !base.is_empty()
                && !offset.is_empty()
                && offset.chars().all(|c| c.is_ascii_digit()) =>
        {
            (base, Some(offset))
        }
        _ => (given, None),
    }
}

/// Whether `given` is written relative to the machine (`2x`, `50%`, `1n`, `1xn-1`) rather than as
/// a count.
pub fn is_relative_count(given: &str) -> bool {
    split_offset(given).0.ends_with(['x', '%', 'n'])
}

/// A count relative to the machine: `"2x"` (× the online CPUs), `"50%"` (of them), `"1n"` (one per
/// NUMA node: × the nodes), `"1xn"` and `"50%n"` (× and % of a node's CPUs), each optionally
/// followed by `-K` (`"1xn-1"`: a node's CPUs less one, as mmtests sizes schbench); rounded down,
/// then K taken off, and at least 1.
pub fn relative_count(given: &str, machine: &Topology) -> std::result::Result<u64, String> {
    let (base, offset) = split_offset(given);
    let node_cpus = f64::from(machine.cpus_per_node());
    let cpus = f64::from(machine.online_cpus);
    let (number, unit) = if let Some(n) = base.strip_suffix("xn") {
        (n, node_cpus)
    } else if let Some(n) = base.strip_suffix("%n") {
        (n, node_cpus * 0.01)
    } else if let Some(n) = base.strip_suffix('n') {
        (n, f64::from(machine.numa_nodes))
    } else if let Some(n) = base.strip_suffix('x') {
        (n, cpus)
    } else if let Some(n) = base.strip_suffix('%') {
        (n, cpus * 0.01)
    } else {
        return Err(format!("not a count, nor {RELATIVE_FORMS}"));
    };
    // Plain decimals only: f64's parser would also take "inf", "1e3" and "-1".
    let plain = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.matches('.').count() <= 1
        && number != ".";
    let factor: f64 = match number.parse() {
        Ok(f) if plain => f,
        _ => return Err(format!("{number:?} is not a plain number")),
    };
    if factor <= 0.0 {
        return Err("it must be above 0".into());
    }
    let offset = match offset.map(str::parse::<u64>) {
        None => 0,
        Some(Ok(k)) => k,
        Some(Err(_)) => return Err(format!("{given:?}: the number after - is too large")),
    };
    let count = (factor * unit).floor();
    let count = if count >= u64::MAX as f64 {
        u64::MAX
    } else {
        count as u64
    };
    Ok(count.saturating_sub(offset).max(1))
}

/// The relative forms, as errors name them.
const RELATIVE_FORMS: &str = "a multiple (\"2x\") or percentage (\"50%\") of the online CPUs, \
     per NUMA node (\"1n\") or of a node's CPUs (\"1xn\", \"50%n\"), with an optional -K (\"1xn-1\")";

/// What a task count's `-h` adds: it may be given relative to the machine, as in a suite.
pub const RELATIVE_COUNT: &str = " Also 2x, 50%, 1n, 1xn-1 (--help).";

/// What a task count's `--help` adds: the relative forms in full.
pub const RELATIVE_COUNT_LONG: &str =
    " Also relative to the machine: 2x and 50% of the online CPUs, \
     1n is one per NUMA node, 1xn and 50%n of a node's CPUs, an optional -K takes K off (1xn-1); \
     rounded down, at least 1.";

/// A count as the command line takes it: digits, with `_` between them if wanted (`800_000`),
/// and unless it is a size, one of the decimal multipliers `k`, `M` and `G` (`800k`, as the seed
/// studies write item counts: `sem 800k 2000`).
pub fn parse_count(given: &str, size: bool) -> std::result::Result<u64, String> {
    let (digits, factor) = match given.char_indices().last() {
        Some((at, 'k' | 'K')) => (&given[..at], 1_000),
        Some((at, 'M')) => (&given[..at], 1_000_000),
        Some((at, 'G')) => (&given[..at], 1_000_000_000),
        _ => (given, 1),
    };
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    if !well_formed {
        return Err(if size {
            format!("{given:?} is not a whole number (4096 or 4_096)")
        } else {
            format!("{given:?} is not a whole number (800000, 800_000 or 800k; M and G too)")
        });
    }
    if size && factor != 1 {
        return Err(format!(
            "{given:?}: a size takes no k, M or G (a k of bytes may mean 1,000 or 1,024); write the whole number"
        ));
    }
    digits
        .replace('_', "")
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| format!("{given:?} is too large"))
}

/// A task count as the command line takes it: a count, or one relative to the machine as a
/// suite may give it (`2x`, `50%`, `1n`, `1xn-1`).
pub fn parse_task_count(given: &str, machine: &Topology) -> std::result::Result<u64, String> {
    if is_relative_count(given) {
        return relative_count(given, machine);
    }
    parse_count(given, false).map_err(|_| format!("{given:?} is not a count, nor {RELATIVE_FORMS}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_separators_and_decimal_multipliers_but_sizes_only_numbers() {
        for (given, expected) in [
            ("0", 0),
            ("800000", 800_000),
            ("800_000", 800_000),
            ("800k", 800_000),
            ("800K", 800_000),
            ("2M", 2_000_000),
            ("1_500M", 1_500_000_000),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_count(given, false), Ok(expected), "{given}");
        }
        assert_eq!(parse_count("4_096", true), Ok(4_096));
        for bad in [
            "", "k", "_1", "1_", "1__0", "+1", "-1", "1.5k", "1e3", "1m", "1kk", "0x10", " 1",
        ] {
            let error = parse_count(bad, false).unwrap_err();
            assert!(error.contains("is not a whole number"), "{bad:?}: {error}");
        }
        for too_large in ["18446744073709551616", "18446744073709552k", "99999999999G"] {
            let error = parse_count(too_large, false).unwrap_err();
            assert!(error.ends_with("is too large"), "{too_large}: {error}");
        }
        let error = parse_count("4k", true).unwrap_err();
        assert!(error.contains("a size takes no k, M or G"), "{error}");
    }

    #[test]
    fn task_counts_take_the_same_counts_and_relative_ones() {
        let four = Topology::new(4, 1);
        assert_eq!(parse_task_count("1_000", &four), Ok(1_000));
        assert_eq!(parse_task_count("2k", &four), Ok(2_000));
        assert_eq!(parse_task_count("2x", &four), Ok(8));
        assert_eq!(parse_task_count("50%", &four), Ok(2));
        assert_eq!(parse_task_count("1xn-1", &four), Ok(3));
        assert!(parse_task_count("2y", &four)
            .unwrap_err()
            .contains("nor a multiple"));
    }

    /// Counts relative to nodes on one node and on a made-up 2-node machine (the topology is
    /// given, not read from sysfs): mmtests' schbench sizes, one message thread per node and a
    /// node's CPUs less one worker each.
    #[test]
    fn node_relative_counts_resolve_on_one_node_and_on_two() {
        let one = Topology::new(2, 1);
        let two = Topology::new(8, 2);
        for (given, on_one, on_two) in [
            ("1n", 1, 2),
            ("2n", 2, 4),
            ("1xn", 2, 4),
            ("1xn-1", 1, 3),
            ("50%n", 1, 2),
            ("2xn-3", 1, 5),
            ("1x", 2, 8),
            ("1x-1", 1, 7),
            ("50%", 1, 4),
            ("1n-5", 1, 1),
        ] {
            assert_eq!(relative_count(given, &one), Ok(on_one), "{given} on 1 node");
            assert_eq!(
                relative_count(given, &two),
                Ok(on_two),
                "{given} on 2 nodes"
            );
            assert!(is_relative_count(given), "{given}");
        }
        // A node's CPUs are the average, as mmtests' NUMCPUS / NUMNODES: 7 CPUs on 2 nodes.
        assert_eq!(relative_count("1xn", &Topology::new(7, 2)), Ok(3));
        assert_eq!(Topology::new(0, 0), Topology::new(1, 1));
        for bad in [
            "n",
            "xn",
            "-1n",
            "0n",
            "1n-",
            "1n--1",
            "1nx",
            "1x-1-",
            "1e3n",
            "1xn-99999999999999999999",
        ] {
            assert!(relative_count(bad, &two).is_err(), "{bad}");
        }
        assert!(!is_relative_count("1-1"));
        assert!(!is_relative_count("800k"));
    }
}
