//! Comparisons that do not cry wolf: the model behind `schedlab compare` and `schedlab stat`.
//!
//! Each side (a baseline and one or more candidates) is a set of sample groups per case × metric.
//! The unit of replication follows the design in docs/statistics.md: when a side spans several
//! boots, each boot's iterations are first summarised (the median of the log metric) and boots are
//! the samples; within one boot, iterations are the samples. Every row gets a Welch t test on the
//! log values (a ratio and its CI), a seeded bootstrap CI of the ratio of medians, TOST
//! equivalence within ±δ and a minimum detectable effect; then q-values over every row of the
//! report decide, together with the δ floor, which rows are marked.
use serde::Serialize;

use schedlab_core::metric::{Better, Role};
use schedlab_core::record::{ExperimentTag, RunRecord};
use schedlab_stats::bootstrap::{bootstrap_ratio_of_medians, BootstrapSettings};
use schedlab_stats::equivalence::{tost_log_ratio_paired, tost_log_ratio_two_sample};
use schedlab_stats::multiplicity::{adjust_p_values, Adjustment};
use schedlab_stats::power::{mde_paired, mde_two_sample};
use schedlab_stats::summary::{summarize, Summary};
use schedlab_stats::ttest::{log_ratio_t_test, welch_t_test};
use schedlab_stats::ConfidenceInterval;

pub mod benchstat;
pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod ministat;
pub mod mmtests;
pub mod schedtests;
pub mod table;
pub mod text;

/// Bumped when a field of the comparison JSON is renamed or removed.
pub const COMPARISON_SCHEMA_VERSION: u32 = 1;

/// How rows are decided; the defaults are the documented ones.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// δ: the smallest relative change worth a mark (0.01 = 1 %).
    pub min_effect: f64,
    /// The false-discovery rate q for the multiple-comparison adjustment.
    pub fdr: f64,
    pub adjustment: AdjustmentName,
    /// Confidence level of the intervals shown.
    pub confidence: f64,
    /// A side whose samples vary more than this (std % of the mean) is too noisy to judge.
    pub noise_cap_pct: f64,
    /// Fewer samples than this on a side make a row `??`.
    pub min_samples: usize,
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    /// Confidence of ministat's own test (one of its table's levels).
    pub ministat_confidence: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_effect: 0.01,
            fdr: 0.05,
            adjustment: AdjustmentName::Bh,
            confidence: 0.95,
            noise_cap_pct: 10.0,
            min_samples: 3,
            bootstrap_resamples: 2000,
            bootstrap_seed: 0x5C4E_D1AB,
            ministat_confidence: 0.95,
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
    fn method(self) -> Adjustment {
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

/// What a row concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Regression,
    Improvement,
    Inconclusive,
    Equivalent,
    Noisy,
}

impl Verdict {
    /// The mark printed in tables.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Regression | Verdict::Improvement => "**",
            Verdict::Inconclusive => "~",
            Verdict::Equivalent => "≈",
            Verdict::Noisy => "??",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Equivalent => "equivalent",
            Verdict::Noisy => "noisy",
        }
    }
}

/// What one sample of a row stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Replication {
    /// Iterations of a single boot.
    Iterations,
    /// Per-boot summaries (the median of the log metric over that boot's iterations).
    Boots,
    /// Per-run summaries of an interleaved experiment, A and B of each round taken as a pair.
    Pairs,
}

/// One metric of one case on one side, as groups of raw values: one group per boot, or per run
/// of an interleaved experiment (see [`Side::group_keys`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleGroups {
    pub unit: String,
    pub better: Better,
    pub groups: Vec<Vec<f64>>,
}

impl SampleGroups {
    /// The samples with every group taken as one boot: per-group summaries when there are
    /// several groups, the values themselves when there is one. Comparisons use
    /// [`Side::unpaired_samples`], which knows which groups share a boot.
    pub fn samples(&self) -> (Vec<f64>, Replication) {
        let non_empty: Vec<&Vec<f64>> = self.groups.iter().filter(|g| !g.is_empty()).collect();
        if non_empty.len() >= 2 {
            (
                non_empty.iter().map(|g| boot_summary(g)).collect(),
                Replication::Boots,
            )
        } else {
            (
                non_empty.first().map(|g| g.to_vec()).unwrap_or_default(),
                Replication::Iterations,
            )
        }
    }
}

