//! The `Store` contract, checked on both backends: every test here runs once on an SQLite file and
//! once on a fresh database of a real PostgreSQL server (`scripts/with-postgres`; without one, plain
//! `cargo test` skips the PostgreSQL half with a notice, and `scripts/check` fails instead).
//! Among them: concurrent writers with a count of what was stored, and `push` run twice.
// PostgreSQL is half of what this checks: a build without the `postgres` feature skips it whole.
#![cfg(feature = "postgres")]
use std::ffi::OsStr;
use std::ops::ControlFlow;
use std::path::PathBuf;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{secondary, Better, Measurement, MetricDef, MetricShape, Role};
use schedlab_core::plan::RunPlan;
use schedlab_core::quiet::{Disturbance, QuietMark};
use schedlab_core::record::{
    Arm, Attachment, ExperimentTag, IterationRecord, RunRecord, RunStatus,
};
use schedlab_core::runner::{execute, Silent};
use schedlab_core::summary::SummarisedRun;
use schedlab_core::workload::fake::{self, FakeParams};
use schedlab_core::workload::WorkloadSpec;
use schedlab_store::defaults::{hosts_default, select_runs_default};
use schedlab_store::push::push;
use schedlab_store::testing::fresh_pg_database;
use schedlab_store::{
    open_reader, open_writer, CaseSeries, Experiment, ExperimentKind, HostSummary, Location,
    MetricChoice, RunSelection, RunSummary, SeriesQuery, SqliteStore, Store, StoreError, StoreSink,
    StoredCalibration,
};

/// Where one test keeps its results.
struct Backend {
    location: Location,
    /// Keeps an SQLite file's directory alive for the test.
    _dir: Option<tempfile::TempDir>,
}

impl Backend {
    fn sqlite() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend {
            location: Location::Sqlite(dir.path().join("results.db")),
            _dir: Some(dir),
        }
    }

    fn postgres(test: &str) -> Option<Backend> {
        let url = fresh_pg_database(test)?;
        Some(Backend {
            location: Location::parse(OsStr::new(&url)).unwrap(),
            _dir: None,
        })
    }

    fn writer(&self) -> Box<dyn Store> {
        open_writer(&self.location, true).unwrap()
    }

    fn reader(&self) -> Box<dyn Store> {
        open_reader(&self.location).unwrap()
    }
}

/// Each test as a function of its backend, run on SQLite and on PostgreSQL.
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $test() { super::$test(&super::Backend::sqlite()); })*
        }
        mod postgres {
            $(#[test] fn $test() {
                if let Some(backend) = super::Backend::postgres(stringify!($test)) {
                    super::$test(&backend);
                }
            })*
        }
    };
}

on_both_backends!(
    runs_round_trip_with_every_sample,
    each_cases_series_holds_the_summaries_of_the_whole_runs,
    a_case_listed_twice_is_one_case_to_the_summaries_as_to_the_analysis,
    sql_selection_answers_as_the_default_does,
    series_per_host_hold_each_hosts_runs,
    a_v8_store_answers_alike_before_and_after_its_upgrade,
    a_store_with_the_placeholder_v9_reads_as_v8_and_upgrades,
    a_run_read_keeping_some_measurements_is_the_whole_run_without_the_others,
    labels_name_many_runs_and_ids_one,
    experiments_tags_and_calibrations_round_trip,
    readers_write_nothing,
    concurrent_writers_lose_and_duplicate_nothing,
    push_copies_everything_once,
    push_stopped_between_runs_carries_on_next_time,
    push_back_into_sqlite_gives_the_same_runs,
    probes_round_trip_apart_from_measured_iterations,
);

fn plan(label: &str) -> RunPlan {
    let fake = WorkloadSpec::Fake(FakeParams::default());
    RunPlan::new(None, Some(label.into()), 3, 1, vec![fake]).unwrap()
}

/// A run of `plan` measured by the fake workload into `store`, as `schedlab run` stores it.
fn run_into(store: &mut dyn Store, plan: &RunPlan) -> i64 {
    let id = store
        .begin_run(plan, &Fingerprint::collect(), 1_000)
        .unwrap();
    let outcome = execute(plan, &mut StoreSink { store, run_id: id }, &mut Silent);
    store.finish_run(id, outcome.status, 2_000, None).unwrap();
    id
}

fn runs_round_trip_with_every_sample(backend: &Backend) {
    let mut store = backend.writer();
    let plan = plan("base");
    let id = run_into(&mut *store, &plan);
    let extra = IterationRecord {
        index: 9,
        warmup: false,
        started_at_ns: 7,
        measurements: vec![secondary::WALL_TIME_SEC.value(2.5)],
        attachments: vec![Attachment {
            name: "wakeup_latency".into(),
            encoding: "hdrhistogram-v2-deflate".into(),
            data: vec![0, 1, 2, 255],
        }],
        quiet: Some(QuietMark {
            limit_pct: 2.5,
            waited_ns: 1_000_000_000,
            before_pct: Some(0.5),
            disturbed: Some(Disturbance::PressureDuring),
        }),
    };
    store.record_iteration(id, 0, &extra).unwrap();
    // PSI unreadable before it: no pressure figure, never a zero.
    let unread = IterationRecord {
        index: 10,
        quiet: Some(QuietMark {
            limit_pct: 1.0,
            waited_ns: 0,
            before_pct: None,
            disturbed: Some(Disturbance::NeverQuiet),
        }),
        ..extra.clone()
    };
    store.record_iteration(id, 0, &unread).unwrap();
    store.record_case_failure(id, 0, "stuck: task 3").unwrap();
    drop(store);

    let reader = backend.reader();
    let run = reader.load_run(id).unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.plan, plan);
    assert_eq!(run.cases[0].error.as_deref(), Some("stuck: task 3"));
    let iterations = &run.cases[0].iterations;
    assert_eq!(iterations.len(), 6);
    assert!(iterations[0].warmup);
    assert_eq!(iterations[4], extra);
    assert_eq!(iterations[5], unread);
    assert!(iterations[..4].iter().all(|it| it.quiet.is_none()));
    assert!(iterations[1]
        .measurements
        .iter()
        .any(|m| m.name == "usec_per_op"));
    let listed = reader.list_runs(None).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].measured_iterations, 5);
    assert_eq!(listed[0].what, plan.cases[0].name);
    let (here, kind) = (
        Fingerprint::collect().hostname,
        plan.cases[0].workload.kind(),
    );
    let measured = reader.measured_cases(&here, kind).unwrap();
    assert_eq!(measured.len(), 1, "{measured:?}");
    assert_eq!(
        (&measured[0].name, &measured[0].workload),
        (&plan.cases[0].name, &plan.cases[0].workload)
    );
    assert!(measured[0].median_sec.is_finite() && measured[0].median_sec > 0.0);
    assert!(reader.measured_cases(&here, "pipe").unwrap().is_empty());
    assert!(reader
        .measured_cases("never-ran-here", kind)
        .unwrap()
        .is_empty());
    let provenance = reader.run_provenance(id).unwrap();
    let uuid = provenance.uuid.expect("every new run has a uuid");
    assert_eq!(reader.run_by_uuid(&uuid).unwrap(), Some(id));
    assert_eq!(provenance.owner.pid, Some(std::process::id() as i32));
}

