//! What a comparison has to say besides its numbers, as facts: why a row is not judged or too
//! noisy, what an inconclusive row could detect, which rows stayed unmatched, and the notes under
//! the tables (the units and test, the bound on false marks, the stale-calibration guard, runs
//! made in two blocks of time, runs left out, ...). Each is an enum with the data it rests on;
//! `schedlab-report` words them, and the comparison JSON carries them as they are.
use serde::Serialize;

use schedlab_core::record::RunStatus;
use schedlab_stats::sequential::Spending;
use schedlab_stats::StatsError;

use crate::units::{Design, Scale};

/// The one unit a side of a row that is not judged has (its design's, for a pair of cases
/// within a run the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoneUnit {
    /// One run per side, and no calibration.
    Run,
    /// One boot per side, and no calibration across boots.
    Boot,
    /// One run holding both cases of the row (`--across`), and no calibration.
    RunHoldingBothCases,
    /// One A/B round, and no calibration.
    AbRound,
    /// One plain value per side.
    Value,
}

/// Why a row is `?` or `??`, or what a `~` row could detect.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowNote {
    /// Every iteration of every run alike: no spread to test against.
    NoSpread,
    /// One unit per side and nothing to estimate a variance from.
    OneUnit { unit: LoneUnit },
    /// One unit per side, and the calibration that would have judged the row does not describe
    /// today's machine: today's spread is `factor` × the calibrated one.
    CalibrationRefused {
        unit: LoneUnit,
        calibration: i64,
        factor: f64,
    },
    /// The units (for pairs: their differences) vary more than the noise cap.
    OverNoiseCap {
        design: Design,
        spread_pct: f64,
        cap_pct: f64,
    },
    /// Neither decided nor too noisy: the smallest change the row could detect, and the units it
    /// would need to see ±δ (`None` beyond [`crate::settings::MAX_RUNS_NEEDED`]).
    Inconclusive {
        mde_pct: Option<f64>,
        units_needed: Option<usize>,
        /// What the units needed count: runs, boots or pairs.
        counted: Design,
        /// Each side needs that many units of its own (not so for pairs, each one unit of both).
        per_side: bool,
        min_effect_pct: f64,
    },
}

/// Why ministat's own t test has no difference block for a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MinistatNoTest {
    /// A side has fewer than two units.
    TooFewUnits {
        design: Design,
        base: usize,
        candidate: usize,
        #[serde(serialize_with = "as_text")]
        error: StatsError,
    },
    /// The test could not be computed on these units.
    Failed {
        #[serde(serialize_with = "as_text")]
        error: StatsError,
    },
}

fn as_text<S: serde::Serializer>(error: &StatsError, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(error)
}

/// Why a case × metric of one side has no row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UnmatchedReason {
    /// Both sides have it, but no unit is complete on both.
    NoCompleteUnit,
    /// The side named has no such case × metric.
    NotIn { side: String },
}

/// A case × metric present on one side only, or on both without a complete unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    pub case: String,
    pub metric: String,
    pub reason: UnmatchedReason,
}

/// What one unit of the comparison's rows stands for, as the footer's first line lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UnitsOf {
    /// Runs, each summarised as its mean of `mean_of` over its iterations; `boots_recorded` is
    /// false for imported runs (they cannot be told apart by boot), true when every run ran on
    /// one boot.
    Runs {
        mean_of: Scale,
        boots_recorded: bool,
    },
    /// Boots: the mean of each boot's run summaries.
    Boots,
    /// A/B pairs of interleaved runs: the difference of each round's run summaries.
    AbPairs,
    /// Pairs of cases within each run (`--across`); `by_boot`: averaged per boot, the runs
    /// spanning several boots.
    PairsWithinRuns { by_boot: bool },
    /// Plain values, as given.
    Values,
}

/// The scale the judged rows were tested on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestedOn {
    /// ln x throughout.
    Log,
    /// x throughout: a value is zero or below in every judged row.
    Raw,
    /// ln x, and x in rows where a value is zero or below.
    LogAndRaw,
}

