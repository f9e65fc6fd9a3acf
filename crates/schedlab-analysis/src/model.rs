//! The comparison model: every number any report style or format prints, decided here and
//! serialised as the comparison JSON (docs/json-schema.md). Renderers format these values; they
//! compute nothing.
use serde::Serialize;

use schedlab_core::metric::Better;
use schedlab_stats::ministat::{MinistatDifference, MinistatVitals};
use schedlab_stats::ConfidenceInterval;

use schedlab_core::record::RunStatus;

use crate::across::Across;
use crate::calibration::VarianceEstimate;
use crate::grouping::Grouping;
use crate::latency::Curve;
use crate::notes::{GuardMethod, MinistatNoTest, Note, RowNote, TestedOn, UnitsOf, Unmatched};
use crate::series::{CaseLabel, Origin};
use crate::settings::{SequentialPlan, Settings};
use crate::units::{Design, Scale};
use schedlab_core::probe::Origin as SymbolOrigin;

/// Bumped when a field of the comparison JSON is renamed or removed.
/// 2: the run is the unit (designs, variance sources, calibrations, `not judged`), style figures.
/// 3: notes as data: a row's `note`, `unmatched`, ministat's `no_test` and the `footer` are
/// typed objects, not sentences.
pub const COMPARISON_SCHEMA_VERSION: u32 = 3;

/// What a row concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    Equivalent,
    Inconclusive,
    /// Too noisy to call: the units vary more than the noise cap.
    Noisy,
    /// No variance estimate (one unit per side and no calibration): the change is shown, with no
    /// test, and the row stays out of the multiple-comparison family.
    NotJudged,
}

impl Verdict {
    /// The mark printed in tables.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Regression | Verdict::Improvement => "**",
            Verdict::Equivalent => "≈",
            Verdict::Inconclusive => "~",
            Verdict::Noisy => "??",
            Verdict::NotJudged => "?",
        }
    }

    pub fn is_marked(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Improvement)
    }

    /// `**` or `≈`: more rounds would not change the row, so a sequential experiment may stop
    /// for it.
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Regression | Verdict::Improvement | Verdict::Equivalent
        )
    }

    pub const ALL: [Verdict; 6] = [
        Verdict::Regression,
        Verdict::Improvement,
        Verdict::Equivalent,
        Verdict::Inconclusive,
        Verdict::Noisy,
        Verdict::NotJudged,
    ];
}

/// The test a row got.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Test {
    /// No variance estimate: no test.
    None,
    /// Student's t on the difference of the sides' mean units, with the row's variance.
    StudentT { df: f64, std_err: f64, t: f64 },
    /// Student's t on the mean of paired differences (A/B rounds).
    PairedT { df: f64, std_err: f64, t: f64 },
}

impl Test {
    pub fn df(self) -> Option<f64> {
        match self {
            Test::None => None,
            Test::StudentT { df, .. } | Test::PairedT { df, .. } => Some(df),
        }
    }
}

/// Where a row's variance came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VarianceSource {
    /// The spread of this comparison's own units.
    Today,
    /// A calibration of this machine.
    Calibration,
    /// Both, weighted by their degrees of freedom.
    Pooled,
    /// Neither: the row is not judged.
    None,
}

/// A calibration's part in a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CalibrationUse {
    pub id: i64,
    /// The unit variance the calibration gives, before the guard.
    pub variance: f64,
    pub df: f64,
    /// The stale-calibration guard's factor applied to `variance` (≥ 1).
    pub guard_factor: f64,
}

/// A row's variance of one unit, and how it was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RowVariance {
    pub source: VarianceSource,
    /// From this comparison's units (pooled between units within each side; for pairs, the
    /// variance of the differences).
    pub today: Option<VarianceEstimate>,
    pub calibration: Option<CalibrationUse>,
    /// Judged on a calibration alone: the variance of the effect added because today's runs
    /// varied more inside than the calibration's (each side's within-run variance above the
    /// calibrated σ², over its iterations); 0 otherwise. Included in `used`.
    pub within_excess: f64,
    /// The variance of one unit from its runs' own iterations (σ²_within over the iterations
    /// behind a unit), where it was above the estimate and so replaced it in `used`: units
    /// cannot vary less than their iterations allow; `None` where the estimate was above it.
    pub within_floor: Option<f64>,
    /// What the test used.
    pub used: Option<VarianceEstimate>,
}