/// What a group of values came from: a boot, and the experiment round when the run was made by
/// `schedlab ab` or `schedlab campaign`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupKey {
    /// Index into the side's distinct boots.
    pub boot: usize,
    /// (experiment id, round).
    pub round: Option<(i64, u32)>,
}

/// A boot's value: the median on the log scale (the geometric centre), which one slow iteration
/// cannot drag; plain median where values are not all positive.
fn boot_summary(values: &[f64]) -> f64 {
    let median = |xs: &[f64]| summarize(xs).map(|s| s.median).unwrap_or(f64::NAN);
    if values.iter().all(|v| *v > 0.0) {
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        median(&logs).exp()
    } else {
        median(values)
    }
}

/// A case as shown in schedtests-style tables: the configuration and the load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseLabel {
    pub name: String,
    pub short: String,
    pub load: String,
}

/// One side of a comparison.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub run_ids: Vec<i64>,
    pub boots: usize,
    pub kernels: Vec<String>,
    /// In the order cases and metrics first appear.
    pub series: Vec<(CaseLabel, String, SampleGroups)>,
    /// What each group index of every series stands for.
    pub group_keys: Vec<GroupKey>,
}

impl Side {
    fn get(&self, case: &str, metric: &str) -> Option<&SampleGroups> {
        self.series
            .iter()
            .find(|(c, m, _)| c.name == case && m == metric)
            .map(|(_, _, g)| g)
    }

    /// A side made of stored runs with their experiment tags (`None` for plain runs);
    /// `metrics` picks metrics by name, else every primary metric.
    pub fn from_runs(
        name: &str,
        runs: &[RunRecord],
        tags: &[Option<ExperimentTag>],
        metrics: &MetricFilter,
    ) -> Side {
        let mut boots: Vec<String> = Vec::new();
        let mut kernels: Vec<String> = Vec::new();
        let mut group_keys: Vec<GroupKey> = Vec::new();
        let mut series: Vec<(CaseLabel, String, SampleGroups)> = Vec::new();
        for (run_index, run) in runs.iter().enumerate() {
            let boot = match boots.iter().position(|b| *b == run.fingerprint.boot_id) {
                Some(i) => i,
                None => {
                    boots.push(run.fingerprint.boot_id.clone());
                    boots.len() - 1
                }
            };
            let round = tags
                .get(run_index)
                .copied()
                .flatten()
                .map(|t| (t.experiment_id, t.round));
            let key = GroupKey { boot, round };
            let group = match group_keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    group_keys.push(key);
                    group_keys.len() - 1
                }
            };
            if !kernels.contains(&run.fingerprint.kernel_release) {
                kernels.push(run.fingerprint.kernel_release.clone());
            }
            for case in &run.cases {
                let label = case_label(&case.spec.name, &case.spec.workload);
                for iteration in case.measured() {
                    for m in &iteration.measurements {
                        if !metrics.accepts(&m.name, m.role) {
                            continue;
                        }
                        let position = series
                            .iter()
                            .position(|(c, n, _)| c.name == label.name && *n == m.name);
                        let index = position.unwrap_or_else(|| {
                            let groups = SampleGroups {
                                unit: m.unit.clone(),
                                better: m.better,
                                groups: Vec::new(),
                            };
                            series.push((label.clone(), m.name.clone(), groups));
                            series.len() - 1
                        });
                        let groups = &mut series[index].2.groups;
                        if groups.len() <= group {
                            groups.resize(group + 1, Vec::new());
                        }
                        groups[group].push(m.value);
                    }
                }
            }
        }
        Side {
            name: name.to_string(),
            run_ids: runs.iter().filter_map(|r| r.id).collect(),
            boots: boots.len(),
            kernels,
            series,
            group_keys,
        }
    }

    /// The samples of an unpaired comparison: groups merged by boot; per-boot summaries when
    /// there are several boots, the iterations themselves when there is one.
    pub fn unpaired_samples(&self, groups: &SampleGroups) -> (Vec<f64>, Replication) {
        let mut by_boot: Vec<(usize, Vec<f64>)> = Vec::new();
        for (i, values) in groups.groups.iter().enumerate() {
            let boot = self.group_keys.get(i).map_or(i, |k| k.boot);
            match by_boot.iter_mut().find(|(b, _)| *b == boot) {
                Some((_, merged)) => merged.extend(values),
                None => by_boot.push((boot, values.clone())),
            }
        }
        by_boot.retain(|(_, v)| !v.is_empty());
        if by_boot.len() >= 2 {
            (
                by_boot.iter().map(|(_, v)| boot_summary(v)).collect(),
                Replication::Boots,
            )
        } else {
            (
                by_boot.pop().map(|(_, v)| v).unwrap_or_default(),
                Replication::Iterations,
            )
        }
    }

    /// Per-round summaries keyed by (experiment, round), when every group of this series comes
    /// from one interleaved experiment.
    fn rounds(&self, groups: &SampleGroups) -> Option<Vec<((i64, u32), f64)>> {
        let mut out = Vec::new();
        for (i, values) in groups.groups.iter().enumerate() {
            if values.is_empty() {
                continue;
            }
            let round = self.group_keys.get(i)?.round?;
            out.push((round, boot_summary(values)));
        }
        Some(out)
    }
}

