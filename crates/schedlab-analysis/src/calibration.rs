//! A machine's noise model (`schedlab calibrate`): the same cases run several times, apart in
//! time, give per case × metric the variance of a run summary between runs (τ² + σ²/n) and
//! within runs (σ²) — and, when the runs span several boots, the boot-to-boot component ω²
//! (Kalibera and Jones' nested model, by ANOVA). A comparison with too few runs of its own to
//! estimate its variance borrows it from a calibration of the same machine, case and iteration
//! count.
use serde::{Deserialize, Serialize};

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_stats::variance::{nested_components, RunStat};

use crate::units::Scale;

/// The fingerprint fields that decide whether two runs saw the same machine with the same
/// tuning: hardware and tuning, not the kernel (a calibration is made to compare kernels).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineKey {
    pub hostname: String,
    pub cpu_model: String,
    pub online_cpus: String,
    pub smt_active: Option<bool>,
    pub numa_nodes: u32,
    pub cpufreq_governors: Vec<String>,
    pub cpuidle_driver: Option<String>,
    pub hypervisor: bool,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
}

impl MachineKey {
    pub fn of(fp: &Fingerprint) -> Self {
        MachineKey {
            hostname: fp.hostname.clone(),
            cpu_model: fp.cpu_model.clone(),
            online_cpus: fp.online_cpus.clone(),
            smt_active: fp.smt_active,
            numa_nodes: fp.numa_nodes,
            cpufreq_governors: fp.cpufreq_governors.clone(),
            cpuidle_driver: fp.cpuidle_driver.clone(),
            hypervisor: fp.hypervisor,
            dmi_vendor: fp.dmi_vendor.clone(),
            dmi_product: fp.dmi_product.clone(),
        }
    }

    /// The names of the fields that differ, for "calibration N does not apply: …" messages.
    pub fn differences(&self, other: &MachineKey) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut check = |name: &'static str, same: bool| {
            if !same {
                out.push(name);
            }
        };
        check("hostname", self.hostname == other.hostname);
        check("cpu_model", self.cpu_model == other.cpu_model);
        check("online_cpus", self.online_cpus == other.online_cpus);
        check("smt_active", self.smt_active == other.smt_active);
        check("numa_nodes", self.numa_nodes == other.numa_nodes);
        check(
            "cpufreq_governors",
            self.cpufreq_governors == other.cpufreq_governors,
        );
        check(
            "cpuidle_driver",
            self.cpuidle_driver == other.cpuidle_driver,
        );
        check("hypervisor", self.hypervisor == other.hypervisor);
        check("dmi_vendor", self.dmi_vendor == other.dmi_vendor);
        check("dmi_product", self.dmi_product == other.dmi_product);
        out
    }
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

/// The variance components of one metric of one case, on its analysis scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricCalibration {
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
        })
    }

    /// The variance of one unit of `kind`, or `None` when these runs cannot tell (a one-boot
    /// calibration knows nothing of boot-to-boot differences).
    pub fn unit_variance(&self, kind: UnitKind) -> Option<VarianceEstimate> {
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
    ) -> Result<Calibration, String> {
        let runs: Vec<&RunRecord> = runs
            .iter()
            .copied()
            .filter(|r| r.status == RunStatus::Complete)
            .collect();
        let first = runs
            .first()
            .ok_or_else(|| "no complete runs to calibrate from".to_string())?;
        let machine = MachineKey::of(&first.fingerprint);
        if let Some(other) = runs
            .iter()
            .find(|r| MachineKey::of(&r.fingerprint) != machine)
        {
            return Err(format!(
                "runs {} and {} ran on machines that differ in {}",
                first.id.unwrap_or_default(),
                other.id.unwrap_or_default(),
                machine
                    .differences(&MachineKey::of(&other.fingerprint))
                    .join(", ")
            ));
        }
        let mut boots: Vec<&str> = runs
            .iter()
            .map(|r| r.fingerprint.boot_id.as_str())
            .collect();
        boots.sort_unstable();
        boots.dedup();
        let mut case_names: Vec<&str> = Vec::new();
        for run in &runs {
            for case in &run.cases {
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
            return Err(
                "no case has at least 3 complete runs with the same iteration count".to_string(),
            );
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
            if &cal.machine != machine {
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