fn each_cases_series_holds_the_summaries_of_the_whole_runs(backend: &Backend) {
    let mut store = backend.writer();
    let cases = [100.0, 200.0, 300.0].map(|value_usec| {
        WorkloadSpec::Fake(FakeParams {
            value_usec,
            spread_pct: 5.0,
            ..FakeParams::default()
        })
    });
    let plan = RunPlan::new(None, Some("three".into()), 3, 1, cases.to_vec()).unwrap();
    let ids: Vec<i64> = (0..3).map(|_| run_into(&mut *store, &plan)).collect();
    drop(store);

    let mut store = backend.writer();
    let shuffled = plan.clone().shuffled(2);
    assert_ne!(shuffled.cases, plan.cases);
    let random_order = run_into(&mut *store, &shuffled);
    // A run still storing: its second case has no summaries yet, and is read from its iterations.
    let running = store
        .begin_run(&plan, &Fingerprint::collect(), 5_000)
        .unwrap();
    let outcome = execute(&plan, &mut NoSummaries(&mut *store, running), &mut Silent);
    assert_eq!(outcome.status, RunStatus::Complete);
    drop(store);

    let reader = backend.reader();
    let names: Vec<String> = plan.cases.iter().map(|c| c.name.clone()).collect();
    // Every case, oldest run first, each run's as its plan listed them (also the random one's).
    assert_eq!(series_of(&*reader, &[], MetricChoice::All).len(), 3);
    let every: Vec<String> = series_of(&*reader, &[], MetricChoice::All)
        .into_iter()
        .map(|s| s.case)
        .collect();
    assert_eq!(every, names);
    for name in &names {
        let series = series_of(&*reader, std::slice::from_ref(name), MetricChoice::All);
        assert_eq!(series.len(), 1);
        let got: Vec<i64> = series[0].runs.iter().filter_map(|r| r.id).collect();
        assert_eq!(got, [ids[0], ids[1], ids[2], random_order, running]);
        for run in &series[0].runs {
            let whole = reader.load_run(run.id.unwrap()).unwrap();
            assert_eq!(run, &SummarisedRun::of(&whole, name), "run {:?}", run.id);
            assert_eq!(
                run.summaries.len(),
                4,
                "usec_per_op, ops_per_sec and the machine's steal_cpu_sec and psi_cpu_some_pct"
            );
        }
        let named = MetricChoice::Named(fake::OPS_PER_SEC.name.into());
        let one = series_of(&*reader, std::slice::from_ref(name), named);
        assert!(one[0]
            .runs
            .iter()
            .all(|r| r.summaries.len() == 1 && r.summaries[0].metric == fake::OPS_PER_SEC.name));
    }
    let nowhere = series_of(&*reader, &["pipe:never-ran".to_string()], MetricChoice::All);
    assert_eq!(nowhere.len(), 1);
    assert!(nowhere[0].runs.is_empty());
    // The running run's summaries come from its iterations: none are stored for it yet.
    assert!(reader.fingerprint(running).is_ok());
    assert!(reader.fingerprint(running + 100).is_err());
}

