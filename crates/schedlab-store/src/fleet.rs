//! The fleet view's queries, in SQL on both backends: the runs a selection takes (`runs`,
//! `compare`'s sides), the machines (`hosts`), and each case's runs with their stored summaries
//! (`history`, `changes`), one series at a time. Host, kernel, time, run ids and case are
//! conditions on indexed columns; `--where` on fingerprint fields is a JSON condition (a GIN
//! index on PostgreSQL) confirmed on the fingerprint. Nothing here reads a run's iterations but
//! those of a run still storing them (its summaries may lag them) and of a file older than V9.
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::Role;
use schedlab_core::plan::RunPlan;
use schedlab_core::record::RunStatus;
use schedlab_core::summary::SummarisedRun;

use crate::liveness::{effective_status, Here, Silence};
use crate::rows::{from_json, owner_columns, owner_of, parse_status, running_silences};
use crate::schema::{V_RUNS, V_SUMMARIES};
use crate::select::{containing_documents, contains_exactly, HostSummary, RunSelection};
use crate::sql::{Db, Dialect, Param, SqlRow};
use crate::summaries::{self, summary_columns, summary_of};
use crate::transactions::Backend;
use crate::{Result, RunSummary};

/// Which metrics of a case a series holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricChoice {
    /// Its primary metrics (a history's default is the first of them).
    Primary,
    /// One metric, by its current or a former name.
    Named(String),
    /// Every metric: what a history without the one asked for says it has.
    All,
}

impl MetricChoice {
    fn takes(&self, name: &str, role: Role) -> bool {
        match self {
            MetricChoice::Primary => role == Role::Primary,
            MetricChoice::Named(n) => schedlab_core::metric::current_name(n) == name,
            MetricChoice::All => true,
        }
    }

    /// The names a stored summary of the metric may have: its current one and any it had.
    fn stored_names(name: &str) -> Vec<String> {
        let current = schedlab_core::metric::current_name(name);
        std::iter::once(current)
            .chain(
                schedlab_core::metric::FORMER_NAMES
                    .iter()
                    .filter(|(_, now)| *now == current)
                    .map(|(former, _)| *former),
            )
            .map(String::from)
            .collect()
    }
}

/// Which series [`crate::Store::case_series`] hands over.
#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub selection: RunSelection,
    /// Cases by name; empty: every case the selected runs measured, oldest run first, each
    /// run's in the order its plan listed them.
    pub cases: Vec<String>,
    pub metrics: MetricChoice,
    /// A series per host and case (each host's cases in their own order), rather than one per
    /// case over every selected host.
    pub per_host: bool,
}

/// One case's runs, with their summaries of the metrics asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSeries {
    pub case: String,
    /// The host, when the series are per host.
    pub host: Option<String>,
    /// In the order they started.
    pub runs: Vec<SummarisedRun>,
}

/// The SQL conditions on `runs r` a selection makes, with their text parameters, which come
/// first in a query (`$1`…).
pub(crate) struct RunFilter {
    pub(crate) sql: String,
    texts: Vec<String>,
    /// Whether matches must be confirmed on the fingerprint (`--where`).
    pub(crate) confirm: bool,
}