/// Pairs A and B by experiment round: the runs made next to each other, so drift and boot
/// effects cancel in each pair's ratio. `None` unless both sides come from the same experiment
/// and share at least two rounds.
fn paired_samples(
    base: &Side,
    b: &SampleGroups,
    cand: &Side,
    c: &SampleGroups,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let (base_rounds, cand_rounds) = (base.rounds(b)?, cand.rounds(c)?);
    let experiment = base_rounds.first()?.0 .0;
    if base_rounds
        .iter()
        .chain(&cand_rounds)
        .any(|((e, _), _)| *e != experiment)
    {
        return None;
    }
    let mut pairs: Vec<(u32, f64, f64)> = base_rounds
        .iter()
        .filter_map(|((_, r), a)| {
            cand_rounds
                .iter()
                .find(|((_, rc), _)| rc == r)
                .map(|(_, b)| (*r, *a, *b))
        })
        .collect();
    pairs.sort_by_key(|(r, _, _)| *r);
    (pairs.len() >= 2).then(|| {
        (
            pairs.iter().map(|p| p.1).collect(),
            pairs.iter().map(|p| p.2).collect(),
        )
    })
}

/// Which metrics a comparison covers.
#[derive(Debug, Clone, Default)]
pub struct MetricFilter {
    /// Metric names; empty means every primary metric (or every metric with `all`).
    pub names: Vec<String>,
    pub all: bool,
}

impl MetricFilter {
    fn accepts(&self, name: &str, role: Role) -> bool {
        if !self.names.is_empty() {
            return self.names.iter().any(|n| n == name);
        }
        self.all || role == Role::Primary
    }
}

/// Splits a canonical case name into schedtests' "case" and "load" columns where the workload has
/// a natural load parameter (hackbench groups, schbench threads); elsewhere the load is `-`.
fn case_label(name: &str, workload: &schedlab_core::workload::WorkloadSpec) -> CaseLabel {
    let params = serde_json::to_value(workload).unwrap_or_default();
    let get = |key: &str| {
        params
            .get(key)
            .map(|v| v.to_string().trim_matches('"').to_string())
    };
    let (short, load) = match workload.kind() {
        "messaging" => {
            let mode = if params["threads"] == true {
                "threads"
            } else {
                "process"
            };
            let transport = if params["pipe"] == true {
                "pipe"
            } else {
                "sockets"
            };
            (
                format!("{mode}-{transport}-{}", get("fds").unwrap_or_default()),
                format!("{}-groups", get("groups").unwrap_or_default()),
            )
        }
        _ => (name.to_string(), "-".to_string()),
    };
    CaseLabel {
        name: name.to_string(),
        short,
        load,
    }
}

