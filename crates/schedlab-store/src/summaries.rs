//! Every run's summary of every metric of every case (V9: `summaries`, and `summarised_cases`,
//! which says how many iterations they cover): written as a case completes ([`store_case`]), for
//! what is left when the run ends ([`store_stale`]), with a copied run ([`write`]) and, by the
//! upgrade to V9, for every run stored before ([`fill`]). `history`, `changes`, `hosts` and `runs`
//! read them instead of the iterations; `db check` recomputes them from the iterations
//! ([`verify`]). They are computed by [`schedlab_core::summary`], as the analysis computes a run
//! summary, so either way the numbers are the same bits.
use std::collections::HashMap;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, Measurement, MetricShape, Role};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{CaseRecord, IterationRecord, RunRecord};
use schedlab_core::summary::{self, MetricSummary, Moments};

use crate::liveness::Here;
use crate::load::{every, load_run_in, RunLoad};
use crate::rows::from_json;
use crate::schema::V_SUMMARIES;
use crate::sql::{Db, SqlRow};
use crate::{Result, StoreError};

/// What the summaries of one case name in one run cover, and the summaries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseSummaries {
    /// Iterations of the run's cases of this name, warm-ups too.
    pub(crate) iterations: i64,
    /// Of them measured.
    pub(crate) measured: i64,
    pub(crate) metrics: Vec<MetricSummary>,
}

/// The summaries of the cases named `case` in run `run_id`, computed from their iterations in the
/// order the analysis reads the run's cases ([`listed_order`]).
pub(crate) fn of_iterations<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    case: &str,
    here: &Here,
) -> Result<CaseSummaries> {
    let what = RunLoad {
        case: Some(case),
        keep: &every,
        attachments: false,
    };
    let run = load_run_in(db, version, run_id, &what, here)?;
    let every_case: Vec<(i64, String)> = db.query(
        "SELECT position, name FROM cases WHERE run_id = $1 ORDER BY position",
        &[&run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let order = listed_order(Some(&run.plan), &every_case);
    // The run's cases of this name, loaded in the order of their positions.
    let positions = every_case
        .iter()
        .filter(|(_, name)| name == case)
        .map(|c| c.0);
    let mut cases: Vec<(usize, &CaseRecord)> = positions
        .map(|p| order.iter().position(|&q| q == p).unwrap_or(usize::MAX))
        .zip(&run.cases)
        .collect();
    cases.sort_by_key(|(place, _)| *place);
    let iterations = run.cases.iter().map(|c| c.iterations.len()).sum::<usize>();
    let measured = run
        .cases
        .iter()
        .map(|c| c.measured().count())
        .sum::<usize>();
    Ok(CaseSummaries {
        iterations: iterations as i64,
        measured: measured as i64,
        metrics: summary::summarise(cases.into_iter().map(|(_, c)| c)),
    })
}

/// The positions of a run's cases (`(position, name)` in the order they ran) in the order the
/// analysis reads them: the order the plan listed them, by [`RunPlan::as_listed`] itself, so a
/// case listed twice is read in the same order here and there — the order its iterations are
/// summed in, to the last bit. Without a readable plan, the order they ran.
fn listed_order(plan: Option<&RunPlan>, cases: &[(i64, String)]) -> Vec<i64> {
    let ran: Vec<&(i64, String)> = cases.iter().collect();
    let listed = match plan {
        Some(plan) => plan.as_listed(ran, |c| &c.1),
        None => ran,
    };
    listed.into_iter().map(|c| c.0).collect()
}

/// The summaries of every case name of `run`, read whole, as [`of_iterations`] computes them
/// from the store: for a run copied in from another store.
pub(crate) fn of_run(run: &RunRecord) -> Vec<(String, CaseSummaries)> {
    summary::summarise_run(run)
        .into_iter()
        .map(|(name, metrics)| {
            let cases = || run.cases.iter().filter(|c| c.spec.name == name);
            let iterations = cases().map(|c| c.iterations.len()).sum::<usize>();
            let measured = cases().map(|c| c.measured().count()).sum::<usize>();
            let summaries = CaseSummaries {
                iterations: iterations as i64,
                measured: measured as i64,
                metrics,
            };
            (name, summaries)
        })
        .collect()
}

/// Replaces the stored summaries of the cases named `case` in run `run_id`.
pub(crate) fn write<D: Db>(
    db: &mut D,
    run_id: i64,
    case: &str,
    summaries: &CaseSummaries,
) -> Result<()> {
    db.execute(
        "DELETE FROM summaries WHERE run_id = $1 AND case_name = $2",
        &[&run_id, &case],
    )?;
    for (ordinal, s) in summaries.metrics.iter().enumerate() {
        let moments = |m: Option<Moments>| (m.map(|m| m.mean), m.and_then(|m| m.variance));
        let (log_mean, log_variance) = moments(s.log);
        let (raw_mean, raw_variance) = moments(s.raw);
        db.execute(
            "INSERT INTO summaries (run_id, case_name, metric, ordinal, unit, better, role, n,
                                    log_mean, log_variance, raw_mean, raw_variance)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &run_id,
                &case,
                &s.metric,
                &(ordinal as i64),
                &s.unit,
                &s.better.as_str(),
                &s.role.as_str(),
                &(s.n as i64),
                &log_mean,
                &log_variance,
                &raw_mean,
                &raw_variance,
            ],
        )?;
    }
    db.execute(
        "INSERT INTO summarised_cases (run_id, case_name, iterations, measured)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (run_id, case_name)
         DO UPDATE SET iterations = excluded.iterations, measured = excluded.measured",
        &[&run_id, &case, &summaries.iterations, &summaries.measured],
    )?;
    Ok(())
}

