//! A machine's noise model (`schedlab calibrate`): the same cases run several times, apart in
//! time, give per case × metric the variance of a run summary between runs (τ² + σ²/n) and
//! within runs (σ²) — and, when the runs span several boots, the boot-to-boot component ω²
//! (Kalibera and Jones' nested model, by ANOVA). A comparison with too few runs of its own to
//! estimate its variance borrows it from a calibration of the same machine, case and iteration
//! count.
use serde::{Deserialize, Serialize};

use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_stats::variance::{nested_components, RunStat};

pub use crate::machine::{MachineKey, TuningKey};
use crate::units::Scale;

/// Why runs cannot be made into a calibration (`schedlab-report` words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalibrationError {
    /// No run completed.
    NoCompleteRun,
    /// Two runs ran on machines that differ in these fingerprint fields.
    MachinesDiffer {
        first: Option<i64>,
        other: Option<i64>,
        fields: Vec<&'static str>,
    },
    /// No case has `needed` complete runs with the same iteration count.
    TooFewRuns { needed: usize },
}

/// A stored calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The store's id; `None` before it is stored.
    pub id: Option<i64>,
    pub created_at_ns: i64,
    /// The label of the runs it was computed from.
    pub label: String,
    pub machine: MachineKey,
    pub run_ids: Vec<i64>,
    /// Distinct boots among those runs.
    pub boots: usize,
    pub cases: Vec<CaseCalibration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseCalibration {
    /// The canonical case name (every parameter that shapes the work).
    pub case: String,
    /// The case's spec as the runs stored it.
    pub spec: serde_json::Value,
    /// Measured iterations per run: a calibration describes run summaries of exactly this many.
    pub iterations: usize,
    pub metrics: Vec<MetricCalibration>,
}

fn current_metric_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let stored = String::deserialize(d)?;
    Ok(schedlab_core::metric::current_name(&stored).to_string())
}

/// The variance components of one metric of one case, on its analysis scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricCalibration {
    /// Read by its current name, so a calibration stored before a metric's rename still applies.
    #[serde(deserialize_with = "current_metric_name")]
    pub metric: String,
    pub scale: Scale,
    pub runs: usize,
    pub boots: usize,
    /// σ²: the variance of one iteration around its run's mean (pooled over runs).
    pub sigma2: f64,
    pub sigma2_df: f64,
    /// τ²: the variance of a run's own offset, beyond what its iterations explain.
    pub tau2: f64,
    /// ω²: the variance of a boot's offset; `None` unless the runs span several boots and some
    /// boot has several runs.
    pub omega2: Option<f64>,
    /// Mean square between runs of one boot (estimates τ² + σ²/n), with its df; `None` when no
    /// boot has two runs.
    pub ms_run: Option<f64>,
    pub run_df: f64,
    /// Mean square between boots, with its df and the effective runs per boot n0.
    pub ms_boot: Option<f64>,
    pub boot_df: f64,
    pub n0: f64,
    /// The grand mean on the analysis scale (raw-scale components are read relative to it).
    pub mean: f64,
    /// Measured iterations per run (0 in calibrations stored before it was kept: their unit
    /// variances have no floor).
    #[serde(default)]
    pub iterations: usize,
}

/// A variance with its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VarianceEstimate {
    pub variance: f64,
    pub df: f64,
}

/// What a unit of a row is, for the variance a calibration gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnitKind {
    /// A run summary, compared with runs of the same boot.
    RunWithinBoot,
    /// The mean of `runs` run summaries of one boot, compared with other boots.
    BootMean { runs: f64 },
}

