//! schbench-style percentile tables of a wakeup case: the latency histograms its measured
//! iterations stored, decoded, merged and read at schbench's percentiles, in display units.
use hdrhistogram::Histogram;
use serde::Serialize;

use schedlab_core::record::CaseRecord;
use schedlab_core::workload::wakeup::latency::{
    decode, percentile_rows, PerMille, ENCODING, REQUEST_ATTACHMENT, RPS_ATTACHMENT,
    WAKEUP_ATTACHMENT,
};
use schedlab_core::workload::WorkloadSpec;

/// One percentile line of a schbench-style table, in display units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyRow {
    /// 50.0, 99.9, ...
    pub percentile: f64,
    pub value: f64,
    pub samples: u64,
    /// schbench marks the percentile it wants you to look at with `*`.
    pub starred: bool,
}

/// A schbench-style percentile block, merged over a case's measured iterations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyTable {
    /// `Wakeup Latencies`, `Request Latencies`, `RPS`.
    pub title: String,
    /// `usec` or `requests`.
    pub unit: String,
    /// The attachment the table was decoded from.
    pub attachment: String,
    /// Measured iterations merged.
    pub iterations: usize,
    /// Runtime of one iteration, seconds.
    pub runtime_sec: u64,
    pub total_samples: u64,
    pub rows: Vec<LatencyRow>,
    pub min: f64,
    pub max: f64,
}

struct TableKind {
    attachment: &'static str,
    title: &'static str,
    unit: &'static str,
    /// Display value per recorded unit.
    scale: f64,
    per_mille: &'static [PerMille],
    star: PerMille,
}

/// Percentiles schbench prints: wakeup and request latency (pipe mode adds the 20th), and RPS.
pub const LATENCY_PER_MILLE: &[PerMille] = &[500, 900, 990, 999];
pub const PIPE_WAKEUP_PER_MILLE: &[PerMille] = &[200, 500, 900, 990, 999];
pub const RPS_PER_MILLE: &[PerMille] = &[200, 500, 900];

/// The schbench-style tables of a wakeup case, each merged from the histograms of its measured
/// iterations; empty for other workloads or when nothing was attached. Unreadable attachments are
/// skipped (a table is a view; the metrics hold the numbers). `percentiles` (ascending), when
/// given, replace schbench's in every table: the histograms hold every percentile, not only the
/// ones schbench prints today (its format before 2023 printed the 75th, 95th and 99.5th).
pub fn latency_tables(case: &CaseRecord, percentiles: Option<&[PerMille]>) -> Vec<LatencyTable> {
    let WorkloadSpec::Wakeup(params) = &case.spec.workload else {
        return Vec::new();
    };
    let wakeup_per_mille = if params.pipe.is_some() {
        PIPE_WAKEUP_PER_MILLE
    } else {
        LATENCY_PER_MILLE
    };
    let kinds = [
        TableKind {
            attachment: WAKEUP_ATTACHMENT,
            title: "Wakeup Latencies",
            unit: "usec",
            scale: 1e-3,
            per_mille: wakeup_per_mille,
            star: 990,
        },
        TableKind {
            attachment: REQUEST_ATTACHMENT,
            title: "Request Latencies",
            unit: "usec",
            scale: 1e-3,
            per_mille: LATENCY_PER_MILLE,
            star: 990,
        },
        TableKind {
            attachment: RPS_ATTACHMENT,
            title: "RPS",
            unit: "requests",
            scale: 1.0,
            per_mille: RPS_PER_MILLE,
            star: 500,
        },
    ];
    let mut tables = Vec::new();
    for kind in kinds {
        let mut merged: Option<Histogram<u64>> = None;
        let mut iterations = 0;
        for iteration in case.measured() {
            for a in &iteration.attachments {
                if a.name != kind.attachment || a.encoding != ENCODING {
                    continue;
                }
                let Ok(h) = decode(&a.data) else { continue };
                iterations += 1;
                match merged.as_mut() {
                    Some(m) => {
                        if m.add(&h).is_err() {
                            continue;
                        }
                    }
                    None => merged = Some(h),
                }
            }
        }
        let Some(merged) = merged else { continue };
        if merged.is_empty() {
            continue;
        }
        let rows = percentile_rows(&merged, percentiles.unwrap_or(kind.per_mille))
            .into_iter()
            .map(|r| LatencyRow {
                percentile: f64::from(r.per_mille) / 10.0,
                value: r.value as f64 * kind.scale,
                samples: r.samples,
                starred: r.per_mille == kind.star,
            })
            .collect();
        tables.push(LatencyTable {
            title: kind.title.to_string(),
            unit: kind.unit.to_string(),
            attachment: kind.attachment.to_string(),
            iterations,
            runtime_sec: params.runtime,
            total_samples: merged.len(),
            rows,
            min: merged.min() as f64 * kind.scale,
            max: merged.max() as f64 * kind.scale,
        });
    }
    tables
}
