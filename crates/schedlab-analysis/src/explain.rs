//! `compare --explain`: why the cases of a comparison moved, judged as the primary rows are.
//!
//! Each side's runs bring their probed iterations (`--explain`) and profiled ones (`--profile`),
//! which the store keeps apart from the measured iterations. Their explanatory metrics, per case
//! and task group, become the series of a side whose runs are the primary side's runs (the same
//! boots, experiment rounds and arms), so [`crate::compare`] chooses the same units — each run's
//! probed iterations summarised per run, then runs, boots or A/B pairs — and the same test, in a
//! comparison of their own: the adjustment for multiplicity runs over the explanatory rows
//! alone, and an explanation never spends the primary rows' error budget. The profiles' symbol
//! shares are a third family. No calibration applies: calibrations describe primary metrics.
//!
//! Absent is not zero in the probes (an unavailable probe leaves its metrics out), with two
//! exceptions made here, where absence does mean none: a task group that never made a system
//! call has no `syscall_<name>_count`, but where the group's calls were counted (its
//! `syscalls_count` is there) it made 0 of them; and a symbol a run's profile did not rank among
//! its top ones counts as 0 of that run's samples (its share was below the last one ranked).
//!
//! A case whose tasks are all of one group (the two threads of `syscall`) has that group's
//! metrics twice, once as the group's and once as all tasks'; only the latter is kept, so the
//! family does not judge one thing twice.
//!
//! The run-queue delay curves pool every probed iteration of a side's runs into one
//! distribution per case and task group: a description of the side, with no test.
use std::collections::{HashMap, HashSet};

use hdrhistogram::Histogram;

use schedlab_core::latency::{decode, ENCODING};
use schedlab_core::metric::{Better, Measurement, MetricShape, Role};
use schedlab_core::probe::explain::{RUNQ_DELAY, SYSCALLS_COUNT};
use schedlab_core::probe::{
    Origin as SymbolOrigin, ProbeKind, ProbeMeasurement, ProbeRecord, ProfileSymbol,
    PROBE_LOST_RECORDS_COUNT, PROBE_RECORDS_COUNT, PROBE_WINDOW_PCT, PROFILE_SAMPLES_COUNT,
    RUNQ_DELAY_ATTACHMENT,
};
use schedlab_core::record::RunStatus;

use crate::calibration::CalibrationSet;
use crate::compare::compare;
use crate::latency::{changes, x_position, Curve, Point};
use crate::model::{
    Comparison, DelayCurve, ExplainedFamily, ExplainedRow, ExplainedUnmatched, Explanation,
    ProbedSide, SymbolRow, UnavailableProbe,
};
use crate::notes::Unmatched;
use crate::series::{case_label, CaseLabel, Origin, RunInput, RunMeta, Series, Side};
use crate::settings::{SequentialPlan, Settings};

/// The probes' own bookkeeping: what they recorded and lost, not what the case did.
const BOOKKEEPING: [&str; 4] = [
    PROBE_RECORDS_COUNT.name,
    PROBE_LOST_RECORDS_COUNT.name,
    PROBE_WINDOW_PCT.name,
    PROFILE_SAMPLES_COUNT.name,
];

/// The points of a run-queue delay curve.
const DELAY_POINTS: [Point; 7] = [
    Point::Percentile(50.0),
    Point::Percentile(75.0),
    Point::Percentile(90.0),
    Point::Percentile(95.0),
    Point::Percentile(99.0),
    Point::Percentile(99.9),
    Point::Max,
];

/// Joins a task group (or a symbol's module) and a metric (or a symbol) into the one series name
/// a comparison matches rows by; no name of either holds it.
const SEPARATOR: char = '\u{1f}';

fn series_key(group: Option<&str>, name: &str) -> String {
    format!("{}{SEPARATOR}{name}", group.unwrap_or(""))
}