impl MetricCalibration {
    /// Computes one metric's components from its runs: (boot id, the run's measured values),
    /// every run with the same number of values. `None` with fewer than
    /// [`MIN_CALIBRATION_RUNS`] runs or values the model cannot use.
    pub fn from_run_values(metric: &str, runs: &[(&str, Vec<f64>)]) -> Option<MetricCalibration> {
        if runs.len() < MIN_CALIBRATION_RUNS {
            return None;
        }
        let scale = Scale::of(runs.iter().flat_map(|(_, v)| v.iter().copied()));
        let mut boots: Vec<(&str, Vec<RunStat>)> = Vec::new();
        for (boot, values) in runs {
            if values.is_empty() {
                return None;
            }
            let ys: Vec<f64> = values.iter().map(|v| scale.forward(*v)).collect();
            let n = ys.len();
            let mean = ys.iter().sum::<f64>() / n as f64;
            let variance = (n >= 2)
                .then(|| ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1) as f64);
            let stat = RunStat { mean, variance, n };
            match boots.iter_mut().find(|(b, _)| b == boot) {
                Some((_, stats)) => stats.push(stat),
                None => boots.push((boot, vec![stat])),
            }
        }
        let groups: Vec<Vec<RunStat>> = boots.into_iter().map(|(_, s)| s).collect();
        let c = nested_components(&groups).ok()?;
        let all: Vec<f64> = groups.iter().flatten().map(|r| r.mean).collect();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        Some(MetricCalibration {
            metric: metric.to_string(),
            scale,
            runs: runs.len(),
            boots: groups.len(),
            sigma2: c.sigma2,
            sigma2_df: c.sigma2_df,
            tau2: c.tau2,
            omega2: c.omega2,
            ms_run: c.ms_run,
            run_df: c.run_df,
            ms_boot: c.ms_boot,
            boot_df: c.boot_df,
            n0: c.n0,
            mean,
            iterations: runs[0].1.len(),
        })
    }

    /// The variance of one unit of `kind`, or `None` when these runs cannot tell (a one-boot
    /// calibration knows nothing of boot-to-boot differences).
    pub fn unit_variance(&self, kind: UnitKind) -> Option<VarianceEstimate> {
        let runs = match kind {
            UnitKind::RunWithinBoot => 1.0,
            UnitKind::BootMean { runs } => runs.max(1.0),
        };
        // A unit cannot vary less than its own iterations do (σ² over the iterations behind
        // it): runs that happened to agree, or repeated the same values, would otherwise give
        // a variance of 0 and every comparison on it p = 0.
        let floor = if self.iterations > 0 && self.sigma2_df > 0.0 {
            self.sigma2 / (self.iterations as f64 * runs)
        } else {
            0.0
        };
        self.unit_variance_above_iterations(kind)
            .map(|v| VarianceEstimate {
                variance: v.variance.max(floor),
                df: v.df,
            })
    }

    fn unit_variance_above_iterations(&self, kind: UnitKind) -> Option<VarianceEstimate> {
        let run_level = self
            .ms_run
            .filter(|_| self.run_df > 0.0)
            .map(|ms| (ms, self.run_df));
        let boot_level = self
            .ms_boot
            .filter(|_| self.boot_df > 0.0)
            .map(|ms| (ms, self.boot_df));
        match kind {
            UnitKind::RunWithinBoot => run_level
                // Every boot ran once: the spread between boots bounds the one between runs.
                .or(boot_level)
                .map(|(variance, df)| VarianceEstimate { variance, df }),
            UnitKind::BootMean { runs } => {
                let (ms_boot, boot_df) = boot_level?;
                let Some((ms_run, run_df)) = run_level else {
                    // One run per boot: a mean of several runs varies less than this.
                    return Some(VarianceEstimate {
                        variance: ms_boot,
                        df: boot_df,
                    });
                };
                let runs = runs.max(1.0);
                let (a, b) = (1.0 / self.n0, 1.0 / runs - 1.0 / self.n0);
                let linear = a * ms_boot + b * ms_run;
                if linear <= ms_run / runs {
                    // The boot component estimates at zero.
                    return Some(VarianceEstimate {
                        variance: ms_run / runs,
                        df: run_df,
                    });
                }
                // Satterthwaite's df for a linear combination of mean squares.
                let df = linear * linear
                    / ((a * ms_boot).powi(2) / boot_df + (b * ms_run).powi(2) / run_df);
                Some(VarianceEstimate {
                    variance: linear,
                    df,
                })
            }
        }
    }
}

impl Calibration {
    /// Computes a calibration from complete runs of one machine (callers filter by
    /// [`MachineKey`]). Each case is calibrated from the runs that measured it the most common
    /// number of times; a case needs at least three such runs.
    pub fn from_runs(
        label: &str,
        runs: &[&RunRecord],
        created_at_ns: i64,
    ) -> Result<Calibration, CalibrationError> {
        let runs: Vec<&RunRecord> = runs
            .iter()
            .copied()
            .filter(|r| r.status == RunStatus::Complete)
            .collect();
        let first = runs.first().ok_or(CalibrationError::NoCompleteRun)?;
        let machine = MachineKey::of(&first.fingerprint);
        if let Some(other) = runs
            .iter()
            .find(|r| !machine.matches(&MachineKey::of(&r.fingerprint)))
        {
            return Err(CalibrationError::MachinesDiffer {
                first: first.id,
                other: other.id,
                fields: machine.differences(&MachineKey::of(&other.fingerprint)),
            });
        }
        let mut boots: Vec<&str> = runs
            .iter()
            .map(|r| r.fingerprint.boot_id.as_str())
            .collect();
        boots.sort_unstable();
        boots.dedup();
        let mut case_names: Vec<&str> = Vec::new();
        for run in &runs {
            for case in run.cases_as_listed() {
                if !case_names.contains(&case.spec.name.as_str()) {
                    case_names.push(&case.spec.name);
                }
            }
        }
        let mut cases = Vec::new();
        for name in case_names {
            if let Some(case) = calibrate_case(name, &runs) {
                cases.push(case);
            }
        }
        if cases.is_empty() {
            return Err(CalibrationError::TooFewRuns {
                needed: MIN_CALIBRATION_RUNS,
            });
        }
        Ok(Calibration {
            id: None,
            created_at_ns,
            label: label.to_string(),
            machine,
            run_ids: runs.iter().filter_map(|r| r.id).collect(),
            boots: boots.len(),
            cases,
        })
    }