impl RunFilter {
    pub(crate) fn of(selection: &RunSelection, dialect: Dialect) -> RunFilter {
        let mut filter = RunFilter {
            sql: "TRUE".into(),
            texts: Vec::new(),
            confirm: false,
        };
        if let Some(host) = &selection.host {
            let p = filter.text(host);
            filter.and(format!("r.hostname = {p}"));
        }
        if let Some(kernel) = &selection.kernel {
            let p = filter.text(kernel);
            filter.and(format!("r.kernel_release = {p}"));
        }
        if let Some(since) = selection.since_ns {
            filter.and(format!("r.started_at_ns >= {since}"));
        }
        if let Some(until) = selection.until_ns {
            filter.and(format!("r.started_at_ns < {until}"));
        }
        if let Some(ids) = &selection.ids {
            let list: Vec<String> = ids.iter().map(i64::to_string).collect();
            filter.and(match list.is_empty() {
                true => "FALSE".into(),
                false => format!("r.id IN ({})", list.join(", ")),
            });
        }
        if let Some(case) = &selection.case {
            let p = filter.text(case);
            filter.and(format!(
                "EXISTS (SELECT 1 FROM cases k WHERE k.run_id = r.id AND k.name = {p})"
            ));
        }
        for (key, want) in &selection.fields {
            let said = filter.field(key, want, dialect);
            let exact = said.is_some() && contains_exactly(key, want);
            if let Some(condition) = said {
                filter.and(condition);
            }
            filter.confirm |= !exact;
        }
        filter
    }

    fn and(&mut self, condition: String) {
        self.sql = format!("{} AND {condition}", self.sql);
    }

    /// A new text parameter; its placeholder.
    fn text(&mut self, value: &str) -> String {
        self.texts.push(value.to_string());
        format!("${}", self.texts.len())
    }

    /// The condition a run whose fingerprint field `key` reads `want` meets, where one can be
    /// said: JSON containment on PostgreSQL (which its GIN index answers), the value at the
    /// field's path on SQLite (text, number or boolean; lists are left to the confirmation).
    fn field(&mut self, key: &str, want: &str, dialect: Dialect) -> Option<String> {
        let documents = containing_documents(key, want)?;
        let before = self.texts.len();
        let alternatives: Option<Vec<String>> = match dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => documents
                .iter()
                .map(|d| {
                    let p = self.text(&d.to_string());
                    Some(format!(
                        "(r.fingerprint_json::jsonb) @> CAST({p}::text AS jsonb)"
                    ))
                })
                .collect(),
            Dialect::Sqlite => documents.iter().map(|d| self.sqlite_leaf(d)).collect(),
        };
        match alternatives {
            // A value the field's type cannot hold: no run reads it.
            Some(alternatives) if alternatives.is_empty() => Some("FALSE".into()),
            Some(alternatives) => Some(format!("({})", alternatives.join(" OR "))),
            None => {
                // No parameter of a condition left unsaid may stay.
                self.texts.truncate(before);
                None
            }
        }
    }

    /// `document` (`{key: leaf}` or `{top: {entry: leaf}}`) as SQLite's `json_extract` test.
    fn sqlite_leaf(&mut self, document: &serde_json::Value) -> Option<String> {
        use serde_json::Value;
        let mut path = "$".to_string();
        let mut at = document;
        while let Value::Object(map) = at {
            let (name, inner) = map.iter().next()?;
            if name.contains(['"', '\\']) {
                return None;
            }
            path.push_str(&format!(".\"{name}\""));
            at = inner;
        }
        let p = self.text(&path);
        let value = match at {
            Value::String(text) => self.text(text),
            Value::Number(n) => n.as_f64()?.to_string(),
            Value::Bool(b) => i32::from(*b).to_string(),
            _ => return None,
        };
        Some(format!("json_extract(r.fingerprint_json, {p}) = {value}"))
    }

    pub(crate) fn params(&self) -> Vec<&dyn Param> {
        self.texts.iter().map(|t| t as &dyn Param).collect()
    }

    /// The placeholder of a parameter a query adds after the filter's, the `n`th from 1.
    pub(crate) fn after(&self, n: usize) -> String {
        format!("${}", self.texts.len() + n)
    }
}

/// The expression of a run's measured iterations in a listing: its summaries' count once it
/// has ended (every case is summarised then), its iterations counted while it runs.
fn measured_iterations(version: i64) -> String {
    const COUNTED: &str = "(SELECT count(*) FROM iterations i JOIN cases c ON i.case_id = c.id
                            WHERE c.run_id = r.id AND NOT i.warmup)";
    if version < V_SUMMARIES {
        return COUNTED.to_string();
    }
    format!(
        "CASE WHEN r.status = 'running' THEN {COUNTED}
              ELSE (SELECT CAST(coalesce(sum(s.measured), 0) AS BIGINT) FROM summarised_cases s
                     WHERE s.run_id = r.id) END"
    )
}

