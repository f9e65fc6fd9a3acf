//! The CSV format of stored runs (`show --format csv`): the raw samples in long form, one row per
//! measurement of every stored iteration, warm-ups included and flagged, so R, pandas or gnuplot
//! can read them without knowing schedlab. Fixed columns first, so their positions never move
//! (gnuplot addresses columns by number); then one column per workload parameter, named by it,
//! empty where a case has no such parameter. Columns are documented in docs/json-schema.md.
use std::io::Write;

use schedlab_core::record::RunRecord;

/// The columns every file has, in this order.
pub const FIXED_COLUMNS: [&str; 16] = [
    "run_id",
    "label",
    "status",
    "host",
    "kernel_release",
    "boot_id",
    "case",
    "workload",
    "iteration",
    "warmup",
    "started_at_ns",
    "metric",
    "unit",
    "better",
    "role",
    "value",
];

/// A case's parameters as suite files name them (without `workload`), each as one cell.
fn params(spec: &schedlab_core::workload::WorkloadSpec) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(spec) else {
        return Vec::new();
    };
    map.into_iter()
        .filter(|(key, _)| key != "workload")
        .map(|(key, value)| (key, cell(&value)))
        .collect()
}

/// A parameter value as a spreadsheet reads it: numbers and words as they are, lists (CPU
/// lists) joined with commas, booleans as `true`/`false` (as in suite files).
fn cell(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The column a parameter gets: its own name, unless a fixed column has it.
fn column_of(param: &str) -> String {
    if FIXED_COLUMNS.contains(&param) {
        format!("param_{param}")
    } else {
        param.to_string()
    }
}

/// A CSV writer whose errors are the I/O errors under them, when there are: the `csv` crate wraps
/// them in its own, and a reader closing the pipe (`| head`) must still read as a closed pipe to
/// the command, which then exits quietly.
pub(crate) struct CsvOut<'a>(::csv::Writer<&'a mut dyn Write>);

impl<'a> CsvOut<'a> {
    pub(crate) fn new(out: &'a mut dyn Write) -> Self {
        CsvOut(::csv::Writer::from_writer(out))
    }

    pub(crate) fn row<I, T>(&mut self, cells: I) -> std::io::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        self.0.write_record(cells).map_err(|e| {
            if !e.is_io_error() {
                return std::io::Error::other(e);
            }
            match e.into_kind() {
                ::csv::ErrorKind::Io(e) => e,
                other => std::io::Error::other(format!("{other:?}")),
            }
        })
    }

    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

