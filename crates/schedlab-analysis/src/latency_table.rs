//! schbench-style percentile tables of a wakeup case, and of a timer-latency case (p50, p90, p99,
//! p99.9 and the maximum of its timer threads' lateness): the latency histograms its measured
//! iterations stored, decoded, merged and read at schbench's percentiles, in display units.
//!
//! A table's p99 is the 99th percentile of every measured iteration's samples pooled, which is
//! what schbench prints for its one window. It is not the case's `wakeup_p99_usec` metric as
//! `show` summarises it (the median over the iterations of each iteration's own p99), nor a
//! point of a comparison's latency curve ([`crate::latency`]: per run, the geometric mean over
//! its iterations): each answers its own question, so the three may differ.
use hdrhistogram::Histogram;
use serde::Serialize;

use schedlab_core::latency::{
    decode, percentile_rows, PerMille, ENCODING, REQUEST_ATTACHMENT, REQUEST_TABLE, RPS_ATTACHMENT,
    RPS_TABLE, TIMER_TABLE, WAKEUP_ATTACHMENT, WAKEUP_TABLE,
};
use schedlab_core::record::CaseRecord;
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
    if let WorkloadSpec::TimerLatency(params) = &case.spec.workload {
        let kind = TableKind {
            attachment: schedlab_core::workload::timer_latency::ATTACHMENT,
            title: TIMER_TABLE,
            unit: "usec",
            scale: 1e-3,
            per_mille: LATENCY_PER_MILLE,
            star: 990,
        };
        // An iteration's window: its loops of one interval each.
        let runtime_sec = params.loops.saturating_mul(params.interval_usec) / 1_000_000;
        return table_of(case, &kind, percentiles, runtime_sec)
            .into_iter()
            .collect();
    }
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
            title: WAKEUP_TABLE,
            unit: "usec",
            scale: 1e-3,
            per_mille: wakeup_per_mille,
            star: 990,
        },
        TableKind {
            attachment: REQUEST_ATTACHMENT,
            title: REQUEST_TABLE,
            unit: "usec",
            scale: 1e-3,
            per_mille: LATENCY_PER_MILLE,
            star: 990,
        },
        TableKind {
            attachment: RPS_ATTACHMENT,
            title: RPS_TABLE,
            unit: "requests",
            scale: 1.0,
            per_mille: RPS_PER_MILLE,
            star: 500,
        },
    ];
    kinds
        .iter()
        .filter_map(|kind| table_of(case, kind, percentiles, params.runtime))
        .collect()
}

