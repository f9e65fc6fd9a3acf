//! Suites: named lists of cases in TOML, with parameter matrices (products), iterations, warm-up,
//! cool-down between cases and a listed or seeded random case order. Task counts may be relative
//! to the machine (`threads = "2x"`, `groups = "50%"` of the online CPUs), resolved when the suite
//! is read for a run, so the run's plan stores the numbers that ran; any count may be written as
//! on the command line (`items = "800k"`). The built-in ones are files
//! embedded in the binary; a user's own suite file has the same format (docs/suites.md).
use serde::Deserialize;

use crate::workload::scenario::ScenarioParams;
use crate::workload::{
    is_relative_count, parse_count, relative_count, KeyError, ParamKind, Topology,
    WorkloadDefinition, WorkloadSpec,
};
use crate::{Error, Result};

/// In which order a run visits the cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseOrder {
    /// As listed (matrix combinations in the order their keys and values are written).
    #[default]
    Listed,
    /// Shuffled with a seed that is recorded with the run.
    Random,
}

/// A parsed suite: its settings and its cases, every matrix expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub description: String,
    /// Measured iterations per case, unless the command line says otherwise.
    pub iterations: Option<u32>,
    /// Warm-up iterations per case, unless the command line says otherwise.
    pub warmup: Option<u32>,
    /// Pause between cases, so one case's heat and queues do not carry into the next.
    pub cooldown_sec: f64,
    pub order: CaseOrder,
    /// Seed of the random order; drawn at run time (and recorded) when absent.
    pub seed: Option<u64>,
    pub cases: Vec<WorkloadSpec>,
    /// Each case's co-runners (its `background` key), in the order of `cases`.
    pub backgrounds: Vec<Vec<WorkloadSpec>>,
}

/// The file as written, before matrices are expanded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    description: String,
    iterations: Option<toml::Spanned<u32>>,
    warmup: Option<toml::Spanned<u32>>,
    cooldown_sec: Option<toml::Spanned<f64>>,
    #[serde(default)]
    order: CaseOrder,
    seed: Option<u64>,
    #[serde(rename = "case", default)]
    cases: Vec<toml::Spanned<toml::Table>>,
}

/// The suites compiled into schedlab, by name.
pub const BUILTIN_SUITES: &[(&str, &str)] = &[
    ("quick", include_str!("../suites/quick.toml")),
    (
        "hackbench-matrix",
        include_str!("../suites/hackbench-matrix.toml"),
    ),
    ("ipc-wait", include_str!("../suites/ipc-wait.toml")),
    ("idle-poll", include_str!("../suites/idle-poll.toml")),
    (
        "hackbench-matrix-schedtests",
        include_str!("../suites/hackbench-matrix-schedtests.toml"),
    ),
    (
        "syscall-scaling",
        include_str!("../suites/syscall-scaling.toml"),
    ),
    ("cpudl-sweep", include_str!("../suites/cpudl-sweep.toml")),
    ("rump-sweep", include_str!("../suites/rump-sweep.toml")),
    (
        "schbench-matrix",
        include_str!("../suites/schbench-matrix.toml"),
    ),
    (
        "mmtests-schbench",
        include_str!("../suites/mmtests-schbench.toml"),
    ),
    ("vcpu-preempt", include_str!("../suites/vcpu-preempt.toml")),
    (
        "contention-sweep",
        include_str!("../suites/contention-sweep.toml"),
    ),
    ("rt-cpupri", include_str!("../suites/rt-cpupri.toml")),
    (
        "sem-beside-hog",
        include_str!("../suites/sem-beside-hog.toml"),
    ),
    ("unicpu-mp", include_str!("../suites/unicpu-mp.toml")),
];

