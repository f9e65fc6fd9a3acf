//! Latency histograms: HDR histograms in nanoseconds (1 ns to 60 s, 3 significant digits), the
//! schbench percentile rule with per-percentile sample counts, and the serialized form stored with
//! every iteration so runs can be merged and re-quantiled later (`show`'s schbench-style
//! tables do that: `schedlab_analysis::latency_table`).
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::attachment::Attachment;

/// How latency attachments are encoded: HdrHistogram's V2 format, deflate-compressed.
pub const ENCODING: &str = "hdrhistogram-v2-deflate";
/// Wakeup latency of every measured wakeup, ns.
pub const WAKEUP_ATTACHMENT: &str = "wakeup_latency_ns";
/// Request latency of every request completed in the measured window, ns.
pub const REQUEST_ATTACHMENT: &str = "request_latency_ns";
/// One sample per second of the measured window: requests completed in that second.
pub const RPS_ATTACHMENT: &str = "rps_per_sec";

/// The headings of schbench's tables of each attachment, as schbench prints them (the schedlab
/// tables of `show` and the run JSON reproduce them).
pub const WAKEUP_TABLE: &str = "Wakeup Latencies";
pub const REQUEST_TABLE: &str = "Request Latencies";
pub const RPS_TABLE: &str = "RPS";
/// The heading of the table of `timer-latency`'s histogram (the wake-ups of its timer threads
/// past their absolute deadlines, all threads merged), in schbench's table form.
pub const TIMER_TABLE: &str = "Timer Latencies";

const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 60_000_000_000;
const HIGHEST_RPS: u64 = 1 << 40;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram sized for 1 ns .. 60 s at 3 significant digits. Auto-resize is off, so
/// recording never allocates; values beyond 60 s are clamped (see [`record`]).
pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("constant bounds are valid")
}

/// A histogram of per-second request rates.
pub fn new_rps_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_RPS, SIGNIFICANT_DIGITS)
        .expect("constant bounds are valid")
}

/// Records one value without allocating: the histogram never resizes, and a value above its
/// range is clamped to the top instead of being lost.
#[inline]
pub fn record(histogram: &mut Histogram<u64>, value: u64) {
    histogram.saturating_record(value);
}

/// The serialized attachment of a histogram.
pub fn attachment(name: &str, histogram: &Histogram<u64>) -> Attachment {
    let mut data = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut data)
        .expect("serializing into memory cannot fail");
    Attachment {
        name: name.to_string(),
        encoding: ENCODING.to_string(),
        data,
    }
}

/// Reads a histogram back from an attachment's bytes.
pub fn decode(data: &[u8]) -> Result<Histogram<u64>, String> {
    let mut reader = data;
    Deserializer::new()
        .deserialize(&mut reader)
        .map_err(|e| format!("unreadable histogram: {e:?}"))
}

/// A percentile in tenths of a percent (500 is the median, 999 the 99.9th), so the rank
/// arithmetic below is exact.
pub type PerMille = u32;

/// One printed percentile, as schbench prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PercentileRow {
    pub per_mille: PerMille,
    /// The highest value equivalent to the bucket where the percentile falls.
    pub value: u64,
    /// Samples between the previous printed percentile and this one (schbench's "(k samples)").
    pub samples: u64,
}

/// schbench's percentile rule over a histogram: percentile p is the value of the first bucket
/// whose cumulative count reaches p% of all samples; each row also carries the count since the
/// previous row. `per_mille` must be ascending. Empty histograms give no rows.
pub fn percentile_rows(histogram: &Histogram<u64>, per_mille: &[PerMille]) -> Vec<PercentileRow> {
    let total = histogram.len();
    let mut rows = Vec::with_capacity(per_mille.len());
    if total == 0 {
        return rows;
    }
    let mut wanted = per_mille.iter().copied().peekable();
    let mut cumulative = 0u64;
    let mut previous = 0u64;
    for bucket in histogram.iter_recorded() {
        cumulative += bucket.count_since_last_iteration();
        while let Some(&pm) = wanted.peek() {
            if cumulative < rank_of(pm, total) {
                break;
            }
            rows.push(PercentileRow {
                per_mille: pm,
                value: histogram.highest_equivalent(bucket.value_iterated_to()),
                samples: cumulative - previous,
            });
            previous = cumulative;
            wanted.next();
        }
        if wanted.peek().is_none() {
            break;
        }
    }
    rows
}