/// One case × metric × candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    #[serde(skip)]
    pub label: CaseLabel,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// The candidate side's name.
    pub candidate: String,
    pub replication: Replication,
    pub base_samples: Vec<f64>,
    pub candidate_samples: Vec<f64>,
    pub base: Option<Summary>,
    pub candidate_summary: Option<Summary>,
    /// Candidate ÷ baseline (ratio of geometric means; of means where values are not positive).
    pub ratio: Option<f64>,
    pub change_pct: Option<f64>,
    pub ratio_ci: Option<ConfidenceInterval>,
    /// Bootstrap (BCa, else percentile) CI of the ratio of medians.
    pub ratio_of_medians: Option<f64>,
    pub ratio_of_medians_ci: Option<ConfidenceInterval>,
    pub test: &'static str,
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    pub equivalence_p_value: Option<f64>,
    /// The smallest change this row could detect (80 % power at the adjusted level).
    pub mde_pct: Option<f64>,
    pub verdict: Verdict,
    /// Why a row is `??`, or other caveats.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub name: String,
    pub run_ids: Vec<i64>,
    pub boots: usize,
    pub kernels: Vec<String>,
}

/// The whole comparison: every row, and what a reader needs to judge the marks.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub settings: Settings,
    pub base: SideSummary,
    pub candidates: Vec<SideSummary>,
    pub rows: Vec<Row>,
    /// Cases × metrics present on one side only.
    pub unmatched: Vec<String>,
    pub footer: Footer,
    #[serde(skip)]
    pub sides: Vec<Side>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Footer {
    pub test: String,
    pub comparisons: usize,
    pub marked: usize,
    /// The bound on false marks if nothing changed, as text.
    pub false_marks_if_nothing_changed: String,
    pub text: Vec<String>,
}

impl Comparison {
    /// The rows grouped by case × metric (one row per candidate), in the order rows first name
    /// them: the blocks of the mmtests, ministat and HTML layouts.
    pub fn rows_by_case_metric(&self) -> Vec<Vec<&Row>> {
        let mut groups: Vec<Vec<&Row>> = Vec::new();
        for row in &self.rows {
            match groups
                .iter_mut()
                .find(|g| g[0].case == row.case && g[0].metric == row.metric)
            {
                Some(group) => group.push(row),
                None => groups.push(vec![row]),
            }
        }
        groups
    }
}

const TEST_LOG_WELCH: &str = "welch-t-log";
const TEST_RAW_WELCH: &str = "welch-t-raw";
const TEST_PAIRED_LOG: &str = "paired-t-log";

/// Compares every candidate with the baseline.
pub fn compare(base: Side, candidates: Vec<Side>, settings: Settings) -> Comparison {
    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    for candidate in &candidates {
        for (label, metric, base_groups) in &base.series {
            match candidate.get(&label.name, metric) {
                Some(cand_groups) => {
                    let samples = match paired_samples(&base, base_groups, candidate, cand_groups) {
                        Some((a, b)) => (a, b, Replication::Pairs),
                        None => {
                            let (a, ra) = base.unpaired_samples(base_groups);
                            let (b, rb) = candidate.unpaired_samples(cand_groups);
                            let replication =
                                if ra == Replication::Boots || rb == Replication::Boots {
                                    Replication::Boots
                                } else {
                                    Replication::Iterations
                                };
                            (a, b, replication)
                        }
                    };
                    rows.push(row(
                        label,
                        metric,
                        base_groups,
                        samples,
                        &candidate.name,
                        &settings,
                    ))
                }
                None => unmatched.push(format!(
                    "{} {metric}: not in {}",
                    label.name, candidate.name
                )),
            }
        }
        for (label, metric, _) in &candidate.series {
            if base.get(&label.name, metric).is_none() {
                unmatched.push(format!("{} {metric}: not in {}", label.name, base.name));
            }
        }
    }
    decide(&mut rows, &settings);
    let footer = footer(&rows, &settings);
    let summary = |s: &Side| SideSummary {
        name: s.name.clone(),
        run_ids: s.run_ids.clone(),
        boots: s.boots,
        kernels: s.kernels.clone(),
    };
    Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        base: summary(&base),
        candidates: candidates.iter().map(summary).collect(),
        settings,
        rows,
        unmatched,
        footer,
        sides: std::iter::once(base).chain(candidates).collect(),
    }
}