/// Which interval a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// The test's confidence interval.
    Test,
    /// TOST's (1 − 2α) interval of a `≈` row.
    Equivalence,
}

/// An interval a verdict rests on, as ratios (candidate ÷ base).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UsedInterval {
    pub low: f64,
    pub high: f64,
    pub level: f64,
    pub kind: IntervalKind,
}

impl UsedInterval {
    /// The bounds as change in percent, as `change_pct` is the ratio's.
    pub fn pct(&self) -> (f64, f64) {
        (change_pct_of(self.low), change_pct_of(self.high))
    }
}

/// A ratio (candidate ÷ base) as change in percent: every `change_pct` and every interval in
/// percent is this.
pub fn change_pct_of(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// One side of one row, described.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideFigures {
    /// The unit values on the metric's own scale: per run (or boot, or round) the geometric mean
    /// of its iterations (the arithmetic mean on the raw scale).
    pub units: Vec<f64>,
    /// Measured iterations behind the units.
    pub iterations: usize,
    pub n: usize,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub harmonic_mean: Option<f64>,
    pub median: Option<f64>,
    pub stddev: Option<f64>,
    /// Standard deviation of the units in percent of their mean.
    pub std_pct: Option<f64>,
    /// The iterations' spread within a run, in percent (pooled over the side's runs).
    pub within_run_std_pct: Option<f64>,
    /// The spread the tables print as std%: between units when the side has two or more, else
    /// within its one run (marked as such in docs/statistics.md).
    pub spread_pct: Option<f64>,
    /// First quartile, median, third quartile of the units (for box plots).
    pub quartiles: Option<[f64; 3]>,
    /// benchstat's order-statistic confidence interval of the median, when there are enough units.
    pub median_ci: Option<ConfidenceInterval>,
    /// ministat's vitals of the units.
    pub ministat: Option<MinistatVitals>,
    /// The side's mean unit on the row's scale, back-transformed: the geometric mean of the
    /// units on the log scale, their mean on the raw one — what the row's ratio divides
    /// (candidate ÷ base, for complete pairs too).
    pub scale_mean: Option<f64>,
}

/// A line of the mmtests style.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MmtestsLine {
    pub name: &'static str,
    /// `None` where the figure is undefined (Stddev and CoeffVar of one unit).
    pub base: Option<f64>,
    pub candidate: Option<f64>,
    /// mmtests' gain in percent: positive when the candidate is better; `None` where either
    /// figure is undefined or the baseline's is 0.
    pub gain_pct: Option<f64>,
    /// The candidate's figure against the baseline's in percent, with every report's sign:
    /// positive when the candidate's is higher, whatever the metric's direction (`None` as for
    /// `gain_pct`). The text prints this, so a row reads alike in every style.
    pub change_pct: Option<f64>,
    pub marked: bool,
}

/// Why a side has no benchstat spread: each gets its own footnote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoSpread {
    /// Fewer units than an order-statistic interval of the median needs at 0.95 (6):
    /// benchstat's `± ∞`.
    TooFewUnits,
    /// The median is 0 (a count that never happened), and a spread in percent of 0 does not
    /// exist however many units there are: benchstat's `± ?`.
    ZeroMedian,
}

