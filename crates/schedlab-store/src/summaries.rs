//! Every run's summary of every metric of every case (V9: `summaries`, and `summarised_cases`,
//! which says how many iterations they cover): written as a case completes ([`store_case`]), for
//! what is left when the run ends ([`store_stale`]), with a copied run ([`write`]) and, by the
//! upgrade to V9, for every run stored before ([`fill`]). `history`, `changes`, `hosts` and `runs`
//! read them instead of the iterations; `db check` recomputes them from the iterations
//! ([`verify`]). They are computed by [`schedlab_core::summary`], as the analysis computes a run
//! summary, so either way the numbers are the same bits.
use schedlab_core::metric::{Better, Role};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{CaseRecord, RunRecord};
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
/// order the run's plan listed the cases (where the plan says; else the order they ran).
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
    let positions: Vec<i64> = db.query(
        "SELECT position FROM cases WHERE run_id = $1 AND name = $2 ORDER BY position",
        &[&run_id, &case],
        |r| r.get(0),
    )?;
    let listed = listed_places(&run.plan, case, &positions);
    let mut cases: Vec<(usize, &CaseRecord)> = listed.into_iter().zip(&run.cases).collect();
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

/// Where the plan listed the cases that ran at `positions`: their places in the suite's order
/// when the plan holds these cases there, else the positions themselves.
fn listed_places(plan: &RunPlan, case: &str, positions: &[i64]) -> Vec<usize> {
    let listed = plan.listed_positions();
    let planned = positions.iter().all(|&p| {
        usize::try_from(p)
            .ok()
            .and_then(|p| plan.cases.get(p))
            .is_some_and(|c| c.name == case)
    });
    positions
        .iter()
        .map(|&p| {
            let p = usize::try_from(p).unwrap_or(usize::MAX);
            if planned {
                listed.get(p).copied().unwrap_or(p)
            } else {
                p
            }
        })
        .collect()
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
pub(crate) fn fill<D: Db>(db: &mut D) -> Result<()> {
    let here = Here::now();
    let runs: Vec<(i64, String)> = db.query(
        "SELECT id, fingerprint_json FROM runs ORDER BY id",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    for (run_id, fingerprint) in runs {
        // A fingerprint this schedlab cannot read says nothing of its build.
        let measured_by = from_json::<schedlab_core::fingerprint::Fingerprint>(&fingerprint, "")
            .ok()
            .and_then(|f| f.measured_by());
        db.execute(
            "UPDATE runs SET measured_by = $2 WHERE id = $1",
            &[&run_id, &measured_by],
        )?;
        for case in case_names(db, run_id)? {
            store_case(db, run_id, &case, &here)?;
        }
    }
    Ok(())
}

/// The distinct names of run `run_id`'s cases.
fn case_names<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<String>> {
    db.query(
        "SELECT DISTINCT name FROM cases WHERE run_id = $1 ORDER BY name",
        &[&run_id],
        |r| r.get(0),
    )
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

/// The stored summaries of the cases named `case` in run `run_id` and what they cover, if any.
fn stored<D: Db>(db: &mut D, run_id: i64, case: &str) -> Result<Option<CaseSummaries>> {
    let covered = db.query_opt(
        "SELECT iterations, measured FROM summarised_cases WHERE run_id = $1 AND case_name = $2",
        &[&run_id, &case],
        |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?)),
    )?;
    let Some((iterations, measured)) = covered else {
        return Ok(None);
    };
    let metrics = db.query(
        &format!(
            "SELECT {} FROM summaries s WHERE s.run_id = $1 AND s.case_name = $2
              ORDER BY s.ordinal",
            summary_columns("s")
        ),
        &[&run_id, &case],
        |r| summary_of(r, 0),
    )?;
    Ok(Some(CaseSummaries {
        iterations,
        measured,
        metrics,
    }))
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
    let here = Here::now();
    let runs: Vec<(i64, String)> =
        db.query("SELECT id, status FROM runs ORDER BY id", &[], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    for (run_id, status) in runs {
        check.runs += 1;
        for case in case_names(db, run_id)? {
            let expected = of_iterations(db, version, run_id, &case, &here)?;
            let problem = match stored(db, run_id, &case)? {
                None if status == "running" => None,
                None => Some("has no summaries".to_string()),
                Some(s) if status == "running" && s.iterations != expected.iterations => None,
                Some(s) => difference(&s, &expected),
            };
            if let Some(problem) = problem {
                if check.problems.len() < MAX_PROBLEMS {
                    check
                        .problems
                        .push(format!("run {run_id}, case {case}: {problem}"));
                } else {
                    check.more_problems += 1;
                }
            }
        }
    }
    Ok(check)
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