    pub fn case(&self, name: &str) -> Option<&CaseCalibration> {
        self.cases.iter().find(|c| c.case == name)
    }
}

/// The fewest runs a case needs to be calibrated: two would give one df, useless as a prior.
pub const MIN_CALIBRATION_RUNS: usize = 3;

fn calibrate_case(name: &str, runs: &[&RunRecord]) -> Option<CaseCalibration> {
    // (run, boot, the case's record) for runs that have the case.
    let present: Vec<(&RunRecord, &schedlab_core::record::CaseRecord)> = runs
        .iter()
        .filter_map(|r| {
            r.cases
                .iter()
                .find(|c| c.spec.name == name)
                .map(|c| (*r, c))
        })
        .collect();
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for (_, case) in &present {
        let n = case.measured().count();
        match counts.iter_mut().find(|(k, _)| *k == n) {
            Some((_, c)) => *c += 1,
            None => counts.push((n, 1)),
        }
    }
    let (iterations, _) = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, c)| (*c, *n))
        .copied()?;
    let chosen: Vec<_> = present
        .into_iter()
        .filter(|(_, c)| c.measured().count() == iterations)
        .collect();
    if chosen.len() < MIN_CALIBRATION_RUNS {
        return None;
    }
    let spec = serde_json::to_value(&chosen[0].1.spec).unwrap_or_default();
    let mut metric_names: Vec<(&str, &str)> = Vec::new();
    for (_, case) in &chosen {
        for it in case.measured() {
            for m in &it.measurements {
                if !metric_names.iter().any(|(n, _)| *n == m.name) {
                    metric_names.push((&m.name, &m.unit));
                }
            }
        }
    }
    let mut metrics = Vec::new();
    for (metric, _) in metric_names {
        let per_run: Vec<(&str, Vec<f64>)> = chosen
            .iter()
            .map(|(run, case)| {
                let values = case
                    .measured()
                    .filter_map(|it| it.measurements.iter().find(|m| m.name == metric))
                    .map(|m| m.value)
                    .collect();
                (run.fingerprint.boot_id.as_str(), values)
            })
            .filter(|(_, v): &(&str, Vec<f64>)| v.len() == iterations)
            .collect();
        if per_run.len() < MIN_CALIBRATION_RUNS {
            continue;
        }
        if let Some(m) = MetricCalibration::from_run_values(metric, &per_run) {
            metrics.push(m);
        }
    }
    (!metrics.is_empty()).then(|| CaseCalibration {
        case: name.to_string(),
        spec,
        iterations,
        metrics,
    })
}

/// The calibrations a comparison may draw on, newest first, and how it picks one per row.
#[derive(Debug, Clone, Default)]
pub struct CalibrationSet {
    pub calibrations: Vec<Calibration>,
}

impl CalibrationSet {
    pub fn new(mut calibrations: Vec<Calibration>) -> Self {
        calibrations.sort_by_key(|c| std::cmp::Reverse((c.created_at_ns, c.id)));
        CalibrationSet { calibrations }
    }

    /// The newest calibration of `machine` that covers this case, metric, scale and iteration
    /// count.
    pub fn find(
        &self,
        machine: &MachineKey,
        case: &str,
        metric: &str,
        scale: Scale,
        iterations: usize,
    ) -> Option<(&Calibration, &MetricCalibration)> {
        self.calibrations.iter().find_map(|cal| {
            if !cal.machine.matches(machine) {
                return None;
            }
            let c = cal.case(case).filter(|c| c.iterations == iterations)?;
            let m = c
                .metrics
                .iter()
                .find(|m| m.metric == metric && m.scale == scale)?;
            Some((cal, m))
        })
    }
}

/// The runs per side the calibration report states detectable changes for.
pub const DETECTABLE_RUNS: [usize; 4] = [1, 2, 3, 5];

/// What a calibration says about this machine, for `schedlab calibrate` and `--show`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    pub id: Option<i64>,
    pub created_at_ns: i64,
    pub label: String,
    pub hostname: String,
    pub runs: usize,
    pub boots: usize,
    /// The level the detectable changes are stated at (one row; a report of many rows needs
    /// a stricter level and so larger changes).
    pub alpha: f64,
    pub rows: Vec<MetricReport>,
}