/// How the stale-calibration guard measured today's spread against the calibration's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardMethod {
    /// The median over rows with two or more units per side of today's variance ÷ the
    /// calibrated one.
    VarianceRatio,
    /// A robust scale of the rows' z-scores (one unit per side).
    ZScale,
    /// One unit per side and too few calibrated rows to measure the z-scores' scale.
    TooFewRows,
    /// No row used a calibration.
    Unused,
}

/// One side's builds or tools, in the order its runs name them (`None`: not recorded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SideBuilds {
    pub side: String,
    pub builds: Vec<Option<String>>,
}

/// A run with iterations the quiet-machine guard (`run --quiet-below`) marked disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DisturbedRun {
    pub id: Option<i64>,
    /// Its measured iterations marked disturbed.
    pub disturbed: usize,
    /// Its measured iterations.
    pub measured: usize,
}

/// A run a side left out, and how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LeftOutRun {
    pub id: Option<i64>,
    pub status: RunStatus,
}

/// A metric shown as a restatement of another, once per pair of names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestatedMetric {
    pub metric: String,
    pub of: String,
    pub how: schedlab_core::metric::Restatement,
}

/// The notes under a comparison's tables, in the order they are printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// An adaptive experiment (`ab --until-decided`): a look per round, alpha spent as planned.
    Sequential { max_rounds: u32, spending: Spending },
    /// If nothing changed, the chance of any false mark is at most the false-discovery rate,
    /// assuming the calibrations listed (`Comparison::calibrations`) still describe the machine
    /// when `assumes_calibrations`.
    FalseMarkBound { assumes_calibrations: bool },
    /// The runs of `first` all came before those of `second`, on one boot: drift between the
    /// two blocks reads as a change.
    MadeInBlocks {
        first: String,
        first_span_ns: (i64, i64),
        second: String,
        second_span_ns: (i64, i64),
    },
    /// The stale-calibration guard measured today's spread at `measured` × the calibrated one
    /// over `rows` rows, and widened the calibrated variances by `factor` (1: used as they are).
    Guard {
        method: GuardMethod,
        measured: f64,
        factor: f64,
        rows: usize,
    },
    /// The guard could not be measured: one unit per side needs `needed` calibrated rows with a
    /// variance above 0, and there are `rows`.
    GuardNotApplied { rows: usize, needed: usize },
    /// Today's spread is more than `limit` × the calibrated one: rows resting on the calibration
    /// alone are not judged.
    CalibrationRefused { limit: f64 },
    /// Pairs of cases within runs judged with a calibration use the two cases' variances added.
    CalibratedWithinRunPairs,
    /// Today's runs vary `times` × less than the calibration says.
    CalibrationTooWide { times: f64 },
    /// Rows with one unit per side and no calibration are not judged.
    NoVariance,
    /// The runs were measured by more than one build or tool.
    ManyBuilds { sides: Vec<SideBuilds> },
    /// The runs' machines differ in these fingerprint fields.
    MachinesDiffer { fields: Vec<&'static str> },
    /// Metrics that restate another compared metric of their case (`ops_per_sec`, the
    /// reciprocal of `usec_per_op`): their rows are shown with the verdict of the row they
    /// restate, untested and uncounted, so one effect is one hypothesis.
    Restated { metrics: Vec<RestatedMetric> },
    /// Runs that did not complete, left out of `sides` (all of them when `every_side`).
    LeftOut {
        sides: Vec<String>,
        every_side: bool,
        runs: Vec<LeftOutRun>,
    },
    /// Measured iterations the quiet-machine guard marked disturbed, run by run: left out of the
    /// comparison when `dropped` (`--drop-disturbed`; a run with no other then left out whole),
    /// else compared with the others.
    Disturbed {
        dropped: bool,
        runs: Vec<DisturbedRun>,
    },
}
