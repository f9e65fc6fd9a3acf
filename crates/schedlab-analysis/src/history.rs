//! A metric's history on one machine (`schedlab history`) and the changes in it
//! (`schedlab changes`).
//!
//! The run is the unit, as in a comparison: each run of the case becomes one point, its run
//! summary ([`crate::units::summarise_run`]: the mean of ln x over its measured iterations when
//! every value is positive, shown as the geometric mean), in the order the runs started, with
//! the kernel release each ran on. Iterations of one run share its conditions and are not
//! independent evidence, so they never become points of their own.
//!
//! Change points are found in two steps:
//!
//! 1. E-divisive means ([`schedlab_stats::edivisive`]) proposes splits with a seeded permutation
//!    test, as MongoDB's and Hunter's performance CI do;
//! 2. a proposed change is kept only when the levels either side of it (medians of the run
//!    summaries between neighbouring changes) differ by at least `noise_multiple` × the
//!    machine's run-to-run noise, and by at least `min_effect`. The noise is the larger of the
//!    calibrated noise of this machine, case and metric (`schedlab calibrate`: the spread of
//!    one run's summary, across boots when the calibration spans boots) and the series' own
//!    (a robust spread of the differences between runs one, two and three apart, at the lags
//!    whose differences a single step cannot be the median of), raised to the floor the runs'
//!    own iterations set ([`within_sd`]): a summary is a mean of n noisy iterations, so it
//!    varies by at least σ²_within / n, however close a few runs happen to lie. The weakest
//!    change under the bar goes first and the levels are worked out again, until every change
//!    left clears it.
//!
//! Step 2 is what keeps drift from being reported: a permutation test takes autocorrelated noise
//! (a machine that warms up, a neighbour's load that comes and goes) for changes, but such
//! wanderings stay within a few noise widths, while the steps worth a kernel developer's time
//! stand well clear of them.
use serde::Serialize;

use schedlab_core::metric::Better;
use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_core::summary::{MetricSummary, Moments};
use schedlab_stats::edivisive::{e_divisive, EDivisiveSettings};

use crate::calibration::{Calibration, CalibrationSet, MachineKey, UnitKind};
use crate::series::MetricFilter;
use crate::units::Scale;

pub use schedlab_core::summary::{newest_taken, SummarisedRun};

/// One run of a history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryPoint {
    pub run_id: Option<i64>,
    pub label: Option<String>,
    pub started_at_ns: i64,
    pub kernel: String,
    pub hostname: String,
    pub status: RunStatus,
    /// Measured iterations of the case in this run.
    pub iterations: usize,
    /// The run summary in the metric's unit (the geometric mean of the iterations on the log
    /// scale, their mean on the raw one).
    pub value: f64,
    /// The run summary on the analysis scale.
    #[serde(skip)]
    pub y: f64,
    /// The sample variance of the run's iterations on the analysis scale, as a comparison's run
    /// summary keeps it; `None` with one iteration.
    #[serde(skip)]
    pub within_variance: Option<f64>,
    /// The schedlab build (or imported tool) that measured the run: a step where it changes may
    /// be the measuring code's, not the kernel's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<String>,
}

/// Consecutive runs of one kernel release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelSpan {
    pub kernel: String,
    /// Index of its first point.
    pub first: usize,
    pub runs: usize,
    /// The median of its run summaries, in the metric's unit.
    pub median: f64,
}

/// Consecutive runs measured by one build (see [`HistoryPoint::measured_by`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildSpan {
    pub measured_by: String,
    /// Index of its first point.
    pub first: usize,
    pub runs: usize,
}

/// What a history follows: one case's metric on one machine, with the metric's unit and direction
/// and the scale it is summarised and judged on. A history and its changes carry the same key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryKey {
    pub case: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// `log` (changes judged as ratios) when every value is positive, `raw` (differences in the
    /// metric's unit) otherwise.
    pub scale: Scale,
    pub hostname: String,
}

/// A metric's run summaries over time on one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    #[serde(flatten)]
    pub key: HistoryKey,
    /// Oldest first.
    pub points: Vec<HistoryPoint>,
    pub kernels: Vec<KernelSpan>,
    /// The builds that measured the runs, in run order; more than one means a step may be the
    /// measuring code's. Runs whose fingerprint does not say belong to no span.
    pub builds: Vec<BuildSpan>,
    /// Runs of the case left out because they did not complete.
    pub excluded_runs: Vec<i64>,
    /// The machine of the newest run, for finding its calibration.
    #[serde(skip)]
    pub machine: Option<MachineKey>,
}