impl Suite {
    /// Parses suite text for this machine: expands every `[case.matrix]` and resolves counts
    /// relative to its online CPUs; errors name the line and column.
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        Suite::parse_on(name, text, &crate::fingerprint::topology())
    }

    /// [`Suite::parse`] for a machine with `online_cpus` CPUs on one NUMA node.
    pub fn parse_for(name: &str, text: &str, online_cpus: u32) -> Result<Self> {
        Suite::parse_on(name, text, &Topology::new(online_cpus, 1))
    }

    /// [`Suite::parse`] for the machine `machine` (its CPUs and NUMA nodes).
    pub fn parse_on(name: &str, text: &str, machine: &Topology) -> Result<Self> {
        let file: SuiteFile = toml::from_str(text)
            .map_err(|e| Error::invalid(format!("suite {name}: {}", one_line(&e, text))))?;
        if file.cases.is_empty() {
            return Err(Error::invalid(format!(
                "suite {name} has no [[case]] entries"
            )));
        }
        let cooldown_sec = check_settings(name, text, &file)?;
        let (mut cases, mut backgrounds) = (Vec::new(), Vec::new());
        for (index, spanned) in file.cases.iter().enumerate() {
            let reader = CaseReader {
                suite: name,
                text,
                index,
                at: position(text, spanned.span().start),
                machine,
            };
            for (spec, background) in reader.read(spanned.get_ref())? {
                cases.push(spec);
                backgrounds.push(background);
            }
        }
        Ok(Suite {
            name: name.to_string(),
            description: file.description,
            iterations: file.iterations.map(toml::Spanned::into_inner),
            warmup: file.warmup.map(toml::Spanned::into_inner),
            cooldown_sec,
            order: file.order,
            seed: file.seed,
            cases,
            backgrounds,
        })
    }

    /// Multiplies every case's work size (its `work_size` parameters) by `factor`, keeping at least 1, so a
    /// suite written for minutes on 2 CPUs can be shrunk for a smoke test or grown for a big box.
    pub fn scaled(mut self, factor: f64) -> Result<Self> {
        crate::plan::check_scale(factor).map_err(|why| Error::invalid(format!("--scale {why}")))?;
        for case in &mut self.cases {
            *case = case.scaled(factor)?;
            case.validate()?;
        }
        Ok(self)
    }

    pub fn builtin(name: &str) -> Option<Self> {
        BUILTIN_SUITES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Suite::parse(n, text).expect("built-in suites parse (tested)"))
    }

    /// A built-in suite by name, or else a suite file at that path.
    pub fn load(name_or_path: &str) -> Result<Self> {
        Suite::load_on(name_or_path, &crate::fingerprint::topology())
    }

    /// [`Suite::load`] with counts relative to a machine of `online_cpus` CPUs (a guest's vCPUs).
    /// A built-in suite parses on this machine (tested), but its counts relative to another may
    /// break a limit, which is an error like any suite's.
    pub fn load_for(name_or_path: &str, online_cpus: u32) -> Result<Self> {
        Suite::load_on(name_or_path, &Topology::new(online_cpus, 1))
    }

    /// [`Suite::load`] with counts relative to `machine` (a guest's vCPUs and NUMA nodes).
    pub fn load_on(name_or_path: &str, machine: &Topology) -> Result<Self> {
        if let Some((name, text)) = BUILTIN_SUITES.iter().find(|(n, _)| *n == name_or_path) {
            return Suite::parse_on(name, text, machine);
        }
        let path = std::path::Path::new(name_or_path);
        if !path.exists() {
            let names: Vec<&str> = BUILTIN_SUITES.iter().map(|(n, _)| *n).collect();
            return Err(Error::invalid(format!(
                "no built-in suite or suite file named {name_or_path:?} (built-in: {})",
                names.join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("cannot read suite file {name_or_path}: {e}")))?;
        Suite::parse_on(name_or_path, &text, machine)
    }
}

/// One `[[case]]` of a suite being read for `machine`, and where its errors point.
struct CaseReader<'a> {
    suite: &'a str,
    text: &'a str,
    /// Its place among the file's cases, and where its `[[case]]` line is.
    index: usize,
    at: String,
    machine: &'a Topology,
}

impl CaseReader<'_> {
    /// Every combination of the case's matrix as a workload with its co-runners, each checked; a
    /// combination the same as an earlier one is left out ("25%" and "50%" are one count on a
    /// small machine: run that case once).
    fn read(&self, case: &toml::Table) -> Result<Vec<(WorkloadSpec, Vec<WorkloadSpec>)>> {
        let mut from_this: Vec<(WorkloadSpec, Vec<WorkloadSpec>)> = Vec::new();
        let tables = expand_matrix(case, self.machine)
            .map_err(|(key, why)| self.invalid(self.place(Some(&key), true), why))?;
        for table in tables {
            let case = self.read_combination(table)?;
            if !from_this.contains(&case) {
                from_this.push(case);
            }
        }
        Ok(from_this)
    }

    /// One combination's table: its co-runners, its counts resolved for the machine, its
    /// workload read and checked, then its co-runners checked.
    fn read_combination(
        &self,
        mut table: toml::Table,
    ) -> Result<(WorkloadSpec, Vec<WorkloadSpec>)> {
        let background = table
            .remove("background")
            .map(|value| read_background(value, self.machine))
            .transpose()
            .map_err(|why| {
                let at = self.place(Some("background"), false);
                self.invalid(at, format_args!("background: {why}"))
            })?
            .unwrap_or_default();
        let relative = resolve_counts(&mut table, self.machine)
            .map_err(|(key, why)| self.invalid(self.place(Some(&key), false), why))?;
        let spec = self.read_spec(table, &relative)?;
        self.check_background(&background)?;
        Ok((spec, background))
    }

    /// The combination's workload, refused where the file or (through `relative` counts) the
    /// machine made it wrong.
    fn read_spec(&self, table: toml::Table, relative: &[Resolved]) -> Result<WorkloadSpec> {
        let resolved = |key: Option<&str>| relative.iter().any(|r| Some(r.key.as_str()) == key);
        let spec = read_case(table).map_err(|e| match &e {
            KeyError::Range(range) if resolved(e.key()) => self.machine_made(relative, range),
            _ => self.invalid(self.place(e.key(), false), &e),
        })?;
        if !relative.is_empty() {
            spec.validate()
                .map_err(|e| self.machine_made(relative, &e))?;
        }
        // A value out of its range is the file's doing: point at its key. Rules that depend on
        // this machine (its CPUs, its limits) are checked when the plan is made.
        if let Err(Error::InvalidParam { key, reason }) = spec.validate() {
            return Err(self.invalid(self.place(Some(key), false), format_args!("{key} {reason}")));
        }
        // A scenario's own shape is the file's doing too (its machine checks wait for the
        // plan).
        if let WorkloadSpec::Scenario(scenario) = &spec {
            scenario
                .check_file()
                .map_err(|e| self.invalid(self.place(None, false), e))?;
        }
        Ok(spec)
    }

    /// Each co-runner's own checks: co-runners need no end of their own, so a scenario's are
    /// checked with one.
    fn check_background(&self, background: &[WorkloadSpec]) -> Result<()> {
        for co_runner in background {
            let checked = match co_runner {
                WorkloadSpec::Scenario(scenario) => scenario.as_checked_co_runner().check_file(),
                other => other.validate(),
            };
            checked.map_err(|e| {
                let at = self.place(Some("background"), false);
                self.invalid(at, format_args!("background: {e}"))
            })?;
        }
        Ok(())
    }

    /// Where a key of this case is written (in the case, else in its matrix; the matrix first
    /// for the matrix's own errors), else the case's `[[case]]` line.
    fn place(&self, key: Option<&str>, matrix_first: bool) -> String {
        key.and_then(|key| case_key_offset(self.text, self.index, key, matrix_first))
            .map_or_else(|| self.at.clone(), |offset| position(self.text, offset))
    }

    /// The error `why` at `place` of this suite.
    fn invalid(&self, place: String, why: impl std::fmt::Display) -> Error {
        Error::invalid(format!("suite {}: {place}: {why}", self.suite))
    }

    /// A resolved count out of range is this machine's doing: say which value made it.
    fn machine_made(&self, relative: &[Resolved], e: &Error) -> Error {
        let values: Vec<String> = relative
            .iter()
            .map(|r| format!("{} = {:?} is {}", r.key, r.given, r.count))
            .collect();
        Error::invalid(format!(
            "suite {}: {}: {} on this machine ({}): {e}",
            self.suite,
            self.place(relative.first().map(|r| r.key.as_str()), false),
            values.join(", "),
            self.machine.describe()
        ))
    }
}