/// The runs `filter` takes, newest first, as `schedlab runs` lists them; at most `limit`.
pub(crate) fn list<D: Db>(
    db: &mut D,
    version: i64,
    filter: &RunFilter,
    selection: &RunSelection,
    limit: Option<usize>,
) -> Result<Vec<RunSummary>> {
    if version < V_RUNS {
        return Ok(Vec::new());
    }
    let here = Here::now();
    let silences = running_silences(db)?;
    // With fields to confirm, SQL cannot count what it returns.
    let sql_limit = match limit {
        // SQL's LIMIT is a signed 64-bit integer; a larger one is no limit.
        Some(l) if !filter.confirm && i64::try_from(l).is_ok() => format!("LIMIT {l}"),
        _ => String::new(),
    };
    let sql = format!(
        "SELECT r.id, r.label, r.suite, r.status, r.started_at_ns, r.ended_at_ns,
                r.kernel_release, r.boot_id,
                (SELECT count(*) FROM cases c WHERE c.run_id = r.id),
                {},
                (SELECT c.name FROM cases c WHERE c.run_id = r.id ORDER BY c.position LIMIT 1),
                r.hostname, {}, {}
           FROM runs r WHERE {} ORDER BY r.started_at_ns DESC, r.id DESC {sql_limit}",
        measured_iterations(version),
        owner_columns(version, "r."),
        if filter.confirm {
            "r.fingerprint_json"
        } else {
            "NULL"
        },
        filter.sql,
    );
    let mut runs = Vec::new();
    db.query_until(&sql, &filter.params(), |r| {
        if confirmed(r, 16, filter, selection)? {
            runs.push(summary_row(r, &here, &silences)?);
        }
        Ok(match limit.is_some_and(|l| runs.len() >= l) {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        })
    })?;
    Ok(runs)
}

/// Whether the run of row `r` passes the selection's fields, its fingerprint in column `at`
/// (NULL when nothing is to be confirmed). A fingerprint this schedlab cannot read matches
/// nothing.
fn confirmed(
    r: &impl SqlRow,
    at: usize,
    filter: &RunFilter,
    selection: &RunSelection,
) -> Result<bool> {
    if !filter.confirm {
        return Ok(true);
    }
    let Some(json) = r.get::<Option<String>>(at)? else {
        return Ok(true);
    };
    Ok(from_json::<Fingerprint>(&json, "a run's fingerprint")
        .is_ok_and(|f| selection.matches_fingerprint(&f)))
}

/// A listing row (see [`list`]) as a [`RunSummary`], its status derived.
fn summary_row(
    r: &impl SqlRow,
    here: &Here,
    silences: &HashMap<i64, Silence>,
) -> Result<RunSummary> {
    let boot: String = r.get(7)?;
    let owner = owner_of(r, 11)?;
    let hostname = owner.hostname.clone();
    let owner = owner.with_fallback(&boot);
    let id: i64 = r.get(0)?;
    let (status, _) = effective_status(parse_status(&r.get::<String>(3)?)?, &owner, here, || {
        silences.get(&id).copied()
    });
    let suite: Option<String> = r.get(2)?;
    let what = match (&suite, r.get::<Option<String>>(10)?) {
        (Some(s), _) => format!("suite {s}"),
        (None, Some(name)) => name,
        (None, None) => String::new(),
    };
    Ok(RunSummary {
        id,
        label: r.get(1)?,
        suite,
        what,
        case_count: r.get::<i64>(8)? as usize,
        measured_iterations: r.get::<i64>(9)? as usize,
        status,
        started_at_ns: r.get(4)?,
        ended_at_ns: r.get(5)?,
        kernel_release: r.get(6)?,
        boot_id: boot,
        hostname,
    })
}