/// One case × metric of a calibration, in percent of the metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricReport {
    pub case: String,
    pub metric: String,
    pub iterations: usize,
    pub runs: usize,
    pub boots: usize,
    /// σ: an iteration's spread around its run's mean.
    pub within_run_pct: Option<f64>,
    /// τ: a run's own offset beyond what its iterations explain.
    pub between_run_pct: Option<f64>,
    /// ω: a boot's own offset; `None` when the runs do not span boots that tell.
    pub between_boot_pct: Option<f64>,
    /// The spread of one run's summary among runs of one boot (τ² + σ²/n).
    pub run_summary_pct: Option<f64>,
    /// Per entry of [`DETECTABLE_RUNS`]: the smallest change detectable with 80 % power with
    /// that many runs per side on one boot (comparing settings), in percent.
    pub detectable_same_boot: Vec<Option<f64>>,
    /// The same with each side one boot of its own (comparing kernels); `None` entries when the
    /// calibration spans a single boot.
    pub detectable_across_boots: Vec<Option<f64>>,
}

impl MetricCalibration {
    /// A standard deviation on the analysis scale as a percentage of the metric.
    fn pct(&self, sd: f64) -> Option<f64> {
        if !sd.is_finite() {
            return None;
        }
        match self.scale {
            Scale::Log => Some(sd.exp_m1() * 100.0),
            Scale::Raw => (self.mean != 0.0).then(|| sd / self.mean.abs() * 100.0),
        }
    }

    /// The smallest change detectable with `runs` runs per side, from this calibration alone
    /// plus the comparison's own runs.
    pub fn detectable_pct(&self, runs: usize, across_boots: bool, alpha: f64) -> Option<f64> {
        let k = runs as f64;
        let (unit, se2) = if across_boots {
            let v = self.unit_variance(UnitKind::BootMean { runs: k })?;
            (v, 2.0 * v.variance)
        } else {
            let v = self.unit_variance(UnitKind::RunWithinBoot)?;
            (v, 2.0 * v.variance / k)
        };
        // Across boots each side is one unit: its own runs add no df.
        let df = if across_boots {
            unit.df
        } else {
            unit.df + 2.0 * k - 2.0
        };
        let mde =
            schedlab_stats::power::mde_t(se2.sqrt(), df, alpha, crate::settings::MDE_POWER).ok()?;
        match self.scale {
            Scale::Log => Some(mde.pct_increase),
            Scale::Raw => (self.mean != 0.0).then(|| mde.log_effect / self.mean.abs() * 100.0),
        }
    }
}