/// The suite's own settings, each refused at its key (a run would refuse them without a place);
/// returns the cool-down.
fn check_settings(name: &str, text: &str, file: &SuiteFile) -> Result<f64> {
    let top_at = |key: &str, value: std::ops::Range<usize>| {
        top_key_offset(text, key)
            .map_or_else(|| position(text, value.start), |at| position(text, at))
    };
    let cooldown_sec = match &file.cooldown_sec {
        Some(cooldown) => {
            let seconds = *cooldown.get_ref();
            crate::plan::check_cooldown_sec(seconds).map_err(|why| {
                let at = top_at("cooldown_sec", cooldown.span());
                Error::invalid(format!("suite {name}: {at}: cooldown_sec {why}"))
            })?;
            seconds
        }
        None => 0.0,
    };
    if let Some(iterations) = &file.iterations {
        if let Err(why) = crate::plan::check_iterations(*iterations.get_ref()) {
            return Err(Error::invalid(format!(
                "suite {name}: {}: iterations {why}",
                top_at("iterations", iterations.span())
            )));
        }
    }
    if let Some(warmup) = &file.warmup {
        if let Err(why) = crate::plan::check_warmup(*warmup.get_ref()) {
            return Err(Error::invalid(format!(
                "suite {name}: {}: warmup {why}",
                top_at("warmup", warmup.span())
            )));
        }
    }
    Ok(cooldown_sec)
}

/// A count resolved from its relative form: the key, the value as written, and the count.
struct Resolved {
    key: String,
    given: String,
    count: u64,
}

/// Replaces every count a case writes as text with its number: one written as on the command
/// line (`"800k"`, `"800_000"`; sizes take no multiplier) or, for a task count, one relative to
/// `machine` (`"2x"`, `"50%"`, `"1n"`, `"1xn-1"`). Returns the relative ones it resolved; an
/// error is the key and why.
fn resolve_counts(
    table: &mut toml::Table,
    machine: &Topology,
) -> std::result::Result<Vec<Resolved>, (String, String)> {
    let workload = table
        .get("workload")
        .and_then(toml::Value::as_str)
        .unwrap_or_default();
    let Some(definition) = WorkloadDefinition::find(workload) else {
        return Ok(Vec::new());
    };
    let mut resolved = Vec::new();
    for def in definition.params {
        if !matches!(def.kind, ParamKind::Count { .. }) {
            continue;
        }
        let Some(toml::Value::String(given)) = table.get(def.key) else {
            continue;
        };
        let (key, given) = (def.key, given.clone());
        let relative = def.task_count && is_relative_count(&given);
        let count = if relative {
            relative_count(&given, machine)
        } else {
            parse_count(&given, def.size)
        }
        .map_err(|why| {
            let hint = if def.task_count {
                format!(
                    "; give a count, or one relative to the machine ({} here): \
                     \"2x\" is twice the CPUs, \"50%\" half of them, \"1n\" one per node, \
                     \"1xn-1\" a node's CPUs less one (at least 1)",
                    machine.describe()
                )
            } else {
                String::new()
            };
            (key.to_string(), format!("{key} = {given:?}: {why}{hint}"))
        })?;
        table.insert(
            key.to_string(),
            toml::Value::Integer(i64::try_from(count).unwrap_or(i64::MAX)),
        );
        if relative {
            resolved.push(Resolved {
                key: key.to_string(),
                given,
                count,
            });
        }
    }
    Ok(resolved)
}