/// Which way a change went, by the metric's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeVerdict {
    Regression,
    Improvement,
}

/// Why a history cannot be built (`schedlab-report` words it).
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryError {
    /// No run measured the case.
    NoRuns { case: String },
    /// The case has no such metric; the ones it has.
    NoMetric {
        case: String,
        metric: String,
        available: Vec<String>,
    },
    /// The runs come from several machines: a history is one machine's.
    ManyHosts(Vec<String>),
    /// A run stored a value that is not a finite number (a database from before the runner
    /// refused them): no summary of it means anything.
    NotFinite {
        case: String,
        metric: String,
        run_id: Option<i64>,
    },
}

/// The history of `metric` (default: the case's first primary metric) in `case` over `runs`.
/// Runs that did not complete are left out unless `include_incomplete`. Each run is summarised
/// first, as the store keeps it, and the history built from the summaries ([`history_of`]).
pub fn history(
    runs: &[RunRecord],
    case: &str,
    metric: Option<&str>,
    include_incomplete: bool,
) -> Result<History, HistoryError> {
    let with_case: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.cases.iter().any(|c| c.spec.name == case))
        .collect();
    let summarised: Vec<SummarisedRun> = with_case
        .iter()
        .map(|r| SummarisedRun::of(r, case))
        .collect();
    let machine = newest_taken(&summarised, include_incomplete)
        .map(|i| MachineKey::of(&with_case[i].fingerprint));
    history_of(&summarised, case, metric, include_incomplete, machine)
}

/// The history of `metric` (default: the case's first primary metric) in `case` over `runs`,
/// each a run of the case. Runs that did not complete are left out unless `include_incomplete`.
/// `machine` is the newest taken run's ([`newest_taken`]), for finding its calibration.
pub fn history_of<'a>(
    runs: &'a [SummarisedRun],
    case: &str,
    metric: Option<&str>,
    include_incomplete: bool,
    machine: Option<MachineKey>,
) -> Result<History, HistoryError> {
    let mut ordered: Vec<&SummarisedRun> = runs.iter().collect();
    ordered.sort_by_key(|r| (r.started_at_ns, r.id));
    let mut hosts: Vec<String> = ordered.iter().map(|r| r.hostname.clone()).collect();
    hosts.sort();
    hosts.dedup();
    if hosts.len() > 1 {
        return Err(HistoryError::ManyHosts(hosts));
    }
    let (taken, excluded): (Vec<&SummarisedRun>, Vec<&SummarisedRun>) = ordered
        .into_iter()
        .partition(|r| r.is_taken(include_incomplete));
    let filter = MetricFilter {
        names: metric.map(|m| vec![m.to_string()]).unwrap_or_default(),
        all: false,
    };
    let accepted = |s: &&MetricSummary| filter.accepts(&s.metric, s.role);
    // The metric as the first run to measure it has it, as a comparison's series is described.
    let Some(first) = taken.iter().find_map(|r| r.summaries.iter().find(accepted)) else {
        return Err(no_metric(&taken, case, metric));
    };
    let of_run = |r: &&'a SummarisedRun| -> Option<&'a MetricSummary> {
        r.summaries
            .iter()
            .find(|s| s.metric == first.metric && accepted(s))
    };
    let scale = if taken.iter().filter_map(of_run).all(|s| s.log.is_some()) {
        Scale::Log
    } else {
        Scale::Raw
    };
    let mut points = Vec::new();
    for run in &taken {
        let Some(s) = of_run(run) else { continue };
        let moments = match scale {
            Scale::Log => s.log,
            Scale::Raw => s.raw,
        };
        let Some(Moments { mean, variance }) = moments else {
            return Err(HistoryError::NotFinite {
                case: case.into(),
                metric: first.metric.clone(),
                run_id: run.id,
            });
        };
        points.push(HistoryPoint {
            run_id: run.id,
            label: run.label.clone(),
            started_at_ns: run.started_at_ns,
            kernel: run.kernel.clone(),
            hostname: run.hostname.clone(),
            status: run.status,
            iterations: s.n,
            value: scale.back(mean),
            y: mean,
            within_variance: variance,
            measured_by: run.measured_by.clone(),
        });
    }
    if points.is_empty() {
        return Err(HistoryError::NoRuns { case: case.into() });
    }
    Ok(History {
        key: HistoryKey {
            case: case.into(),
            metric: first.metric.clone(),
            unit: first.unit.clone(),
            better: first.better,
            scale,
            hostname: hosts.into_iter().next().unwrap_or_default(),
        },
        excluded_runs: excluded.iter().filter_map(|r| r.id).collect(),
        machine,
        kernels: kernel_spans(&points),
        builds: build_spans(&points),
        points,
    })
}