fn row(
    label: &CaseLabel,
    metric: &str,
    base: &SampleGroups,
    (base_samples, cand_samples, replication): (Vec<f64>, Vec<f64>, Replication),
    candidate: &str,
    settings: &Settings,
) -> Row {
    let positive = base_samples.iter().chain(&cand_samples).all(|v| *v > 0.0);
    let mut row = Row {
        case: label.name.clone(),
        label: label.clone(),
        metric: metric.to_string(),
        unit: base.unit.clone(),
        better: base.better,
        candidate: candidate.to_string(),
        replication,
        base_samples: base_samples.clone(),
        candidate_samples: cand_samples.clone(),
        base: summarize(&base_samples).ok(),
        candidate_summary: summarize(&cand_samples).ok(),
        ratio: None,
        change_pct: None,
        ratio_ci: None,
        ratio_of_medians: None,
        ratio_of_medians_ci: None,
        test: match (positive, replication) {
            (true, Replication::Pairs) => TEST_PAIRED_LOG,
            (true, _) => TEST_LOG_WELCH,
            (false, _) => TEST_RAW_WELCH,
        },
        p_value: None,
        q_value: None,
        equivalence_p_value: None,
        mde_pct: None,
        verdict: Verdict::Noisy,
        note: None,
    };
    if base_samples.len() < 2 || cand_samples.len() < 2 {
        return row;
    }
    if positive && replication == Replication::Pairs {
        let log_ratios: Vec<f64> = base_samples
            .iter()
            .zip(&cand_samples)
            .map(|(a, b)| b.ln() - a.ln())
            .collect();
        if let Ok(t) = log_ratio_t_test(&log_ratios, settings.confidence) {
            row.ratio = Some(t.ratio);
            row.ratio_ci = Some(t.ratio_ci);
            row.p_value = Some(t.p_value);
        }
        if let Ok(e) =
            tost_log_ratio_paired(&log_ratios, settings.min_effect, 1.0 - settings.confidence)
        {
            row.equivalence_p_value = Some(e.p_value);
        }
    } else if positive {
        let ln = |xs: &[f64]| xs.iter().map(|v| v.ln()).collect::<Vec<f64>>();
        let (lb, lc) = (ln(&base_samples), ln(&cand_samples));
        if let Ok(t) = welch_t_test(&lb, &lc, settings.confidence) {
            row.ratio = Some(t.estimate.exp());
            row.ratio_ci = Some(ConfidenceInterval {
                low: t.ci.low.exp(),
                high: t.ci.high.exp(),
                level: t.ci.level,
            });
            row.p_value = Some(t.p_value);
        }
        if let Ok(e) = tost_log_ratio_two_sample(
            &base_samples,
            &cand_samples,
            settings.min_effect,
            1.0 - settings.confidence,
        ) {
            row.equivalence_p_value = Some(e.p_value);
        }
        let boot = BootstrapSettings {
            resamples: settings.bootstrap_resamples,
            confidence: settings.confidence,
            seed: settings.bootstrap_seed ^ fnv1a(&row.case) ^ fnv1a(metric).rotate_left(17),
        };
        if let Ok(b) = bootstrap_ratio_of_medians(&base_samples, &cand_samples, boot) {
            row.ratio_of_medians = Some(b.ratio);
            row.ratio_of_medians_ci = Some(b.bca.map_or(b.percentile, |bca| bca.ci));
        }
    } else if let Ok(t) = welch_t_test(&base_samples, &cand_samples, settings.confidence) {
        let mean_b = row.base.map_or(0.0, |s| s.mean);
        if mean_b != 0.0 {
            row.ratio = Some(1.0 + t.estimate / mean_b);
            row.ratio_ci = Some(ConfidenceInterval {
                low: 1.0 + t.ci.low / mean_b,
                high: 1.0 + t.ci.high / mean_b,
                level: t.ci.level,
            });
        }
        row.p_value = Some(t.p_value);
    }
    row.change_pct = row.ratio.map(|r| (r - 1.0) * 100.0);
    row
}