/// The machines with stored runs, each with its newest run, newest first: one pass over an index
/// of `runs` by host and kernel (kernels counted as groups, which needs no sort, where
/// `count(DISTINCT)` sorts each host's runs), then the newest run of each.
pub(crate) fn hosts<D: Db>(db: &mut D, version: i64) -> Result<Vec<HostSummary>> {
    if version < V_RUNS {
        return Ok(Vec::new());
    }
    let rows: Vec<(String, i64, i64, i64, i64)> = db.query(
        "SELECT h.hostname, h.runs, h.kernels, h.first,
                (SELECT r.id FROM runs r WHERE r.hostname = h.hostname
                  ORDER BY r.started_at_ns DESC, r.id DESC LIMIT 1)
           FROM (SELECT hostname, CAST(sum(runs) AS BIGINT) AS runs, count(*) AS kernels,
                        min(first) AS first
                   FROM (SELECT hostname, kernel_release, count(*) AS runs,
                                min(started_at_ns) AS first
                           FROM runs GROUP BY hostname, kernel_release) k
                  GROUP BY hostname) h",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let selection = RunSelection {
        ids: Some(rows.iter().map(|row| row.4).collect()),
        ..RunSelection::default()
    };
    let filter = RunFilter::of(&selection, D::DIALECT);
    let mut newest: HashMap<i64, RunSummary> = list(db, version, &filter, &selection, None)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let mut hosts: Vec<HostSummary> = rows
        .into_iter()
        .filter_map(|(hostname, runs, kernels, first, last)| {
            Some(HostSummary {
                hostname,
                runs: runs as usize,
                kernels: kernels as usize,
                first_started_at_ns: first,
                last: newest.remove(&last)?,
            })
        })
        .collect();
    hosts.sort_by_key(|h| std::cmp::Reverse((h.last.started_at_ns, h.last.id)));
    Ok(hosts)
}

/// A run's fingerprint.
pub(crate) fn fingerprint<D: Db>(db: &mut D, run_id: i64) -> Result<Fingerprint> {
    let json: String = db
        .query_opt(
            "SELECT fingerprint_json FROM runs WHERE id = $1",
            &[&run_id],
            |r| r.get(0),
        )?
        .ok_or_else(|| crate::rows::no_run(run_id))?;
    from_json(&json, "the fingerprint")
}

/// The hosts the selection's runs ran on, by name.
pub(crate) fn host_names<D: Db>(db: &mut D, filter: &RunFilter) -> Result<Vec<String>> {
    db.query(
        &format!(
            "SELECT DISTINCT r.hostname FROM runs r WHERE {} ORDER BY r.hostname",
            filter.sql
        ),
        &filter.params(),
        |r| r.get(0),
    )
}

/// Every case the runs `filter` takes measured, oldest run first, each run's cases in the order
/// its plan listed them (the order they ran when the plan cannot be read).
pub(crate) fn every_case<D: Db>(
    db: &mut D,
    filter: &RunFilter,
    selection: &RunSelection,
) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT c.name, r.id, {} FROM cases c JOIN runs r ON c.run_id = r.id
          WHERE {} ORDER BY r.started_at_ns, r.id, c.position",
        if filter.confirm {
            "r.fingerprint_json"
        } else {
            "NULL"
        },
        filter.sql
    );
    // Each name with the run that first had it, in order; runs are contiguous.
    let mut firsts: Vec<(String, i64)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    db.query_each(&sql, &filter.params(), |r| {
        let name = r.str_at(0)?;
        if !seen.contains(name) && confirmed(r, 2, filter, selection)? {
            seen.insert(name.to_string());
            firsts.push((name.to_string(), r.get(1)?));
        }
        Ok(())
    })?;
    let mut names = Vec::with_capacity(firsts.len());
    for run in firsts.chunk_by(|a, b| a.1 == b.1) {
        let listed = listed_names(db, run[0].1)?;
        let mut new: Vec<&String> = run.iter().map(|(name, _)| name).collect();
        new.sort_by_key(|name| listed.iter().position(|l| l == *name));
        names.extend(new.into_iter().cloned());
    }
    Ok(names)
}

