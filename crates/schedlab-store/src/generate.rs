//! For benchmarks and tests only: a fleet's worth of synthetic nightly runs — H hosts × C cases ×
//! N nights of the fake workload — written straight into a store's tables (PostgreSQL's `COPY`,
//! one SQLite transaction), with steps planted at known nights, so the fleet commands can be
//! timed on a million runs and checked to find what was planted (`bench/fleet-history.sh`).
//!
//! Every row is what a writer would have stored: a valid plan and fingerprint per run, each
//! iteration with the fake workload's two metrics and their definitions, and each run's
//! summaries computed by [`schedlab_core::summary`] from those values (so `db check` finds them
//! right). Runs have no owner (another host's, ended), so readers judge nothing about them.
#[cfg(feature = "postgres")]
use std::io::Write;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Measurement, MetricDef};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{CaseRecord, IterationRecord};
use schedlab_core::rng::SplitMix64;
use schedlab_core::summary;
use schedlab_core::workload::fake::{FakeParams, OPS_PER_SEC, USEC_PER_OP};
use schedlab_core::workload::WorkloadSpec;

use crate::location::Location;
use crate::rows::to_json;
use crate::{Result, StoreError};

/// What to generate.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    pub hosts: usize,
    pub cases: usize,
    pub nights: usize,
    /// Measured iterations per run.
    pub iterations: u32,
    /// One series in this many gets a step.
    pub step_every: usize,
    /// The step's size in percent (its sign alternates between series).
    pub step_pct: f64,
    /// Run-to-run noise and within-run noise, in percent.
    pub run_noise_pct: f64,
    pub iteration_noise_pct: f64,
    /// Nights between kernel upgrades on each host.
    pub kernel_every: usize,
    pub seed: u64,
    /// The first night, ns since the epoch.
    pub start_ns: i64,
}

impl Default for FleetSpec {
    fn default() -> Self {
        FleetSpec {
            hosts: 4,
            cases: 3,
            nights: 60,
            iterations: 5,
            step_every: 2,
            step_pct: 10.0,
            run_noise_pct: 1.0,
            iteration_noise_pct: 2.0,
            kernel_every: 25,
            seed: 1,
            start_ns: 1_767_225_600 * 1_000_000_000,
        }
    }
}

/// A step planted in one host's history of one case: the first night after it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlantedStep {
    pub host: String,
    pub case: String,
    /// Index of the first run after the step in the series (its night).
    pub night: usize,
    pub run_id: i64,
    pub pct: f64,
}

/// One case of the fleet: its plan's and spec's JSON, the spec, its base value.
struct FleetCase {
    plan_json: String,
    spec_json: String,
    spec: CaseSpec,
    value: f64,
}

/// One host's fingerprint at one kernel: its JSON, kernel release and measuring build.
struct HostKernel {
    host: String,
    json: String,
    kernel: String,
    measured_by: Option<String>,
}

/// The hosts' and cases' rows that every run repeats.
struct Fleet {
    hosts: Vec<String>,
    cases: Vec<FleetCase>,
    /// Per host, per kernel generation.
    fingerprints: Vec<Vec<HostKernel>>,
}

impl Fleet {
    fn of(spec: &FleetSpec) -> Result<Fleet> {
        let hosts: Vec<String> = (0..spec.hosts).map(|h| format!("node{h:03}")).collect();
        let mut cases = Vec::new();
        for c in 0..spec.cases {
            let value = 10.0 * (c + 1) as f64;
            let fake = WorkloadSpec::Fake(FakeParams {
                value_usec: value,
                spread_pct: spec.iteration_noise_pct,
                ..FakeParams::default()
            });
            let plan = RunPlan::new(None, Some("nightly".into()), spec.iterations, 0, vec![fake])
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let case = &plan.cases[0];
            cases.push(FleetCase {
                plan_json: to_json(&plan)?,
                spec_json: to_json(case)?,
                spec: case.clone(),
                value,
            });
        }
        let generations = spec.nights.div_ceil(spec.kernel_every.max(1));
        let mut fingerprints = Vec::new();
        for host in &hosts {
            let mut per_kernel = Vec::new();
            for k in 0..generations {
                let fingerprint = Fingerprint {
                    hostname: host.clone(),
                    kernel_release: format!("6.{}.0-fleet", 10 + k),
                    cpu_model: "Synthetic CPU @ 3.00GHz".into(),
                    online_cpus: "0-31".into(),
                    online_cpu_count: 32,
                    smt_active: Some(true),
                    numa_nodes: 2,
                    cpufreq_governors: vec!["performance".into()],
                    schedlab_version: schedlab_core::VERSION.into(),
                    schedlab_commit: "fleetgen".into(),
                    libc: "glibc 2.41".into(),
                    boot_id: format!("{host}-boot-{k}"),
                    ..Fingerprint::default()
                };
                per_kernel.push(HostKernel {
                    host: host.clone(),
                    json: to_json(&fingerprint)?,
                    measured_by: fingerprint.measured_by(),
                    kernel: fingerprint.kernel_release,
                });
            }
            fingerprints.push(per_kernel);
        }
        Ok(Fleet {
            hosts,
            cases,
            fingerprints,
        })
    }
}

