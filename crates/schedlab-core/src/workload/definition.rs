//! What defines a workload, once: the [`WorkloadParams`] trait its parameter type implements,
//! one [`ParamDef`] per parameter, and the [`Workload`] trait of what it builds and runs. The same item feeds the command line (the binary builds its
//! flags from these), suite files (the keys), `--help`, docs/cli.md, shell completions and the man
//! page, as ripgrep's `flags/defs.rs` does for its flags. No command-line library type appears
//! here: the binary turns a [`ParamDef`] into a flag.
use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

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

/// How a parameter is written on the command line and checked.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// A switch: present means true.
    Switch,
    /// A switch that turns another one off (hackbench's `-P` against `-T`): the last given wins.
    SwitchOff { of: &'static str },
    /// A whole number, checked against this range wherever it comes from.
    Count { min: u64, max: u64 },
    /// A real number (negative values may be given).
    Number,
    /// One of a fixed list of names, each with what it means.
    Choice(&'static [(&'static str, &'static str)]),
    /// Text the parameter's own type parses (a wait strategy, a CPU list); `parse` turns the
    /// command-line text into the value a suite file would hold, or says why it cannot.
    Text {
        parse: fn(&str) -> std::result::Result<serde_json::Value, String>,
    },
    /// Names the run instead of the case (schbench's `-J/--jobname` becomes `--label`).
    Label,
    /// A program and its arguments, everything after `--` on the command line (a list of
    /// strings in a suite file).
    Command,
    /// A reference tool's flag with no counterpart here: hidden, and refused with the reason.
    Refused {
        tool: &'static str,
        takes_value: bool,
        why: &'static str,
    },
}

/// One parameter of a workload: its suite key, its flag and spellings, its help and how it is
/// checked. The default is the parameter type's `Default`, so it is written once.
#[derive(Debug, Clone, Copy)]
pub struct ParamDef {
    /// The key in suite files and stored runs (snake_case).
    pub key: &'static str,
    /// The long flag, without `--`.
    pub long: &'static str,
    pub short: Option<char>,
    /// Other long spellings that work too: a reference tool's, or an older name of this flag.
    pub aliases: &'static [&'static str],
    pub short_aliases: &'static [char],
    /// The placeholder of the value in help (`N`, `A,B`); empty for switches.
    pub value_name: &'static str,
    pub help: &'static str,
    /// The whole story, for `--help` and docs/cli.md (ranges, what each value does, how it
    /// differs from the reference tool); empty when the one-line help says it all.
    pub details: &'static str,
    pub kind: ParamKind,
    /// The size of one iteration's work, multiplied by `--scale`.
    pub work_size: bool,
    /// A count of tasks, which a suite may give relative to the machine (`"2x"`, `"50%"`).
    pub task_count: bool,
    /// A size in bytes or KiB: a plain number on the command line, since `4k` bytes would read
    /// as 4096 where other counts' `k` is 1,000.
    pub size: bool,
}

impl ParamDef {
    /// A parameter whose flag is its key with `-` for `_`; the builder methods below fill in
    /// the rest.
    pub const fn new(key: &'static str, long: &'static str, kind: ParamKind) -> Self {
        ParamDef {
            key,
            long,
            short: None,
            aliases: &[],
            short_aliases: &[],
            value_name: "",
            help: "",
            details: "",
            kind,
            work_size: false,
            task_count: false,
            size: false,
        }
    }

    pub const fn short(mut self, short: char) -> Self {
        self.short = Some(short);
        self
    }

    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    pub const fn short_aliases(mut self, short_aliases: &'static [char]) -> Self {
        self.short_aliases = short_aliases;
        self
    }

    pub const fn value(mut self, value_name: &'static str) -> Self {
        self.value_name = value_name;
        self
    }

    pub const fn help(mut self, help: &'static str) -> Self {
        self.help = help;
        self
    }

    pub const fn details(mut self, details: &'static str) -> Self {
        self.details = details;
        self
    }

    pub const fn work_size(mut self) -> Self {
        self.work_size = true;
        self
    }

    pub const fn task_count(mut self) -> Self {
        self.task_count = true;
        self
    }

    pub const fn size(mut self) -> Self {
        self.size = true;
        self
    }

    /// Whether the flag takes a value.
    pub fn takes_value(&self) -> bool {
        match self.kind {
            ParamKind::Switch | ParamKind::SwitchOff { .. } => false,
            ParamKind::Refused { takes_value, .. } => takes_value,
            _ => true,
        }
    }

    /// The whole story, for `--help` and docs/cli.md: the details where there are some (ranges
    /// included), else the one-line help with the range or the choices spelt out.
    pub fn whole_help(&self) -> String {
        if !self.details.is_empty() {
            return self.details.to_string();
        }
        let mut whole = self.help.to_string();
        match self.kind {
            ParamKind::Count { min, max } => whole.push_str(&format!(" ({min} to {max})")),
            ParamKind::Choice(choices) => {
                let names: Vec<String> = choices
                    .iter()
                    .map(|(name, what)| format!("`{name}`: {what}"))
                    .collect();
                whole.push_str(&format!(" ({})", names.join("; ")));
            }
            _ => {}
        }
        whole
    }