/// Why no run taken has the metric: none was taken, or the metrics they have.
fn no_metric(taken: &[&SummarisedRun], case: &str, metric: Option<&str>) -> HistoryError {
    if taken.is_empty() {
        return HistoryError::NoRuns { case: case.into() };
    }
    let mut available: Vec<String> = Vec::new();
    for s in taken.iter().flat_map(|r| &r.summaries) {
        if !available.contains(&s.metric) {
            available.push(s.metric.clone());
        }
    }
    HistoryError::NoMetric {
        case: case.into(),
        metric: metric.unwrap_or("(primary)").into(),
        available,
    }
}

fn build_spans(points: &[HistoryPoint]) -> Vec<BuildSpan> {
    let mut spans: Vec<BuildSpan> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let Some(by) = &p.measured_by else { continue };
        match spans.last_mut() {
            Some(s) if &s.measured_by == by => s.runs = i + 1 - s.first,
            _ => spans.push(BuildSpan {
                measured_by: by.clone(),
                first: i,
                runs: 1,
            }),
        }
    }
    spans
}

fn kernel_spans(points: &[HistoryPoint]) -> Vec<KernelSpan> {
    let mut spans: Vec<KernelSpan> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        match spans.last_mut() {
            Some(s) if s.kernel == p.kernel => s.runs += 1,
            _ => spans.push(KernelSpan {
                kernel: p.kernel.clone(),
                first: i,
                runs: 1,
                median: 0.0,
            }),
        }
    }
    for s in &mut spans {
        let values: Vec<f64> = points[s.first..s.first + s.runs]
            .iter()
            .map(|p| p.value)
            .collect();
        s.median = median(&values);
    }
    spans
}

/// How changes are found and judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangeSettings {
    pub edivisive: EDivisiveSettings,
    /// The smallest change reported, as a fraction (0.01 = 1 %).
    pub min_effect: f64,
    /// A change must move the level by at least this many noise widths.
    pub noise_multiple: f64,
}

impl Default for ChangeSettings {
    fn default() -> Self {
        ChangeSettings {
            edivisive: EDivisiveSettings::default(),
            min_effect: 0.01,
            noise_multiple: 3.0,
        }
    }
}

/// Where the noise a change is measured against came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum NoiseSource {
    /// A stored calibration of this machine, case and metric was the larger.
    Calibration { id: Option<i64>, label: String },
    /// The series' own spread around its levels was the larger (or there is no calibration).
    Series,
    /// The floor the runs' own iterations set ([`within_sd`]) was above both: the runs lie
    /// closer together than their iterations allow, by chance or because few runs were made.
    Iterations,
}

/// The run-to-run noise a history's changes are judged against.
///
/// Changes are judged on the analysis scale ([`Changes::scale`]): in ln units on the log scale,
/// in the metric's unit on the raw one. Each figure is given on that scale and in percent of the
/// metric; on the raw scale the percent is of the series' median, and where that median is 0 a
/// percent is undefined and is `None` (the figures on the analysis scale still stand).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Noise {
    /// One run summary's spread used: the larger of the calibrated and the series' one, raised
    /// to the runs' iterations' floor ([`within_sd`]).
    pub sd: f64,
    /// `sd` in percent: e^sd − 1 on the log scale, sd ÷ |the series' median| on the raw one.
    pub pct: Option<f64>,
    /// The calibrated spread, when a calibration applies.
    pub calibrated_sd: Option<f64>,
    pub calibrated_pct: Option<f64>,
    /// The series' own spread, when the series is long enough to tell it.
    pub series_sd: Option<f64>,
    pub series_pct: Option<f64>,
    #[serde(flatten)]
    pub source: NoiseSource,
    /// The smallest change reported: the larger of noise_multiple × sd and min_effect (on the
    /// raw scale, min_effect × |the series' median|).
    pub threshold: f64,
    pub threshold_pct: Option<f64>,
}

