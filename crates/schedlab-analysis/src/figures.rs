//! The descriptive numbers of a row and the figures of the layouts that reproduce other tools
//! (schedtests, mmtests, benchstat, ministat), computed on the row's units — the same units its
//! test used, so no layout ever sets iterations against runs.
use schedlab_core::metric::Better;
use schedlab_stats::ministat::{ministat_difference, ministat_vitals};
use schedlab_stats::rank::mann_whitney_u;
use schedlab_stats::summary::{geometric_mean, harmonic_mean, median, median_ci, summarize};

use crate::model::{
    BenchstatFigures, Geomean, MinistatFigures, MmtestsLine, NoSpread, Row, SideFigures,
    StyleFigures, Verdict,
};
use crate::notes::MinistatNoTest;
use crate::units::{RowUnits, RunSummary, Scale, Unit};

/// benchstat's defaults: its α for `~`, the level of its median interval, and the fewest
/// samples per side it needs to detect a difference.
const BENCHSTAT_ALPHA: f64 = 0.05;
const BENCHSTAT_CONFIDENCE: f64 = 0.95;
const BENCHSTAT_MIN_DETECT: usize = 4;

pub fn side_figures(units: &[Unit], runs: &[RunSummary], scale: Scale) -> SideFigures {
    let values: Vec<f64> = units.iter().map(|u| scale.back(u.value)).collect();
    let summary = summarize(&values).ok();
    let quartiles = (values.len() >= 2).then(|| {
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        [
            quantile(&sorted, 0.25),
            quantile(&sorted, 0.5),
            quantile(&sorted, 0.75),
        ]
    });
    let within = within_run_std_pct(runs);
    let between = summary.and_then(|s| s.std_pct);
    SideFigures {
        iterations: runs.iter().map(|r| r.n).sum(),
        n: values.len(),
        min: summary.map(|s| s.min),
        max: summary.map(|s| s.max),
        mean: summary.map(|s| s.mean),
        harmonic_mean: harmonic_mean(&values).ok(),
        median: summary.map(|s| s.median),
        stddev: summary.and_then(|s| s.std),
        std_pct: between,
        within_run_std_pct: within,
        spread_pct: if values.len() >= 2 { between } else { within },
        quartiles,
        median_ci: median_ci(&values, BENCHSTAT_CONFIDENCE)
            .ok()
            .flatten()
            .map(|m| m.ci),
        ministat: ministat_vitals(&values).ok(),
        units: values,
    }
}

/// Linear interpolation between order statistics (type 7, as numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The iterations' spread around their run's mean, pooled over the runs, in percent of the
/// runs' mean: for one run, the sd ÷ mean of its iterations that `show` prints.
fn within_run_std_pct(runs: &[RunSummary]) -> Option<f64> {
    let (sum, df) = runs
        .iter()
        .fold((0.0, 0usize), |(s, d), r| match r.raw_variance {
            Some(v) => (s + v * (r.n - 1) as f64, d + r.n - 1),
            None => (s, d),
        });
    if df == 0 {
        return None;
    }
    let sd = (sum / df as f64).sqrt();
    let mean = runs.iter().map(|r| r.raw_mean).sum::<f64>() / runs.len() as f64;
    (mean != 0.0).then(|| sd / mean.abs() * 100.0)
}

/// The layouts' figures for a row whose verdict and sides are already known.
pub fn style_figures(
    b: &SideFigures,
    c: &SideFigures,
    ratio: Option<f64>,
    better: Better,
    verdict: Verdict,
    units: &RowUnits,
    ministat_confidence: f64,
) -> StyleFigures {
    StyleFigures {
        schedtests_pct: ratio.map(|ratio| match better {
            Better::Lower => (1.0 - ratio) * 100.0,
            Better::Higher => (ratio - 1.0) * 100.0,
        }),
        mmtests: mmtests_lines(b, c, better, verdict),
        benchstat: benchstat(&b.units, &c.units),
        ministat: ministat(&b.units, &c.units, ministat_confidence, units),
    }
}

/// Marks the mean line of a row's mmtests figures as the verdict says: where a row takes the
/// verdict of the row it restates.
pub(crate) fn mark_mmtests_mean(lines: &mut [MmtestsLine], better: Better, verdict: Verdict) {
    let mean_name = mean_line(better);
    for line in lines {
        line.marked = line.name == mean_name && verdict.is_marked();
    }
}

fn mean_line(better: Better) -> &'static str {
    match better {
        Better::Higher => "Hmean",
        Better::Lower => "Amean",
    }
}