/// The smallest cumulative count that reaches `pm`‰ of `total` (at least 1).
fn rank_of(pm: PerMille, total: u64) -> u64 {
    let numerator = u128::from(pm) * u128::from(total);
    (numerator.div_ceil(1000) as u64).max(1)
}

/// The value at one percentile under the same rule; `None` for an empty histogram.
pub fn value_at(histogram: &Histogram<u64>, pm: PerMille) -> Option<u64> {
    percentile_rows(histogram, &[pm]).first().map(|r| r.value)
}

/// The same rule over exact samples (the per-second RPS samples): the first sorted sample whose
/// rank reaches `pm`‰.
pub fn sample_percentile(sorted: &[f64], pm: PerMille) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = rank_of(pm, sorted.len() as u64) as usize;
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram_of(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = new_latency_histogram();
        for v in values {
            record(&mut h, v);
        }
        h
    }

    #[test]
    fn percentiles_of_one_to_a_thousand() {
        // Below 2048 every value has its own bucket, so the results are exact.
        let h = histogram_of(1..=1000);
        let rows = percentile_rows(&h, &[200, 500, 900, 990, 999]);
        let got: Vec<(u64, u64)> = rows.iter().map(|r| (r.value, r.samples)).collect();
        assert_eq!(
            got,
            vec![(200, 200), (500, 300), (900, 400), (990, 90), (999, 9)]
        );
        assert_eq!(value_at(&h, 1000), Some(1000));
    }

    #[test]
    fn percentile_counts_add_up_and_match_nearest_rank() {
        // A skewed set with repeats: the nearest-rank percentile of the sorted samples.
        let mut values: Vec<u64> = (0..5000u64).map(|i| (i * i * 7919) % 2000 + 1).collect();
        let h = histogram_of(values.iter().copied());
        values.sort_unstable();
        let per_mille = [200, 500, 900, 990, 999];
        let rows = percentile_rows(&h, &per_mille);
        for (row, pm) in rows.iter().zip(per_mille) {
            let rank = (u64::from(pm) * 5000).div_ceil(1000) as usize;
            assert_eq!(row.value, values[rank - 1], "{pm}");
        }
        // The counts are cumulative differences: they sum to the count at the last percentile.
        let last_rank = values.partition_point(|&v| v <= rows[4].value) as u64;
        assert_eq!(rows.iter().map(|r| r.samples).sum::<u64>(), last_rank);
    }

    #[test]
    fn several_percentiles_in_one_bucket_count_zero_after_the_first() {
        let h = histogram_of(std::iter::repeat_n(7, 100));
        let rows = percentile_rows(&h, &[500, 900, 999]);
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| r.value == 7));
        assert_eq!(
            rows.iter().map(|r| r.samples).collect::<Vec<_>>(),
            [100, 0, 0]
        );
    }

    #[test]
    fn large_values_keep_three_significant_digits() {
        let h = histogram_of([8_057_000_000]);
        let p50 = value_at(&h, 500).unwrap() as f64;
        assert!((p50 - 8.057e9).abs() / 8.057e9 < 1e-3);
        // Beyond 60 s a value is clamped, not lost.
        let mut h = new_latency_histogram();
        record(&mut h, 600_000_000_000);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn empty_histogram_has_no_rows() {
        assert!(percentile_rows(&new_latency_histogram(), &[500]).is_empty());
        assert_eq!(sample_percentile(&[], 500), None);
    }

    #[test]
    fn exact_sample_percentiles() {
        let samples = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(sample_percentile(&samples, 500), Some(20.0));
        assert_eq!(sample_percentile(&samples, 200), Some(10.0));
        assert_eq!(sample_percentile(&samples, 900), Some(40.0));
    }

    #[test]
    fn attachments_round_trip_and_merge() {
        let a = histogram_of(1..=500);
        let b = histogram_of(501..=1000);
        let mut merged = decode(&attachment(WAKEUP_ATTACHMENT, &a).data).unwrap();
        merged
            .add(decode(&attachment(WAKEUP_ATTACHMENT, &b).data).unwrap())
            .unwrap();
        assert_eq!(merged.len(), 1000);
        assert_eq!(value_at(&merged, 500), Some(500));
        assert!(decode(b"not a histogram").is_err());
    }
}