/// The group (or module) and the name of a series key.
fn split_key(key: &str) -> (Option<String>, String) {
    match key.split_once(SEPARATOR) {
        Some((group, name)) => (
            (!group.is_empty()).then(|| group.to_string()),
            name.to_string(),
        ),
        None => (None, key.to_string()),
    }
}

/// What one run holds of one case.
#[derive(Debug, Default)]
struct CaseProbes {
    /// Index into the side's runs, and into its cases.
    run: usize,
    case: usize,
    /// Each probed iteration's explanatory metrics, without the probes' bookkeeping.
    explained: Vec<Vec<ProbeMeasurement>>,
    /// Each profiled iteration's symbols.
    profiles: Vec<Vec<ProfileSymbol>>,
    /// The run-queue delay histograms of its probed iterations, merged per task group.
    delays: Vec<(Option<String>, Histogram<u64>)>,
}

/// One side's probed and profiled iterations, run by run ([`ProbeSideBuilder`]).
#[derive(Debug)]
pub struct ProbeSide {
    name: String,
    runs: Vec<RunMeta>,
    excluded: Vec<RunMeta>,
    cases: Vec<CaseLabel>,
    entries: Vec<CaseProbes>,
    /// (probe, reason) with the probed iterations that lacked it.
    unavailable: Vec<(String, String, usize)>,
}

/// A [`ProbeSide`] built one run at a time, from the same runs (and experiment tags) as the
/// primary side, so that its units are theirs.
pub struct ProbeSideBuilder {
    side: ProbeSide,
    include_incomplete: bool,
    case_at: HashMap<String, usize>,
}

impl ProbeSideBuilder {
    pub fn new(name: &str, include_incomplete: bool) -> Self {
        ProbeSideBuilder {
            side: ProbeSide {
                name: name.to_string(),
                runs: Vec::new(),
                excluded: Vec::new(),
                cases: Vec::new(),
                entries: Vec::new(),
                unavailable: Vec::new(),
            },
            include_incomplete,
            case_at: HashMap::new(),
        }
    }

    /// Adds a run and its probe iterations, each with its case's position in the run (as
    /// the store returns them). A run that did not complete is left out unless asked for, as the
    /// primary side leaves it out.
    pub fn add_run(&mut self, input: RunInput<'_>, probes: &[(usize, ProbeRecord)]) {
        let meta = RunMeta::of(input);
        if input.record.status != RunStatus::Complete && !self.include_incomplete {
            self.side.excluded.push(meta);
            return;
        }
        let run = self.side.runs.len();
        self.side.runs.push(meta);
        for (position, probe) in probes {
            let Some(case) = input.record.cases.get(*position) else {
                continue;
            };
            let case = match self.case_at.get(&case.spec.name) {
                Some(&i) => i,
                None => {
                    let i = self.side.cases.len();
                    self.side
                        .cases
                        .push(case_label(&case.spec.name, &case.spec.workload));
                    self.case_at.insert(case.spec.name.clone(), i);
                    i
                }
            };
            let at = match self
                .side
                .entries
                .iter()
                .position(|e| e.run == run && e.case == case)
            {
                Some(i) => i,
                None => {
                    self.side.entries.push(CaseProbes {
                        run,
                        case,
                        ..CaseProbes::default()
                    });
                    self.side.entries.len() - 1
                }
            };
            let entry = &mut self.side.entries[at];
            match probe.kind {
                ProbeKind::Explain => {
                    add_explained(entry, probe);
                    for u in &probe.unavailable {
                        match self
                            .side
                            .unavailable
                            .iter_mut()
                            .find(|(p, r, _)| *p == u.probe && *r == u.reason)
                        {
                            Some((_, _, n)) => *n += 1,
                            None => {
                                self.side
                                    .unavailable
                                    .push((u.probe.clone(), u.reason.clone(), 1))
                            }
                        }
                    }
                }
                ProbeKind::Profile => entry.profiles.push(probe.symbols.clone()),
            }
        }
    }