fn mmtests_lines(
    b: &SideFigures,
    c: &SideFigures,
    better: Better,
    verdict: Verdict,
) -> Vec<MmtestsLine> {
    let mean = |s: &SideFigures| match better {
        Better::Higher => s.harmonic_mean.or(s.mean),
        Better::Lower => s.mean,
    };
    let mean_name = mean_line(better);
    let lines: [(&'static str, Option<f64>, Option<f64>, Better); 5] = [
        ("Min", b.min, c.min, better),
        (mean_name, mean(b), mean(c), better),
        // Undefined with one unit: `-`, not mmtests' 0 that reads as no noise at all.
        ("Stddev", b.stddev, c.stddev, Better::Lower),
        ("CoeffVar", b.std_pct, c.std_pct, Better::Lower),
        ("Max", b.max, c.max, better),
    ];
    lines
        .into_iter()
        .map(|(name, base, candidate, better)| {
            let gain_pct = match (base, candidate) {
                (Some(base), Some(candidate)) if base != 0.0 => Some(match better {
                    Better::Lower => (base - candidate) / base * 100.0,
                    Better::Higher => (candidate - base) / base * 100.0,
                }),
                _ => None,
            };
            let change_pct = match (base, candidate) {
                (Some(base), Some(candidate)) if base != 0.0 => {
                    Some((candidate - base) / base.abs() * 100.0)
                }
                _ => None,
            };
            MmtestsLine {
                name,
                base,
                candidate,
                gain_pct,
                change_pct,
                marked: name == mean_name && verdict.is_marked(),
            }
        })
        .collect()
}

fn benchstat(base: &[f64], candidate: &[f64]) -> BenchstatFigures {
    let spread = |xs: &[f64]| {
        // An empty side is as short of units as a side of five.
        let ci = median_ci(xs, BENCHSTAT_CONFIDENCE)
            .ok()
            .flatten()
            .ok_or(NoSpread::TooFewUnits)?;
        if ci.median == 0.0 {
            return Err(NoSpread::ZeroMedian);
        }
        Ok((ci.ci.high - ci.median).max(ci.median - ci.ci.low) / ci.median.abs() * 100.0)
    };
    let (base_spread, candidate_spread) = (spread(base), spread(candidate));
    let too_few = base.len().min(candidate.len()) < BENCHSTAT_MIN_DETECT;
    let p_value = mann_whitney_u(base, candidate).ok().map(|t| t.p_value);
    let (mb, mc) = (median(base).ok(), median(candidate).ok());
    let change_pct = match (p_value, mb, mc) {
        (Some(p), Some(b), Some(c)) if !too_few && p <= BENCHSTAT_ALPHA && b != 0.0 => {
            Some((c / b - 1.0) * 100.0)
        }
        _ => None,
    };
    BenchstatFigures {
        base_median: mb,
        candidate_median: mc,
        base_spread_pct: base_spread.ok(),
        candidate_spread_pct: candidate_spread.ok(),
        base_no_spread: base_spread.err(),
        candidate_no_spread: candidate_spread.err(),
        p_value,
        change_pct,
        too_few_to_detect: too_few,
    }
}

fn ministat(base: &[f64], candidate: &[f64], confidence: f64, units: &RowUnits) -> MinistatFigures {
    match ministat_difference(base, candidate, confidence) {
        Ok(d) => MinistatFigures {
            difference: Some(d),
            no_test: None,
        },
        Err(error) if base.len() < 2 || candidate.len() < 2 => MinistatFigures {
            difference: None,
            no_test: Some(MinistatNoTest::TooFewUnits {
                design: units.design,
                base: base.len(),
                candidate: candidate.len(),
                error,
            }),
        },
        Err(error) => MinistatFigures {
            difference: None,
            no_test: Some(MinistatNoTest::Failed { error }),
        },
    }
}

/// benchstat's geomean line per metric and candidate: the geometric mean over cases of each
/// side's median unit.
pub fn geomeans(rows: &[Row]) -> Vec<Geomean> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.metric.as_str(), r.candidate.as_str())) {
            keys.push((&r.metric, &r.candidate));
        }
    }
    keys.into_iter()
        .filter_map(|(metric, candidate)| {
            let chosen: Vec<&Row> = rows
                .iter()
                .filter(|r| r.metric == metric && r.candidate == candidate)
                .collect();
            if chosen.len() < 2 {
                return None;
            }
            let geo = |pick: fn(&Row) -> Option<f64>| {
                let values: Option<Vec<f64>> = chosen.iter().map(|r| pick(r)).collect();
                geometric_mean(&values?).ok()
            };
            let base = geo(|r| r.base_side.median);
            let candidate_value = geo(|r| r.candidate_side.median);
            Some(Geomean {
                metric: metric.to_string(),
                candidate: candidate.to_string(),
                change_pct: match (base, candidate_value) {
                    (Some(b), Some(c)) if b != 0.0 => Some((c / b - 1.0) * 100.0),
                    _ => None,
                },
                base,
                candidate_value,
            })
        })
        .collect()
}