/// 64-bit FNV-1a, so every row's bootstrap stream is fixed by its names alone.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// q-values over every row, then the verdicts.
fn decide(rows: &mut [Row], settings: &Settings) {
    let tested: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].p_value.is_some())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .map(|&i| rows[i].p_value.unwrap_or(1.0))
        .collect();
    if let Ok(q) = adjust_p_values(&p, settings.adjustment.method()) {
        for (&i, q) in tested.iter().zip(q) {
            rows[i].q_value = Some(q);
        }
    }
    let comparisons = tested.len().max(1);
    for row in rows.iter_mut() {
        row.mde_pct = mde_pct(row, settings, comparisons);
        let (verdict, note) = verdict(row, settings);
        row.verdict = verdict;
        row.note = note;
    }
}

fn mde_pct(row: &Row, settings: &Settings, comparisons: usize) -> Option<f64> {
    let sd_of_logs = |xs: &mut dyn Iterator<Item = f64>| {
        let logs: Vec<f64> = xs.collect();
        summarize(&logs).ok().and_then(|s| s.std)
    };
    // The level the most significant row must reach under the adjustment: q / m.
    let alpha = settings.fdr / comparisons as f64;
    let mde = match row.test {
        TEST_LOG_WELCH => {
            let sb = sd_of_logs(&mut row.base_samples.iter().map(|v| v.ln()))?;
            let sc = sd_of_logs(&mut row.candidate_samples.iter().map(|v| v.ln()))?;
            let n = row.base_samples.len().min(row.candidate_samples.len());
            mde_two_sample(n, ((sb * sb + sc * sc) / 2.0).sqrt(), alpha, 0.8)
        }
        TEST_PAIRED_LOG => {
            let mut d = row
                .base_samples
                .iter()
                .zip(&row.candidate_samples)
                .map(|(a, b)| b.ln() - a.ln());
            let sd = sd_of_logs(&mut d)?;
            mde_paired(row.base_samples.len(), sd, alpha, 0.8)
        }
        _ => return None,
    };
    mde.ok().map(|m| m.pct_increase)
}

fn verdict(row: &Row, settings: &Settings) -> (Verdict, Option<String>) {
    let (nb, nc) = (row.base_samples.len(), row.candidate_samples.len());
    if nb < settings.min_samples || nc < settings.min_samples {
        return (
            Verdict::Noisy,
            Some(format!(
                "too few samples ({nb} vs {nc}; need {} per side)",
                settings.min_samples
            )),
        );
    }
    let (Some(q), Some(ratio)) = (row.q_value, row.ratio) else {
        return (Verdict::Noisy, Some("no test was possible".to_string()));
    };
    if q <= settings.fdr && (ratio - 1.0).abs() >= settings.min_effect {
        let worse = match row.better {
            Better::Lower => ratio > 1.0,
            Better::Higher => ratio < 1.0,
        };
        return (
            if worse {
                Verdict::Regression
            } else {
                Verdict::Improvement
            },
            None,
        );
    }
    if row
        .equivalence_p_value
        .is_some_and(|p| p <= 1.0 - settings.confidence)
    {
        return (Verdict::Equivalent, None);
    }
    let noisiest = [row.base, row.candidate_summary]
        .iter()
        .filter_map(|s| s.and_then(|s| s.std_pct))
        .fold(0.0_f64, |a, b| a.max(b.abs()));
    if noisiest > settings.noise_cap_pct {
        return (
            Verdict::Noisy,
            Some(format!(
                "std {noisiest:.1}% exceeds the noise cap of {}%",
                settings.noise_cap_pct
            )),
        );
    }
    (
        Verdict::Inconclusive,
        row.mde_pct.map(|m| format!("MDE {m:.1}%")),
    )
}