/// A field of a generated row.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(String),
}

type Row = Vec<Field>;

/// Rows of each table, in the order of their columns.
#[derive(Default)]
struct Rows {
    runs: Vec<Row>,
    cases: Vec<Row>,
    iterations: Vec<Row>,
    measurements: Vec<Row>,
    metrics: Vec<Row>,
    summaries: Vec<Row>,
    summarised: Vec<Row>,
}

const RUN_COLUMNS: &str = "id, uuid, label, plan_json, fingerprint_json, boot_id, kernel_release, \
     hostname, started_at_ns, ended_at_ns, status, schedlab_version, measured_by";
const CASE_COLUMNS: &str = "id, run_id, position, name, workload, spec_json";
const ITERATION_COLUMNS: &str = "id, case_id, position, warmup, started_at_ns";
const MEASUREMENT_COLUMNS: &str = "iteration_id, name, unit, better, role, value";
const METRIC_COLUMNS: &str = "case_id, name, unit, better, role, shape";
const SUMMARY_COLUMNS: &str = "run_id, case_name, metric, ordinal, unit, better, role, n, \
     log_mean, log_variance, raw_mean, raw_variance";
const SUMMARISED_COLUMNS: &str = "run_id, case_name, iterations, measured";

fn text(value: impl ToString) -> Field {
    Field::Text(value.to_string())
}

fn int(value: impl TryInto<i64>) -> Field {
    value.try_into().map_or(Field::Null, Field::Int)
}

fn real(value: Option<f64>) -> Field {
    value.map_or(Field::Null, Field::Real)
}

