//! How rows are decided: δ, the false-discovery rate and its adjustment, the confidence of the
//! intervals shown, and the fixed levels of the parts that are not the user's to tune.
use serde::Serialize;

use schedlab_stats::multiplicity::Adjustment;
use schedlab_stats::sequential::Spending;

/// The level of the equivalence test (TOST). Fixed, and not tied to `--confidence`, so asking
/// for wider intervals never makes `≈` easier or harder to reach.
pub const EQUIVALENCE_ALPHA: f64 = 0.05;
/// The power at which the minimum detectable effect and the runs needed are stated.
pub const MDE_POWER: f64 = 0.8;
/// The stale-calibration guard at one run per side estimates a robust scale of the rows'
/// z-scores; with fewer rows than this the estimate is too rough to use.
pub const GUARD_MIN_ROWS: usize = 8;
/// The most runs per side the "runs needed" figure searches.
pub const MAX_RUNS_NEEDED: usize = 1000;
/// The largest MDE a note prints as a number (percent); above it the note says only that. The
/// JSON keeps the number.
pub const MDE_SHOWN_UP_TO_PCT: f64 = 1000.0;

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// δ: the smallest relative change worth a mark (0.01 = 1 %).
    pub min_effect: f64,
    /// The false-discovery rate q for the multiple-comparison adjustment.
    pub fdr: f64,
    pub adjustment: AdjustmentName,
    /// Confidence level of the intervals shown.
    pub confidence: f64,
    /// A row whose units vary more than this (std % between runs, boots or pairs) is `??` when
    /// it is neither marked nor equivalent.
    pub noise_cap_pct: f64,
    /// Confidence of ministat's own test (one of its table's levels).
    pub ministat_confidence: f64,
    /// Leave runs that did not complete in (they are left out by default).
    pub include_incomplete: bool,
    /// Leave out the iterations the quiet-machine guard marked disturbed (`--drop-disturbed`).
    pub drop_disturbed: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_effect: 0.01,
            fdr: 0.05,
            adjustment: AdjustmentName::Bh,
            confidence: 0.95,
            noise_cap_pct: 10.0,
            ministat_confidence: 0.95,
            include_incomplete: false,
            drop_disturbed: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdjustmentName {
    Bh,
    By,
    Holm,
}

impl AdjustmentName {
    pub fn method(self) -> Adjustment {
        match self {
            AdjustmentName::Bh => Adjustment::BenjaminiHochberg,
            AdjustmentName::By => Adjustment::BenjaminiYekutieli,
            AdjustmentName::Holm => Adjustment::Holm,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            AdjustmentName::Bh => "Benjamini-Hochberg",
            AdjustmentName::By => "Benjamini-Yekutieli",
            AdjustmentName::Holm => "Holm",
        }
    }
}

/// An adaptive A/B experiment's plan (`schedlab ab --until-decided`): its rows are decided at
/// every round ("look") at levels from an alpha-spending function, so stopping when every row is
/// decided keeps the error rates of a fixed design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct SequentialPlan {
    /// The most rounds the experiment may run: the information fraction of round r is r / this.
    pub max_rounds: u32,
    pub spending: Spending,
}