/// benchstat's reading of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchstatFigures {
    pub base_median: Option<f64>,
    pub candidate_median: Option<f64>,
    /// The wider half of each side's median CI, in percent of its median; `None` where the
    /// matching `*_no_spread` says why.
    pub base_spread_pct: Option<f64>,
    pub candidate_spread_pct: Option<f64>,
    pub base_no_spread: Option<NoSpread>,
    pub candidate_no_spread: Option<NoSpread>,
    /// Mann–Whitney U's p-value on the units.
    pub p_value: Option<f64>,
    /// Change of medians in percent, when p ≤ 0.05 and both sides have enough units.
    pub change_pct: Option<f64>,
    /// Both sides have fewer units than benchstat needs to detect a difference.
    pub too_few_to_detect: bool,
}

/// The ministat style's Student's t (pooled) on the units, as ministat prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinistatFigures {
    pub difference: Option<MinistatDifference>,
    /// Why there is no difference block.
    pub no_test: Option<MinistatNoTest>,
}

/// Numbers particular to the layouts that reproduce other tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StyleFigures {
    /// schedtests' compare%: positive is better whatever the metric's direction.
    pub schedtests_pct: Option<f64>,
    pub mmtests: Vec<MmtestsLine>,
    pub benchstat: BenchstatFigures,
    pub ministat: MinistatFigures,
}

/// One case × metric × candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    #[serde(skip)]
    pub label: CaseLabel,
    pub case_short: String,
    pub load: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// The candidate side's name.
    pub candidate: String,
    pub design: Design,
    /// Pairs of two cases of one run (`compare --across`), not an A/B round's two runs; absent
    /// from the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pairs_within_runs: bool,
    /// Such pairs from runs on several boots, averaged per boot: a unit is a boot; absent from
    /// the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pairs_by_boot: bool,
    pub scale: Scale,
    pub base_side: SideFigures,
    pub candidate_side: SideFigures,
    /// Candidate ÷ base: the ratio of the sides' geometric means (of means on the raw scale).
    pub ratio: Option<f64>,
    pub change_pct: Option<f64>,
    pub ratio_ci: Option<ConfidenceInterval>,
    pub test: Test,
    pub variance: RowVariance,
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    /// TOST's p-value against ±δ, and its (1 − 2α) interval of the ratio.
    pub equivalence_p_value: Option<f64>,
    pub equivalence_ci: Option<ConfidenceInterval>,
    /// The interval the verdict used (the HTML forest plot draws it).
    pub interval_used: Option<UsedInterval>,
    /// The smallest change this row could detect with 80 % power at the level the most
    /// significant row must reach (exact noncentral t).
    pub mde_pct: Option<f64>,
    /// Units this row would need to detect a change of δ with 80 % power: runs or boots per
    /// side, or pairs (A/B rounds, runs holding both cases, or boots of such runs), each one unit
    /// of both sides; `None` beyond 1000.
    pub units_needed: Option<usize>,
    /// In a sequential experiment, the round at which the verdict was reached.
    pub decided_at_round: Option<u32>,
    pub verdict: Verdict,
    /// Why a row is `?` or `??`, or what `~` could detect.
    pub note: Option<RowNote>,
    /// The compared metric of the same case and candidate this row restates (`ops_per_sec`,
    /// the reciprocal of `usec_per_op`): the row is shown, not tested — no p or q, out of the
    /// multiple-comparison family and the counts — and carries that row's verdict and note.
    /// Absent from the JSON when the row is an effect of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restates: Option<schedlab_core::metric::Restates>,
    pub styles: StyleFigures,
}

impl Row {
    /// What a side's `n` counts: its design's units, or boots where within-run pairs are
    /// averaged per boot.
    pub fn unit_noun(&self) -> &'static str {
        if self.pairs_by_boot {
            "boots"
        } else {
            self.design.noun()
        }
    }

    /// The test's confidence interval of the ratio as change in percent.
    pub fn ci_pct(&self) -> Option<(f64, f64)> {
        self.ratio_ci
            .map(|ci| (change_pct_of(ci.low), change_pct_of(ci.high)))
    }
}

/// A run the comparison left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExcludedRun {
    pub id: Option<i64>,
    pub status: RunStatus,
    pub reason: crate::series::Exclusion,
}