    /// `-l/--loops`, as errors name a flag.
    pub fn spelling(&self) -> String {
        if matches!(self.kind, ParamKind::Command) {
            return format!("-- {} ARGS…", self.value_name);
        }
        match self.short {
            Some(short) => format!("-{short}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// Checks a whole number against this parameter's range, naming the parameter.
    pub fn check(&self, value: u64) -> Result<()> {
        if let ParamKind::Count { min, max } = self.kind {
            check_range(self.key, value, min, max)?;
        }
        Ok(())
    }
}

/// The error of a parameter out of its range: it names the key, so the command line can say
/// `--flag` and a suite file `key` at its line and column.
pub fn check_range(key: &'static str, value: u64, min: u64, max: u64) -> Result<()> {
    if value < min || value > max {
        return Err(Error::param(
            key,
            format!("must be between {min} and {max}, not {value}"),
        ));
    }
    Ok(())
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
    /// Every flag, in help order.
    const PARAMS: &'static [ParamDef];

    /// The workload's own rules: parameters that must fit together or with this machine. The
    /// range of each count is checked from [`Self::PARAMS`] before, by [`Self::validate`].
    fn check_rules(&self) -> Result<()>;

    /// What one iteration starts at once (tasks, and descriptors beyond schedlab's own), which
    /// [`Self::validate`] holds to this machine's limits: declared by every workload, so that
    /// none can forget the check.
    fn task_budget(&self) -> TaskBudget;

    /// Every check: each count against its range, the workload's own rules, then its task
    /// budget against this machine's limits.
    fn validate(&self) -> Result<()> {
        check_counts(self)?;
        self.check_rules()?;
        self.task_budget().check()
    }

    /// The canonical case name: the workload and every parameter that changes what is measured.
    fn case_name(&self) -> String;

    /// The same case with its work sizes (the `work_size` parameters of [`Self::PARAMS`])
    /// multiplied by `factor`, each rounded and at least 1: the declaration is what is scaled.
    fn scaled(&self, factor: f64) -> Result<Self> {
        let mut values = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(values)) => values,
            Ok(_) => return Err(Error::invalid(format!("{} is not a table", Self::NAME))),
            Err(e) => return Err(Error::invalid(e.to_string())),
        };
        for def in Self::PARAMS.iter().filter(|def| def.work_size) {
            if let Some(n) = values.get(def.key).and_then(serde_json::Value::as_u64) {
                values.insert(def.key.to_string(), scale_count(n, factor).into());
            }
        }
        serde_json::from_value(serde_json::Value::Object(values))
            .map_err(|e| Error::invalid(e.to_string()))
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

    /// Command-line conventions of the reference tool that a suite file does not have (schbench's
    /// 0 meaning "the default"), applied to the values given before they are read.
    fn adjust_command_line(
        values: &mut serde_json::Map<String, serde_json::Value>,
    ) -> std::result::Result<(), Error> {
        let _ = values;
        Ok(())
    }

    /// The parameters with each default that means the same on every machine written out, as
    /// the case ran (cpudl's `variant`): what `compare --across` reads, so that a case which left
    /// the key out lands on its value's side. Defaults that depend on the machine stay unset.
    fn settled(&self) -> Self {
        self.clone()
    }

    fn build(&self) -> Result<Box<dyn Workload>>;
}

/// A work size times `factor`, rounded, at least 1.
fn scale_count(value: u64, factor: f64) -> u64 {
    ((value as f64 * factor).round() as u64).max(1)
}

/// Checks every counted parameter of `params` against its range in its definition.
fn check_counts<P: WorkloadParams>(params: &P) -> Result<()> {
    let value = serde_json::to_value(params).map_err(|e| Error::invalid(e.to_string()))?;
    for def in P::PARAMS {
        if let Some(n) = value.get(def.key).and_then(serde_json::Value::as_u64) {
            def.check(n)?;
        }
    }
    Ok(())
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
pub fn markdown_flags(
    params: &[ParamDef],
    default_text: impl Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::from("| flag | default | meaning |\n|---|---|---|\n");
    let mut refused = Vec::new();
    for def in params {
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
                " Also relative to the online CPUs: `2x`, `50%` (rounded down, at least 1).",
            );
        }
        let default = match def.kind {
            ParamKind::Switch => "off".to_string(),
            _ => default_text(def.key).map_or_else(|| "—".to_string(), |d| format!("`{d}`")),
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

/// `"2x"` (× CPUs) or `"50%"` (of CPUs), rounded down and at least 1.
pub fn relative_count(given: &str, cpus: u32) -> std::result::Result<u64, String> {
    let (number, per_cpu) = if let Some(n) = given.strip_suffix('x') {
        (n, 1.0)
    } else if let Some(n) = given.strip_suffix('%') {
        (n, 0.01)
    } else {
        return Err("not a count, nor a multiple (\"2x\") or percentage (\"50%\")".into());
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
    let count = (factor * per_cpu * f64::from(cpus)).floor();
    Ok(if count >= u64::MAX as f64 {
        u64::MAX
    } else {
        (count as u64).max(1)
    })
}

/// What a task count's help adds: it may be given relative to the machine, as in a suite.
pub const RELATIVE_COUNT: &str = " Also relative to the online CPUs: 2x, 50%.";

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

/// A task count as the command line takes it: a count, or one relative to the machine's
/// `online_cpus` as a suite may give it (`2x`, `50%`).
pub fn parse_task_count(given: &str, online_cpus: u32) -> std::result::Result<u64, String> {
    if given.ends_with(['x', '%']) {
        return relative_count(given, online_cpus);
    }
    parse_count(given, false).map_err(|_| {
        format!(
            "{given:?} is not a count, nor a multiple (\"2x\") or percentage (\"50%\") of the online CPUs"
        )
    })
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
        assert_eq!(parse_task_count("1_000", 4), Ok(1_000));
        assert_eq!(parse_task_count("2k", 4), Ok(2_000));
        assert_eq!(parse_task_count("2x", 4), Ok(8));
        assert_eq!(parse_task_count("50%", 4), Ok(2));
        assert!(parse_task_count("2y", 4)
            .unwrap_err()
            .contains("nor a multiple"));
    }
}