pub fn write(runs: &[RunRecord], out: &mut dyn Write) -> std::io::Result<()> {
    // Every parameter any case has, in first-seen order: the header must be known up front.
    let mut param_names: Vec<String> = Vec::new();
    for case in runs.iter().flat_map(|r| &r.cases) {
        for (name, _) in params(&case.spec.workload) {
            if !param_names.contains(&name) {
                param_names.push(name);
            }
        }
    }
    let mut writer = CsvOut::new(out);
    let header = FIXED_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(param_names.iter().map(|p| column_of(p)));
    writer.row(header)?;
    for run in runs {
        let fp = &run.fingerprint;
        let run_id = run.id.map_or(String::new(), |id| id.to_string());
        for case in &run.cases {
            let values = params(&case.spec.workload);
            let param_cells: Vec<String> = param_names
                .iter()
                .map(|name| {
                    values
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(String::new(), |(_, v)| v.clone())
                })
                .collect();
            for iteration in &case.iterations {
                for m in &iteration.measurements {
                    let fixed = [
                        run_id.clone(),
                        run.label.clone().unwrap_or_default(),
                        run.status.as_str().to_string(),
                        fp.hostname.clone(),
                        fp.kernel_release.clone(),
                        fp.boot_id.clone(),
                        case.spec.name.clone(),
                        case.spec.workload.kind().to_string(),
                        iteration.index.to_string(),
                        u8::from(iteration.warmup).to_string(),
                        iteration.started_at_ns.to_string(),
                        m.name.clone(),
                        m.unit.clone(),
                        m.better.as_str().to_string(),
                        m.role.as_str().to_string(),
                        format!("{}", m.value),
                    ];
                    writer.row(fixed.iter().chain(&param_cells))?;
                }
            }
        }
    }
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::fingerprint::Fingerprint;
    use schedlab_core::metric::{Better, MetricDef};
    use schedlab_core::plan::{CaseSpec, RunPlan};
    use schedlab_core::record::{CaseRecord, IterationRecord, RunStatus};
    use schedlab_core::workload::messaging::MessagingParams;
    use schedlab_core::workload::pipe::PipeParams;
    use schedlab_core::workload::WorkloadSpec;

    fn iteration(index: u32, warmup: bool, value: f64) -> IterationRecord {
        IterationRecord {
            index,
            warmup,
            started_at_ns: 1_000 + i64::from(index),
            measurements: vec![MetricDef::primary("time_sec", "sec", Better::Lower).value(value)],
            attachments: Vec::new(),
            quiet: None,
        }
    }

    fn run() -> RunRecord {
        let pipe = WorkloadSpec::Pipe(PipeParams {
            cpus: Some(schedlab_core::cpu_list::CpuPair([0, 1])),
            ..PipeParams::default()
        });
        let messaging = WorkloadSpec::Messaging(MessagingParams {
            groups: 4,
            ..MessagingParams::default()
        });
        let plan = RunPlan::new(
            None,
            Some("a \"quoted\", label".into()),
            1,
            1,
            vec![pipe, messaging],
        )
        .unwrap();
        let cases = plan
            .cases
            .iter()
            .map(|spec: &CaseSpec| CaseRecord {
                spec: spec.clone(),
                iterations: vec![iteration(0, true, 2.5), iteration(1, false, 0.125)],
                error: None,
            })
            .collect();
        RunRecord {
            id: Some(7),
            label: plan.label.clone(),
            plan,
            fingerprint: Fingerprint {
                hostname: "box".into(),
                kernel_release: "6.18.0".into(),
                boot_id: "b00t".into(),
                ..Fingerprint::default()
            },
            started_at_ns: 1,
            ended_at_ns: Some(2),
            status: RunStatus::Complete,
            error: None,
            cases,
        }
    }

    #[test]
    fn one_row_per_measurement_with_every_parameter_as_a_column() {
        let mut out = Vec::new();
        write(&[run()], &mut out).unwrap();
        let mut reader = ::csv::Reader::from_reader(out.as_slice());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(&header[..FIXED_COLUMNS.len()], FIXED_COLUMNS);
        for param in [
            "loops", "threads", "cpus", "groups", "fds", "pipe", "datasize",
        ] {
            assert!(header.contains(&param.to_string()), "{header:?}");
        }
        let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4, "2 cases × 2 iterations × 1 metric");
        let get = |row: &::csv::StringRecord, column: &str| {
            row[header.iter().position(|h| h == column).unwrap()].to_string()
        };
        let first = &rows[0];
        assert_eq!(get(first, "run_id"), "7");
        assert_eq!(get(first, "label"), "a \"quoted\", label");
        assert_eq!(get(first, "host"), "box");
        assert_eq!(get(first, "workload"), "pipe");
        assert_eq!(
            (get(first, "iteration"), get(first, "warmup")),
            ("0".into(), "1".into())
        );
        assert_eq!(get(first, "value"), "2.5");
        assert_eq!(get(first, "cpus"), "0,1");
        assert_eq!(get(first, "groups"), "", "pipe has no groups");
        let last = &rows[3];
        assert_eq!(get(last, "workload"), "messaging");
        assert_eq!(get(last, "groups"), "4");
        assert_eq!(get(last, "warmup"), "0");
        assert_eq!(get(last, "value"), "0.125");
        assert_eq!(get(last, "threads"), "false");
        assert_eq!(get(last, "cpus"), "");
    }

    #[test]
    fn a_parameter_named_like_a_fixed_column_is_prefixed() {
        assert_eq!(column_of("value"), "param_value");
        assert_eq!(column_of("groups"), "groups");
        let mut out = Vec::new();
        write(&[], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap().trim_end(),
            FIXED_COLUMNS.join(",")
        );
    }
}