/// The names of a run's cases in the order its plan listed them.
fn listed_names<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<String>> {
    let names = db.query(
        "SELECT name FROM cases WHERE run_id = $1 ORDER BY position",
        &[&run_id],
        |r| r.get::<String>(0),
    )?;
    let plan = db.query_opt(
        "SELECT plan_json FROM runs WHERE id = $1",
        &[&run_id],
        |r| r.get::<String>(0),
    )?;
    Ok(
        match plan.and_then(|p| from_json::<RunPlan>(&p, "the run plan").ok()) {
            Some(plan) => plan.as_listed(names, |name| name),
            None => names,
        },
    )
}

/// The runs of the cases `cases` (every case when `None`) that `filter` takes, with their
/// summaries of the metrics `metrics` takes, by case in `cases`' order (by name otherwise), each
/// case's runs in the order they started. A run still storing, or any run of a file older than
/// V9, is summarised from its iterations here.
pub(crate) fn series<D: Db>(
    db: &mut D,
    version: i64,
    filter: &RunFilter,
    selection: &RunSelection,
    cases: &[String],
    metrics: &MetricChoice,
) -> Result<Vec<(String, Vec<SummarisedRun>)>> {
    if version < V_RUNS {
        return Ok(Vec::new());
    }
    let here = Here::now();
    let silences = running_silences(db)?;
    let mut rows = SeriesRows::new(version, (&here, &silences), filter, selection);
    let (sql, names) = series_sql(version, filter, cases, metrics);
    let mut params = filter.params();
    params.extend(names.iter().map(|n| n as &dyn Param));
    db.query_each(&sql, &params, |r| rows.add(r))?;
    let mut by_case = rows.finish();
    for (case, runs) in &mut by_case {
        for (run, stale) in runs.iter_mut() {
            if *stale {
                run.summaries =
                    summaries::of_iterations(db, version, run.id.unwrap_or(0), case, &here)?
                        .metrics
                        .into_iter()
                        .filter(|s| metrics.takes(&s.metric, s.role))
                        .collect();
            }
        }
    }
    let mut out: Vec<(String, Vec<SummarisedRun>)> = by_case
        .into_iter()
        .map(|(case, runs)| (case, runs.into_iter().map(|(run, _)| run).collect()))
        .collect();
    if !cases.is_empty() {
        out.sort_by_key(|(case, _)| cases.iter().position(|c| c == case));
    }
    Ok(out)
}

/// Where [`series_sql`] puts the fingerprint (when it is read), the run's build, and the
/// summary's ordinal, after which come [`summary_columns`].
const FINGERPRINT: usize = 13;
const MEASURED_BY: usize = 14;
const ORDINAL: usize = 15;