/// Summarises the cases named `case` in run `run_id` from their stored iterations (a writer's
/// database is always current).
pub(crate) fn store_case<D: Db>(db: &mut D, run_id: i64, case: &str, here: &Here) -> Result<()> {
    let summaries = of_iterations(db, V_SUMMARIES, run_id, case, here)?;
    write(db, run_id, case, &summaries)
}

/// Summarises every case name of run `run_id` whose summaries do not cover its iterations (or
/// that has none): what is left when a run ends — a case it was in when it stopped, or one whose
/// iterations were added to after it was summarised.
pub(crate) fn store_stale<D: Db>(db: &mut D, run_id: i64, here: &Here) -> Result<()> {
    let iterations: Vec<(String, i64)> = db.query(
        "SELECT c.name, count(i.id) FROM cases c LEFT JOIN iterations i ON i.case_id = c.id
          WHERE c.run_id = $1 GROUP BY c.name ORDER BY c.name",
        &[&run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let covered: std::collections::HashMap<String, i64> = db
        .query(
            "SELECT case_name, iterations FROM summarised_cases WHERE run_id = $1",
            &[&run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect();
    for (case, count) in iterations {
        if covered.get(&case) != Some(&count) {
            store_case(db, run_id, &case, here)?;
        }
    }
    Ok(())
}

/// Summarises every stored run, for the upgrade to V9: the migration's tables are new and empty,
/// and every run gets its summaries and its measuring build as a writer would have stored them.
/// Runs are read [`BATCH`] at a time (a million take minutes, not the hour a run at a time
/// took).
pub(crate) fn fill<D: Db>(db: &mut D) -> Result<()> {
    for batch in batches(db)? {
        for run in read_batch(db, batch)? {
            // A fingerprint this schedlab cannot read says nothing of its build.
            let measured_by = from_json::<Fingerprint>(&run.fingerprint, "")
                .ok()
                .and_then(|f| f.measured_by());
            db.execute(
                "UPDATE runs SET measured_by = $2 WHERE id = $1",
                &[&run.id, &measured_by],
            )?;
            for (case, summaries) in run.summaries() {
                write(db, run.id, &case, &summaries)?;
            }
        }
    }
    Ok(())
}

/// Runs read at once when every run is summarised from its iterations.
const BATCH: i64 = 500;

/// The stored runs' ids in ranges of [`BATCH`] runs.
fn batches<D: Db>(db: &mut D) -> Result<Vec<(i64, i64)>> {
    let ids: Vec<i64> = db.query("SELECT id FROM runs ORDER BY id", &[], |r| r.get(0))?;
    Ok(ids
        .chunks(BATCH as usize)
        .map(|c| (c[0], c[c.len() - 1]))
        .collect())
}

/// A run as read for summarising: its status as stored, fingerprint and plan, and its cases
/// (position, name, iterations with their measurements).
struct StoredRun {
    id: i64,
    status: String,
    fingerprint: String,
    plan: Option<RunPlan>,
    cases: Vec<(i64, String, Vec<IterationRecord>)>,
}

impl StoredRun {
    /// Its summaries of each case name, as [`of_iterations`] computes them.
    fn summaries(&self) -> Vec<(String, CaseSummaries)> {
        let ran: Vec<(i64, String)> = self
            .cases
            .iter()
            .map(|(position, name, _)| (*position, name.clone()))
            .collect();
        let order = listed_order(self.plan.as_ref(), &ran);
        let listed: Vec<&(i64, String, Vec<IterationRecord>)> = order
            .iter()
            .filter_map(|&p| self.cases.iter().find(|c| c.0 == p))
            .collect();
        let mut names: Vec<&String> = self.cases.iter().map(|(_, name, _)| name).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|name| {
                let iterations = listed
                    .iter()
                    .filter(|c| c.1 == *name)
                    .flat_map(|c| c.2.iter());
                let summaries = CaseSummaries {
                    iterations: iterations.clone().count() as i64,
                    measured: iterations.clone().filter(|i| !i.warmup).count() as i64,
                    metrics: summary::summarise_iterations(iterations),
                };
                (name.clone(), summaries)
            })
            .collect()
    }
}

/// The runs with ids from `lo` to `hi`, in four queries.
fn read_batch<D: Db>(db: &mut D, (lo, hi): (i64, i64)) -> Result<Vec<StoredRun>> {
    let mut measurements: HashMap<i64, Vec<Measurement>> = HashMap::new();
    db.query_each(
        &format!(
            "SELECT m.iteration_id, m.name, m.unit, m.better, m.role, m.value
               FROM measurements m JOIN iterations i ON m.iteration_id = i.id
               JOIN cases c ON i.case_id = c.id
              WHERE c.run_id BETWEEN $1 AND $2 ORDER BY m.{}",
            D::ROW_ORDER
        ),
        &[&lo, &hi],
        |r| {
            let m = plain_measurement(r)?;
            measurements.entry(r.get(0)?).or_default().push(m);
            Ok(())
        },
    )?;
    let mut iterations: HashMap<i64, Vec<IterationRecord>> = HashMap::new();
    db.query_each(
        "SELECT i.case_id, i.id, i.position, i.warmup, i.started_at_ns
           FROM iterations i JOIN cases c ON i.case_id = c.id
          WHERE c.run_id BETWEEN $1 AND $2 ORDER BY i.case_id, i.position",
        &[&lo, &hi],
        |r| {
            let iteration = IterationRecord {
                index: u32::try_from(r.get::<i64>(2)?).unwrap_or(u32::MAX),
                warmup: r.get(3)?,
                started_at_ns: r.get(4)?,
                measurements: measurements.remove(&r.get(1)?).unwrap_or_default(),
                attachments: Vec::new(),
                quiet: None,
            };
            iterations.entry(r.get(0)?).or_default().push(iteration);
            Ok(())
        },
    )?;
    let mut cases: HashMap<i64, Vec<(i64, String, Vec<IterationRecord>)>> = HashMap::new();
    db.query_each(
        "SELECT c.run_id, c.id, c.position, c.name FROM cases c
          WHERE c.run_id BETWEEN $1 AND $2 ORDER BY c.run_id, c.position",
        &[&lo, &hi],
        |r| {
            let its = iterations.remove(&r.get(1)?).unwrap_or_default();
            let case = (r.get(2)?, r.get(3)?, its);
            cases.entry(r.get(0)?).or_default().push(case);
            Ok(())
        },
    )?;
    db.query(
        "SELECT id, status, fingerprint_json, plan_json FROM runs
          WHERE id BETWEEN $1 AND $2 ORDER BY id",
        &[&lo, &hi],
        |r| {
            let id: i64 = r.get(0)?;
            Ok(StoredRun {
                id,
                status: r.get(1)?,
                fingerprint: r.get(2)?,
                plan: from_json(&r.get::<String>(3)?, "").ok(),
                cases: cases.remove(&id).unwrap_or_default(),
            })
        },
    )
}

/// A stored measurement as a summary needs it (from column 1: name, unit, direction, role,
/// value): what its shape is does not matter to a mean.
fn plain_measurement(r: &impl SqlRow) -> Result<Measurement> {
    let better = r.str_at(3)?;
    let role = r.str_at(4)?;
    Ok(Measurement {
        name: schedlab_core::metric::current_name(r.str_at(1)?).to_string(),
        unit: r.get(2)?,
        better: Better::parse(better)
            .ok_or_else(|| StoreError::Corrupt(format!("direction {better:?}")))?,
        role: Role::parse(role).ok_or_else(|| StoreError::Corrupt(format!("role {role:?}")))?,
        shape: MetricShape::Scalar,
        distribution: None,
        value: r.get(5)?,
    })
}

/// The summary of a stored row, from column `first` on: metric, unit, direction, role, n,
/// log_mean, log_variance, raw_mean, raw_variance.
pub(crate) fn summary_of(r: &impl SqlRow, first: usize) -> Result<MetricSummary> {
    let better = r.str_at(first + 2)?;
    let role = r.str_at(first + 3)?;
    let moments = |at: usize| -> Result<Option<Moments>> {
        let mean: Option<f64> = r.get(at)?;
        let variance: Option<f64> = r.get(at + 1)?;
        Ok(mean.map(|mean| Moments { mean, variance }))
    };
    Ok(MetricSummary {
        metric: schedlab_core::metric::current_name(r.str_at(first)?).to_string(),
        unit: r.get(first + 1)?,
        better: Better::parse(better)
            .ok_or_else(|| StoreError::Corrupt(format!("direction {better:?}")))?,
        role: Role::parse(role).ok_or_else(|| StoreError::Corrupt(format!("role {role:?}")))?,
        n: usize::try_from(r.get::<i64>(first + 4)?)
            .map_err(|_| StoreError::Corrupt("a summary of fewer than no values".into()))?,
        log: moments(first + 5)?,
        raw: moments(first + 7)?,
    })
}

/// The columns [`summary_of`] reads, of `summaries` aliased `alias`.
pub(crate) fn summary_columns(alias: &str) -> String {
    [
        "metric",
        "unit",
        "better",
        "role",
        "n",
        "log_mean",
        "log_variance",
        "raw_mean",
        "raw_variance",
    ]
    .map(|c| format!("{alias}.{c}"))
    .join(", ")
}

/// Problems reported beyond this many are counted, not listed.
const MAX_PROBLEMS: usize = 100;

/// What `db check` found of the summaries: how many runs it compared with their iterations, and
/// what differed (at most [`MAX_PROBLEMS`] listed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryCheck {
    pub runs: usize,
    pub problems: Vec<String>,
    pub more_problems: usize,
}

/// Recomputes every run's summaries from its iterations and compares them with the stored ones,
/// bit for bit. A run that ended must have them for every case name; a running run's may lag its
/// iterations (they are written as each case completes), and are compared where they cover them.
pub(crate) fn verify<D: Db>(db: &mut D, version: i64) -> Result<SummaryCheck> {
    let mut check = SummaryCheck::default();
    if version < V_SUMMARIES {
        return Ok(check);
    }
    for batch in batches(db)? {
        let mut stored = stored_batch(db, batch)?;
        for run in read_batch(db, batch)? {
            check.runs += 1;
            for (case, expected) in run.summaries() {
                let running = run.status == "running";
                let problem = match stored.remove(&(run.id, case.clone())) {
                    None if running => None,
                    None => Some("has no summaries".to_string()),
                    Some(s) if s.iterations < 0 => {
                        Some("its summaries do not say what they cover".to_string())
                    }
                    Some(s) if running && s.iterations != expected.iterations => None,
                    Some(s) => difference(&s, &expected),
                };
                if let Some(problem) = problem {
                    check.add(format!("run {}, case {case}: {problem}", run.id));
                }
            }
        }
        // Summaries of a case name no run of the range has.
        for (run, case) in stored.into_keys() {
            check.add(format!(
                "run {run}, case {case}: summaries of a case it does not have"
            ));
        }
    }
    Ok(check)
}

impl SummaryCheck {
    fn add(&mut self, problem: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        } else {
            self.more_problems += 1;
        }
    }
}

/// The stored summaries of the runs with ids from `lo` to `hi`, by run and case name.
fn stored_batch<D: Db>(
    db: &mut D,
    (lo, hi): (i64, i64),
) -> Result<HashMap<(i64, String), CaseSummaries>> {
    let mut stored: HashMap<(i64, String), CaseSummaries> = HashMap::new();
    db.query_each(
        "SELECT run_id, case_name, iterations, measured FROM summarised_cases
          WHERE run_id BETWEEN $1 AND $2",
        &[&lo, &hi],
        |r| {
            let covers = CaseSummaries {
                iterations: r.get(2)?,
                measured: r.get(3)?,
                metrics: Vec::new(),
            };
            stored.insert((r.get(0)?, r.get(1)?), covers);
            Ok(())
        },
    )?;
    db.query_each(
        &format!(
            "SELECT s.run_id, s.case_name, {} FROM summaries s
              WHERE s.run_id BETWEEN $1 AND $2 ORDER BY s.run_id, s.case_name, s.ordinal",
            summary_columns("s")
        ),
        &[&lo, &hi],
        |r| {
            let summary = summary_of(r, 2)?;
            // Summaries without what they cover read as covering nothing.
            let entry = stored
                .entry((r.get(0)?, r.get(1)?))
                .or_insert_with(|| CaseSummaries {
                    iterations: -1,
                    measured: -1,
                    metrics: Vec::new(),
                });
            entry.metrics.push(summary);
            Ok(())
        },
    )?;
    Ok(stored)
}

/// How stored summaries differ from those the iterations give, if they do.
fn difference(stored: &CaseSummaries, expected: &CaseSummaries) -> Option<String> {
    if (stored.iterations, stored.measured) != (expected.iterations, expected.measured) {
        return Some(format!(
            "the summaries cover {} iterations ({} measured), the case has {} ({})",
            stored.iterations, stored.measured, expected.iterations, expected.measured
        ));
    }
    let names = |s: &CaseSummaries| {
        s.metrics
            .iter()
            .map(|m| m.metric.clone())
            .collect::<Vec<_>>()
    };
    if names(stored) != names(expected) {
        return Some(format!(
            "summaries of {:?}, the iterations have {:?}",
            names(stored),
            names(expected)
        ));
    }
    let bits = |m: Option<Moments>| m.map(|m| (m.mean.to_bits(), m.variance.map(f64::to_bits)));
    stored
        .metrics
        .iter()
        .zip(&expected.metrics)
        .find(|(s, e)| {
            (&s.unit, s.better, s.role, s.n) != (&e.unit, e.better, e.role, e.n)
                || bits(s.log) != bits(e.log)
                || bits(s.raw) != bits(e.raw)
        })
        .map(|(s, e)| {
            format!(
                "metric {}: stored {s:?}, the iterations give {e:?}",
                s.metric
            )
        })
}