/// Writes the fleet `spec` describes into `location` (created or upgraded first, with its
/// schema), after the runs already there; returns the planted steps. `progress` hears the
/// number of runs written so far.
pub fn generate(
    location: &Location,
    spec: &FleetSpec,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<PlantedStep>> {
    // The schema, as a writer makes it.
    drop(crate::open_writer(location, true)?);
    let fleet = Fleet::of(spec)?;
    let mut sink: Box<dyn Sink> = match location {
        Location::Sqlite(path) => Box::new(LiteSink::open(path)?),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Box::new(PgSink::open(url)?),
    };
    let mut ids = sink.next_ids()?;
    let mut planted = Vec::new();
    let mut rng = SplitMix64::new(spec.seed);
    let steps = steps(spec, &mut rng);
    let mut written = 0;
    for night in 0..spec.nights {
        let mut rows = Rows::default();
        for (h, host) in fleet.hosts.iter().enumerate() {
            for (c, case) in fleet.cases.iter().enumerate() {
                let step = steps[h * spec.cases + c];
                let after = step.is_some_and(|(at, _)| night >= at);
                let level = if after {
                    1.0 + step.map_or(0.0, |s| s.1) / 100.0
                } else {
                    1.0
                };
                let run_id = ids.run;
                if let Some((at, pct)) = step.filter(|(at, _)| *at == night) {
                    planted.push(PlantedStep {
                        host: host.clone(),
                        case: case.spec.name.clone(),
                        night: at,
                        run_id,
                        pct,
                    });
                }
                let started = spec.start_ns
                    + night as i64 * 86_400_000_000_000
                    + (h * spec.cases + c) as i64 * 1_000_000_000;
                let fingerprint = &fleet.fingerprints[h][night / spec.kernel_every.max(1)];
                let base = case.value * level * (spec.run_noise_pct / 100.0 * rng.normal()).exp();
                add_run(
                    &mut rows,
                    &mut ids,
                    spec,
                    &mut rng,
                    (case, fingerprint),
                    started,
                    base,
                );
            }
        }
        sink.write(&rows)?;
        written += spec.hosts * spec.cases;
        progress(written);
    }
    sink.finish(&ids)?;
    Ok(planted)
}

/// Per series (host by host, then case), its step: the first night after it and its size in
/// percent; every `step_every`th series has one, somewhere in the middle three fifths of the
/// nights, up and down in turn.
fn steps(spec: &FleetSpec, rng: &mut SplitMix64) -> Vec<Option<(usize, f64)>> {
    let every = spec.step_every.max(1);
    (0..spec.hosts * spec.cases)
        .map(|series| {
            let night = spec.nights / 5 + (rng.next_u64() as usize) % (spec.nights * 3 / 5).max(1);
            let sign = if (series / every).is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            series
                .is_multiple_of(every)
                .then_some((night, sign * spec.step_pct))
        })
        .collect()
}

/// The next ids of each table.
#[derive(Debug, Clone, Copy)]
struct Ids {
    run: i64,
    case: i64,
    iteration: i64,
}

/// One run of `case` on the host of `fingerprint`, at level `base`, into `rows`.
fn add_run(
    rows: &mut Rows,
    ids: &mut Ids,
    spec: &FleetSpec,
    rng: &mut SplitMix64,
    (case, fingerprint): (&FleetCase, &HostKernel),
    started: i64,
    base: f64,
) {
    let (run_id, case_id) = (ids.run, ids.case);
    let uuid = uuid::Uuid::from_u64_pair(rng.next_u64(), rng.next_u64());
    rows.runs.push(vec![
        int(run_id),
        text(uuid.hyphenated()),
        text("nightly"),
        text(&case.plan_json),
        text(&fingerprint.json),
        text(format!("{}-{}", fingerprint.host, fingerprint.kernel)),
        text(&fingerprint.kernel),
        text(&fingerprint.host),
        int(started),
        int(started + 60_000_000_000),
        text("complete"),
        text(schedlab_core::VERSION),
        fingerprint.measured_by.as_ref().map_or(Field::Null, text),
    ]);
    rows.cases.push(vec![
        int(case_id),
        int(run_id),
        int(0),
        text(&case.spec.name),
        text("fake"),
        text(&case.spec_json),
    ]);
    let mut iterations = Vec::new();
    for position in 0..spec.iterations {
        let usec = base * (spec.iteration_noise_pct / 100.0 * rng.normal()).exp();
        let measurements: Vec<Measurement> =
            vec![USEC_PER_OP.value(usec), OPS_PER_SEC.value(1e6 / usec)];
        for m in &measurements {
            rows.measurements.push(vec![
                int(ids.iteration),
                text(&m.name),
                text(&m.unit),
                text(m.better.as_str()),
                text(m.role.as_str()),
                real(Some(m.value)),
            ]);
        }
        let at = started + i64::from(position) * 1_000_000_000;
        rows.iterations.push(vec![
            int(ids.iteration),
            int(case_id),
            int(position),
            Field::Bool(false),
            int(at),
        ]);
        iterations.push(IterationRecord {
            index: position,
            warmup: false,
            started_at_ns: at,
            measurements,
            attachments: Vec::new(),
            quiet: None,
        });
        ids.iteration += 1;
    }
    for def in [&USEC_PER_OP, &OPS_PER_SEC] {
        rows.metrics.push(metric_row(case_id, def));
    }
    let record = CaseRecord {
        spec: case.spec.clone(),
        iterations,
        error: None,
    };
    add_summaries(rows, run_id, &record);
    ids.run += 1;
    ids.case += 1;
}

/// The summaries of the run's one case, and what they cover, as a writer keeps them.
fn add_summaries(rows: &mut Rows, run_id: i64, record: &CaseRecord) {
    let name = &record.spec.name;
    for (ordinal, s) in summary::summarise([record]).iter().enumerate() {
        let mean = |m: Option<summary::Moments>| real(m.map(|m| m.mean));
        let variance = |m: Option<summary::Moments>| real(m.and_then(|m| m.variance));
        rows.summaries.push(vec![
            int(run_id),
            text(name),
            text(&s.metric),
            int(ordinal),
            text(&s.unit),
            text(s.better.as_str()),
            text(s.role.as_str()),
            int(s.n),
            mean(s.log),
            variance(s.log),
            mean(s.raw),
            variance(s.raw),
        ]);
    }
    let iterations = record.iterations.len();
    rows.summarised.push(vec![
        int(run_id),
        text(name),
        int(iterations),
        int(iterations),
    ]);
}

fn metric_row(case_id: i64, def: &MetricDef) -> Row {
    vec![
        int(case_id),
        text(def.name),
        text(def.unit),
        text(def.better.as_str()),
        text(def.role.as_str()),
        text(def.shape.as_str()),
    ]
}

/// Where rows go.
trait Sink {
    fn next_ids(&mut self) -> Result<Ids>;
    fn write(&mut self, rows: &Rows) -> Result<()>;
    /// After the last rows: identity counters past them, statistics for the planner.
    fn finish(&mut self, ids: &Ids) -> Result<()>;
}

/// Every table's rows with its columns, in the order foreign keys need.
fn tables(rows: &Rows) -> [(&'static str, &'static str, &Vec<Row>); 7] {
    [
        ("runs", RUN_COLUMNS, &rows.runs),
        ("cases", CASE_COLUMNS, &rows.cases),
        ("iterations", ITERATION_COLUMNS, &rows.iterations),
        ("measurements", MEASUREMENT_COLUMNS, &rows.measurements),
        ("metrics", METRIC_COLUMNS, &rows.metrics),
        ("summaries", SUMMARY_COLUMNS, &rows.summaries),
        ("summarised_cases", SUMMARISED_COLUMNS, &rows.summarised),
    ]
}

#[cfg(feature = "postgres")]
struct PgSink(postgres::Client);

#[cfg(feature = "postgres")]
impl PgSink {
    fn open(url: &crate::PgUrl) -> Result<PgSink> {
        Ok(PgSink(crate::pg::connect(url)?))
    }
}

#[cfg(feature = "postgres")]
impl Sink for PgSink {
    fn next_ids(&mut self) -> Result<Ids> {
        let next = |client: &mut postgres::Client, table: &str| -> Result<i64> {
            let row = client.query_one(
                &format!("SELECT coalesce(max(id), 0) + 1 FROM {table}"),
                &[],
            )?;
            Ok(row.try_get(0)?)
        };
        Ok(Ids {
            run: next(&mut self.0, "runs")?,
            case: next(&mut self.0, "cases")?,
            iteration: next(&mut self.0, "iterations")?,
        })
    }

    fn write(&mut self, rows: &Rows) -> Result<()> {
        let mut tx = self.0.transaction()?;
        for (table, columns, rows) in tables(rows) {
            let mut copy = tx.copy_in(&format!("COPY {table} ({columns}) FROM STDIN"))?;
            let mut buffer = Vec::with_capacity(rows.len() * 64);
            for row in rows {
                for (i, field) in row.iter().enumerate() {
                    if i > 0 {
                        buffer.push(b'\t');
                    }
                    match field {
                        Field::Null => buffer.extend(b"\\N"),
                        Field::Int(i) => buffer.extend(i.to_string().bytes()),
                        // Rust's shortest form reads back as the same double.
                        Field::Real(f) => buffer.extend(format!("{f:?}").bytes()),
                        Field::Bool(b) => buffer.push(if *b { b't' } else { b'f' }),
                        Field::Text(text) => copy_escape(text, &mut buffer),
                    }
                }
                buffer.push(b'\n');
            }
            copy.write_all(&buffer)
                .map_err(|e| StoreError::Corrupt(format!("COPY {table}: {e}")))?;
            copy.finish()?;
        }
        tx.commit()?;
        Ok(())
    }

    fn finish(&mut self, _: &Ids) -> Result<()> {
        for table in ["runs", "cases", "iterations", "measurements"] {
            self.0.batch_execute(&format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'),
                               (SELECT coalesce(max(id), 1) FROM {table}))"
            ))?;
        }
        self.0.batch_execute("VACUUM ANALYZE")?;
        Ok(())
    }
}