/// A suite that lists one case twice (the same name, the same parameters) measures one case
/// twice as often: the analysis reads both as one case of the run, their measured iterations in
/// the order the suite listed them, and so do the summaries — written as each case completes,
/// filled by the upgrade to V9 and recomputed by `db check` — to the last bit of every mean.
fn a_case_listed_twice_is_one_case_to_the_summaries_as_to_the_analysis(backend: &Backend) {
    let fake = |value_usec| {
        WorkloadSpec::Fake(FakeParams {
            value_usec,
            ..FakeParams::default()
        })
    };
    let listed = RunPlan::new(
        None,
        Some("twice".into()),
        2,
        0,
        vec![fake(100.0), fake(200.0), fake(100.0)],
    )
    .unwrap();
    let twice = listed.cases[0].name.clone();
    // An order in which the second listing of the case runs before the first.
    let plan = (1..)
        .map(|seed| listed.clone().shuffled(seed))
        .find(|p| {
            let ran_at = |l: usize| p.listed_positions().iter().position(|&x| x == l);
            ran_at(2) < ran_at(0)
        })
        .unwrap();
    let mut store = backend.writer();
    let id = store
        .begin_run(&plan, &Fingerprint::collect(), 1_000)
        .unwrap();
    // Values whose sums (of x and of ln x) depend on the order they are added in, so a summary
    // that read the listings in the order they ran would differ from the analysis' in its last
    // bits.
    let listed_at = plan.listed_positions();
    for (position, case) in plan.cases.iter().enumerate() {
        let values: [f64; 2] = match (case.name == twice, listed_at[position]) {
            (true, 0) => [0.1, 0.2],
            (true, _) => [0.3, 0.6],
            (false, _) => [7.0, 9.0],
        };
        for (index, value) in values.into_iter().enumerate() {
            let iteration = IterationRecord {
                index: index as u32,
                warmup: false,
                started_at_ns: 1_000 + index as i64,
                measurements: vec![fake::USEC_PER_OP.value(value)],
                attachments: Vec::new(),
                quiet: None,
            };
            store.record_iteration(id, position, &iteration).unwrap();
        }
        store.summarise_case(id, position).unwrap();
    }
    store
        .finish_run(id, RunStatus::Complete, 2_000, None)
        .unwrap();
    drop(store);

    let expected = SummarisedRun::of(&backend.reader().load_run(id).unwrap(), &twice);
    // The mean of the analysis' reading, in the order the suite listed the case.
    let as_listed = [0.1, 0.2, 0.3, 0.6];
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let ln = as_listed.map(f64::ln);
    assert_ne!(
        mean(&ln),
        mean(&[ln[2], ln[3], ln[0], ln[1]]),
        "the order shows"
    );
    assert_eq!(expected.summaries[0].log.unwrap().mean, mean(&ln));
    assert_eq!(expected.summaries[0].raw.unwrap().mean, mean(&as_listed));
    let stored = || {
        let series = series_of(
            &*backend.reader(),
            std::slice::from_ref(&twice),
            MetricChoice::All,
        );
        series[0].runs[0].clone()
    };
    let bits = |run: &SummarisedRun| {
        let s = &run.summaries[0];
        let moments = |m: Option<schedlab_core::summary::Moments>| {
            m.map(|m| (m.mean.to_bits(), m.variance.map(f64::to_bits)))
        };
        (s.n, moments(s.log), moments(s.raw))
    };
    let written = stored();
    assert_eq!(written.summaries[0].n, 4, "both listings' iterations");
    assert_eq!(bits(&written), bits(&expected), "as the case completed");
    assert_eq!(written, expected);
    let check = || match &backend.location {
        Location::Sqlite(path) => SqliteStore::check(path, false).unwrap(),
        Location::Postgres(url) => schedlab_store::PgStore::check(url).unwrap(),
    };
    assert!(check().ok(), "{:?}", check().summaries);

    // Filled by the upgrade from the iterations, as a run stored before V9 gets them.
    downgrade_to_v8(backend);
    drop(backend.writer());
    assert_eq!(bits(&stored()), bits(&expected), "filled by the upgrade");
    assert_eq!(stored(), expected);
    assert!(check().ok(), "{:?}", check().summaries);
}

/// A sink that stores iterations and never says a case finished: a run as a reader sees it
/// while it is still storing.
struct NoSummaries<'a>(&'a mut dyn Store, i64);

impl schedlab_core::runner::RunSink for NoSummaries<'_> {
    fn record_iteration(
        &mut self,
        case_index: usize,
        _: &schedlab_core::plan::CaseSpec,
        iteration: &IterationRecord,
    ) -> Result<(), String> {
        self.0
            .record_iteration(self.1, case_index, iteration)
            .map_err(|e| e.to_string())
    }
}

/// Every series `reader` hands over for `cases` (all when empty), on every host.
fn series_of(reader: &dyn Store, cases: &[String], metrics: MetricChoice) -> Vec<CaseSeries> {
    let query = SeriesQuery {
        selection: RunSelection::default(),
        cases: cases.to_vec(),
        metrics,
        per_host: false,
    };
    let mut all = Vec::new();
    reader
        .case_series(&query, &mut |s| {
            all.push(s);
            ControlFlow::Continue(())
        })
        .unwrap();
    all
}

/// Runs on three machines and two kernels, for the fleet selections: (host, kernel, cpu model,
/// value, start).
const FLEET: [(&str, &str, &str, f64, i64); 6] = [
    ("alpha", "6.1", "Xeon", 10.0, 1_000),
    ("alpha", "6.2", "Xeon", 10.0, 1_001),
    ("beta", "6.1", "EPYC", 20.0, 1_002),
    ("gamma", "6.2", "Xeon", 10.0, 1_003),
    ("beta", "6.2", "EPYC", 10.0, 1_004),
    ("beta", "6.2", "EPYC", 10.0, 1_002),
];

fn fleet(store: &mut dyn Store) -> Vec<i64> {
    FLEET
        .iter()
        .enumerate()
        .map(|(i, &(host, kernel, cpu, value, started))| {
            let fake = WorkloadSpec::Fake(FakeParams {
                value_usec: value,
                ..FakeParams::default()
            });
            let plan = RunPlan::new(None, Some(format!("r{i}")), 1, 0, vec![fake]).unwrap();
            let mut fp = Fingerprint {
                hostname: host.into(),
                kernel_release: kernel.into(),
                cpu_model: cpu.into(),
                online_cpu_count: 2 + i as u32 % 2,
                smt_active: (i % 3 != 0).then_some(i % 2 == 0),
                cpufreq_governors: vec!["performance".into(), "powersave".into()],
                ..Fingerprint::default()
            };
            fp.sched_sysctls.insert(
                "kernel.sched_rt_runtime_us".into(),
                format!("95000{}", i % 2),
            );
            let id = store.begin_run(&plan, &fp, started).unwrap();
            let outcome = execute(&plan, &mut StoreSink { store, run_id: id }, &mut Silent);
            store.finish_run(id, outcome.status, 2_000, None).unwrap();
            id
        })
        .collect()
}