/// A case's `background`: one co-runner's table or a list of them. A table with `workload` is
/// that workload with its keys, read as a case's are (counts relative to the machine resolved);
/// one without is a scenario's keys inline, or `file = "PATH"`, as a scenario case takes them.
fn read_background(
    value: toml::Value,
    machine: &Topology,
) -> std::result::Result<Vec<WorkloadSpec>, String> {
    let one = |value: toml::Value| match value {
        toml::Value::Table(mut table) if table.contains_key("workload") => {
            resolve_counts(&mut table, machine).map_err(|(key, why)| format!("{key}: {why}"))?;
            read_case(table).map_err(|e| e.to_string())
        }
        table @ toml::Value::Table(_) => table
            .try_into::<ScenarioParams>()
            .map(WorkloadSpec::Scenario)
            .map_err(|e| e.message().trim().replace('\n', " ")),
        _ => Err(
            "give a table: workload = \"NAME\" and its keys, a scenario's keys, or \
                  file = \"PATH\" (or a list of such tables)"
                .to_string(),
        ),
    };
    match value {
        toml::Value::Array(list) => list.into_iter().map(one).collect(),
        value => one(value).map(|spec| vec![spec]),
    }
}

/// `line L, column C` of a byte offset.
fn position(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("line {line}, column {column}")
}

/// A case's table as a workload; the error knows the key at fault where one is.
fn read_case(table: toml::Table) -> std::result::Result<WorkloadSpec, KeyError> {
    let fields: serde_json::Map<String, serde_json::Value> =
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| KeyError::Value {
                key: None,
                reason: e.message().trim().replace('\n', " "),
            })?;
    WorkloadSpec::from_keys(fields)
}

/// Where `key` is written in the `index`th `[[case]]` table or its `[case.matrix]` (the matrix
/// first when `matrix_first`), from the document's own spans.
fn case_key_offset(text: &str, index: usize, key: &str, matrix_first: bool) -> Option<usize> {
    let document = toml::de::DeTable::parse(text).ok()?;
    let case = document
        .get_ref()
        .get("case")?
        .get_ref()
        .as_array()?
        .get(index)?;
    let case = case.get_ref().as_table()?;
    let in_case = || case.get_key_value(key).map(|(k, _)| k.span().start);
    let in_matrix = || {
        let matrix = case.get("matrix")?.get_ref().as_table()?;
        matrix.get_key_value(key).map(|(k, _)| k.span().start)
    };
    if matrix_first {
        in_matrix().or_else(in_case)
    } else {
        in_case().or_else(in_matrix)
    }
}

/// Where the top-level `key` is written.
fn top_key_offset(text: &str, key: &str) -> Option<usize> {
    let document = toml::de::DeTable::parse(text).ok()?;
    let (key, _) = document.get_ref().get_key_value(key)?;
    Some(key.span().start)
}

/// One table per combination of the case's `matrix` values (a cartesian product in the order the
/// keys and values are written); the case itself when it has no matrix. A value written
/// `{ powers_of_two_up_to = BOUND }` is the series 1, 2, 4, … below the bound and the bound itself
/// (mmtests' `threads_powertwo`), the bound a count or one relative to `machine` (`"1xn-1"`).
fn expand_matrix(
    case: &toml::Table,
    machine: &Topology,
) -> std::result::Result<Vec<toml::Table>, (String, String)> {
    let mut base = case.clone();
    let Some(matrix) = base.remove("matrix") else {
        return Ok(vec![base]);
    };
    let toml::Value::Table(matrix) = matrix else {
        return Err((
            "matrix".into(),
            "`matrix` must be a table of arrays, e.g. [case.matrix] groups = [1, 2]".into(),
        ));
    };
    let mut combinations = vec![base];
    for (key, values) in matrix {
        let toml::Value::Array(values) = values else {
            return Err((
                key.clone(),
                format!("matrix key `{key}` must be an array of values"),
            ));
        };
        if values.is_empty() {
            return Err((key.clone(), format!("matrix key `{key}` has no values")));
        }
        let values = expand_series(&key, values, machine)?;
        if combinations[0].contains_key(&key) {
            return Err((
                key.clone(),
                format!("`{key}` is set both in the case and in its matrix"),
            ));
        }
        let mut expanded = Vec::with_capacity(combinations.len() * values.len());
        for table in &combinations {
            for value in &values {
                let mut table = table.clone();
                table.insert(key.clone(), value.clone());
                expanded.push(table);
            }
        }
        combinations = expanded;
    }
    Ok(combinations)
}

/// A matrix key's values with every `{ powers_of_two_up_to = BOUND }` replaced by its series.
fn expand_series(
    key: &str,
    values: Vec<toml::Value>,
    machine: &Topology,
) -> std::result::Result<Vec<toml::Value>, (String, String)> {
    let mut expanded = Vec::with_capacity(values.len());
    for value in values {
        let toml::Value::Table(series) = &value else {
            expanded.push(value);
            continue;
        };
        let why = |what: String| {
            (
                key.to_string(),
                format!(
                    "matrix key `{key}`: {what}; write {{ powers_of_two_up_to = 8 }} or \"1xn-1\""
                ),
            )
        };
        let bound =
            match (series.len(), series.get("powers_of_two_up_to")) {
                (1, Some(toml::Value::Integer(n))) if *n >= 1 => *n as u64,
                (1, Some(toml::Value::String(given))) => if is_relative_count(given) {
                    relative_count(given, machine)
                } else {
                    parse_count(given, false)
                }
                .map_err(|e| why(format!("powers_of_two_up_to = {given:?}: {e}")))?
                .max(1),
                _ => return Err(why(
                    "a table in a matrix is only { powers_of_two_up_to = BOUND }, BOUND at least 1"
                        .into(),
                )),
            };
        let bound = i64::try_from(bound).unwrap_or(i64::MAX);
        let mut n: i64 = 1;
        while n < bound {
            expanded.push(toml::Value::Integer(n));
            n = n.saturating_mul(2);
        }
        expanded.push(toml::Value::Integer(bound));
    }
    Ok(expanded)
}