/// What a run of a side measured, as the HTML runs table prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunIterations {
    pub id: i64,
    /// Over all the run's cases, as `schedlab runs` counts them; not its plan's count, which
    /// `--until-ci` exceeds.
    pub measured_iterations: usize,
    pub warmup_iterations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub name: String,
    pub origin: Origin,
    pub run_ids: Vec<i64>,
    pub excluded: Vec<ExcludedRun>,
    /// Every stored run the side named, used or excluded.
    pub run_iterations: Vec<RunIterations>,
    pub boots: usize,
    pub kernels: Vec<String>,
}

/// A calibration a comparison used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationSummary {
    pub id: i64,
    pub created_at_ns: i64,
    pub label: String,
    pub runs: usize,
    pub boots: usize,
    /// Rows that drew on it.
    pub rows: usize,
}

/// The stale-calibration guard: how much wider today's spread is than the calibration's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guard {
    /// The factor the calibrated variances were multiplied by (1 when not widened).
    pub factor: f64,
    /// Today's spread over the calibrated one as measured, before the floor at 1 (1 where
    /// nothing was measured): what the report says today's spread is.
    pub measured: f64,
    pub method: GuardMethod,
    /// Rows the factor was estimated from.
    pub rows: usize,
    /// With two or more units per side: the median ratio before it was floored at 1. Far below
    /// 1, the calibration says the machine is much noisier than today's runs show (it was
    /// disturbed while calibrating, or has since become quieter); the footer says so.
    pub today_over_calibrated: Option<f64>,
}

/// benchstat's geomean line of a metric for one candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Geomean {
    pub metric: String,
    pub candidate: String,
    pub base: Option<f64>,
    pub candidate_value: Option<f64>,
    pub change_pct: Option<f64>,
}

/// One look of a sequential experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Look {
    /// Rounds seen at this look.
    pub rounds: u32,
    /// The false-discovery level spent at this look (BH within it).
    pub level: f64,
    /// The equivalence test's level spent at this look.
    pub equivalence_level: f64,
    /// Rows decided (`**` or `≈`) by the end of this look.
    pub decided: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sequential {
    pub plan: SequentialPlan,
    pub rounds: u32,
    pub looks: Vec<Look>,
}

/// The facts under the tables: what the units are, what the rows were tested on, the counts, and
/// the notes (`schedlab-report` words them all).
#[derive(Debug, Clone, Serialize)]
pub struct Footer {
    /// Rows judged (in the multiple-comparison family).
    pub comparisons: usize,
    pub marked: usize,
    pub not_judged: usize,
    /// What one unit stands for, once per kind among the rows.
    pub units: Vec<UnitsOf>,
    /// The scale the judged rows were tested on; `None` when no row could be judged.
    pub tested_on: Option<TestedOn>,
    pub notes: Vec<Note>,
}

/// Where a scaling point's interval came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PointInterval {
    /// The unit variance the row's test used (runs and boots designs), over the side's units.
    RowVariance,
    /// The spread of the side's own units (an arm of A/B pairs, whose test variance is of the
    /// differences).
    SideUnits,
    /// One unit and no variance to give it an interval.
    None,
}

/// One side at one point of a scaling series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingPoint {
    /// The side's mean unit on the row's scale, back-transformed: the geometric mean of its units
    /// (the arithmetic mean on the raw scale), so candidate ÷ base is the row's ratio.
    pub mean: f64,
    /// The t interval of that mean at the comparison's confidence; `None` without one.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Units behind the mean (runs, boots or rounds).
    pub units: usize,
    pub interval: PointInterval,
    /// Candidates only: the row's change in percent and its verdict.
    pub change_pct: Option<f64>,
    pub verdict: Option<Verdict>,
}

/// One side's line: a point per case of the series (`None` where the side has no row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingLine {
    pub side: String,
    pub points: Vec<Option<ScalingPoint>>,
}

/// One metric of a scaling series: base first, then each candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingMetric {
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub lines: Vec<ScalingLine>,
}