fn sql_selection_answers_as_the_default_does(backend: &Backend) {
    let mut store = backend.writer();
    let ids = fleet(&mut *store);
    drop(store);
    let store = backend.reader();
    let ten = store.load_run(ids[0]).unwrap().cases[0].spec.name.clone();
    let wheres = [
        None,
        Some("cpu_model=EPYC"),
        Some("cpu_model=Xeon"),
        Some("online_cpu_count=3"),
        Some("smt_active=true"),
        Some("smt_active=none"),
        Some("cpufreq_governors=performance,powersave"),
        Some("cpufreq_governors=performance"),
        Some("sched_sysctls.kernel.sched_rt_runtime_us=950001"),
        Some("sched_sysctls.kernel.nothing=none"),
        Some("preempt_model=none"),
        Some("online_cpu_count=x"),
        Some("online_cpu_count=3.0"),
        Some("sched_sysctls.kernel.sched_rt_runtime_us=950000"),
    ];
    let mut selections = vec![RunSelection::default()];
    for host in [None, Some("alpha"), Some("beta"), Some("nowhere")] {
        for kernel in [None, Some("6.2")] {
            for case in [None, Some(ten.clone())] {
                for w in wheres {
                    let mut s = RunSelection {
                        host: host.map(String::from),
                        kernel: kernel.map(String::from),
                        case: case.clone(),
                        ..RunSelection::default()
                    };
                    if let Some(w) = w {
                        s.add_where(w).unwrap();
                    }
                    selections.push(s);
                }
            }
        }
    }
    for since in [None, Some(1_002)] {
        for until in [None, Some(1_004)] {
            for some in [None, Some(vec![ids[1], ids[2], ids[4]]), Some(Vec::new())] {
                selections.push(RunSelection {
                    since_ns: since,
                    until_ns: until,
                    ids: some,
                    ..RunSelection::default()
                });
            }
        }
    }
    let mut seen_some = 0;
    for s in &selections {
        for limit in [None, Some(1), Some(usize::MAX)] {
            let sql = store.select_runs(s, limit).unwrap();
            let default = select_runs_default(&*store, s, limit).unwrap();
            assert_eq!(sql, default, "{s:?} limit {limit:?}");
            seen_some += usize::from(!sql.is_empty() && sql.len() < ids.len());
        }
    }
    assert!(seen_some > 30, "{seen_some}");
    let beta_ten = RunSelection {
        host: Some("beta".into()),
        case: Some(ten),
        ..RunSelection::default()
    };
    let found: Vec<i64> = store
        .select_runs(&beta_ten, None)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        found,
        [ids[4], ids[5]],
        "beta's runs of the 10-usec case, newest first"
    );
    // Hosts by their newest run, as the default finds them from every run.
    let hosts = store.hosts().unwrap();
    assert_eq!(hosts, hosts_default(&*store).unwrap());
    let seen: Vec<(&str, usize, usize)> = hosts
        .iter()
        .map(|h| (h.hostname.as_str(), h.runs, h.kernels))
        .collect();
    assert_eq!(seen, [("beta", 3, 2), ("gamma", 1, 1), ("alpha", 2, 2)]);
    assert_eq!(hosts[2].first_started_at_ns, 1_000);
    assert_eq!(hosts[0].last.measured_iterations, 1);
}

/// Runs `sql` on the store's database, outside schedlab.
fn execute_raw(backend: &Backend, sql: &str) {
    match &backend.location {
        Location::Sqlite(path) => rusqlite::Connection::open(path)
            .unwrap()
            .execute_batch(sql)
            .unwrap(),
        // The tests' server takes no password: the redacted URL is the URL.
        Location::Postgres(url) => ::postgres::Client::connect(&url.redacted(), ::postgres::NoTls)
            .unwrap()
            .batch_execute(sql)
            .unwrap(),
    }
}

/// Drops what V9 made (its tables, column and indexes), leaving the schema history as it is.
fn drop_v9(backend: &Backend) {
    const V9: &str = "DROP TABLE summaries;
        DROP TABLE summarised_cases;
        DROP INDEX runs_by_start;
        DROP INDEX runs_running;
        DROP INDEX runs_by_host_kernel;
        ALTER TABLE runs DROP COLUMN measured_by;";
    execute_raw(
        backend,
        &match &backend.location {
            Location::Sqlite(_) => format!("{V9} DROP INDEX cases_by_name;"),
            Location::Postgres(_) => {
                format!("{V9} DROP INDEX cases_by_name_run; DROP INDEX runs_by_fingerprint;")
            }
        },
    );
}

/// Takes the store back to V8, as a schedlab before summaries and probes left it: its runs and
/// iterations stay, V9's, V10's and V11's tables, column and indexes go.
fn downgrade_to_v8(backend: &Backend) {
    drop_v9(backend);
    execute_raw(
        backend,
        "DROP TABLE iteration_quiet;
         DROP TABLE profile_symbols;
         DROP TABLE probe_attachments;
         DROP TABLE probe_unavailable;
         DROP TABLE probe_measurements;
         DROP TABLE probe_iterations;
         DELETE FROM refinery_schema_history WHERE version > 8;",
    );
    if let Location::Sqlite(_) = &backend.location {
        execute_raw(backend, "PRAGMA user_version = 8;");
    }
}

/// Makes the store what schedlab left between the probes and the run summaries (commits
/// da4e410..ad51c62): V10's tables, and V9 recorded as a placeholder that changed nothing —
/// its record as refinery writes it, name and checksum.
fn back_to_the_placeholder_v9(backend: &Backend) {
    drop_v9(backend);
    let placeholder = refinery::Migration::unapplied(
        "V9__reserved_run_summaries",
        include_str!("../migrations/retired/V9__reserved_run_summaries.sql"),
    )
    .unwrap();
    execute_raw(
        backend,
        &format!(
            "UPDATE refinery_schema_history SET name = 'reserved_run_summaries', checksum = '{}'
              WHERE version = 9;",
            placeholder.checksum()
        ),
    );
}

