//! What the kernel counts for the whole machine around a probed iteration: CPU pressure (PSI,
//! /proc/pressure/cpu) and, where the kernel has SCHEDSTATS, the /proc/schedstat counters
//! `perf sched stats diff` shows — wake-ups and where they went, load-balance attempts, failures
//! and balanced domains — read before and after and given as differences.
use crate::metric::{Better, Measurement, MetricDef};

pub const PSI_CPU_SOME_USEC: MetricDef =
    MetricDef::explanatory("psi_cpu_some_usec", "usec", Better::Lower);
pub const PSI_CPU_FULL_USEC: MetricDef =
    MetricDef::explanatory("psi_cpu_full_usec", "usec", Better::Lower);

/// The `total=` of the `some` and `full` lines of a PSI file, microseconds.
pub fn parse_psi(text: &str) -> Option<(u64, Option<u64>)> {
    let total = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse::<u64>()
            .ok()
    };
    Some((total("some ")?, total("full ")))
}

/// The PSI metrics between two readings.
pub fn psi_delta(before: (u64, Option<u64>), after: (u64, Option<u64>)) -> Vec<Measurement> {
    let mut out = vec![PSI_CPU_SOME_USEC.value(after.0.saturating_sub(before.0) as f64)];
    if let (Some(b), Some(a)) = (before.1, after.1) {
        out.push(PSI_CPU_FULL_USEC.value(a.saturating_sub(b) as f64));
    }
    out
}

/// The /proc/schedstat counters summed over CPUs and domains (versions 15 to 17).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedstat {
    pub yld_count: u64,
    pub sched_count: u64,
    pub sched_goidle: u64,
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    pub run_delay_ns: u64,
    pub lb_count: u64,
    pub lb_balanced: u64,
    pub lb_failed: u64,
    pub ttwu_wake_remote: u64,
    pub ttwu_move_affine: u64,
    pub ttwu_move_balance: u64,
}

/// Parses /proc/schedstat: `cpuN` lines (yld_count, a legacy 0, sched_count, sched_goidle,
/// ttwu_count, ttwu_local, rq_cpu_time, run_delay, pcount) and `domainN` lines, whose counters
/// after the CPU mask (and, from version 17, the domain's name before it) are three blocks of
/// load-balance counters (one per idle type; lb_count, lb_balanced, lb_failed first), then
/// 9 of active balancing and exec/fork balancing, then ttwu_wake_remote, ttwu_move_affine and
/// ttwu_move_balance. `None` for a version it does not know.
pub fn parse_schedstat(text: &str) -> Option<Schedstat> {
    let version: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("version "))?
        .trim()
        .parse()
        .ok()?;
    if !(15..=17).contains(&version) {
        return None;
    }
    let mut s = Schedstat::default();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(head) = fields.next() else { continue };
        if head.starts_with("cpu") {
            let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            if v.len() < 8 {
                return None;
            }
            s.yld_count += v[0];
            s.sched_count += v[2];
            s.sched_goidle += v[3];
            s.ttwu_count += v[4];
            s.ttwu_local += v[5];
            s.run_delay_ns += v[7];
        } else if head.starts_with("domain") {
            // The mask (hex with commas) and, in version 17, the name come before the counters.
            let v: Vec<u64> = fields
                .skip(if version >= 17 { 2 } else { 1 })
                .filter_map(|f| f.parse().ok())
                .collect();
            if v.len() < 15 || !(v.len() - 12).is_multiple_of(3) {
                return None;
            }
            let block = (v.len() - 12) / 3;
            for idle_type in 0..3 {
                s.lb_count += v[idle_type * block];
                s.lb_balanced += v[idle_type * block + 1];
                s.lb_failed += v[idle_type * block + 2];
            }
            let n = v.len();
            s.ttwu_wake_remote += v[n - 3];
            s.ttwu_move_affine += v[n - 2];
            s.ttwu_move_balance += v[n - 1];
        }
    }
    Some(s)
}