/// A change point: the first run after it, and the levels either side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Index of the first point after the change.
    pub index: usize,
    pub run_id: Option<i64>,
    pub label: Option<String>,
    pub started_at_ns: i64,
    /// The kernel of the first run after the change, and of the run before it.
    pub kernel: String,
    pub kernel_before: String,
    /// Runs in the level before (since the previous change) and after (until the next).
    pub runs_before: usize,
    pub runs_after: usize,
    /// Medians of the run summaries of those levels, in the metric's unit.
    pub before: f64,
    pub after: f64,
    /// after ÷ before − 1, in percent (raw scale: the difference in percent of before); `None`
    /// when before is 0 on the raw scale, where a percent is undefined (the change was judged
    /// on the raw scale, as every raw-scale change is).
    pub change_pct: Option<f64>,
    /// The change's size in noise widths; `None` when the noise is unknown or 0.
    pub noise_widths: Option<f64>,
    pub p_value: f64,
    /// By the metric's direction.
    pub verdict: ChangeVerdict,
    /// The builds that measured the run before the change and the first run after it, when
    /// they differ: the step may be schedlab's own (or the imported tool's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_changed: Option<BuildChange>,
}

/// A change of the measuring build between two neighbouring runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildChange {
    pub before: String,
    pub after: String,
}

impl BuildChange {
    /// The build change between two runs, if both say what measured them and the answers differ.
    pub fn between(before: &HistoryPoint, after: &HistoryPoint) -> Option<BuildChange> {
        match (&before.measured_by, &after.measured_by) {
            (Some(b), Some(a)) if a != b => Some(BuildChange {
                before: b.clone(),
                after: a.clone(),
            }),
            _ => None,
        }
    }
}

/// A split E-divisive proposed that did not clear the noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dismissed {
    pub index: usize,
    pub run_id: Option<i64>,
    /// As [`Change::change_pct`].
    pub change_pct: Option<f64>,
    pub p_value: f64,
}

/// The changes in one history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changes {
    #[serde(flatten)]
    pub key: HistoryKey,
    pub runs: usize,
    pub noise: Option<Noise>,
    pub changes: Vec<Change>,
    pub dismissed: Vec<Dismissed>,
    pub settings: ChangeSettings,
}

/// What [`detect`] found in a series of run summaries on the analysis scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// (index, level before, level after, p-value), in index order; levels on the analysis
    /// scale.
    pub changes: Vec<(usize, f64, f64, f64)>,
    /// (index, level before, level after, p-value) of proposals under the bar.
    pub dismissed: Vec<(usize, f64, f64, f64)>,
    /// The noise sd on the analysis scale, from the series (None with too few points).
    pub series_sd: Option<f64>,
    /// The noise sd used: the larger of the calibrated and the series' one, raised to the
    /// iterations' floor; `None` when neither exists, as a floor alone is no estimate.
    pub sd: Option<f64>,
    /// The bar a change cleared, on the analysis scale.
    pub threshold: f64,
}

/// Finds the changes in `ys` (run summaries on `scale`, oldest first); `calibrated_sd` is the
/// spread of one run summary a calibration gives, and `within_sd` the least spread the runs'
/// iterations allow one ([`within_sd`]), both on the same scale.
pub fn detect(
    ys: &[f64],
    scale: Scale,
    calibrated_sd: Option<f64>,
    within_sd: Option<f64>,
    settings: &ChangeSettings,
) -> Result<Detection, schedlab_stats::StatsError> {
    let proposed = e_divisive(ys, &settings.edivisive)?;
    let mut kept: Vec<(usize, f64)> = proposed.iter().map(|c| (c.index, c.p_value)).collect();
    let mut dismissed = Vec::new();
    let series_sd = spread(ys);
    // The floor only raises an estimate of the noise: it says how little the runs can vary, not
    // how much they do, so with neither a calibration nor enough runs there is still no noise
    // (as a comparison's floor needs a variance to raise).
    let sd = match (series_sd, calibrated_sd) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
    .map(|sd| within_sd.map_or(sd, |w| sd.max(w)));
    let floor = match scale {
        Scale::Log => settings.min_effect.ln_1p(),
        Scale::Raw => settings.min_effect * median(ys).abs(),
    };
    let threshold = sd.map_or(floor, |sd| (settings.noise_multiple * sd).max(floor));
    loop {
        let levels = levels(ys, &kept);
        // The weakest change under the bar goes; the levels around it merge.
        let weakest = kept
            .iter()
            .enumerate()
            .map(|(i, _)| (i, (levels[i + 1] - levels[i]).abs()))
            .filter(|(_, size)| *size < threshold)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((i, _)) => {
                let (index, p) = kept.remove(i);
                dismissed.push((index, levels[i], levels[i + 1], p));
            }
            None => {
                dismissed.sort_by_key(|d| d.0);
                return Ok(Detection {
                    changes: kept
                        .iter()
                        .enumerate()
                        .map(|(i, (index, p))| (*index, levels[i], levels[i + 1], *p))
                        .collect(),
                    dismissed,
                    series_sd,
                    sd,
                    threshold,
                });
            }
        }
    }
}