/// What the fleet commands ask of a store: every series (all metrics, primary ones), the runs
/// and the hosts.
fn fleet_answers(store: &dyn Store) -> (Vec<CaseSeries>, Vec<RunSummary>, Vec<HostSummary>) {
    let mut series = Vec::new();
    for metrics in [MetricChoice::All, MetricChoice::Primary] {
        let query = SeriesQuery {
            selection: RunSelection::default(),
            cases: Vec::new(),
            metrics,
            per_host: true,
        };
        store
            .case_series(&query, &mut |s| {
                series.push(s);
                ControlFlow::Continue(())
            })
            .unwrap();
    }
    let runs = store.select_runs(&RunSelection::default(), None).unwrap();
    (series, runs, store.hosts().unwrap())
}

/// A store schedlab wrote between the probes and the run summaries recorded the placeholder V9
/// and has V10's tables: it reads as V8 (histories from the iterations, number for number), and
/// a writer applies the real V9 in the placeholder's place, fills the summaries and keeps the
/// probes.
/// A profile's top symbol: the kernel's `schedule`, 40 samples, 80 % of them.
fn schedule_symbol() -> schedlab_core::probe::ProfileSymbol {
    schedlab_core::probe::ProfileSymbol {
        rank: 1,
        symbol: "schedule".into(),
        module: "[kernel.kallsyms]".into(),
        origin: schedlab_core::probe::Origin::Kernel,
        samples: 40,
        share_pct: 80.0,
    }
}

fn a_store_with_the_placeholder_v9_reads_as_v8_and_upgrades(backend: &Backend) {
    use schedlab_core::probe::{ProbeKind, ProbeRecord};
    let mut store = backend.writer();
    let ids = fleet(&mut *store);
    let profiled = ProbeRecord {
        kind: ProbeKind::Profile,
        index: 0,
        started_at_ns: 5,
        measurements: vec![fake::OPS_PER_SEC.value(10.0)],
        explanatory: Vec::new(),
        unavailable: Vec::new(),
        attachments: Vec::new(),
        symbols: vec![schedule_symbol()],
    };
    store.record_probe(ids[0], 0, &profiled).unwrap();
    drop(store);
    let current = fleet_answers(&*backend.reader());
    back_to_the_placeholder_v9(backend);
    assert_eq!(
        fleet_answers(&*backend.reader()),
        current,
        "read from the iterations"
    );
    drop(backend.writer());
    let upgraded = backend.reader();
    assert_eq!(fleet_answers(&*upgraded), current, "after the upgrade");
    assert_eq!(upgraded.load_probes(ids[0]).unwrap(), vec![(0, profiled)]);
    let check = match &backend.location {
        Location::Sqlite(path) => SqliteStore::check(path, false).unwrap(),
        Location::Postgres(url) => schedlab_store::PgStore::check(url).unwrap(),
    };
    assert!(check.ok(), "{:?}", check.summaries);
    assert_eq!(check.schema_version, Some(11));
}

/// A V8 store (a fleet's PostgreSQL database before this schedlab) answers every fleet query
/// as its V9 self does — read from the iterations — and so does it after the upgrade fills its
/// summaries.
fn a_v8_store_answers_alike_before_and_after_its_upgrade(backend: &Backend) {
    let mut store = backend.writer();
    fleet(&mut *store);
    let stopped = store
        .begin_run(&plan("stopped"), &Fingerprint::collect(), 3_000)
        .unwrap();
    let iteration = IterationRecord {
        index: 0,
        warmup: false,
        started_at_ns: 3_001,
        measurements: vec![fake::USEC_PER_OP.value(4.0), fake::OPS_PER_SEC.value(0.25)],
        attachments: Vec::new(),
        quiet: None,
    };
    store.record_iteration(stopped, 0, &iteration).unwrap();
    store
        .finish_run(stopped, RunStatus::Interrupted, 3_002, Some("SIGINT"))
        .unwrap();
    drop(store);
    let answers = fleet_answers;
    let v9 = answers(&*backend.reader());
    assert_eq!(v9.0.len(), 10, "5 series of each choice of metrics");
    downgrade_to_v8(backend);
    assert_eq!(answers(&*backend.reader()), v9, "read from the iterations");
    drop(backend.writer());
    assert_eq!(answers(&*backend.reader()), v9, "after the upgrade");
}

