//! Suites: named lists of cases in TOML, with parameter matrices (products), iterations, warm-up,
//! cool-down between cases and a listed or seeded random case order. Task counts may be relative
//! to the machine (`threads = "2x"`, `groups = "50%"` of the online CPUs), resolved when the suite
//! is read for a run, so the run's plan stores the numbers that ran; any count may be written as
//! on the command line (`items = "800k"`). The built-in ones are files
//! embedded in the binary; a user's own suite file has the same format (docs/suites.md).
use serde::Deserialize;

use crate::workload::{parse_count, relative_count, ParamKind, WorkloadDefinition, WorkloadSpec};
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
}

/// The file as written, before matrices are expanded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    description: String,
    iterations: Option<u32>,
    warmup: Option<u32>,
    #[serde(default)]
    cooldown_sec: f64,
    #[serde(default)]
    order: CaseOrder,
    seed: Option<u64>,
    #[serde(rename = "case", default)]
    cases: Vec<toml::Spanned<toml::Table>>,
}

/// The longest cool-down a suite may ask for.
const MAX_COOLDOWN_SEC: f64 = 3600.0;

/// The suites compiled into schedlab, by name.
pub const BUILTIN_SUITES: &[(&str, &str)] = &[
    ("quick", include_str!("../suites/quick.toml")),
    (
        "hackbench-matrix",
        include_str!("../suites/hackbench-matrix.toml"),
    ),
    ("ipc-wait", include_str!("../suites/ipc-wait.toml")),
    (
        "syscall-scaling",
        include_str!("../suites/syscall-scaling.toml"),
    ),
    ("cpudl-sweep", include_str!("../suites/cpudl-sweep.toml")),
    (
        "schbench-matrix",
        include_str!("../suites/schbench-matrix.toml"),
    ),
    ("vcpu-preempt", include_str!("../suites/vcpu-preempt.toml")),
    (
        "contention-sweep",
        include_str!("../suites/contention-sweep.toml"),
    ),
];

impl Suite {
    /// Parses suite text for this machine: expands every `[case.matrix]` and resolves counts
    /// relative to its online CPUs; errors name the line and column.
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        Suite::parse_for(name, text, crate::fingerprint::online_cpu_count())
    }

    /// [`Suite::parse`] for a machine with `online_cpus` CPUs.
    pub fn parse_for(name: &str, text: &str, online_cpus: u32) -> Result<Self> {
        let file: SuiteFile = toml::from_str(text)
            .map_err(|e| Error::invalid(format!("suite {name}: {}", one_line(&e, text))))?;
        if file.cases.is_empty() {
            return Err(Error::invalid(format!(
                "suite {name} has no [[case]] entries"
            )));
        }
        if !(file.cooldown_sec.is_finite() && (0.0..=MAX_COOLDOWN_SEC).contains(&file.cooldown_sec))
        {
            return Err(Error::invalid(format!(
                "suite {name}: cooldown_sec must be between 0 and {MAX_COOLDOWN_SEC}"
            )));
        }
        let mut cases = Vec::new();
        for spanned in &file.cases {
            let at = position(text, spanned.span().start);
            let key_at = |key: &str| key_position(text, spanned.span(), key).unwrap_or(at.clone());
            let mut from_this: Vec<WorkloadSpec> = Vec::new();
            for mut table in expand_matrix(spanned.get_ref())
                .map_err(|e| Error::invalid(format!("suite {name}: {at}: {e}")))?
            {
                let relative = resolve_counts(&mut table, online_cpus).map_err(|(key, why)| {
                    Error::invalid(format!("suite {name}: {}: {why}", key_at(&key)))
                })?;
                let spec: WorkloadSpec =
                    toml::Value::Table(table)
                        .try_into()
                        .map_err(|e: toml::de::Error| {
                            let reason = e.message().trim().replace('\n', " ");
                            let at = unknown_field(&reason).map_or(at.clone(), &key_at);
                            Error::invalid(format!("suite {name}: {at}: {reason}"))
                        })?;
                // A resolved count out of range is this machine's doing: say which value made it.
                if let Some(first) = relative.first() {
                    spec.validate().map_err(|e| {
                        let values: Vec<String> = relative
                            .iter()
                            .map(|r| format!("{} = {:?} is {}", r.key, r.given, r.count))
                            .collect();
                        Error::invalid(format!(
                            "suite {name}: {}: {} on this machine ({online_cpus} online CPUs): {e}",
                            key_at(&first.key),
                            values.join(", ")
                        ))
                    })?;
                }
                // A value out of its range is the file's doing: point at its key. Rules that
                // depend on this machine (its CPUs, its limits) are checked when the plan is made.
                if let Err(Error::InvalidParam { key, reason }) = spec.validate() {
                    return Err(Error::invalid(format!(
                        "suite {name}: {}: {key} {reason}",
                        key_at(key)
                    )));
                }
                // "25%" and "50%" are one count on a small machine: run that case once.
                if !from_this.contains(&spec) {
                    from_this.push(spec);
                }
            }
            cases.extend(from_this);
        }
        Ok(Suite {
            name: name.to_string(),
            description: file.description,
            iterations: file.iterations,
            warmup: file.warmup,
            cooldown_sec: file.cooldown_sec,
            order: file.order,
            seed: file.seed,
            cases,
        })
    }

    /// Multiplies every case's work size (its `work_size` parameters) by `factor`, keeping at least 1, so a
    /// suite written for minutes on 2 CPUs can be shrunk for a smoke test or grown for a big box.
    pub fn scaled(mut self, factor: f64) -> Result<Self> {
        if !(factor.is_finite() && factor > 0.0 && factor <= 1000.0) {
            return Err(Error::invalid(format!(
                "--scale must be above 0 and at most 1000, not {factor}"
            )));
        }
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
        if let Some(suite) = Suite::builtin(name_or_path) {
            return Ok(suite);
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
        Suite::parse(name_or_path, &text)
    }
}

