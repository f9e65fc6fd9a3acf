//! The check every test database gets when its test ends ([`super::TestDir`]): each run's stored
//! summaries (what `history` and `changes` read) are what the analysis computes from the run's
//! iterations — a comparison's side of the run, each case × metric summarised as a comparison
//! summarises a run — bit for bit, with the same metrics, counts, units and directions.
use std::ops::ControlFlow;
use std::path::Path;

use schedlab_analysis::series::{RunInput, Side};
use schedlab_analysis::units::{summarise_run, Scale};
use schedlab_analysis::MetricFilter;
use schedlab_core::summary::{MetricSummary, Moments};
use schedlab_store::{MetricChoice, RunSelection, SeriesQuery, SqliteStore, Store};

/// Checks the database at `db`, if a test left one this schedlab reads (tests of damaged,
/// foreign or newer files leave others, and files older than V9 have no summaries). Returns how
/// many run summaries it compared.
pub fn assert_they_are_the_analysis(db: &Path) -> usize {
    let Ok(store) = SqliteStore::open_existing(db) else {
        return 0;
    };
    if store.schema_version() < 9 {
        return 0;
    }
    let query = SeriesQuery {
        selection: RunSelection::default(),
        cases: Vec::new(),
        metrics: MetricChoice::All,
        per_host: false,
    };
    let mut compared = 0;
    let read = store.case_series(&query, &mut |series| {
        for run in &series.runs {
            let id = run.id.expect("a stored run");
            let Ok(record) = store.load_run(id) else {
                continue;
            };
            let input = RunInput {
                record: &record,
                tag: None,
            };
            let side = Side::from_runs("run", &[input], &MetricFilter::every_metric(), true);
            let of_case: Vec<_> = side
                .series
                .iter()
                .filter(|s| s.case.name == series.case)
                .collect();
            let names: Vec<&str> = of_case.iter().map(|s| s.metric.as_str()).collect();
            let stored: Vec<&str> = run.summaries.iter().map(|s| s.metric.as_str()).collect();
            assert_eq!(
                stored,
                names,
                "{}: run {id}, case {}",
                db.display(),
                series.case
            );
            for (summary, from_side) in run.summaries.iter().zip(&of_case) {
                let values = &from_side.runs[0].1;
                let what = format!("{}: run {id}, case {}", db.display(), series.case);
                assert_same(summary, values, &what);
                assert_eq!(
                    (&summary.unit, summary.better),
                    (&from_side.unit, from_side.better),
                    "{what}"
                );
                compared += 1;
            }
        }
        ControlFlow::Continue(())
    });
    // A file a test damaged on purpose may not read; its own test says what it must.
    if read.is_err() {
        return 0;
    }
    compared
}

/// `summary` is the analysis' run summary of `values` on both scales.
fn assert_same(summary: &MetricSummary, values: &[f64], what: &str) {
    let bits = |m: Option<Moments>| m.map(|m| (m.mean.to_bits(), m.variance.map(f64::to_bits)));
    let analysis = |scale: Scale| {
        let s = summarise_run(0, values, scale);
        Some(Moments {
            mean: s.mean,
            variance: s.variance,
        })
    };
    assert_eq!(summary.n, values.len(), "{what}: {}", summary.metric);
    let finite = values.iter().all(|v| v.is_finite());
    let log = (Scale::of(values.iter().copied()) == Scale::Log)
        .then(|| analysis(Scale::Log))
        .flatten();
    let raw = finite.then(|| analysis(Scale::Raw)).flatten();
    assert_eq!(
        bits(summary.log),
        bits(log),
        "{what}: {} (ln x)",
        summary.metric
    );
    assert_eq!(
        bits(summary.raw),
        bits(raw),
        "{what}: {} (x)",
        summary.metric
    );
}