/// Series per host: each host's cases, a host's series holding its runs alone; a selection's
/// `--where` holds in them too.
fn series_per_host_hold_each_hosts_runs(backend: &Backend) {
    let mut store = backend.writer();
    let ids = fleet(&mut *store);
    drop(store);
    let store = backend.reader();
    let mut selection = RunSelection::default();
    selection.add_where("cpu_model=EPYC").unwrap();
    let query = |selection: RunSelection, per_host| SeriesQuery {
        selection,
        cases: Vec::new(),
        metrics: MetricChoice::Primary,
        per_host,
    };
    let mut got = Vec::new();
    store
        .case_series(&query(RunSelection::default(), true), &mut |s| {
            let runs: Vec<i64> = s.runs.iter().filter_map(|r| r.id).collect();
            got.push((s.host.unwrap(), s.case, runs));
            ControlFlow::Continue(())
        })
        .unwrap();
    let hosts: Vec<(&str, &[i64])> = got
        .iter()
        .map(|(h, _, runs)| (h.as_str(), runs.as_slice()))
        .collect();
    assert_eq!(
        hosts,
        [
            ("alpha", &[ids[0], ids[1]][..]),
            // beta's two cases (values 20 and 10), oldest run first.
            ("beta", &[ids[2]][..]),
            ("beta", &[ids[5], ids[4]][..]),
            ("gamma", &[ids[3]][..]),
        ]
    );
    let mut epyc = Vec::new();
    store
        .case_series(&query(selection, true), &mut |s| {
            epyc.push(s.host.unwrap());
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!(
        epyc,
        ["beta"],
        "one host has EPYC runs, and visit stopped there"
    );
}

fn a_run_read_keeping_some_measurements_is_the_whole_run_without_the_others(backend: &Backend) {
    let mut store = backend.writer();
    let id = run_into(&mut *store, &plan("base"));
    let wait_p99 =
        MetricDef::secondary("wait_p99_usec", "usec", Better::Lower).quantile("wait", 99.0);
    let with_secondaries = IterationRecord {
        index: 9,
        warmup: false,
        started_at_ns: 7,
        measurements: vec![
            fake::USEC_PER_OP.value(3.0),
            secondary::WALL_TIME_SEC.value(2.5),
            secondary::CPU_MIGRATIONS_COUNT.value(4.0),
            secondary::RES_IPI_COUNT.value(5.0),
            wait_p99.value(6.0),
        ],
        attachments: Vec::new(),
        quiet: None,
    };
    store.record_iteration(id, 0, &with_secondaries).unwrap();
    drop(store);
    let reader = backend.reader();
    let whole = reader.load_run(id).unwrap();
    let kept = |keep: &dyn Fn(&Measurement) -> bool| {
        let mut run = whole.clone();
        for iteration in run.cases.iter_mut().flat_map(|c| &mut c.iterations) {
            iteration.measurements.retain(|m| keep(m));
        }
        run
    };
    let primary = reader
        .load_run_keeping(id, &|_, role, _| role == Role::Primary)
        .unwrap();
    assert_eq!(primary, kept(&|m| m.role == Role::Primary));
    let last = |run: &RunRecord| {
        let measurements = &run.cases[0].iterations.last().unwrap().measurements;
        measurements
            .iter()
            .map(|m| m.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(last(&primary), ["usec_per_op"]);
    let counts = reader
        .load_run_keeping(id, &|name, _, shape| {
            shape == MetricShape::Count && name != "res_ipi_count"
        })
        .unwrap();
    assert_eq!(
        counts,
        kept(&|m| m.shape == MetricShape::Count && m.name != "res_ipi_count")
    );
    assert_eq!(last(&counts), ["cpu_migrations_count"]);
    let quantiles = reader
        .load_run_keeping(id, &|_, _, shape| shape.of_distribution())
        .unwrap();
    assert_eq!(last(&quantiles), ["wait_p99_usec"]);
    assert_eq!(
        quantiles.cases[0].iterations.last().unwrap().measurements[0],
        wait_p99.value(6.0)
    );
    let none = reader.load_run_keeping(id, &|_, _, _| false).unwrap();
    assert_eq!(none, kept(&|_| false));
    assert_eq!(
        none.cases[0].iterations.len(),
        whole.cases[0].iterations.len()
    );
}

fn labels_name_many_runs_and_ids_one(backend: &Backend) {
    let mut store = backend.writer();
    let a = run_into(&mut *store, &plan("kernel-a"));
    let b = run_into(&mut *store, &plan("kernel-a"));
    let c = run_into(&mut *store, &plan("kernel-b"));
    assert_eq!(store.resolve("kernel-a").unwrap(), vec![a, b]);
    assert_eq!(store.resolve(&c.to_string()).unwrap(), vec![c]);
    assert!(matches!(
        store.resolve("kernel-z"),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(store.resolve("999"), Err(StoreError::NotFound(_))));
    let listed: Vec<i64> = store
        .list_runs(None)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, vec![c, b, a], "newest first");
    assert_eq!(store.list_runs(Some(1)).unwrap().len(), 1);
    assert!(matches!(
        store.finish_run(a, RunStatus::Abandoned, 3, None),
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        store.finish_run(999, RunStatus::Failed, 3, None),
        Err(StoreError::NotFound(_))
    ));
}

fn experiments_tags_and_calibrations_round_trip(backend: &Backend) {
    let mut store = backend.writer();
    let experiment = Experiment {
        id: None,
        kind: ExperimentKind::Campaign,
        name: "nightly".into(),
        spec: serde_json::json!({"boots": 4}),
        state: serde_json::json!({"slots": []}),
        status: RunStatus::Running,
        created_at_ns: 42,
    };
    let eid = store.create_experiment(&experiment).unwrap();
    assert!(matches!(
        store.create_experiment(&experiment),
        Err(StoreError::Exists(_))
    ));
    let run = run_into(&mut *store, &plan("k-a"));
    let tag = ExperimentTag {
        experiment_id: eid,
        arm: Arm::B,
        round: 3,
    };
    store.tag_run(run, tag).unwrap();
    let state = serde_json::json!({"slots": [{"run_id": run}]});
    store
        .update_experiment(eid, &state, RunStatus::Complete)
        .unwrap();
    let calibration = StoredCalibration {
        id: None,
        created_at_ns: 77,
        label: "cal".into(),
        hostname: "box".into(),
        run_ids: vec![run],
        model: serde_json::json!({"cases": []}),
    };
    let cid = store.save_calibration(&calibration).unwrap();
    drop(store);

    let reader = backend.reader();
    assert_eq!(reader.run_tag(run).unwrap(), Some(tag));
    let stored = reader
        .experiment(ExperimentKind::Campaign, "nightly")
        .unwrap()
        .unwrap();
    assert_eq!(stored.state, state);
    assert_eq!(stored.status, RunStatus::Complete);
    assert_eq!(reader.experiment_by_id(eid).unwrap(), Some(stored));
    assert_eq!(
        reader.experiment(ExperimentKind::Ab, "nightly").unwrap(),
        None
    );
    assert_eq!(
        reader.calibrations().unwrap(),
        vec![StoredCalibration {
            id: Some(cid),
            ..calibration
        }]
    );
}

fn readers_write_nothing(backend: &Backend) {
    // A store nobody has written to yet reads as empty (an SQLite file must exist to be read).
    if let Location::Sqlite(path) = &backend.location {
        std::fs::write(path, b"").unwrap();
    }
    let mut reader = backend.reader();
    assert!(reader.list_runs(None).unwrap().is_empty());
    assert!(matches!(
        reader.begin_run(&plan("x"), &Fingerprint::collect(), 1),
        Err(StoreError::ReadOnly { .. })
    ));
    drop(reader);
    let mut writer = backend.writer();
    let id = run_into(&mut *writer, &plan("x"));
    // A reader beside a writer that is storing: neither waits for the other.
    let reader = backend.reader();
    writer
        .record_iteration(
            id,
            0,
            &IterationRecord {
                index: 7,
                warmup: false,
                started_at_ns: 3,
                measurements: vec![],
                attachments: vec![],
                quiet: None,
            },
        )
        .unwrap();
    assert_eq!(reader.load_run(id).unwrap().cases[0].iterations.len(), 5);
}

/// Four writers, each with its own connection, store runs at once: every run and iteration is
/// there exactly once, each run with its own id and uuid.
fn concurrent_writers_lose_and_duplicate_nothing(backend: &Backend) {
    const WRITERS: usize = 4;
    const RUNS_EACH: usize = 5;
    drop(backend.writer());
    let barrier = std::sync::Barrier::new(WRITERS);
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let barrier = &barrier;
            scope.spawn(move || {
                // Past the barrier whatever the open does: a writer that failed to open must not
                // leave the others waiting for it for ever.
                let opened =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| backend.writer()));
                barrier.wait();
                let mut store = opened.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                for r in 0..RUNS_EACH {
                    run_into(&mut *store, &plan(&format!("w{w}-{r}")));
                }
            });
        }
    });
    let reader = backend.reader();
    let runs = reader.list_runs(None).unwrap();
    assert_eq!(runs.len(), WRITERS * RUNS_EACH, "runs stored");
    let iterations: usize = runs.iter().map(|r| r.measured_iterations).sum();
    assert_eq!(
        iterations,
        WRITERS * RUNS_EACH * 3,
        "measured iterations stored"
    );
    let mut ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), runs.len());
    let mut uuids: Vec<String> = runs
        .iter()
        .map(|r| reader.run_provenance(r.id).unwrap().uuid.unwrap())
        .collect();
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), runs.len(), "distinct uuids");
    for w in 0..WRITERS {
        for r in 0..RUNS_EACH {
            assert_eq!(reader.resolve(&format!("w{w}-{r}")).unwrap().len(), 1);
        }
    }
}