/// The report of a calibration at level `alpha`.
pub fn report(c: &Calibration, alpha: f64) -> CalibrationReport {
    let mut rows = Vec::new();
    for case in &c.cases {
        for m in &case.metrics {
            rows.push(MetricReport {
                case: case.case.clone(),
                metric: m.metric.clone(),
                iterations: case.iterations,
                runs: m.runs,
                boots: m.boots,
                within_run_pct: m.pct(m.sigma2.sqrt()),
                between_run_pct: m.pct(m.tau2.sqrt()),
                between_boot_pct: m.omega2.and_then(|w| m.pct(w.sqrt())),
                run_summary_pct: m
                    .unit_variance(UnitKind::RunWithinBoot)
                    .and_then(|v| m.pct(v.variance.sqrt())),
                detectable_same_boot: DETECTABLE_RUNS
                    .iter()
                    .map(|k| m.detectable_pct(*k, false, alpha))
                    .collect(),
                detectable_across_boots: DETECTABLE_RUNS
                    .iter()
                    .map(|k| {
                        (m.boots > 1)
                            .then(|| m.detectable_pct(*k, true, alpha))
                            .flatten()
                    })
                    .collect(),
            });
        }
    }
    CalibrationReport {
        id: c.id,
        created_at_ns: c.created_at_ns,
        label: c.label.clone(),
        hostname: c.machine.hostname.clone(),
        runs: c.run_ids.len(),
        boots: c.boots,
        alpha,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use schedlab_core::fingerprint::Fingerprint;
    use schedlab_core::record::RunStatus;
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    use super::*;
    use crate::testutil::{record, PRIMARY};

    /// Runs given by the logs of their values, so the components are small exact numbers.
    fn runs_of(logs: &[(&'static str, &[f64])]) -> Vec<(&'static str, Vec<f64>)> {
        logs.iter()
            .map(|(boot, ys)| (*boot, ys.iter().map(|y| y.exp()).collect()))
            .collect()
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    /// Two boots of two runs of two iterations (logs):
    /// boot a: [0.0, 0.1] [0.2, 0.3]; boot b: [0.6, 0.7] [0.8, 0.9].
    /// By hand: every run's variance is 0.005, so σ² = 0.005 on 4 df; the run means .05, .25 |
    /// .65, .85 lie ±0.1 around their boot's mean, so MS_run = 4 × 0.01 / 2 = 0.02 on 2 df and
    /// τ² = 0.02 − 0.005 / 2 = 0.0175; the boot means .15 and .75 lie ±0.3 around .45, so
    /// MS_boot = 2 × 0.09 × 2 / 1 = 0.36; n0 = (4 − 8 / 4) / 1 = 2 and ω² = (0.36 − 0.02) / 2 =
    /// 0.17.
    fn two_boots() -> MetricCalibration {
        let runs = runs_of(&[
            ("a", &[0.0, 0.1]),
            ("a", &[0.2, 0.3]),
            ("b", &[0.6, 0.7]),
            ("b", &[0.8, 0.9]),
        ]);
        MetricCalibration::from_run_values("m", &runs).unwrap()
    }

    #[test]
    fn components_of_one_boot_match_the_hand_computation() {
        // Run means .1, .3, .4 (each run's variance 0.02): σ² = 0.02 on 3 df; the means'
        // squared deviations from 0.8/3 sum to 0.42/9, so MS_run = 0.42/18 = 7/300 on 2 df and
        // τ² = 7/300 − 0.02/2 = 1/75.
        let runs = runs_of(&[("b", &[0.0, 0.2]), ("b", &[0.2, 0.4]), ("b", &[0.5, 0.3])]);
        let m = MetricCalibration::from_run_values("m", &runs).unwrap();
        assert_eq!(m.scale, Scale::Log);
        assert_eq!((m.runs, m.boots), (3, 1));
        close(m.sigma2, 0.02);
        close(m.sigma2_df, 3.0);
        close(m.ms_run.unwrap(), 7.0 / 300.0);
        close(m.run_df, 2.0);
        close(m.tau2, 1.0 / 75.0);
        close(m.mean, 0.8 / 3.0);
        // One boot says nothing of boots.
        assert_eq!(m.omega2, None);
        assert_eq!(m.ms_boot, None);
        assert_eq!(m.boot_df, 0.0);
    }

    #[test]
    fn components_across_boots_match_the_hand_computation() {
        let m = two_boots();
        assert_eq!((m.runs, m.boots), (4, 2));
        close(m.sigma2, 0.005);
        close(m.sigma2_df, 4.0);
        close(m.ms_run.unwrap(), 0.02);
        close(m.run_df, 2.0);
        close(m.tau2, 0.0175);
        close(m.ms_boot.unwrap(), 0.36);
        close(m.boot_df, 1.0);
        close(m.n0, 2.0);
        close(m.omega2.unwrap(), 0.17);
    }

    #[test]
    fn unbalanced_boots_use_the_effective_runs_per_boot() {
        // Boot a: run means .1, .3, .5; boot b: 1.1. MS_run = (.04 + 0 + .04) / 2 = 0.04;
        // grand mean 0.5, MS_boot = 3 × 0.04 + 1 × 0.36 = 0.48; n0 = (4 − 10/4) / 1 = 1.5;
        // ω² = (0.48 − 0.04) / 1.5.
        let runs = runs_of(&[
            ("a", &[0.0, 0.2]),
            ("a", &[0.2, 0.4]),
            ("a", &[0.4, 0.6]),
            ("b", &[1.0, 1.2]),
        ]);
        let m = MetricCalibration::from_run_values("m", &runs).unwrap();
        close(m.n0, 1.5);
        close(m.ms_boot.unwrap(), 0.48);
        close(m.omega2.unwrap(), 0.44 / 1.5);
    }

    /// The unit's variance and its degrees of freedom, each close to the expected.
    fn unit_close(m: &MetricCalibration, kind: UnitKind, variance: f64, df: f64) {
        let v = m.unit_variance(kind).unwrap();
        close(v.variance, variance);
        close(v.df, df);
    }

    #[test]
    fn one_run_per_boot_leaves_runs_and_boots_confounded() {
        let runs = runs_of(&[("a", &[0.0, 0.2]), ("b", &[0.4, 0.6]), ("c", &[0.8, 1.0])]);
        let m = MetricCalibration::from_run_values("m", &runs).unwrap();
        assert_eq!(m.ms_run, None);
        assert_eq!(m.omega2, None);
        // Boot means .1, .5, .9: MS_boot = 0.32 / 2 = 0.16 on 2 df; it bounds a run's variance.
        close(m.ms_boot.unwrap(), 0.16);
        close(m.tau2, 0.16 - 0.02 / 2.0);
        unit_close(&m, UnitKind::RunWithinBoot, 0.16, 2.0);
        unit_close(&m, UnitKind::BootMean { runs: 3.0 }, 0.16, 2.0);
    }

    #[test]
    fn a_run_within_a_boot_varies_by_the_run_mean_square() {
        // τ² + σ²/n = 0.0175 + 0.0025.
        unit_close(&two_boots(), UnitKind::RunWithinBoot, 0.02, 2.0);
    }

    #[test]
    fn a_boot_mean_varies_by_the_satterthwaite_combination() {
        let m = two_boots();
        // One run per boot: MS_boot/n0 + (1 − 1/n0) MS_run = 0.18 + 0.01 = ω² + τ² + σ²/n;
        // Satterthwaite: 0.19² / (0.18²/1 + 0.01²/2).
        let v = m.unit_variance(UnitKind::BootMean { runs: 1.0 }).unwrap();
        close(v.variance, 0.19);
        close(
            v.df,
            0.19f64.powi(2) / (0.18f64.powi(2) + 0.01f64.powi(2) / 2.0),
        );
        // Four runs per boot: 0.18 − 0.25 × 0.02 = ω² + MS_run/4 (a negative coefficient).
        let v = m.unit_variance(UnitKind::BootMean { runs: 4.0 }).unwrap();
        close(v.variance, 0.17 + 0.02 / 4.0);
        close(
            v.df,
            0.175f64.powi(2) / (0.18f64.powi(2) + 0.005f64.powi(2) / 2.0),
        );
        // Fewer than one run per boot is one run.
        assert_eq!(
            m.unit_variance(UnitKind::BootMean { runs: 0.5 }),
            m.unit_variance(UnitKind::BootMean { runs: 1.0 })
        );
    }

    #[test]
    fn a_boot_component_estimated_at_zero_falls_back_to_the_run_mean_square() {
        let mut m = two_boots();
        // Boots closer together than runs: the combination 0.005 + 0.01 is below MS_run / 1.
        m.ms_boot = Some(0.01);
        unit_close(&m, UnitKind::BootMean { runs: 1.0 }, 0.02, 2.0);
        unit_close(&m, UnitKind::BootMean { runs: 2.0 }, 0.01, 2.0);
    }

    #[test]
    fn a_one_boot_calibration_knows_nothing_of_boots() {
        let runs = runs_of(&[("b", &[0.0, 0.2]), ("b", &[0.2, 0.4]), ("b", &[0.5, 0.3])]);
        let m = MetricCalibration::from_run_values("m", &runs).unwrap();
        assert_eq!(m.unit_variance(UnitKind::BootMean { runs: 1.0 }), None);
        assert!(m.unit_variance(UnitKind::RunWithinBoot).is_some());
        let mut nothing = m.clone();
        nothing.ms_run = None;
        assert_eq!(nothing.unit_variance(UnitKind::RunWithinBoot), None);
    }

    #[test]
    fn at_least_three_runs_with_values() {
        let two = runs_of(&[("b", &[0.0, 0.2]), ("b", &[0.2, 0.4])]);
        assert_eq!(MetricCalibration::from_run_values("m", &two), None);
        let three = runs_of(&[("b", &[0.0, 0.2]), ("b", &[0.2, 0.4]), ("b", &[0.1, 0.3])]);
        assert!(MetricCalibration::from_run_values("m", &three).is_some());
        let empty = vec![("b", vec![1.0]), ("b", vec![2.0]), ("b", Vec::new())];
        assert_eq!(MetricCalibration::from_run_values("m", &empty), None);
    }

    #[test]
    fn a_value_that_is_not_positive_calibrates_the_raw_scale() {
        let runs = vec![
            ("b", vec![0.0, 2.0]),
            ("b", vec![1.0, 3.0]),
            ("b", vec![2.0, 4.0]),
        ];
        let m = MetricCalibration::from_run_values("m", &runs).unwrap();
        assert_eq!(m.scale, Scale::Raw);
        // Run means 1, 2, 3 around 2: MS_run = 2 / 2 = 1; σ² = 2.
        close(m.mean, 2.0);
        close(m.ms_run.unwrap(), 1.0);
        close(m.sigma2, 2.0);
    }

    #[test]
    fn from_runs_takes_complete_runs_with_the_most_common_iteration_count() {
        let records = [
            record(
                1,
                "b1",
                RunStatus::Complete,
                &[("c", &[1.0, 1.1]), ("few", &[1.0, 1.0])],
            ),
            record(
                2,
                "b1",
                RunStatus::Complete,
                &[("c", &[1.2, 1.1]), ("few", &[1.0, 1.0])],
            ),
            record(3, "b2", RunStatus::Complete, &[("c", &[1.0, 1.3])]),
            // Three iterations: a summary of another precision, not used for "c".
            record(4, "b2", RunStatus::Complete, &[("c", &[5.0, 5.0, 5.0])]),
            // Incomplete: never part of a calibration.
            record(
                5,
                "b3",
                RunStatus::Interrupted,
                &[("c", &[9.0, 9.0]), ("few", &[1.0, 1.0])],
            ),
        ];
        let refs: Vec<&RunRecord> = records.iter().collect();
        let cal = Calibration::from_runs("label", &refs, 42).unwrap();
        assert_eq!(cal.run_ids, vec![1, 2, 3, 4]);
        assert_eq!(cal.boots, 2);
        assert_eq!(cal.machine, MachineKey::of(&records[0].fingerprint));
        // "few" has only two complete runs.
        assert_eq!(cal.cases.len(), 1);
        let case = cal.case("c").unwrap();
        assert_eq!(case.iterations, 2);
        let m = case.metrics.iter().find(|m| m.metric == PRIMARY).unwrap();
        assert_eq!((m.runs, m.boots), (3, 2));
        let expected = MetricCalibration::from_run_values(
            PRIMARY,
            &[
                ("b1", vec![1.0, 1.1]),
                ("b1", vec![1.2, 1.1]),
                ("b2", vec![1.0, 1.3]),
            ],
        )
        .unwrap();
        assert_eq!(m, &expected);
    }

    #[test]
    fn from_runs_refuses_too_few_runs_and_mixed_machines() {
        let two = [
            record(1, "b", RunStatus::Complete, &[("c", &[1.0, 1.1])]),
            record(2, "b", RunStatus::Complete, &[("c", &[1.0, 1.1])]),
        ];
        let refs: Vec<&RunRecord> = two.iter().collect();
        assert!(Calibration::from_runs("l", &refs, 0).is_err());

        let mut three = [
            record(1, "b", RunStatus::Complete, &[("c", &[1.0, 1.1])]),
            record(2, "b", RunStatus::Complete, &[("c", &[1.0, 1.1])]),
            record(3, "b", RunStatus::Complete, &[("c", &[1.0, 1.1])]),
        ];
        three[2].fingerprint.cpuidle_driver = Some("intel_idle".into());
        let refs: Vec<&RunRecord> = three.iter().collect();
        let err = Calibration::from_runs("l", &refs, 0).unwrap_err();
        match err {
            CalibrationError::MachinesDiffer { fields, .. } => {
                assert!(fields.contains(&"cpuidle_driver"), "{fields:?}")
            }
            other => panic!("{other:?}"),
        }
    }

    fn machine() -> MachineKey {
        MachineKey {
            hostname: "host".into(),
            cpu_model: "cpu".into(),
            online_cpus: "0-1".into(),
            smt_active: Some(false),
            numa_nodes: 1,
            cpufreq_governors: vec!["performance".into()],
            cpuidle_driver: Some("haltpoll".into()),
            hypervisor: true,
            dmi_vendor: Some("vendor".into()),
            dmi_product: Some("product".into()),
            tuning: Some(TuningKey {
                preempt_model: Some("full".into()),
                thp_enabled: Some("madvise".into()),
                isolcpus: None,
                nohz_full: None,
            }),
        }
    }

    fn fake_case(value_usec: f64) -> String {
        WorkloadSpec::Fake(FakeParams {
            value_usec,
            ..FakeParams::default()
        })
        .case_name()
    }

    fn calibration(id: i64, created_at_ns: i64, case: &str, iterations: usize) -> Calibration {
        let values: Vec<(&str, Vec<f64>)> = (0..3)
            .map(|r| ("b", vec![1.0 + 0.01 * r as f64; iterations]))
            .collect();
        Calibration {
            id: Some(id),
            created_at_ns,
            label: "cal".into(),
            machine: machine(),
            run_ids: vec![1, 2, 3],
            boots: 1,
            cases: vec![CaseCalibration {
                case: case.into(),
                spec: serde_json::Value::Null,
                iterations,
                metrics: vec![MetricCalibration::from_run_values(PRIMARY, &values).unwrap()],
            }],
        }
    }

    #[test]
    fn find_matches_machine_case_metric_scale_and_iterations() {
        let case = fake_case(100.0);
        let set = CalibrationSet::new(vec![calibration(1, 0, &case, 5)]);
        let found = |m: &MachineKey, case: &str, metric: &str, scale: Scale, n: usize| {
            set.find(m, case, metric, scale, n).map(|(c, _)| c.id)
        };
        assert_eq!(
            found(&machine(), &case, PRIMARY, Scale::Log, 5),
            Some(Some(1))
        );
        // Another iteration count: run summaries of another precision.
        assert_eq!(found(&machine(), &case, PRIMARY, Scale::Log, 4), None);
        assert_eq!(found(&machine(), &case, PRIMARY, Scale::Log, 6), None);
        // Another case spec has another canonical name.
        let other = fake_case(200.0);
        assert_ne!(other, case);
        assert_eq!(found(&machine(), &other, PRIMARY, Scale::Log, 5), None);
        assert_eq!(found(&machine(), &case, "other", Scale::Log, 5), None);
        assert_eq!(found(&machine(), &case, PRIMARY, Scale::Raw, 5), None);
    }

    #[test]
    fn find_refuses_a_machine_that_differs_in_any_field() {
        let case = fake_case(100.0);
        let set = CalibrationSet::new(vec![calibration(1, 0, &case, 5)]);
        type Change = fn(&mut MachineKey);
        fn tuning(m: &mut MachineKey) -> &mut TuningKey {
            m.tuning.as_mut().unwrap()
        }
        let changes: [(&str, Change); 14] = [
            ("hostname", |m| m.hostname.push('2')),
            ("cpu_model", |m| m.cpu_model.push('2')),
            ("online_cpus", |m| m.online_cpus = "0-3".into()),
            ("smt_active", |m| m.smt_active = Some(true)),
            ("numa_nodes", |m| m.numa_nodes = 2),
            ("cpufreq_governors", |m| {
                m.cpufreq_governors = vec!["schedutil".into()]
            }),
            ("cpuidle_driver", |m| m.cpuidle_driver = None),
            ("hypervisor", |m| m.hypervisor = false),
            ("dmi_vendor", |m| m.dmi_vendor = None),
            ("dmi_product", |m| m.dmi_product = Some("other".into())),
            ("preempt_model", |m| {
                tuning(m).preempt_model = Some("none".into())
            }),
            ("thp_enabled", |m| {
                tuning(m).thp_enabled = Some("always".into())
            }),
            ("isolcpus", |m| tuning(m).isolcpus = Some("1".into())),
            ("nohz_full", |m| tuning(m).nohz_full = Some("1".into())),
        ];
        for (field, change) in changes {
            let mut other = machine();
            change(&mut other);
            assert!(
                set.find(&other, &case, PRIMARY, Scale::Log, 5).is_none(),
                "a machine with another {field} was accepted"
            );
            assert_eq!(machine().differences(&other), vec![field]);
        }
    }

    /// A calibration stored before a metric was renamed applies to runs that measure it under
    /// its current name.
    #[test]
    fn a_stored_calibration_reads_metrics_by_their_current_names() {
        let mut stored = serde_json::to_value(two_boots()).unwrap();
        stored["metric"] = "rps_p50".into();
        let read: MetricCalibration = serde_json::from_value(stored).unwrap();
        assert_eq!(read.metric, "requests_p50_per_sec");
        assert_eq!(
            read,
            MetricCalibration {
                metric: read.metric.clone(),
                ..two_boots()
            }
        );
    }

    /// Calibrations stored before the tuning was recorded, and tuning this user could not see,
    /// are no reason to refuse a calibration; isolation is always known (the command line).
    #[test]
    fn unknown_tuning_matches_and_isolation_is_read_from_the_command_line() {
        let case = fake_case(100.0);
        let mut old = calibration(1, 0, &case, 5);
        old.machine.tuning = None;
        let old: Calibration = serde_json::from_value(serde_json::to_value(&old).unwrap()).unwrap();
        let mut unknown_model = machine();
        unknown_model.tuning.as_mut().unwrap().preempt_model = None;
        let set = CalibrationSet::new(vec![old]);
        assert!(set
            .find(&machine(), &case, PRIMARY, Scale::Log, 5)
            .is_some());
        let set = CalibrationSet::new(vec![calibration(1, 0, &case, 5)]);
        assert!(set
            .find(&unknown_model, &case, PRIMARY, Scale::Log, 5)
            .is_some());

        let fp = Fingerprint {
            kernel_cmdline: "quiet isolcpus=2-3 nohz_full=2-3".into(),
            preempt_model: Some("dynamic".into()),
            ..Fingerprint::default()
        };
        let key = TuningKey::of(&fp);
        assert_eq!(key.isolcpus.as_deref(), Some("2-3"));
        assert_eq!(key.nohz_full.as_deref(), Some("2-3"));
        assert_eq!(key.preempt_model, None, "`dynamic` names no model");
    }

    #[test]
    fn find_takes_the_newest_calibration_that_covers_the_row() {
        let (c1, c2) = (fake_case(100.0), fake_case(200.0));
        // Given oldest first; the set orders newest first.
        let set = CalibrationSet::new(vec![
            calibration(1, 10, &c1, 5),
            calibration(2, 20, &c1, 5),
            calibration(3, 30, &c2, 5),
        ]);
        let id = |case: &str| {
            set.find(&machine(), case, PRIMARY, Scale::Log, 5)
                .and_then(|(c, _)| c.id)
        };
        assert_eq!(id(&c1), Some(2));
        assert_eq!(id(&c2), Some(3));
    }

    #[test]
    fn the_report_of_a_one_boot_calibration_states_no_boot_figures() {
        let case = fake_case(100.0);
        let mut cal = calibration(1, 0, &case, 5);
        let runs = runs_of(&[("b", &[0.0, 0.2]), ("b", &[0.2, 0.4]), ("b", &[0.5, 0.3])]);
        cal.cases[0].metrics = vec![MetricCalibration::from_run_values(PRIMARY, &runs).unwrap()];
        let r = report(&cal, 0.05);
        let row = &r.rows[0];
        close(row.within_run_pct.unwrap(), 0.02f64.sqrt().exp_m1() * 100.0);
        close(
            row.between_run_pct.unwrap(),
            (1.0f64 / 75.0).sqrt().exp_m1() * 100.0,
        );
        assert_eq!(row.between_boot_pct, None);
        assert!(row.detectable_across_boots.iter().all(Option::is_none));
        // More runs per side detect smaller changes.
        let same: Vec<f64> = row
            .detectable_same_boot
            .iter()
            .map(|d| d.unwrap())
            .collect();
        assert!(same.windows(2).all(|w| w[1] < w[0]), "{same:?}");
    }
}