    pub fn finish(self) -> ProbeSide {
        self.side
    }
}

fn add_explained(entry: &mut CaseProbes, probe: &ProbeRecord) {
    entry.explained.push(
        probe
            .explanatory
            .iter()
            .filter(|m| {
                m.measurement.role == Role::Explanatory
                    && !BOOKKEEPING.contains(&m.measurement.name.as_str())
                    && m.measurement.value.is_finite()
            })
            .cloned()
            .collect(),
    );
    for a in &probe.attachments {
        if a.attachment.name != RUNQ_DELAY_ATTACHMENT || a.attachment.encoding != ENCODING {
            continue;
        }
        // A histogram is a picture of the delays; an unreadable one leaves the picture out,
        // the metrics hold the numbers.
        let Ok(h) = decode(&a.attachment.data) else {
            continue;
        };
        match entry.delays.iter_mut().find(|(g, _)| *g == a.group) {
            Some((_, merged)) => {
                // Histograms of one kind share their bounds; one that does not is left out.
                let _ = merged.add(&h);
            }
            None => entry.delays.push((a.group.clone(), h)),
        }
    }
}

impl ProbeSide {
    fn probed(&self) -> ProbedSide {
        let runs_with = |has: &dyn Fn(&CaseProbes) -> bool| {
            let mut ids: Vec<i64> = self
                .entries
                .iter()
                .filter(|e| has(e))
                .filter_map(|e| self.runs[e.run].id)
                .collect();
            ids.dedup();
            ids
        };
        ProbedSide {
            name: self.name.clone(),
            explained_runs: runs_with(&|e| !e.explained.is_empty()),
            explained_iterations: self.entries.iter().map(|e| e.explained.len()).sum(),
            profiled_runs: runs_with(&|e| !e.profiles.is_empty()),
            profiled_iterations: self.entries.iter().map(|e| e.profiles.len()).sum(),
        }
    }

    /// A side of the primary kind, runs and all, without series yet.
    fn empty_side(&self) -> Side {
        Side {
            name: self.name.clone(),
            origin: Origin::Runs,
            runs: self.runs.clone(),
            excluded: self.excluded.clone(),
            series: Vec::new(),
            disturbed_dropped: false,
            cases: Vec::new(),
        }
    }
}

/// Series of a side under construction, found by (case, key), each with where it sorts.
struct SeriesSet {
    side: Side,
    at: HashMap<(usize, String), usize>,
    order: Vec<(usize, u8, usize)>,
}