/// The table of `kind`'s attachment merged over the case's measured iterations; none when no
/// iteration stored a readable, non-empty one.
fn table_of(
    case: &CaseRecord,
    kind: &TableKind,
    percentiles: Option<&[PerMille]>,
    runtime_sec: u64,
) -> Option<LatencyTable> {
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
    let merged = merged.filter(|m| !m.is_empty())?;
    let rows = percentile_rows(&merged, percentiles.unwrap_or(kind.per_mille))
        .into_iter()
        .map(|r| LatencyRow {
            percentile: f64::from(r.per_mille) / 10.0,
            value: r.value as f64 * kind.scale,
            samples: r.samples,
            starred: r.per_mille == kind.star,
        })
        .collect();
    Some(LatencyTable {
        title: kind.title.to_string(),
        unit: kind.unit.to_string(),
        attachment: kind.attachment.to_string(),
        iterations,
        runtime_sec,
        total_samples: merged.len(),
        rows,
        min: merged.min() as f64 * kind.scale,
        max: merged.max() as f64 * kind.scale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::latency::{attachment, new_latency_histogram, record, value_at};
    use schedlab_core::plan::CaseSpec;
    use schedlab_core::record::IterationRecord;
    use schedlab_core::workload::wakeup::WakeupParams;

    /// One iteration whose wakeup histogram holds `ns`, each value once.
    fn iteration(index: u32, warmup: bool, ns: impl IntoIterator<Item = u64>) -> IterationRecord {
        let mut h = new_latency_histogram();
        for v in ns {
            record(&mut h, v);
        }
        IterationRecord {
            index,
            warmup,
            started_at_ns: 0,
            measurements: Vec::new(),
            attachments: vec![attachment(WAKEUP_ATTACHMENT, &h)],
            quiet: None,
        }
    }

    fn wakeup_case(iterations: Vec<IterationRecord>) -> CaseRecord {
        CaseRecord {
            spec: CaseSpec {
                name: "wakeup".into(),
                workload: WorkloadSpec::Wakeup(WakeupParams {
                    runtime: 2,
                    ..WakeupParams::default()
                }),
                background: Vec::new(),
            },
            iterations,
            error: None,
        }
    }

    fn values(table: &LatencyTable) -> Vec<f64> {
        table.rows.iter().map(|r| r.value).collect()
    }

    /// A timer-latency case's table: its merged histogram at p50, p90, p99 and p99.9, with its
    /// maximum; its window is its loops of one interval.
    #[test]
    fn a_timer_latency_case_gets_its_percentile_table() {
        use schedlab_core::workload::timer_latency::{TimerLatencyParams, ATTACHMENT};
        let mut iterations = vec![iteration(0, false, 1..=1000), iteration(1, false, [1500])];
        for i in &mut iterations {
            i.attachments[0].name = ATTACHMENT.to_string();
        }
        let case = CaseRecord {
            spec: CaseSpec {
                name: "timer-latency".into(),
                workload: WorkloadSpec::TimerLatency(TimerLatencyParams {
                    loops: 3000,
                    interval_usec: 1000,
                    ..TimerLatencyParams::default()
                }),
                background: Vec::new(),
            },
            iterations,
            error: None,
        };
        let tables = latency_tables(&case, None);
        assert_eq!(tables.len(), 1);
        let table = &tables[0];
        assert_eq!(table.title, TIMER_TABLE);
        assert_eq!(
            (table.iterations, table.total_samples, table.runtime_sec),
            (2, 1001, 3)
        );
        let percentiles: Vec<f64> = table.rows.iter().map(|r| r.percentile).collect();
        assert_eq!(percentiles, [50.0, 90.0, 99.0, 99.9]);
        assert_eq!(values(table), [0.501, 0.901, 0.991, 1.0]);
        assert_eq!(table.max, 1.5);
    }

    #[test]
    fn one_iteration_reads_its_own_histogram() {
        // Below 2048 ns every value has its own bucket, so the percentiles are exact.
        let case = wakeup_case(vec![iteration(0, false, 1..=1000)]);
        let tables = latency_tables(&case, None);
        assert_eq!(tables.len(), 1, "only the wakeup histogram was attached");
        let t = &tables[0];
        assert_eq!(
            (t.title.as_str(), t.unit.as_str()),
            ("Wakeup Latencies", "usec")
        );
        assert_eq!((t.iterations, t.runtime_sec, t.total_samples), (1, 2, 1000));
        assert_eq!(values(t), [0.5, 0.9, 0.99, 0.999]);
        let samples: Vec<u64> = t.rows.iter().map(|r| r.samples).collect();
        assert_eq!(samples, [500, 400, 90, 9]);
        let starred: Vec<bool> = t.rows.iter().map(|r| r.starred).collect();
        assert_eq!(starred, [false, false, true, false]);
        assert_eq!((t.min, t.max), (0.001, 1.0));
    }

    /// The table pools the iterations' samples: its p99 is not the median of the iterations' p99s,
    /// which is what the case's quantile metric summarises to.
    #[test]
    fn iterations_are_merged_and_warm_ups_left_out() {
        let case = wakeup_case(vec![
            iteration(0, true, [1_000_000]),
            iteration(1, false, 1..=500),
            iteration(2, false, 501..=1000),
        ]);
        let t = &latency_tables(&case, None)[0];
        assert_eq!((t.iterations, t.total_samples), (2, 1000));
        assert_eq!(values(t), [0.5, 0.9, 0.99, 0.999]);
        assert_eq!(t.max, 1.0, "the warm-up's 1 ms is not in the table");
        let per_iteration_p99: Vec<u64> = case
            .measured()
            .map(|i| value_at(&decode(&i.attachments[0].data).unwrap(), 990).unwrap())
            .collect();
        assert_eq!(per_iteration_p99, [495, 995]);
    }

    #[test]
    fn asked_percentiles_replace_schbenchs() {
        let case = wakeup_case(vec![iteration(0, false, 1..=1000)]);
        let t = &latency_tables(&case, Some(&[750, 995]))[0];
        assert_eq!(values(t), [0.75, 0.995]);
        assert!(t.rows.iter().all(|r| !r.starred));
    }

    #[test]
    fn empty_unreadable_or_absent_histograms_make_no_table() {
        let empty = wakeup_case(vec![iteration(0, false, [])]);
        assert!(latency_tables(&empty, None).is_empty());
        let mut unreadable = wakeup_case(vec![iteration(0, false, [5])]);
        unreadable.iterations[0].attachments[0].data = vec![1, 2, 3];
        assert!(latency_tables(&unreadable, None).is_empty());
        let only_warm_up = wakeup_case(vec![iteration(0, true, [5])]);
        assert!(latency_tables(&only_warm_up, None).is_empty());
        let mut other = wakeup_case(vec![iteration(0, false, [5])]);
        other.spec.workload =
            WorkloadSpec::Fake(schedlab_core::workload::fake::FakeParams::default());
        assert!(latency_tables(&other, None).is_empty());
    }
}