/// A laptop's SQLite store with runs, an experiment and a calibration.
fn source_store(dir: &tempfile::TempDir) -> (PathBuf, Vec<i64>) {
    let path = dir.path().join("source.db");
    let mut source = SqliteStore::open(&path).unwrap();
    let eid = source
        .create_experiment(&Experiment {
            id: None,
            kind: ExperimentKind::Ab,
            name: "gov".into(),
            spec: serde_json::json!({"rounds": 1}),
            state: serde_json::json!({"visits_done": 0}),
            status: RunStatus::Running,
            created_at_ns: 5,
        })
        .unwrap();
    let mut ids = Vec::new();
    for (i, arm) in [Arm::A, Arm::B].into_iter().enumerate() {
        let id = run_into(&mut source, &plan(&format!("gov-{}", arm.as_str())));
        source
            .tag_run(
                id,
                ExperimentTag {
                    experiment_id: eid,
                    arm,
                    round: i as u32,
                },
            )
            .unwrap();
        ids.push(id);
    }
    source
        .update_experiment(
            eid,
            &serde_json::json!({"visits_done": 2, "run_ids": ids}),
            RunStatus::Complete,
        )
        .unwrap();
    // Under the quiet-machine guard (a limit always met): its marks are copied too.
    let guarded = plan("plain").with_quiet(100.0, 0).unwrap();
    ids.push(run_into(&mut source, &guarded));
    let run = source.load_run(ids[2]).unwrap();
    assert!(run.cases[0].iterations.iter().all(|it| it.quiet.is_some()));
    source
        .save_calibration(&StoredCalibration {
            id: None,
            created_at_ns: 9,
            label: "plain".into(),
            hostname: "laptop".into(),
            run_ids: vec![ids[2]],
            model: serde_json::json!({"id": null, "run_ids": [ids[2]], "cases": []}),
        })
        .unwrap();
    // Still running: left for a later push.
    source
        .begin_run(&plan("going"), &Fingerprint::collect(), 3_000)
        .unwrap();
    (path, ids)
}