impl SeriesSet {
    fn new(side: Side) -> Self {
        SeriesSet {
            side,
            at: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// Adds `value` to the run's values of the series (case, key), created as `m` describes it.
    fn push(&mut self, case: (usize, &CaseLabel), key: String, m: &Measurement, run: usize) {
        let index = match self.at.get(&(case.0, key.clone())) {
            Some(&i) => i,
            None => {
                let i = self.side.series.len();
                // All tasks (or the machine) before the groups; otherwise as first seen.
                let grouped = u8::from(!key.starts_with(SEPARATOR));
                self.order.push((case.0, grouped, i));
                self.side.series.push(Series {
                    case: case.1.clone(),
                    metric: key.clone(),
                    unit: m.unit.clone(),
                    better: m.better,
                    shape: m.shape,
                    distribution: m.distribution.clone(),
                    // Probes declare no restatement: each explanatory metric is its own effect.
                    restates: None,
                    runs: Vec::new(),
                });
                self.at.insert((case.0, key), i);
                i
            }
        };
        let series = &mut self.side.series[index];
        match series.runs.last_mut() {
            Some((r, values)) if *r == run => values.push(m.value),
            _ => series.runs.push((run, vec![m.value])),
        }
    }

    fn finish(self) -> Side {
        let mut order = self.order;
        order.sort();
        let mut series: Vec<Option<Series>> = self.side.series.into_iter().map(Some).collect();
        Side {
            series: order
                .into_iter()
                .filter_map(|(_, _, i)| series[i].take())
                .collect(),
            ..self.side
        }
    }
}

fn is_syscall_count(name: &str) -> bool {
    name != SYSCALLS_COUNT.name && name.starts_with("syscall_") && name.ends_with("_count")
}

/// Per case name and task group, every `syscall_<name>_count` any side measured, described.
type SyscallNames = HashMap<(String, Option<String>), Vec<Measurement>>;

fn syscall_names(sides: &[&ProbeSide]) -> SyscallNames {
    let mut names: SyscallNames = HashMap::new();
    for side in sides {
        for entry in &side.entries {
            for m in entry.explained.iter().flatten() {
                if !is_syscall_count(&m.measurement.name) {
                    continue;
                }
                let known = names
                    .entry((side.cases[entry.case].name.clone(), m.group.clone()))
                    .or_default();
                if !known.iter().any(|k| k.name == m.measurement.name) {
                    known.push(m.measurement.clone());
                }
            }
        }
    }
    names
}

/// The cases whose tasks, on every side, are of one group only: that group's metrics are all
/// tasks' too.
fn lone_group_cases(sides: &[&ProbeSide]) -> HashSet<String> {
    let mut groups: HashMap<String, HashSet<&str>> = HashMap::new();
    for side in sides {
        for entry in &side.entries {
            let of_case = groups
                .entry(side.cases[entry.case].name.clone())
                .or_default();
            let named = entry
                .explained
                .iter()
                .flatten()
                .filter_map(|m| m.group.as_deref());
            of_case.extend(named);
            of_case.extend(entry.delays.iter().filter_map(|(g, _)| g.as_deref()));
        }
    }
    groups
        .into_iter()
        .filter(|(_, g)| g.len() == 1)
        .map(|(case, _)| case)
        .collect()
}

/// The explanatory metrics of a side as series, system calls a counted group never made as 0.
fn metric_side(side: &ProbeSide, syscalls: &SyscallNames, lone: &HashSet<String>) -> Side {
    let mut set = SeriesSet::new(side.empty_side());
    for entry in &side.entries {
        let label = &side.cases[entry.case];
        let keep = |group: &Option<String>| group.is_none() || !lone.contains(&label.name);
        for iteration in &entry.explained {
            for m in iteration.iter().filter(|m| keep(&m.group)) {
                let key = series_key(m.group.as_deref(), &m.measurement.name);
                set.push((entry.case, label), key, &m.measurement, entry.run);
            }
            let counted = iteration
                .iter()
                .filter(|m| m.measurement.name == SYSCALLS_COUNT.name && keep(&m.group))
                .map(|m| &m.group);
            for group in counted {
                let Some(names) = syscalls.get(&(label.name.clone(), group.clone())) else {
                    continue;
                };
                for template in names {
                    let made = iteration
                        .iter()
                        .any(|m| m.group == *group && m.measurement.name == template.name);
                    if !made {
                        let zero = Measurement {
                            value: 0.0,
                            ..template.clone()
                        };
                        let key = series_key(group.as_deref(), &zero.name);
                        set.push((entry.case, label), key, &zero, entry.run);
                    }
                }
            }
        }
    }
    set.finish()
}

/// Per case name, every symbol any side's profiles ranked, keyed by module and name.
fn symbol_names(sides: &[&ProbeSide]) -> HashMap<String, Vec<(String, SymbolOrigin)>> {
    let mut names: HashMap<String, Vec<(String, SymbolOrigin)>> = HashMap::new();
    for side in sides {
        for entry in &side.entries {
            let known = names
                .entry(side.cases[entry.case].name.clone())
                .or_default();
            for s in entry.profiles.iter().flatten() {
                let key = series_key(Some(&s.module), &s.symbol);
                if !known.iter().any(|(k, _)| *k == key) {
                    known.push((key, s.origin));
                }
            }
        }
    }
    names
}

/// The symbols' shares of a side's profiles as series, a symbol a profile did not rank as 0.
fn symbol_side(side: &ProbeSide, names: &HashMap<String, Vec<(String, SymbolOrigin)>>) -> Side {
    let mut set = SeriesSet::new(side.empty_side());
    for entry in &side.entries {
        let label = &side.cases[entry.case];
        let Some(keys) = names.get(&label.name) else {
            continue;
        };
        for profile in &entry.profiles {
            for (key, _) in keys {
                let share = profile
                    .iter()
                    .find(|s| series_key(Some(&s.module), &s.symbol) == *key)
                    .map_or(0.0, |s| s.share_pct);
                let m = Measurement {
                    name: key.clone(),
                    unit: "%".to_string(),
                    better: Better::Lower,
                    role: Role::Explanatory,
                    shape: MetricShape::Scalar,
                    distribution: None,
                    value: share,
                };
                set.push((entry.case, label), key.clone(), &m, entry.run);
            }
        }
    }
    set.finish()
}

/// The sides judged as one family: a comparison of their own.
fn judge(
    mut sides: Vec<Side>,
    settings: &Settings,
    sequential: Option<SequentialPlan>,
) -> Comparison {
    let candidates = sides.split_off(1);
    let base = sides.remove(0);
    compare(
        base,
        candidates,
        &CalibrationSet::default(),
        settings.clone(),
        sequential,
    )
}

fn unmatched_of(c: &Comparison) -> Vec<ExplainedUnmatched> {
    c.unmatched
        .iter()
        .map(|u| {
            let (group, metric) = split_key(&u.metric);
            ExplainedUnmatched {
                group,
                unmatched: Unmatched {
                    metric,
                    ..u.clone()
                },
            }
        })
        .collect()
}

/// The explanation of a comparison whose sides are `base` and `candidates` (in the primary
/// comparison's order), judged with the primary comparison's settings and, for a sequential
/// experiment, its plan: a family stopped early is judged at the levels its looks spent.
pub fn explain(
    base: ProbeSide,
    candidates: Vec<ProbeSide>,
    settings: &Settings,
    sequential: Option<SequentialPlan>,
) -> Explanation {
    let sides: Vec<&ProbeSide> = std::iter::once(&base).chain(&candidates).collect();
    let syscalls = syscall_names(&sides);
    let lone = lone_group_cases(&sides);
    let metrics = judge(
        sides
            .iter()
            .map(|s| metric_side(s, &syscalls, &lone))
            .collect(),
        settings,
        sequential,
    );
    let names = symbol_names(&sides);
    let symbols = judge(
        sides.iter().map(|s| symbol_side(s, &names)).collect(),
        settings,
        sequential,
    );
    let origin_of = |case: &str, key: &str| {
        names
            .get(case)
            .and_then(|keys| keys.iter().find(|(k, _)| k == key))
            .map_or(SymbolOrigin::Unresolved, |(_, o)| *o)
    };
    let metric_rows = metrics
        .rows
        .iter()
        .map(|row| {
            let (group, metric) = split_key(&row.metric);
            ExplainedRow {
                group,
                row: crate::model::Row {
                    metric,
                    ..row.clone()
                },
            }
        })
        .collect();
    let symbol_rows = symbols
        .rows
        .iter()
        .map(|row| {
            let (module, symbol) = split_key(&row.metric);
            SymbolRow {
                origin: origin_of(&row.case, &row.metric),
                symbol,
                module: module.unwrap_or_default(),
                share_change_pp: row
                    .candidate_side
                    .mean
                    .zip(row.base_side.mean)
                    .map(|(c, b)| c - b),
                row: crate::model::Row {
                    metric: "share_pct".to_string(),
                    ..row.clone()
                },
            }
        })
        .collect();
    Explanation {
        metrics: ExplainedFamily {
            rows: metric_rows,
            unmatched: unmatched_of(&metrics),
            footer: metrics.footer,
        },
        symbols: ExplainedFamily {
            rows: symbol_rows,
            unmatched: unmatched_of(&symbols),
            footer: symbols.footer,
        },
        runq_delay: delay_curves(&sides, &lone),
        sides: sides.iter().map(|s| s.probed()).collect(),
        unavailable: unavailable(&sides),
    }
}

/// Every (probe, reason) any probed iteration lacked, with how many lacked it.
fn unavailable(sides: &[&ProbeSide]) -> Vec<UnavailableProbe> {
    let mut out: Vec<UnavailableProbe> = Vec::new();
    for (probe, reason, n) in sides.iter().flat_map(|s| &s.unavailable) {
        match out
            .iter_mut()
            .find(|u| u.probe == *probe && u.reason == *reason)
        {
            Some(u) => u.iterations += n,
            None => out.push(UnavailableProbe {
                probe: probe.clone(),
                reason: reason.clone(),
                iterations: *n,
            }),
        }
    }
    out
}

/// Per case and task group (all tasks first), each side's run-queue delays pooled over its
/// runs' probed iterations, read at [`DELAY_POINTS`] in microseconds.
fn delay_curves(sides: &[&ProbeSide], lone: &HashSet<String>) -> Vec<DelayCurve> {
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    for side in sides {
        for entry in &side.entries {
            let case = &side.cases[entry.case].name;
            for (group, _) in &entry.delays {
                if group.is_some() && lone.contains(case) {
                    continue;
                }
                let key = (case.clone(), group.clone());
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    // Cases as first seen, all tasks before the groups of a case.
    let case_rank = |case: &str| keys.iter().position(|(c, _)| c == case);
    let mut sorted = keys.clone();
    sorted.sort_by_key(|(case, group)| (case_rank(case), group.is_some()));
    let points = DELAY_POINTS.to_vec();
    let x = x_position(&points);
    sorted
        .into_iter()
        .map(|(case, group)| {
            let pooled: Vec<Option<Histogram<u64>>> = sides
                .iter()
                .map(|side| {
                    let mut merged: Option<Histogram<u64>> = None;
                    for entry in side
                        .entries
                        .iter()
                        .filter(|e| side.cases[e.case].name == case)
                    {
                        for (_, h) in entry.delays.iter().filter(|(g, _)| *g == group) {
                            match merged.as_mut() {
                                Some(m) => {
                                    let _ = m.add(h);
                                }
                                None => merged = Some(h.clone()),
                            }
                        }
                    }
                    merged.filter(|h| !h.is_empty())
                })
                .collect();
            let values: Vec<Vec<Option<f64>>> = pooled
                .iter()
                .map(|h| {
                    points
                        .iter()
                        .map(|p| {
                            let h = h.as_ref()?;
                            let ns = match p {
                                Point::Percentile(pct) => h.value_at_quantile(pct / 100.0),
                                Point::Max => h.max(),
                            };
                            Some(ns as f64 / 1000.0)
                        })
                        .collect()
                })
                .collect();
            DelayCurve {
                group,
                samples: pooled
                    .iter()
                    .map(|h| h.as_ref().map_or(0, Histogram::len))
                    .collect(),
                curve: Curve {
                    case,
                    family: RUNQ_DELAY.to_string(),
                    unit: "usec".to_string(),
                    points: points.clone(),
                    x: x.clone(),
                    changes: changes(&values),
                    values,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use schedlab_core::probe::GroupAttachment;

    use super::*;
    use crate::testutil::record;

    fn measurement(group: Option<&str>, name: &str, value: f64) -> ProbeMeasurement {
        ProbeMeasurement {
            group: group.map(String::from),
            measurement: Measurement {
                name: name.to_string(),
                unit: "count".to_string(),
                better: Better::Lower,
                role: Role::Explanatory,
                shape: MetricShape::Count,
                distribution: None,
                value,
            },
        }
    }

    fn probe(kind: ProbeKind) -> ProbeRecord {
        ProbeRecord {
            kind,
            index: 0,
            started_at_ns: 0,
            measurements: Vec::new(),
            explanatory: Vec::new(),
            unavailable: Vec::new(),
            attachments: Vec::new(),
            symbols: Vec::new(),
        }
    }

    fn explained(metrics: Vec<ProbeMeasurement>) -> ProbeRecord {
        ProbeRecord {
            explanatory: metrics,
            ..probe(ProbeKind::Explain)
        }
    }

    fn profiled(shares: &[(&str, f64)]) -> ProbeRecord {
        ProbeRecord {
            symbols: shares
                .iter()
                .enumerate()
                .map(|(i, (symbol, share))| ProfileSymbol {
                    rank: i as u32 + 1,
                    symbol: symbol.to_string(),
                    module: "[kernel.kallsyms]".to_string(),
                    origin: SymbolOrigin::Kernel,
                    samples: (*share * 10.0) as u64,
                    share_pct: *share,
                })
                .collect(),
            ..probe(ProbeKind::Profile)
        }
    }

    /// A side of runs `ids` (one case, "case"), each with the probe iterations `probes(i)` gives.
    /// The explanatory rows as (group, metric), in the order the explanation lists them.
    fn row_names(e: &Explanation) -> Vec<(Option<&str>, &str)> {
        e.metrics
            .rows
            .iter()
            .map(|r| (r.group.as_deref(), r.row.metric.as_str()))
            .collect()
    }

    fn side(name: &str, ids: &[i64], probes: impl Fn(usize) -> Vec<ProbeRecord>) -> ProbeSide {
        let mut builder = ProbeSideBuilder::new(name, false);
        for (i, id) in ids.iter().enumerate() {
            let run = record(*id, "boot", RunStatus::Complete, &[("case", &[1.0])]);
            let probes: Vec<(usize, ProbeRecord)> = probes(i).into_iter().map(|p| (0, p)).collect();
            builder.add_run(
                RunInput {
                    record: &run,
                    tag: None,
                },
                &probes,
            );
        }
        builder.finish()
    }

    #[test]
    fn symbols_a_profile_did_not_rank_count_as_zero_in_a_family_of_their_own() {
        let base = side("base", &[1, 2], |i| {
            vec![profiled(&[("a", 50.0 + i as f64), ("b", 30.0 - i as f64)])]
        });
        let cand = side("cand", &[3, 4], |i| {
            vec![profiled(&[("c", 60.0 + i as f64), ("a", 20.0 - i as f64)])]
        });
        let e = explain(base, vec![cand], &Settings::default(), None);
        assert!(e.metrics.rows.is_empty());
        assert_eq!(e.metrics.footer.comparisons, 0);
        let row = |symbol: &str| {
            e.symbols
                .rows
                .iter()
                .find(|r| r.symbol == symbol)
                .unwrap_or_else(|| panic!("no row of {symbol}"))
        };
        assert_eq!(row("b").row.candidate_side.units, vec![0.0, 0.0]);
        assert_eq!(row("c").row.base_side.units, vec![0.0, 0.0]);
        assert_eq!(row("c").module, "[kernel.kallsyms]");
        assert_eq!(row("c").origin, SymbolOrigin::Kernel);
        assert_eq!(row("c").row.metric, "share_pct");
        let change = row("a").share_change_pp.unwrap();
        assert!((change - (19.5 - 50.5)).abs() < 1e-9, "{change}");
        // Judged among themselves: three symbols, two runs a side.
        assert_eq!(e.symbols.footer.comparisons, 3);
        assert!(e.symbols.unmatched.is_empty());
        assert_eq!(e.sides[0].profiled_runs, vec![1, 2]);
        assert_eq!(e.sides[1].profiled_iterations, 2);
        assert_eq!(e.sides[1].explained_iterations, 0);
    }

    #[test]
    fn groups_come_apart_bookkeeping_stays_out_and_calls_not_made_are_zero() {
        let base = side("base", &[1, 2], |i| {
            let n = 100.0 + i as f64;
            vec![explained(vec![
                measurement(None, "syscalls_count", n),
                measurement(Some("worker"), "syscalls_count", n),
                measurement(Some("worker"), "syscall_write_count", n),
                measurement(Some("waker"), "syscalls_count", n),
                measurement(None, PROBE_RECORDS_COUNT.name, 5000.0),
            ])]
        });
        let cand = side("cand", &[3, 4], |i| {
            let n = 100.0 + i as f64;
            vec![explained(vec![
                measurement(None, "syscalls_count", 2.0 * n),
                measurement(Some("worker"), "syscalls_count", 2.0 * n),
                measurement(Some("worker"), "syscall_write_count", n),
                measurement(Some("worker"), "syscall_futex_count", n),
                measurement(Some("waker"), "syscalls_count", n),
            ])]
        });
        let e = explain(base, vec![cand], &Settings::default(), None);
        let names = row_names(&e);
        assert_eq!(
            names,
            [
                (None, "syscalls_count"),
                (Some("worker"), "syscalls_count"),
                (Some("worker"), "syscall_write_count"),
                (Some("waker"), "syscalls_count"),
                (Some("worker"), "syscall_futex_count"),
            ]
        );
        let futex = &e.metrics.rows[4].row;
        assert_eq!(futex.base_side.units, vec![0.0, 0.0]);
        assert_eq!(futex.scale, crate::units::Scale::Raw);
        // The group made no futex call in the base, but its calls were counted; a group whose
        // calls were not counted would have no such row.
        assert!(e.metrics.unmatched.is_empty());
        assert_eq!(e.metrics.footer.comparisons, 5);
    }

    /// Tasks all of one group: the group's rows would be all tasks' again.
    #[test]
    fn a_lone_group_is_all_tasks() {
        let probes = |n: f64| {
            vec![explained(vec![
                measurement(None, "syscalls_count", n),
                measurement(Some("worker"), "syscalls_count", n),
                measurement(Some("worker"), "syscall_write_count", n),
            ])]
        };
        let base = side("base", &[1, 2], |i| probes(100.0 + i as f64));
        let cand = side("cand", &[3, 4], |i| probes(200.0 + i as f64));
        let e = explain(base, vec![cand], &Settings::default(), None);
        let names = row_names(&e);
        assert_eq!(names, [(None, "syscalls_count")]);
    }

    #[test]
    fn a_sides_run_queue_delays_are_pooled_over_its_runs() {
        let histogram = |group: &str, ns: u64| {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
            for _ in 0..100 {
                h.record(ns).unwrap();
            }
            GroupAttachment {
                group: Some(group.into()),
                attachment: schedlab_core::latency::attachment(RUNQ_DELAY_ATTACHMENT, &h),
            }
        };
        let with_delays = |ns: u64| ProbeRecord {
            attachments: vec![histogram("worker", ns), histogram("waker", 1_000)],
            ..probe(ProbeKind::Explain)
        };
        let base = side("base", &[1, 2], |_| vec![with_delays(2_000)]);
        let cand = side("cand", &[3], |_| vec![with_delays(20_000)]);
        let e = explain(base, vec![cand], &Settings::default(), None);
        assert_eq!(e.runq_delay.len(), 2);
        let curve = &e.runq_delay[0];
        assert_eq!(curve.group.as_deref(), Some("worker"));
        assert_eq!(curve.samples, vec![200, 100]);
        assert_eq!(curve.curve.family, RUNQ_DELAY);
        let p50 = |side: usize| curve.curve.values[side][0].unwrap();
        assert!((p50(0) - 2.0).abs() < 0.01, "{}", p50(0));
        assert!((p50(1) - 20.0).abs() < 0.05, "{}", p50(1));
        let change = curve.curve.changes[1][0].unwrap();
        assert!((change - 900.0).abs() < 5.0, "{change}");
    }
}