/// Cases that differ in one numeric parameter, every compared metric drawn against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingSeries {
    #[serde(flatten)]
    pub grouping: Grouping,
    /// The confidence level of the points' intervals.
    pub level: f64,
    pub metrics: Vec<ScalingMetric>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub settings: Settings,
    /// `compare --across`: the parameter whose values are the sides; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub across: Option<Across>,
    pub base: SideSummary,
    pub candidates: Vec<SideSummary>,
    pub calibrations: Vec<CalibrationSummary>,
    pub guard: Guard,
    pub sequential: Option<Sequential>,
    pub rows: Vec<Row>,
    /// Cases × metrics present on one side only, or without a complete unit on both.
    pub unmatched: Vec<Unmatched>,
    pub geomeans: Vec<Geomean>,
    pub latency_curves: Vec<Curve>,
    /// Matrix cases as curves against the parameter they vary (see [`crate::scaling`]).
    pub scaling: Vec<ScalingSeries>,
    pub footer: Footer,
    /// `compare --explain` (and the HTML report of runs with probes): why the cases moved, judged
    /// apart from the rows above; absent when not asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

impl Comparison {
    /// The rows grouped by case × metric and baseline (one row per candidate), in the order rows
    /// first name them: the blocks of the mmtests, ministat, benchstat and HTML layouts, which
    /// print one baseline beside the candidates of a block. Candidates judged against different
    /// units of the baseline (`--across` pairs from the runs holding each candidate's case) are
    /// in different blocks, so a block's baseline is the one every candidate in it was judged on.
    pub fn rows_by_case_metric(&self) -> Vec<Vec<&Row>> {
        let mut groups: Vec<Vec<&Row>> = Vec::new();
        for row in &self.rows {
            match groups.iter_mut().find(|g| {
                g[0].case == row.case
                    && g[0].metric == row.metric
                    && g[0].base_side.units == row.base_side.units
            }) {
                Some(group) => group.push(row),
                None => groups.push(vec![row]),
            }
        }
        groups
    }

    /// The geometric means of `metric` grouped by their baseline's value, in candidate order:
    /// candidates that lack a case the others have are set against the baseline's geometric
    /// mean over their own cases, so they stand on a line of their own.
    pub fn geomeans_by_base(&self, metric: &str) -> Vec<Vec<&Geomean>> {
        let mut groups: Vec<Vec<&Geomean>> = Vec::new();
        for g in self.geomeans.iter().filter(|g| g.metric == metric) {
            match groups.iter_mut().find(|group| group[0].base == g.base) {
                Some(group) => group.push(g),
                None => groups.push(vec![g]),
            }
        }
        groups
    }

    /// The levels of the intervals the rows' verdicts used, of one kind (`test` or
    /// `equivalence`), ascending and without repeats: a sequential experiment's `≈` rows each
    /// have the level spent at the look that decided them.
    pub fn used_interval_levels(&self, kind: IntervalKind) -> Vec<f64> {
        let mut levels: Vec<f64> = self
            .rows
            .iter()
            .filter_map(|r| r.interval_used)
            .filter(|i| i.kind == kind)
            .map(|i| i.level)
            .collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        levels
    }

    /// The base first, then each candidate: the order of the sides everywhere.
    pub fn sides(&self) -> impl Iterator<Item = &SideSummary> {
        std::iter::once(&self.base).chain(&self.candidates)
    }

    /// Effects with this verdict: rows that restate another row are the same effect, not
    /// counted again.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict == verdict && r.restates.is_none())
            .count()
    }

    /// Rows that are `**` or `≈`.
    pub fn decided_rows(&self) -> usize {
        self.rows.iter().filter(|r| r.verdict.is_decided()).count()
    }

    /// Every row is `**` or `≈`: what `ab --until-decided` stops on. A comparison without rows
    /// has decided nothing, so an experiment whose cases never matched runs on.
    pub fn is_decided(&self) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.verdict.is_decided())
    }
}