/// The query [`series`] runs and the text parameters it adds after the filter's: the case's
/// name and position, the run (id, label, start, status, kernel, boot, then host and owner from
/// column 8), then from [`FINGERPRINT`] on.
fn series_sql(
    version: i64,
    filter: &RunFilter,
    cases: &[String],
    metrics: &MetricChoice,
) -> (String, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let mut placeholder = |value: String| {
        names.push(value);
        filter.after(names.len())
    };
    let case_condition = if cases.is_empty() {
        "TRUE".to_string()
    } else {
        let list: Vec<String> = cases.iter().map(|c| placeholder(c.clone())).collect();
        format!("c.name IN ({})", list.join(", "))
    };
    let metric_condition = match metrics {
        // Before V9 there are no summaries to choose from: the iterations give them all.
        _ if version < V_SUMMARIES => String::new(),
        MetricChoice::Primary => "s.role = 'primary'".to_string(),
        MetricChoice::All => "TRUE".to_string(),
        MetricChoice::Named(name) => {
            let list: Vec<String> = MetricChoice::stored_names(name)
                .into_iter()
                .map(&mut placeholder)
                .collect();
            format!("s.metric IN ({})", list.join(", "))
        }
    };
    let (summary, join) = if version >= V_SUMMARIES {
        (
            format!("r.measured_by, s.ordinal, {}", summary_columns("s")),
            format!(
                "LEFT JOIN summaries s ON s.run_id = r.id AND s.case_name = c.name
                                     AND {metric_condition}"
            ),
        )
    } else {
        (format!("NULL{}", ", NULL".repeat(10)), String::new())
    };
    let sql = format!(
        "SELECT c.name, c.position, r.id, r.label, r.started_at_ns, r.status, r.kernel_release,
                r.boot_id, r.hostname, {}, {}, {summary}
           FROM runs r JOIN cases c ON c.run_id = r.id {join}
          WHERE {} AND {case_condition}
          ORDER BY c.name, r.started_at_ns, r.id, c.position{}",
        owner_columns(version, "r."),
        if filter.confirm || version < V_SUMMARIES {
            "r.fingerprint_json"
        } else {
            "NULL"
        },
        filter.sql,
        if version >= V_SUMMARIES {
            ", s.ordinal"
        } else {
            ""
        },
    );
    (sql, names)
}

/// The rows of a [`series`] query gathered into runs by case: each run once (the first of its
/// cases of the name carries the summaries; a second repeats them), marked stale when its
/// summaries must come from its iterations.
struct SeriesRows<'a> {
    version: i64,
    here: &'a Here,
    silences: &'a HashMap<i64, Silence>,
    filter: &'a RunFilter,
    selection: &'a RunSelection,
    cases: Vec<(String, Vec<(SummarisedRun, bool)>)>,
    /// The case row whose summaries the last row added: (case, run, position).
    current: Option<(String, i64, i64)>,
    /// Runs whose fields did not match.
    rejected: HashSet<i64>,
}

impl<'a> SeriesRows<'a> {
    fn new(
        version: i64,
        (here, silences): (&'a Here, &'a HashMap<i64, Silence>),
        filter: &'a RunFilter,
        selection: &'a RunSelection,
    ) -> Self {
        SeriesRows {
            version,
            here,
            silences,
            filter,
            selection,
            cases: Vec::new(),
            current: None,
            rejected: HashSet::new(),
        }
    }

    fn add(&mut self, r: &impl SqlRow) -> Result<()> {
        let case = r.str_at(0)?;
        let position: i64 = r.get(1)?;
        let id: i64 = r.get(2)?;
        let same_run = self
            .current
            .as_ref()
            .is_some_and(|(c, run, _)| c == case && *run == id);
        if same_run {
            let first_case = self
                .current
                .as_ref()
                .is_some_and(|(_, _, p)| *p == position);
            if first_case && !self.rejected.contains(&id) {
                self.push_summary(r)?;
            }
            return Ok(());
        }
        self.current = Some((case.to_string(), id, position));
        if !confirmed(r, FINGERPRINT, self.filter, self.selection)? {
            self.rejected.insert(id);
            return Ok(());
        }
        let (run, stale) = self.run_of(r)?;
        match self.cases.last_mut() {
            Some((c, runs)) if c == case => runs.push((run, stale)),
            _ => self.cases.push((case.to_string(), vec![(run, stale)])),
        }
        self.push_summary(r)
    }