/// The median of each segment between the changes.
fn levels(ys: &[f64], changes: &[(usize, f64)]) -> Vec<f64> {
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(changes.iter().map(|c| c.0))
        .chain(std::iter::once(ys.len()))
        .collect();
    bounds.windows(2).map(|w| median(&ys[w[0]..w[1]])).collect()
}

/// The run-to-run spread of the series itself: for lags k = 1, 2, 3, 1.4826 × the median of
/// |y(i+k) − y(i)| / √2 (a robust sd of one value), the largest over the lags, so noise that
/// wanders over a few runs counts in full.
///
/// The estimate must not be set by the changes it is there to judge. A step between two runs
/// enters k of the n − k differences at lag k, whatever its size, and a median ignores the
/// values above it only while they are fewer than half: k < (n − k) / 2, that is 3k < n. So lag
/// k is used only when 3k < n — lags 1 to 3 from 10 runs, 1 and 2 from 7 to 9, lag 1 alone from 4
/// to 6 — and a single step can then at most move the median to a larger difference between runs
/// on the same side of it. With 3 runs or fewer no lag qualifies: `None`.
fn spread(ys: &[f64]) -> Option<f64> {
    let lags = MAX_LAG.min(ys.len().saturating_sub(1) / 3);
    (1..=lags)
        .map(|k| {
            let differences: Vec<f64> = ys.windows(k + 1).map(|w| (w[k] - w[0]).abs()).collect();
            1.4826 * median(&differences) / std::f64::consts::SQRT_2
        })
        .max_by(f64::total_cmp)
}

/// The longest lag [`spread`] looks at.
const MAX_LAG: usize = 3;

/// The least spread a run summary can have from its own iterations: √(the median over the
/// points of within-run variance ÷ iterations). A summary is a mean of n iterations, so its
/// variance is at least σ²_within / n whatever the runs around it show (docs/statistics.md §2).
/// Points of one iteration tell no within-run variance and are passed over; `None` when no point
/// has two.
///
/// The median, where a comparison pools: a history spans months of kernels, builds and
/// neighbours, and one run with a hiccup among its iterations (or a kernel whose iterations got
/// noisier) would set a pooled floor for the whole series and mute steps the other runs show
/// plainly; the median is the typical run's and ignores up to half of them. Each point's
/// variance ÷ its own n, so runs of different lengths each count at the precision they have.
/// With few iterations the median of sample variances runs low (for 3 iterations by about 30 %:
/// the median of χ²₂ / 2 is ln 2), which errs towards a lower floor, never towards muting a step.
pub fn within_sd(points: &[HistoryPoint]) -> Option<f64> {
    let per_summary: Vec<f64> = points
        .iter()
        .filter_map(|p| p.within_variance.map(|v| v / p.iterations as f64))
        .collect();
    (!per_summary.is_empty()).then(|| median(&per_summary).sqrt())
}

fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// A spread on the analysis scale in percent of the metric: on the raw scale, of `reference`;
/// `None` when that is 0, as a percent of 0 is undefined.
fn pct(scale: Scale, sd: f64, reference: f64) -> Option<f64> {
    match scale {
        Scale::Log => Some(sd.exp_m1() * 100.0),
        Scale::Raw => (reference != 0.0).then(|| sd / reference.abs() * 100.0),
    }
}

/// A change between two levels on the analysis scale in percent of the level before; on the raw
/// scale `None` when that level is 0.
fn change_pct(scale: Scale, before: f64, after: f64) -> Option<f64> {
    match scale {
        Scale::Log => Some((after - before).exp_m1() * 100.0),
        Scale::Raw => (before != 0.0).then(|| (after - before) / before.abs() * 100.0),
    }
}