/// toml's messages span several lines with a source excerpt; keep the position and the reason.
/// An error in a value (a number too large for TOML, a wrong type) is reported at its key,
/// which it names: `line 4, column 1: loops: ...`.
fn one_line(error: &toml::de::Error, text: &str) -> String {
    let mut reason = error.message().trim().replace('\n', " ");
    // toml's words for an integer beyond i64, which a table can hold no other way.
    if reason == "u64 value was too large"
        || (reason.starts_with("invalid type: integer `")
            && reason.ends_with(" as i128, expected any valid TOML value"))
    {
        reason = format!(
            "out of range: a TOML integer is between {} and {}",
            i64::MIN,
            i64::MAX
        );
    }
    let Some(span) = error.span() else {
        return reason;
    };
    let mut at = span.start.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if let Some((written, _)) = text[line_start..at].split_once('=') {
        let key = written.trim();
        let bare = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if bare {
            at = line_start + (written.len() - written.trim_start().len());
            if !reason.contains(&format!("`{key}`")) {
                reason = format!("{key}: {reason}");
            }
        }
    }
    format!("{}: {reason}", position(text, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_suite_parses_and_validates() {
        for (name, _) in BUILTIN_SUITES {
            let suite = Suite::builtin(name).unwrap();
            for case in &suite.cases {
                case.validate().unwrap();
            }
        }
    }

    /// `--scale` claims to scale every workload's work size: each key names a field some
    /// workload has, and every workload that does timed work has exactly one of them.
    #[test]
    fn scaling_multiplies_exactly_the_declared_work_sizes() {
        for definition in crate::workload::WORKLOADS {
            let spec = definition.default_spec();
            let before = serde_json::to_value(&spec).unwrap();
            let after = serde_json::to_value(spec.scaled(3.0).unwrap()).unwrap();
            let changed: Vec<&str> = before
                .as_object()
                .unwrap()
                .iter()
                .filter(|(key, value)| after.get(key.as_str()) != Some(*value))
                .map(|(key, _)| key.as_str())
                .collect();
            let declared: Vec<&str> = definition.work_size_keys().map(|p| p.key).collect();
            assert_eq!(changed, declared, "{}", definition.name);
            // Every workload but the synthetic one, a user's tool (whose size is in its own
            // arguments) and a scenario (whose durations and loops are in its own file) has a
            // size of work.
            assert_eq!(
                declared.len(),
                usize::from(!matches!(definition.name, "fake" | "external" | "scenario")),
                "{}",
                definition.name
            );
        }
    }

    #[test]
    fn quick_has_pipe_and_messaging() {
        let quick = Suite::builtin("quick").unwrap();
        assert!(quick.cases.iter().any(|c| c.kind() == "pipe"));
        assert!(quick.cases.iter().any(|c| c.kind() == "messaging"));
    }

    /// contention-sweep says it covers every testcase; a testcase added later must join it.
    #[test]
    fn contention_sweep_has_every_testcase() {
        let definition = crate::workload::WORKLOADS
            .iter()
            .find(|d| d.name == "contention")
            .unwrap();
        let testcase = definition.params.iter().find(|p| p.key == "testcase");
        let Some(ParamKind::Choice(choices)) = testcase.map(|p| p.kind) else {
            panic!("contention's testcase is a choice");
        };
        let suite = Suite::builtin("contention-sweep").unwrap();
        let swept: Vec<serde_json::Value> = suite
            .cases
            .iter()
            .map(|c| serde_json::to_value(c).unwrap()["testcase"].clone())
            .collect();
        for (name, _) in choices {
            assert!(swept.iter().any(|t| t == name), "{name} is not swept");
        }
    }

    #[test]
    fn errors_name_line_and_column() {
        let text = "description = \"x\"\n[[case]]\nworkload = \"pipe\"\nloopz = 3\n";
        let err = Suite::parse("mine.toml", text).unwrap_err().to_string();
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("loopz"), "{err}");
    }

    #[test]
    fn a_value_out_of_range_names_its_key_line_and_column() {
        let text = "description = \"x\"\n[[case]]\nworkload = \"messaging\"\ngroups = 0\n";
        let err = Suite::parse("mine.toml", text).unwrap_err().to_string();
        assert_eq!(
            err,
            "suite mine.toml: line 4, column 1: groups must be between 1 and 10000, not 0"
        );
    }

    #[test]
    fn matrices_expand_in_written_order() {
        let text = "description = \"m\"\ncooldown_sec = 2\norder = \"random\"\nseed = 9\n\
                    [[case]]\nworkload = \"messaging\"\nloops = 10\n\
                    [case.matrix]\nthreads = [false, true]\ngroups = [2, 1]\n";
        let suite = Suite::parse("m", text).unwrap();
        let names: Vec<String> = suite.cases.iter().map(WorkloadSpec::case_name).collect();
        // Not in the keys' or values' alphabetical order: the last key varies fastest.
        let expected = [
            ("process", "groups=2"),
            ("process", "groups=1"),
            ("threads", "groups=2"),
            ("threads", "groups=1"),
        ];
        assert_eq!(names.len(), expected.len());
        for (name, (tasks, groups)) in names.iter().zip(expected) {
            assert!(name.contains(tasks) && name.contains(groups), "{names:?}");
        }
        assert_eq!(
            (suite.cooldown_sec, suite.order, suite.seed),
            (2.0, CaseOrder::Random, Some(9))
        );
    }

    #[test]
    fn matrix_errors_point_at_the_matrix_key() {
        let both = "description = \"m\"\n[[case]]\nworkload = \"pipe\"\nloops = 1\n[case.matrix]\nloops = [1, 2]\n";
        let err = Suite::parse("m", both).unwrap_err().to_string();
        assert!(
            err.contains("line 6, column 1") && err.contains("both"),
            "{err}"
        );
        let unknown =
            "description = \"m\"\n[[case]]\nworkload = \"pipe\"\n[case.matrix]\nloopz = [1, 2]\n";
        let err = Suite::parse("m", unknown).unwrap_err().to_string();
        assert!(err.contains("line 5") && err.contains("loopz"), "{err}");
        for (matrix, why) in [
            ("loops = []", "matrix key `loops` has no values"),
            ("loops = 3", "matrix key `loops` must be an array of values"),
            ("loops = [3, true]", "loops: invalid type: boolean `true`"),
        ] {
            let err = error_on_2_cpus(&format!(
                "workload = \"pipe\"\nthreaded = true\n[case.matrix]\n{matrix}\n"
            ));
            assert!(err.starts_with("suite m.toml: line 6, column 1: "), "{err}");
            assert!(err.contains(why), "{err}");
        }
        let err = error_on_2_cpus("workload = \"pipe\"\n  matrix = 3\n");
        assert!(
            err.starts_with("suite m.toml: line 4, column 3: `matrix` must be a table"),
            "{err}"
        );
    }

    /// A value that does not read as its key's type is reported at the key, which it names, not
    /// at the `[[case]]` line (line 2 here).
    #[test]
    fn errors_inside_a_case_name_the_key_at_its_line() {
        for (case, expected) in [
            ("loops = true", "line 4, column 1: loops: invalid type: boolean `true`, expected u64"),
            ("loops = 1.5", "line 4, column 1: loops: invalid type: floating point `1.5`"),
            ("loops = {a = 1}", "line 4, column 1: loops: invalid type: map"),
            ("  cpus = \"0-\"", "line 4, column 3: cpus: invalid type: string \"0-\", expected an array of length 2"),
            ("loops = 18446744073709551615", "line 4, column 1: loops: out of range: a TOML integer is between"),
            ("loops = 99999999999999999999", "line 4, column 1: loops: out of range: a TOML integer is between"),
            ("loops = -1", "line 4, column 1: loops must be between 1 and 10000000000, not -1"),
            ("threaded = \"yes\"", "line 4, column 1: threaded: invalid type: string \"yes\""),
        ] {
            let err = error_on_2_cpus(&format!("workload = \"pipe\"\n{case}\n"));
            assert!(err.starts_with(&format!("suite m.toml: {expected}")), "{case}: {err}");
        }
        let err = error_on_2_cpus("workload = \"nosuch\"\n");
        assert!(
            err.starts_with("suite m.toml: line 3, column 1: ")
                && err.contains("unknown workload `nosuch`"),
            "{err}"
        );
        let err = error_on_2_cpus("workload = 3\n");
        assert!(
            err.starts_with("suite m.toml: line 3, column 1: `workload`"),
            "{err}"
        );
        // In the second case, not the first; a count too big for its type gets its range.
        let err = error_on_2_cpus(
            "workload = \"pipe\"\n[[case]]\nworkload = \"fake\"\nfail_at = 4294967296\n",
        );
        assert_eq!(
            err,
            "suite m.toml: line 6, column 1: fail_at must be between 0 and 4294967295, not 4294967296"
        );
    }

    /// The suite's own settings are refused at their keys, named as the file names them.
    #[test]
    fn bad_settings_name_their_key_and_line() {
        for (setting, expected) in [
            (
                "iterations = 0",
                "line 2, column 1: iterations must be between 1 and 100000, not 0",
            ),
            (
                "warmup = 100001",
                "line 2, column 1: warmup must be at most 100000, not 100001",
            ),
            (
                "cooldown_sec = -1",
                "line 2, column 1: cooldown_sec must be between 0 and 3600, not -1",
            ),
            (
                "cooldown_sec = nan",
                "line 2, column 1: cooldown_sec must be between 0 and 3600, not NaN",
            ),
            (
                "iterations = -1",
                "line 2, column 1: iterations: invalid value: integer `-1`, expected u32",
            ),
            (
                "order = \"up\"",
                "line 2, column 1: order: unknown variant `up`",
            ),
        ] {
            let text = format!("description = \"m\"\n{setting}\n[[case]]\nworkload = \"pipe\"\n");
            let err = Suite::parse_for("m.toml", &text, 2).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{setting}");
            let err = err.to_string();
            assert!(
                err.starts_with(&format!("suite m.toml: {expected}")),
                "{setting}: {err}"
            );
        }
    }

    #[test]
    fn scaling_multiplies_work_and_keeps_at_least_one() {
        let quick = Suite::builtin("quick").unwrap().scaled(0.1).unwrap();
        let text = serde_json::to_string(&quick.cases[0]).unwrap();
        assert!(text.contains("\"loops\":10000"), "{text}");
        let tiny = Suite::builtin("quick").unwrap().scaled(1e-9).unwrap();
        assert!(serde_json::to_string(&tiny.cases[0])
            .unwrap()
            .contains("\"loops\":1"));
        assert!(Suite::builtin("quick").unwrap().scaled(0.0).is_err());
    }

    fn parse_on(cpus: u32, case: &str) -> Result<Suite> {
        Suite::parse_for(
            "m.toml",
            &format!("description = \"m\"\n[[case]]\n{case}"),
            cpus,
        )
    }

    /// Why a suite of the one `case` is refused on a 2-CPU machine.
    fn error_on_2_cpus(case: &str) -> String {
        parse_on(2, case).unwrap_err().to_string()
    }

    #[test]
    fn counts_relative_to_the_machine_resolve_to_numbers() {
        let threads = |suite: &Suite| -> Vec<String> {
            suite.cases.iter().map(WorkloadSpec::case_name).collect()
        };
        let suite = parse_on(
            4,
            "workload = \"syscall\"\n[case.matrix]\nthreads = [\"25%\", \"50%\", \"1x\", \"2x\", 3]\n",
        )
        .unwrap();
        let names = threads(&suite);
        assert_eq!(names.len(), 5, "{names:?}");
        for (name, n) in names.iter().zip([1, 2, 4, 8, 3]) {
            assert!(
                name.contains(&format!("threads={n} ")) || name.ends_with(&format!("threads={n}")),
                "{name} {n}"
            );
        }
        // On 2 CPUs 25 % and 50 % are both 1 (at least 1): one case, not two alike.
        let small = parse_on(
            2,
            "workload = \"syscall\"\n[case.matrix]\nthreads = [\"25%\", \"50%\", \"1.5x\"]\n",
        )
        .unwrap();
        assert_eq!(small.cases.len(), 2, "{:?}", threads(&small));
        let json = serde_json::to_value(&small.cases[1]).unwrap();
        assert_eq!(json["threads"], 3);

        let every = parse_on(
            8,
            "workload = \"schbench\"\nmessage_threads = \"25%\"\nworkers = \"1x\"\nruntime = 1\n",
        )
        .unwrap();
        let json = serde_json::to_value(&every.cases[0]).unwrap();
        assert_eq!(
            (json["message_threads"].as_u64(), json["workers"].as_u64()),
            (Some(2), Some(8))
        );
        for (case, key) in [
            ("workload = \"hackbench\"\ngroups = \"50%\"\n", "groups"),
            ("workload = \"fanout\"\nworkers = \"2x\"\n", "workers"),
            ("workload = \"cpupri\"\nthreads = \"1x\"\n", "threads"),
        ] {
            let suite = parse_on(6, case).unwrap();
            let json = serde_json::to_value(&suite.cases[0]).unwrap();
            assert!(
                json[key]
                    .as_u64()
                    .is_some_and(|n| n == 3 || n == 12 || n == 6),
                "{case}: {json}"
            );
        }
    }

    #[test]
    fn counts_may_be_written_as_on_the_command_line() {
        for (case, key, expected) in [
            (
                "workload = \"semaphore\"\nitems = \"800k\"\n",
                "items",
                800_000,
            ),
            (
                "workload = \"semaphore\"\nwork = \"2_000\"\n",
                "work",
                2_000,
            ),
            (
                "workload = \"syscall\"\nthreads = \"1k\"\n",
                "threads",
                1_000,
            ),
            (
                "workload = \"syscall\"\ncalls = \"3M\"\n",
                "calls",
                3_000_000,
            ),
        ] {
            let suite = parse_on(2, case).unwrap();
            let json = serde_json::to_value(&suite.cases[0]).unwrap();
            assert_eq!(json[key].as_u64(), Some(expected), "{case}");
        }
        // A size takes its plain number; a bad count names its key and place.
        let err = error_on_2_cpus("workload = \"messaging\"\ndatasize = \"4k\"\n");
        assert!(
            err.contains("line 4") && err.contains("a size takes no k"),
            "{err}"
        );
        let err = error_on_2_cpus("workload = \"pipe\"\n[case.matrix]\nloops = [1000, \"1kk\"]\n");
        assert!(
            err.contains("line 5") && err.contains("loops = \"1kk\""),
            "{err}"
        );
    }

    #[test]
    fn bad_relative_counts_name_the_key_and_its_place() {
        for bad in [
            "0x", "-1x", "150%%", "0%", "x", "%", "abc", "1e3x", "infx", "1.2.3x", ".x", " 2x",
        ] {
            let case = format!("workload = \"syscall\"\ncalls = 10\nthreads = \"{bad}\"\n");
            let err = parse_on(2, &case).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{bad}");
            let err = err.to_string();
            assert!(
                err.contains("line 5, column 1") && err.contains("threads"),
                "{bad}: {err}"
            );
            assert!(!err.contains('\n'), "{err}");
        }
        // In a matrix, the key's line.
        let err =
            error_on_2_cpus("workload = \"fanout\"\n[case.matrix]\nworkers = [\"1x\", \"0x\"]\n");
        assert!(
            err.contains("line 5") && err.contains("workers = \"0x\""),
            "{err}"
        );
        // A count the workload cannot take on this machine says how it came about.
        let err = error_on_2_cpus("workload = \"syscall\"\nthreads = \"100000x\"\n");
        assert!(
            err.contains("is 200000 on this machine (2 online CPUs, 1 NUMA node)")
                && err.contains("--threads"),
            "{err}"
        );
        // Keys that are not task counts take no relative count.
        let err = error_on_2_cpus("workload = \"pipe\"\nloops = \"2x\"\n");
        assert!(
            err.contains("line 4") && err.contains("loops = \"2x\""),
            "{err}"
        );
    }

    /// Seed 004's schbench sizes from mmtests' config-scheduler-schbench: on the seed's machine
    /// (480 CPUs in 6 nodes, a made-up topology here, not this machine's sysfs) 6 message threads
    /// and workers 1, 2, 4, …, 64 and 79, as its table lists them; on one node of 2 CPUs, one case.
    #[test]
    fn mmtests_schbench_is_sized_by_the_nodes() {
        let sizes = |machine: Topology| -> Vec<(u64, u64, u64)> {
            Suite::load_on("mmtests-schbench", &machine)
                .unwrap()
                .cases
                .iter()
                .map(|case| {
                    let json = serde_json::to_value(case).unwrap();
                    let get = |key: &str| json[key].as_u64().unwrap();
                    (get("message_threads"), get("workers"), get("runtime"))
                })
                .collect()
        };
        let seed: Vec<(u64, u64, u64)> = [1, 2, 4, 8, 16, 32, 64, 79]
            .into_iter()
            .map(|workers| (6, workers, 30))
            .collect();
        assert_eq!(sizes(Topology::new(480, 6)), seed);
        assert_eq!(sizes(Topology::new(2, 1)), vec![(1, 1, 30)]);
        assert_eq!(
            sizes(Topology::new(8, 2)),
            vec![(2, 1, 30), (2, 2, 30), (2, 3, 30)]
        );
        // The powers of two reach the bound exactly once.
        assert_eq!(sizes(Topology::new(18, 2)).len(), 4);
    }

    #[test]
    fn a_power_of_two_series_takes_only_its_bound() {
        let on = |text: &str| {
            let text = format!("description = \"x\"\n[[case]]\n{text}");
            Suite::parse_on("m.toml", &text, &Topology::new(4, 2))
        };
        let suite = on(
            "workload = \"fanout\"\n[case.matrix]\nworkers = [{ powers_of_two_up_to = 5 }, 3]\n",
        )
        .unwrap();
        let workers: Vec<u64> = suite
            .cases
            .iter()
            .map(|c| {
                serde_json::to_value(c).unwrap()["workers"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(workers, [1, 2, 4, 5, 3]);
        for bad in [
            "{ powers_of_two_up_to = 0 }",
            "{ powers_of_two_up_to = \"lots\" }",
            "{ up_to = 4 }",
            "{ powers_of_two_up_to = 4, step = 2 }",
        ] {
            let err = on(&format!(
                "workload = \"fanout\"\n[case.matrix]\nworkers = [{bad}]\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("line 5") && err.contains("powers_of_two_up_to"),
                "{bad}: {err}"
            );
        }
    }

    /// The two hackbench matrices and the schbench matrix as seed 004 ran them.
    #[test]
    fn seed_004_matrices_have_the_seed_sizes() {
        let schbench = Suite::load_on("schbench-matrix", &Topology::new(2, 1)).unwrap();
        assert_eq!(schbench.cases.len(), 24);
        let m: Vec<u64> = schbench
            .cases
            .iter()
            .map(|c| {
                serde_json::to_value(c).unwrap()["message_threads"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert!(m.contains(&8), "{m:?}");
        let seed_runtime = schbench.scaled(50.0).unwrap();
        let runtime = serde_json::to_value(&seed_runtime.cases[0]).unwrap()["runtime"].as_u64();
        assert_eq!(runtime, Some(100));
        let schedtests = Suite::builtin("hackbench-matrix-schedtests").unwrap();
        assert_eq!(schedtests.cases.len(), 48);
        assert_eq!(
            (schedtests.iterations, schedtests.cooldown_sec),
            (Some(5), 30.0)
        );
        for case in &schedtests.cases {
            assert_eq!(
                serde_json::to_value(case).unwrap()["loops"].as_u64(),
                Some(300_000)
            );
        }
    }

    #[test]
    fn hackbench_is_an_alias() {
        let text = "description = \"x\"\n[[case]]\nworkload = \"hackbench\"\ngroups = 2\n";
        let suite = Suite::parse("s", text).unwrap();
        assert_eq!(suite.cases[0].kind(), "messaging");
    }

    #[test]
    fn unknown_suite_lists_builtins() {
        let err = Suite::load("no-such-suite").unwrap_err().to_string();
        assert!(err.contains("quick"));
    }

    /// A guest's suite counts its vCPUs, not the host's CPUs: the vcpu-preempt suite's `2x`
    /// contention tasks on a 4-vCPU guest are 8, wherever the campaign is planned.
    #[test]
    fn a_suite_loads_for_another_machines_cpus() {
        let tasks = |suite: &Suite| -> Vec<u64> {
            suite
                .cases
                .iter()
                .filter_map(|c| serde_json::to_value(c).unwrap()["tasks"].as_u64())
                .collect()
        };
        let on_four = Suite::load_for("vcpu-preempt", 4).unwrap();
        assert!(!tasks(&on_four).is_empty());
        assert!(
            tasks(&on_four).iter().all(|&t| t == 8),
            "{:?}",
            tasks(&on_four)
        );
        let on_one = Suite::load_for("vcpu-preempt", 1).unwrap();
        assert!(tasks(&on_one).iter().all(|&t| t == 2));
        assert!(Suite::load_for("no-such-suite", 4).is_err());
    }
}