    /// The run of row `r`, without summaries; stale when they must come from its iterations.
    fn run_of(&self, r: &impl SqlRow) -> Result<(SummarisedRun, bool)> {
        let id: i64 = r.get(2)?;
        let stored = parse_status(&r.get::<String>(5)?)?;
        let boot: String = r.get(7)?;
        let owner = owner_of(r, 8)?;
        let hostname = owner.hostname.clone();
        let owner = owner.with_fallback(&boot);
        let (status, _) = effective_status(stored, &owner, self.here, || {
            self.silences.get(&id).copied()
        });
        let measured_by = if self.version >= V_SUMMARIES {
            r.get(MEASURED_BY)?
        } else {
            // A file older than V9 keeps the build in the fingerprint alone.
            r.get::<Option<String>>(FINGERPRINT)?
                .and_then(|json| from_json::<Fingerprint>(&json, "").ok())
                .and_then(|f| f.measured_by())
        };
        let run = SummarisedRun {
            id: Some(id),
            label: r.get(3)?,
            started_at_ns: r.get(4)?,
            kernel: r.get(6)?,
            hostname,
            status,
            measured_by,
            summaries: Vec::new(),
        };
        Ok((
            run,
            self.version < V_SUMMARIES || stored == RunStatus::Running,
        ))
    }

    fn push_summary(&mut self, r: &impl SqlRow) -> Result<()> {
        if self.version < V_SUMMARIES || r.get::<Option<i64>>(ORDINAL)?.is_none() {
            return Ok(());
        }
        if let Some((_, runs)) = self.cases.last_mut() {
            if let Some((run, _)) = runs.last_mut() {
                run.summaries.push(summary_of(r, ORDINAL + 1)?);
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<(String, Vec<(SummarisedRun, bool)>)> {
        self.cases
    }
}

/// Hands `visit` the series `query` asks for, one scope at a time: each host's cases when the
/// series are per host or the selection names a host (one query for the host), else each case
/// over every selected host (one query for the case). A scope is read in a transaction of its
/// own and handed over after it, so memory holds one scope and a retried transaction hands
/// nothing over twice. `visit` breaks to stop.
pub(crate) fn case_series<B: Backend>(
    store: &B,
    query: &SeriesQuery,
    visit: &mut dyn FnMut(CaseSeries) -> ControlFlow<()>,
) -> Result<()> {
    let version = store.version();
    if version < V_RUNS {
        return Ok(());
    }
    let filtered = |selection: &RunSelection| {
        let selection = selection.clone();
        move |db: &mut B::Db<'_>| (RunFilter::of(&selection, dialect_of(db)), selection.clone())
    };
    let scopes: Vec<RunSelection> = if query.per_host {
        let hosts = store.read_tx(|db| {
            let (filter, _) = filtered(&query.selection)(db);
            host_names(db, &filter)
        })?;
        hosts
            .into_iter()
            .map(|host| RunSelection {
                host: Some(host),
                ..query.selection.clone()
            })
            .collect()
    } else {
        vec![query.selection.clone()]
    };
    for scope in &scopes {
        let cases = if query.cases.is_empty() {
            store.read_tx(|db| {
                let (filter, scope) = filtered(scope)(db);
                every_case(db, &filter, &scope)
            })?
        } else {
            query.cases.clone()
        };
        let groups: Vec<Vec<String>> = match scope.host {
            Some(_) => vec![cases],
            None => cases.into_iter().map(|c| vec![c]).collect(),
        };
        for group in groups.iter().filter(|g| !g.is_empty()) {
            let mut found = store.read_tx(|db| {
                let (filter, scope) = filtered(scope)(db);
                series(db, version, &filter, &scope, group, &query.metrics)
            })?;
            for case in group {
                let at = found.iter().position(|(c, _)| c == case);
                let runs = at.map(|i| found.swap_remove(i).1).unwrap_or_default();
                let series = CaseSeries {
                    case: case.clone(),
                    host: scope.host.clone().filter(|_| query.per_host),
                    runs,
                };
                if visit(series).is_break() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// The dialect of a transaction's backend.
pub(crate) fn dialect_of<D: Db>(_: &D) -> Dialect {
    D::DIALECT
}