fn push_copies_everything_once(backend: &Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = source_store(&dir);
    let source = SqliteStore::open_existing(&path).unwrap();
    let mut target = backend.writer();
    let first = push(&source, &mut *target, None, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(first.copied.len(), 3);
    assert_eq!(first.still_running.len(), 1);
    assert_eq!(first.experiments_copied, 1);
    assert_eq!(first.experiments_updated, 1);
    assert_eq!(first.calibrations_copied, 1);
    assert!(first.conflicts.is_empty());

    let second = push(&source, &mut *target, None, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    assert!(second.copied.is_empty(), "{second:?}");
    assert_eq!(second.already_there, 3);
    assert_eq!(second.experiments_copied + second.experiments_updated, 0);
    assert_eq!(second.calibrations_copied, 0);
    assert_eq!(second.calibrations_already_there, 1);
    drop(target);

    let reader = backend.reader();
    assert_eq!(reader.list_runs(None).unwrap().len(), 3);
    let target_of = |source_id: i64| {
        first
            .copied
            .iter()
            .find(|(s, _)| *s == source_id)
            .map(|(_, t)| *t)
            .unwrap()
    };
    for &id in &ids {
        let (mut theirs, mut ours) = (
            source.load_run(id).unwrap(),
            reader.load_run(target_of(id)).unwrap(),
        );
        theirs.id = None;
        ours.id = None;
        assert_eq!(ours, theirs, "run {id}");
        let (a, b) = (
            source.run_provenance(id).unwrap(),
            reader.run_provenance(target_of(id)).unwrap(),
        );
        assert_eq!((a.uuid, a.status, a.owner), (b.uuid, b.status, b.owner));
        assert_eq!(
            a.tag.map(|t| (t.arm, t.round)),
            b.tag.map(|t| (t.arm, t.round))
        );
    }
    let experiment = reader
        .experiment(ExperimentKind::Ab, "gov")
        .unwrap()
        .unwrap();
    assert_eq!(
        experiment.state,
        serde_json::json!({"visits_done": 2, "run_ids": [target_of(ids[0]), target_of(ids[1])]})
    );
    assert_eq!(experiment.status, RunStatus::Complete);
    let calibrations = reader.calibrations().unwrap();
    assert_eq!(calibrations[0].run_ids, vec![target_of(ids[2])]);
    assert_eq!(
        calibrations[0].model["run_ids"],
        serde_json::json!([target_of(ids[2])])
    );

    // --since: nothing that old is new.
    let mut target = backend.writer();
    let later = push(&source, &mut *target, Some(i64::MAX), &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    assert!(later.copied.is_empty() && later.already_there == 0);
}

/// A push told to stop after its first run: the target holds that run whole, and the next push
/// copies the rest, the experiment's progress and the calibration.
fn push_stopped_between_runs_carries_on_next_time(backend: &Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = source_store(&dir);
    let source = SqliteStore::open_existing(&path).unwrap();
    let mut target = backend.writer();
    let mut asked = 0;
    let first = push(&source, &mut *target, None, &mut |report| {
        asked += 1;
        if report.copied.is_empty() {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    })
    .unwrap();
    assert!(first.stopped);
    assert_eq!(
        asked, 2,
        "asked before each run, up to the one it stopped at"
    );
    assert_eq!(first.copied.len(), 1);
    assert_eq!(first.copied[0].0, ids[0]);
    assert_eq!(
        (first.experiments_updated, first.calibrations_copied),
        (0, 0)
    );
    drop(target);
    let reader = backend.reader();
    let runs = reader.list_runs(None).unwrap();
    assert_eq!(runs.len(), 1);
    let (mut theirs, mut ours) = (
        source.load_run(ids[0]).unwrap(),
        reader.load_run(runs[0].id).unwrap(),
    );
    (theirs.id, ours.id) = (None, None);
    assert_eq!(ours, theirs);
    assert!(reader.calibrations().unwrap().is_empty());
    drop(reader);

    let mut target = backend.writer();
    let second = push(&source, &mut *target, None, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    assert!(!second.stopped);
    assert_eq!(second.already_there, 1);
    assert_eq!(
        second.copied.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        ids[1..]
    );
    assert_eq!(second.experiments_updated, 1);
    assert_eq!(second.calibrations_copied, 1);
    drop(target);
    let reader = backend.reader();
    assert_eq!(reader.list_runs(None).unwrap().len(), 3);
    let experiment = reader
        .experiment(ExperimentKind::Ab, "gov")
        .unwrap()
        .unwrap();
    assert_eq!(
        experiment.state["run_ids"].as_array().unwrap().len(),
        2,
        "{}",
        experiment.state
    );
}

/// From the backend back into a new SQLite file: the same runs again.
fn push_back_into_sqlite_gives_the_same_runs(backend: &Backend) {
    let mut store = backend.writer();
    let ids = [
        run_into(&mut *store, &plan("one")),
        run_into(&mut *store, &plan("two")),
    ];
    drop(store);
    let source = backend.reader();
    let dir = tempfile::tempdir().unwrap();
    let mut file = SqliteStore::open(&dir.path().join("copy.db")).unwrap();
    let report = push(
        &*source,
        &mut file,
        None,
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(report.copied.len(), 2);
    for (&id, &(from, to)) in ids.iter().zip(&report.copied) {
        assert_eq!(id, from);
        let (mut a, mut b) = (source.load_run(from).unwrap(), file.load_run(to).unwrap());
        a.id = None;
        b.id = None;
        assert_eq!(a, b);
    }
    file.integrity_check().unwrap();
}

/// A probed iteration and a profiled one: read back whole, an unavailable probe as unavailable,
/// and never among the run's iterations, which is all a comparison reads.
fn probes_round_trip_apart_from_measured_iterations(backend: &Backend) {
    use schedlab_core::probe::{
        GroupAttachment, ProbeKind, ProbeMeasurement, ProbeRecord, Unavailable,
    };
    let mut store = backend.writer();
    let id = run_into(&mut *store, &plan("probed"));
    let before = store.load_run(id).unwrap();
    const P99: MetricDef = MetricDef::explanatory("runq_delay_p99_usec", "usec", Better::Lower)
        .quantile("runq_delay", 99.0);
    let explained = ProbeRecord {
        kind: ProbeKind::Explain,
        index: 0,
        started_at_ns: 5,
        measurements: vec![fake::OPS_PER_SEC.value(10.0)],
        explanatory: vec![
            ProbeMeasurement {
                group: None,
                measurement: P99.value(12.5),
            },
            ProbeMeasurement {
                group: Some("fanout worker".into()),
                measurement: P99.value(20.0),
            },
        ],
        unavailable: vec![Unavailable {
            probe: "hardware_counters".into(),
            reason: "no PMU".into(),
        }],
        attachments: vec![GroupAttachment {
            group: Some("fanout worker".into()),
            attachment: Attachment {
                name: "runq_delay_ns".into(),
                encoding: "hdrhistogram-v2-deflate".into(),
                data: vec![1, 2, 3],
            },
        }],
        symbols: Vec::new(),
    };
    let profiled = ProbeRecord {
        kind: ProbeKind::Profile,
        symbols: vec![schedule_symbol()],
        unavailable: Vec::new(),
        attachments: Vec::new(),
        explanatory: Vec::new(),
        ..explained.clone()
    };
    store.record_probe(id, 0, &explained).unwrap();
    store.record_probe(id, 0, &profiled).unwrap();
    drop(store);
    let reader = backend.reader();
    assert_eq!(
        reader.load_run(id).unwrap(),
        before,
        "a probed iteration is no iteration of the run"
    );
    let probes = reader.load_probes(id).unwrap();
    assert_eq!(probes, vec![(0, explained), (0, profiled)]);
}