/// A count resolved from its relative form: the key, the value as written, and the count.
struct Resolved {
    key: String,
    given: String,
    count: u64,
}

/// Replaces every count a case writes as text with its number: one written as on the command
/// line (`"800k"`, `"800_000"`; sizes take no multiplier) or, for a task count, one relative to a
/// machine of `online_cpus` CPUs (`"2x"`, `"50%"`). Returns the relative ones it resolved; an
/// error is the key and why.
fn resolve_counts(
    table: &mut toml::Table,
    online_cpus: u32,
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
        let relative = def.task_count && given.ends_with(['x', '%']);
        let count = if relative {
            relative_count(&given, online_cpus)
        } else {
            parse_count(&given, def.size)
        }
        .map_err(|why| {
            let hint = if def.task_count {
                format!(
                    "; give a count, or one relative to the online CPUs ({online_cpus} here): \
                     \"2x\" is twice as many, \"50%\" half of them (at least 1)"
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

/// `line L, column C` of a byte offset.
fn position(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("line {line}, column {column}")
}

/// Where `key` is written inside the case table starting at `span` (or in its matrix). toml's
/// span of an array-of-tables entry may cover only its header, so the search runs to the next
/// `[[` header.
fn key_position(text: &str, span: std::ops::Range<usize>, key: &str) -> Option<String> {
    let rest = text.get(span.start..)?;
    let end = rest.get(1..)?.find("\n[[").map_or(rest.len(), |i| i + 1);
    let table = &rest[..end];
    let offset = table
        .match_indices(key)
        .find(|(i, _)| {
            let before = &table[..*i];
            let line_start = before.rfind('\n').map_or(0, |n| n + 1);
            table[line_start..*i].trim().is_empty()
        })?
        .0;
    Some(position(text, span.start + offset))
}

/// One table per combination of the case's `matrix` values (a cartesian product in the order the
/// keys and values are written); the case itself when it has no matrix.
fn expand_matrix(case: &toml::Table) -> std::result::Result<Vec<toml::Table>, String> {
    let mut base = case.clone();
    let Some(matrix) = base.remove("matrix") else {
        return Ok(vec![base]);
    };
    let toml::Value::Table(matrix) = matrix else {
        return Err(
            "`matrix` must be a table of arrays, e.g. [case.matrix] groups = [1, 2]".into(),
        );
    };
    let mut combinations = vec![base];
    for (key, values) in matrix {
        let toml::Value::Array(values) = values else {
            return Err(format!("matrix key `{key}` must be an array of values"));
        };
        if values.is_empty() {
            return Err(format!("matrix key `{key}` has no values"));
        }
        if combinations[0].contains_key(&key) {
            return Err(format!("`{key}` is set both in the case and in its matrix"));
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

/// toml's messages span several lines with a source excerpt; keep the position and the reason.
/// Errors inside a `[[case]]` table are reported by toml at the table (the workload tag makes serde
/// buffer the table), so an unknown key is looked up inside the table to point at its own line.
fn one_line(error: &toml::de::Error, text: &str) -> String {
    let reason = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => {
            let mut at = span.start.min(text.len());
            if let Some(key) = unknown_field(&reason) {
                // The span may cover only the `[[case]]` header: search to the next table.
                let rest = &text[at..];
                let table_end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 1);
                let table = &rest[..table_end];
                if let Some(offset) = table.find(&format!("\n{key}")) {
                    at += offset + 1;
                }
            }
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {reason}")
        }
        None => reason,
    }
}

fn unknown_field(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(key, _)| key)
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
            // Every workload but the synthetic one and a user's tool (whose size is in its own
            // arguments) has a size of work.
            assert_eq!(
                declared.len(),
                usize::from(!matches!(definition.name, "fake" | "external")),
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
    fn matrix_errors_point_at_the_case() {
        let both = "description = \"m\"\n[[case]]\nworkload = \"pipe\"\nloops = 1\n[case.matrix]\nloops = [1, 2]\n";
        let err = Suite::parse("m", both).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("both"), "{err}");
        let unknown =
            "description = \"m\"\n[[case]]\nworkload = \"pipe\"\n[case.matrix]\nloopz = [1, 2]\n";
        let err = Suite::parse("m", unknown).unwrap_err().to_string();
        assert!(err.contains("line 5") && err.contains("loopz"), "{err}");
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
            err.contains("is 200000 on this machine (2 online CPUs)") && err.contains("--threads"),
            "{err}"
        );
        // Keys that are not task counts take no relative count.
        let err = error_on_2_cpus("workload = \"pipe\"\nloops = \"2x\"\n");
        assert!(
            err.contains("line 4") && err.contains("loops = \"2x\""),
            "{err}"
        );
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
}