/// Why the cases moved (`compare --explain`; [`crate::explain`]): the probed iterations'
/// explanatory metrics and the profiles' symbol shares, each judged by the model the primary rows
/// are (each run's probed iterations summarised per run, runs, boots or A/B pairs as units) as a
/// multiple-comparison family of its own, so that explaining never spends the primary rows' error
/// budget; and each side's run-queue delay distribution.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// Explanatory metrics per task group, one family.
    pub metrics: ExplainedFamily<ExplainedRow>,
    /// Profile symbols' shares of the samples, another family.
    pub symbols: ExplainedFamily<SymbolRow>,
    /// Per case and task group, each side's run-queue delay percentiles.
    pub runq_delay: Vec<DelayCurve>,
    /// What each side's runs held, base first.
    pub sides: Vec<ProbedSide>,
    /// Probes some probed iteration of the sides could not have, and why.
    pub unavailable: Vec<UnavailableProbe>,
}

impl Explanation {
    /// Nothing to explain with: no probed or profiled iteration on any side.
    pub fn is_empty(&self) -> bool {
        self.sides
            .iter()
            .all(|s| s.explained_iterations == 0 && s.profiled_iterations == 0)
    }
}

/// The rows of one family, judged together and apart from every other family.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedFamily<R> {
    pub rows: Vec<R>,
    /// The family's own counts and notes.
    pub footer: Footer,
    /// What one side has and the other lacks.
    pub unmatched: Vec<ExplainedUnmatched>,
}

impl<R: AsRef<Row>> ExplainedFamily<R> {
    /// The family's rows of one case and candidate, in order.
    pub fn rows_of<'a, 'b>(
        &'a self,
        case: &'b str,
        candidate: &'b str,
    ) -> impl Iterator<Item = &'a R> + 'b
    where
        'a: 'b,
    {
        self.rows.iter().filter(move |r| {
            let row = r.as_ref();
            row.case == case && row.candidate == candidate
        })
    }
}

/// An explanatory metric of a task group, judged.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedRow {
    /// The task group (the tasks' command name up to its first digit); absent for all the
    /// workload's tasks together, or the whole machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(flatten)]
    pub row: Row,
}

impl AsRef<Row> for ExplainedRow {
    fn as_ref(&self) -> &Row {
        &self.row
    }
}

/// A profile symbol's share of the samples (`share_pct`), judged; a run whose profile did not
/// rank the symbol among its top ones counts it as 0 there.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolRow {
    pub symbol: String,
    /// The file it is in (`[kernel.kallsyms]` for the kernel).
    pub module: String,
    pub origin: SymbolOrigin,
    /// The candidate's mean share minus the base's, in percentage points.
    pub share_change_pp: Option<f64>,
    #[serde(flatten)]
    pub row: Row,
}

impl AsRef<Row> for SymbolRow {
    fn as_ref(&self) -> &Row {
        &self.row
    }
}

/// A metric (or symbol) of a case that only some sides have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedUnmatched {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(flatten)]
    pub unmatched: Unmatched,
}

/// One case's run-queue delay percentiles for one task group, per side: every probed iteration of
/// a side's runs pooled into one distribution (a description, no test).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelayCurve {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Per side (base first): the delays the curve is drawn from.
    pub samples: Vec<u64>,
    #[serde(flatten)]
    pub curve: Curve,
}

/// What a side's runs held for the explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbedSide {
    pub name: String,
    /// Runs with probed (`--explain`) iterations, and how many such iterations in all.
    pub explained_runs: Vec<i64>,
    pub explained_iterations: usize,
    /// Runs with profiled (`--profile`) iterations, and how many in all.
    pub profiled_runs: Vec<i64>,
    pub profiled_iterations: usize,
}

/// A probe the machine could not give some probed iteration, with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnavailableProbe {
    pub probe: String,
    pub reason: String,
    /// Probed iterations it was missing from.
    pub iterations: usize,
}