/// The changes in a history, judged against the noise of its machine's newest calibration that
/// covers the case and metric (at the iteration count most of its runs used).
pub fn changes(
    history: &History,
    calibrations: &CalibrationSet,
    settings: &ChangeSettings,
) -> Result<Changes, schedlab_stats::StatsError> {
    let ys: Vec<f64> = history.points.iter().map(|p| p.y).collect();
    let calibrated = calibrated_sd(history, calibrations);
    let within = within_sd(&history.points);
    let detection = detect(
        &ys,
        history.key.scale,
        calibrated.map(|(_, sd)| sd),
        within,
        settings,
    )?;
    let noise = noise(history, &ys, &detection, calibrated, within);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(detection.changes.iter().map(|c| c.0))
        .chain(std::iter::once(ys.len()))
        .collect();
    let found = detection
        .changes
        .iter()
        .enumerate()
        .map(|(i, &(index, before, after, p_value))| {
            let p = &history.points[index];
            let worse = match history.key.better {
                Better::Lower => after > before,
                Better::Higher => after < before,
            };
            Change {
                index,
                run_id: p.run_id,
                label: p.label.clone(),
                started_at_ns: p.started_at_ns,
                kernel: p.kernel.clone(),
                kernel_before: history.points[index - 1].kernel.clone(),
                runs_before: bounds[i + 1] - bounds[i],
                runs_after: bounds[i + 2] - bounds[i + 1],
                before: history.key.scale.back(before),
                after: history.key.scale.back(after),
                change_pct: change_pct(history.key.scale, before, after),
                noise_widths: detection
                    .sd
                    .filter(|sd| *sd > 0.0)
                    .map(|sd| (after - before).abs() / sd),
                p_value,
                verdict: if worse {
                    ChangeVerdict::Regression
                } else {
                    ChangeVerdict::Improvement
                },
                build_changed: BuildChange::between(&history.points[index - 1], p),
            }
        })
        .collect();
    Ok(Changes {
        key: history.key.clone(),
        runs: ys.len(),
        noise,
        changes: found,
        dismissed: detection
            .dismissed
            .iter()
            .map(|&(index, before, after, p_value)| Dismissed {
                index,
                run_id: history.points[index].run_id,
                change_pct: change_pct(history.key.scale, before, after),
                p_value,
            })
            .collect(),
        settings: *settings,
    })
}

/// The calibration of the history's machine, case, metric and usual iteration count, and the
/// standard deviation of one run summary it gives.
fn calibrated_sd<'a>(
    history: &History,
    calibrations: &'a CalibrationSet,
) -> Option<(&'a Calibration, f64)> {
    history.machine.as_ref().and_then(|machine| {
        let iterations = most_common(history.points.iter().map(|p| p.iterations))?;
        let (cal, m) = calibrations.find(
            machine,
            &history.key.case,
            &history.key.metric,
            history.key.scale,
            iterations,
        )?;
        let v = m
            .unit_variance(UnitKind::BootMean { runs: 1.0 })
            .or_else(|| m.unit_variance(UnitKind::RunWithinBoot))?;
        Some((cal, v.variance.sqrt()))
    })
}

/// The noise the changes were judged against, and where it came from.
fn noise(
    history: &History,
    ys: &[f64],
    detection: &Detection,
    calibrated: Option<(&Calibration, f64)>,
    within: Option<f64>,
) -> Option<Noise> {
    let reference = median(ys);
    let to_pct = |sd: f64| pct(history.key.scale, sd, reference);
    // The floor is named only where it set the noise; on a tie the estimate it matched is.
    let floor_set = within.is_some_and(|w| {
        detection.series_sd.is_none_or(|s| w > s) && calibrated.is_none_or(|(_, c_sd)| w > c_sd)
    });
    detection.sd.map(|sd| Noise {
        sd,
        pct: to_pct(sd),
        calibrated_sd: calibrated.map(|(_, sd)| sd),
        calibrated_pct: calibrated.and_then(|(_, sd)| to_pct(sd)),
        series_sd: detection.series_sd,
        series_pct: detection.series_sd.and_then(to_pct),
        source: match (floor_set, calibrated) {
            (true, _) => NoiseSource::Iterations,
            (false, Some((cal, c_sd))) if detection.series_sd.is_none_or(|s| c_sd >= s) => {
                NoiseSource::Calibration {
                    id: cal.id,
                    label: cal.label.clone(),
                }
            }
            _ => NoiseSource::Series,
        },
        threshold: detection.threshold,
        threshold_pct: to_pct(detection.threshold),
    })
}

fn most_common(values: impl Iterator<Item = usize>) -> Option<usize> {
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for v in values {
        match counts.iter_mut().find(|(value, _)| *value == v) {
            Some((_, c)) => *c += 1,
            None => counts.push((v, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(v, c)| (c, v))
        .map(|(v, _)| v)
}

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;