fn footer(rows: &[Row], settings: &Settings) -> Footer {
    let comparisons = rows.iter().filter(|r| r.p_value.is_some()).count();
    let marked = rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Regression | Verdict::Improvement))
        .count();
    let replication = if rows.iter().any(|r| r.replication == Replication::Pairs) {
        "A/B pairs of interleaved runs (paired t on the log ratio of each round's medians)"
    } else if rows.iter().any(|r| r.replication == Replication::Boots) {
        "per-boot medians of the log metric where a side spans several boots, else iterations"
    } else {
        "iterations of one boot per side"
    };
    let delta = settings.min_effect * 100.0;
    let q = settings.fdr;
    let false_marks = format!(
        "if nothing changed, P(any false mark) <= {q} ({})",
        settings.adjustment.describe()
    );
    let mut text = vec![
        format!("test: {}; samples: {replication}", describe_tests(rows, settings.confidence)),
        format!(
            "marks: ** q <= {q} ({} over {comparisons} comparisons) and |change| >= {delta}%; ≈ equivalent within ±{delta}% (TOST); ~ inconclusive (MDE: smallest change detectable at 80% power); ?? fewer than {} samples or std > {}%",
            settings.adjustment.describe(),
            settings.min_samples,
            settings.noise_cap_pct
        ),
        format!("{marked} of {comparisons} comparisons marked; {false_marks}"),
    ];
    if !rows.is_empty()
        && rows
            .iter()
            .all(|r| r.replication == Replication::Iterations)
    {
        text.push(
            "caution: each side is one boot, so its iterations share that boot's (and run's) conditions and a \
             difference between two runs of the same kernel can be marked; to judge a kernel or setting, give each \
             side several boots (one label) or interleave A and B (schedlab ab, schedlab campaign)"
                .to_string(),
        );
    }
    Footer {
        test: describe_tests(rows, settings.confidence),
        comparisons,
        marked,
        false_marks_if_nothing_changed: false_marks,
        text,
    }
}

/// The tests the rows used, in words.
fn describe_tests(rows: &[Row], confidence: f64) -> String {
    let level = confidence * 100.0;
    let mut parts: Vec<String> = Vec::new();
    for (test, words) in [
        (
            TEST_PAIRED_LOG,
            format!("paired t on log ratios of A/B rounds ({level:.0}% CI)"),
        ),
        (
            TEST_LOG_WELCH,
            format!("Welch's t on log values (ratio of geometric means, {level:.0}% CI)"),
        ),
        (
            TEST_RAW_WELCH,
            "Welch's t on raw values where some are not positive".to_string(),
        ),
    ] {
        if rows.iter().any(|r| r.test == test) {
            parts.push(words);
        }
    }
    if parts.is_empty() {
        "none possible".to_string()
    } else {
        parts.join("; ")
    }
}

/// A side built from plain numbers (for `schedlab stat` and tests): one entry per case × metric,
/// each with its groups of values (one group per boot).
pub fn side_from_samples(name: &str, series: Vec<(String, String, Better, Vec<Vec<f64>>)>) -> Side {
    let series: Vec<(CaseLabel, String, SampleGroups)> = series
        .into_iter()
        .map(|(case, metric, better, groups)| {
            let label = CaseLabel {
                name: case.clone(),
                short: case,
                load: "-".into(),
            };
            (
                label,
                metric,
                SampleGroups {
                    unit: String::new(),
                    better,
                    groups,
                },
            )
        })
        .collect();
    let groups = series
        .iter()
        .map(|(_, _, g)| g.groups.len())
        .max()
        .unwrap_or(0);
    Side {
        name: name.to_string(),
        run_ids: Vec::new(),
        boots: groups.max(1),
        kernels: Vec::new(),
        series,
        group_keys: (0..groups)
            .map(|boot| GroupKey { boot, round: None })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