#[cfg(feature = "postgres")]
/// `text` as a field of `COPY`'s text format.
fn copy_escape(text: &str, out: &mut Vec<u8>) {
    for b in text.bytes() {
        match b {
            b'\\' => out.extend(b"\\\\"),
            b'\t' => out.extend(b"\\t"),
            b'\n' => out.extend(b"\\n"),
            b'\r' => out.extend(b"\\r"),
            _ => out.push(b),
        }
    }
}

struct LiteSink(rusqlite::Connection);

impl LiteSink {
    fn open(path: &std::path::Path) -> Result<LiteSink> {
        let conn = rusqlite::Connection::open(path)?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        Ok(LiteSink(conn))
    }
}

impl Sink for LiteSink {
    fn next_ids(&mut self) -> Result<Ids> {
        let next = |table: &str| -> Result<i64> {
            Ok(self.0.query_row(
                &format!("SELECT coalesce(max(id), 0) + 1 FROM {table}"),
                [],
                |r| r.get(0),
            )?)
        };
        Ok(Ids {
            run: next("runs")?,
            case: next("cases")?,
            iteration: next("iterations")?,
        })
    }

    fn write(&mut self, rows: &Rows) -> Result<()> {
        let tx = self.0.transaction()?;
        for (table, columns, rows) in tables(rows) {
            let count = columns.split(',').count();
            let marks: Vec<String> = (1..=count).map(|i| format!("?{i}")).collect();
            let mut insert = tx.prepare(&format!(
                "INSERT INTO {table} ({columns}) VALUES ({})",
                marks.join(", ")
            ))?;
            for row in rows {
                let values: Vec<rusqlite::types::Value> = row.iter().map(lite_value).collect();
                insert.execute(rusqlite::params_from_iter(values))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn finish(&mut self, _: &Ids) -> Result<()> {
        self.0.execute_batch("ANALYZE")?;
        Ok(())
    }
}

/// A generated field as SQLite stores it.
fn lite_value(field: &Field) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match field {
        Field::Null => Value::Null,
        Field::Int(i) => Value::Integer(*i),
        Field::Real(f) => Value::Real(*f),
        Field::Bool(b) => Value::Integer(i64::from(*b)),
        Field::Text(t) => Value::Text(t.clone()),
    }
}