/// The differences of every counter between two readings, as explanatory metrics.
pub fn schedstat_delta(before: &Schedstat, after: &Schedstat) -> Vec<Measurement> {
    let count = |name: &'static str, better: Better, a: u64, b: u64| {
        MetricDef::explanatory(name, "count", better)
            .count()
            .value(a.saturating_sub(b) as f64)
    };
    use Better::{Higher, Lower};
    vec![
        count(
            "schedstat_yld_count",
            Lower,
            after.yld_count,
            before.yld_count,
        ),
        count(
            "schedstat_sched_count",
            Lower,
            after.sched_count,
            before.sched_count,
        ),
        count(
            "schedstat_sched_goidle_count",
            Lower,
            after.sched_goidle,
            before.sched_goidle,
        ),
        count(
            "schedstat_ttwu_count",
            Lower,
            after.ttwu_count,
            before.ttwu_count,
        ),
        count(
            "schedstat_ttwu_local_count",
            Higher,
            after.ttwu_local,
            before.ttwu_local,
        ),
        MetricDef::explanatory("schedstat_run_delay_usec", "usec", Lower)
            .value(after.run_delay_ns.saturating_sub(before.run_delay_ns) as f64 / 1e3),
        count("schedstat_lb_count", Lower, after.lb_count, before.lb_count),
        count(
            "schedstat_lb_balanced_count",
            Higher,
            after.lb_balanced,
            before.lb_balanced,
        ),
        count(
            "schedstat_lb_failed_count",
            Lower,
            after.lb_failed,
            before.lb_failed,
        ),
        count(
            "schedstat_ttwu_wake_remote_count",
            Lower,
            after.ttwu_wake_remote,
            before.ttwu_wake_remote,
        ),
        count(
            "schedstat_ttwu_move_affine_count",
            Lower,
            after.ttwu_move_affine,
            before.ttwu_move_affine,
        ),
        count(
            "schedstat_ttwu_move_balance_count",
            Lower,
            after.ttwu_move_balance,
            before.ttwu_move_balance,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_totals() {
        let text = "some avg10=96.77 avg60=78.13 avg300=30.86 total=142116856\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_psi(text), Some((142116856, Some(0))));
        assert_eq!(parse_psi("some avg10=0.00 total=5\n"), Some((5, None)));
        let m = psi_delta((100, Some(1)), (250, Some(1)));
        assert_eq!(m[0].value, 150.0);
        assert_eq!(m[1].value, 0.0);
    }

    /// Version 15 (Linux 4.x to 6.5), as a 2-CPU machine prints it.
    const V15: &str = "version 15\ntimestamp 4295\n\
cpu0 5 0 1000 400 300 200 123456 7890 999\n\
domain0 00000003 10 8 1 0 0 0 0 0 20 18 2 0 0 0 0 0 30 29 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 40 5 1\n\
cpu1 1 0 500 100 50 20 100 110 9\n\
domain0 00000003 1 1 0 0 0 0 0 0 2 2 0 0 0 0 0 0 3 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 4 0 0\n";

    #[test]
    fn schedstat_sums_cpus_and_domains() {
        let s = parse_schedstat(V15).unwrap();
        assert_eq!(s.sched_count, 1500);
        assert_eq!(s.ttwu_count, 350);
        assert_eq!(s.ttwu_local, 220);
        assert_eq!(s.run_delay_ns, 8000);
        assert_eq!(s.lb_count, 10 + 20 + 30 + 1 + 2 + 3);
        assert_eq!(s.lb_failed, 3, "1 and 2 in the first domain");
        assert_eq!(s.ttwu_wake_remote, 44);
        assert_eq!(s.ttwu_move_affine, 5);
        assert_eq!(parse_schedstat("version 99\n"), None);
        let d = schedstat_delta(&Schedstat::default(), &s);
        let lb = d.iter().find(|m| m.name == "schedstat_lb_count").unwrap();
        assert_eq!(lb.value, 66.0);
    }

    #[test]
    fn schedstat_17_has_a_name_and_longer_blocks() {
        let blocks: Vec<String> = (0..33).map(|i| (i % 11 + 1).to_string()).collect();
        let text = format!(
            "version 17\ntimestamp 1\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 SMT 00000003 {} 0 0 0 0 0 0 0 0 0 7 8 9\n",
            blocks.join(" ")
        );
        let s = parse_schedstat(&text).unwrap();
        assert_eq!(s.lb_count, 3, "the first of each 11-counter block");
        assert_eq!(s.lb_balanced, 6);
        assert_eq!((s.ttwu_wake_remote, s.ttwu_move_balance), (7, 9));
    }
}
