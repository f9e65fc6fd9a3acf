//! Metrics: snake_case names with a unit suffix, each declared by its workload (or, for what is
//! measured around every iteration, by the runner) with its unit, whether lower or higher is
//! better, whether it is the workload's own result or a secondary measurement, and its shape —
//! what one value is (a scalar, a count, a quantile of a distribution, its max) — so nothing
//! downstream learns what a metric is from its name.
use serde::{Deserialize, Serialize};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "lower" => Some(Better::Lower),
            "higher" => Some(Better::Higher),
            _ => None,
        }
    }
}

/// A workload's own result (primary), what the runner measured around it (secondary), or what
/// probes saw in an iteration of its own that explains them (explanatory: run-queue delays,
/// wake placement, system calls; the probe module), never stored beside the other two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Secondary,
    Explanatory,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
            Role::Explanatory => "explanatory",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "primary" => Some(Role::Primary),
            "secondary" => Some(Role::Secondary),
            "explanatory" => Some(Role::Explanatory),
            _ => None,
        }
    }
}

/// What one value of a metric is. Quantiles and maxima summarise a distribution the iteration
/// sampled, named by the metric's `distribution`; together they make its latency curve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricShape {
    /// One number that is none of the others: a time, a mean, a rate.
    #[default]
    Scalar,
    /// How many times something happened in the iteration.
    Count,
    /// The p-th percentile of the distribution, 0 < p < 100 (99.9 for the 99.9th).
    Quantile(f64),
    /// The largest sample of the distribution.
    Max,
}

impl MetricShape {
    /// The name the store and the JSON outputs use: `scalar`, `count`, `quantile`, `max`.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricShape::Scalar => "scalar",
            MetricShape::Count => "count",
            MetricShape::Quantile(_) => "quantile",
            MetricShape::Max => "max",
        }
    }

    /// The percentile of a quantile.
    pub fn p(self) -> Option<f64> {
        match self {
            MetricShape::Quantile(p) => Some(p),
            _ => None,
        }
    }

    /// The inverse of [`MetricShape::as_str`] and [`MetricShape::p`]; `None` for an unknown
    /// name, a quantile without a valid p, or a p given to another shape.
    pub fn parse(text: &str, p: Option<f64>) -> Option<Self> {
        match (text, p) {
            ("scalar", None) => Some(MetricShape::Scalar),
            ("count", None) => Some(MetricShape::Count),
            ("quantile", Some(p)) if p > 0.0 && p < 100.0 => Some(MetricShape::Quantile(p)),
            ("max", None) => Some(MetricShape::Max),
            _ => None,
        }
    }

    /// Whether the shape summarises a distribution (and so needs one named).
    pub fn of_distribution(self) -> bool {
        matches!(self, MetricShape::Quantile(_) | MetricShape::Max)
    }
}

/// How a metric restates another metric of its workload: the same measurement turned over
/// (`ops_per_sec` is 10⁶ ÷ `usec_per_op`) or scaled by a constant of the case (`time_sec` is
/// `usec_per_item` × items). A change in one is the same change in the other: one effect, one
/// hypothesis, so a comparison tests the metric restated and shows this one beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Restatement {
    Reciprocal,
    Multiple,
}

/// The metric a metric restates, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Restates {
    pub metric: &'static str,
    pub how: Restatement,
}

/// The static description of a metric; workloads declare theirs as constants and list them in
/// `Workload::metrics()`, the schema the runner holds every iteration to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub role: Role,
    pub shape: MetricShape,
    /// What a quantile or max summarises (`wakeup` for the wakeup latencies); `None` for the
    /// other shapes.
    pub distribution: Option<&'static str>,
    /// Whether a successful iteration may leave the metric out: declared, but measured only where
    /// it can be (a counter this machine lacks, a distribution that took no sample).
    pub optional: bool,
    /// The metric of the same workload this one restates (see [`Restatement`]); `None` for a
    /// measurement of its own.
    pub restates: Option<Restates>,
}

impl MetricDef {
    /// A scalar result of the workload; see [`MetricDef::count`], [`MetricDef::quantile`] and
    /// [`MetricDef::max_of`] for the other shapes.
    pub const fn primary(name: &'static str, unit: &'static str, better: Better) -> Self {
        MetricDef {
            name,
            unit,
            better,
            role: Role::Primary,
            shape: MetricShape::Scalar,
            distribution: None,
            optional: false,
            restates: None,
        }
    }

    /// A scalar measured beside the workload's result.
    pub const fn secondary(name: &'static str, unit: &'static str, better: Better) -> Self {
        MetricDef {
            role: Role::Secondary,
            ..MetricDef::primary(name, unit, better)
        }
    }

    /// A scalar a probe measured in an iteration of its own ([`Role::Explanatory`]).
    pub const fn explanatory(name: &'static str, unit: &'static str, better: Better) -> Self {
        MetricDef {
            role: Role::Explanatory,
            ..MetricDef::primary(name, unit, better)
        }
    }

    /// A count of events (unit `count`) as the workload's result.
    pub const fn primary_count(name: &'static str, better: Better) -> Self {
        MetricDef::primary(name, "count", better).count()
    }

    /// A count of events (unit `count`) measured beside the workload's result.
    pub const fn secondary_count(name: &'static str, better: Better) -> Self {
        MetricDef::secondary(name, "count", better).count()
    }

    /// The metric as a count of events.
    pub const fn count(self) -> Self {
        MetricDef {
            shape: MetricShape::Count,
            ..self
        }
    }

    /// The metric as the `p`-th percentile (0 < p < 100) of `distribution`.
    pub const fn quantile(self, distribution: &'static str, p: f64) -> Self {
        assert!(p > 0.0 && p < 100.0, "a quantile's p lies in (0, 100)");
        MetricDef {
            shape: MetricShape::Quantile(p),
            distribution: Some(distribution),
            ..self
        }
    }

    /// The metric as the largest sample of `distribution`.
    pub const fn max_of(self, distribution: &'static str) -> Self {
        MetricDef {
            shape: MetricShape::Max,
            distribution: Some(distribution),
            ..self
        }
    }

    /// The metric as one a successful iteration may leave out.
    pub const fn optional(self) -> Self {
        MetricDef {
            optional: true,
            ..self
        }
    }

    /// The metric as the reciprocal of `of` (times a constant): shown beside it, not tested
    /// again.
    pub const fn reciprocal_of(self, of: MetricDef) -> Self {
        MetricDef {
            restates: Some(Restates {
                metric: of.name,
                how: Restatement::Reciprocal,
            }),
            ..self
        }
    }

    /// The metric as `of` times a constant of the case: shown beside it, not tested again.
    pub const fn multiple_of(self, of: MetricDef) -> Self {
        MetricDef {
            restates: Some(Restates {
                metric: of.name,
                how: Restatement::Multiple,
            }),
            ..self
        }
    }

    pub fn value(self, value: f64) -> Measurement {
        Measurement {
            name: self.name.to_string(),
            unit: self.unit.to_string(),
            better: self.better,
            role: self.role,
            shape: self.shape,
            distribution: self.distribution.map(str::to_string),
            value,
        }
    }

    /// Whether `m` is a value of this metric as declared: the same name, unit, direction, role,
    /// shape and distribution.
    pub fn describes(&self, m: &Measurement) -> bool {
        m.name == self.name
            && m.unit == self.unit
            && m.better == self.better
            && m.role == self.role
            && m.shape == self.shape
            && m.distribution.as_deref() == self.distribution
    }
}

/// One metric's value in one iteration, self-describing so stored runs stay readable after
/// schedlab's metric tables change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub role: Role,
    #[serde(default)]
    pub shape: MetricShape,
    /// See [`MetricDef::distribution`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    pub value: f64,
}

/// How an iteration's measurements break the metrics declared for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Breach {
    /// Returned, but not declared.
    Undeclared(String),
    /// Declared (and not optional), but not returned.
    Missing(&'static str),
    /// Returned more than once.
    Repeated(String),
    /// Returned with a unit, direction, role, shape or distribution other than its declaration's.
    Misdescribed(String),
    /// Returned as NaN or an infinity: no summary, comparison or history can use it.
    NotFinite(String, f64),
}

/// Holds one iteration's measurements to the metrics declared for it: each returned metric must
/// be declared, returned once and as declared; each declared one that is not optional must be
/// returned. The breaches of the returned metrics come first, in their order, then the missing
/// ones in declaration order; none when the iteration keeps to its schema.
pub fn check_declared(declared: &[MetricDef], measured: &[Measurement]) -> Vec<Breach> {
    let mut breaches = Vec::new();
    for (i, m) in measured.iter().enumerate() {
        if measured[..i].iter().any(|earlier| earlier.name == m.name) {
            breaches.push(Breach::Repeated(m.name.clone()));
            continue;
        }
        match declared.iter().find(|d| d.name == m.name) {
            None => breaches.push(Breach::Undeclared(m.name.clone())),
            Some(def) if !def.describes(m) => breaches.push(Breach::Misdescribed(m.name.clone())),
            Some(_) if !m.value.is_finite() => {
                breaches.push(Breach::NotFinite(m.name.clone(), m.value))
            }
            Some(_) => {}
        }
    }
    for def in declared.iter().filter(|d| !d.optional) {
        if !measured.iter().any(|m| m.name == def.name) {
            breaches.push(Breach::Missing(def.name));
        }
    }
    breaches
}

const NSEC_PER_SEC: f64 = 1e9;

/// Seconds from integer nanoseconds, for display-unit metrics.
pub fn ns_to_sec(ns: u64) -> f64 {
    ns as f64 / NSEC_PER_SEC
}

/// The restatement declared for `metric` in any of `lists` (a workload's metric lists, one per
/// mode); `None` for a metric none declares, or one that restates nothing.
pub fn restatement_in(lists: &[&[MetricDef]], metric: &str) -> Option<Restates> {
    lists
        .iter()
        .flat_map(|list| list.iter())
        .find(|def| def.name == metric)
        .and_then(|def| def.restates)
}

/// Metrics renamed after runs were stored under their former names, each with its current name.
/// Whatever reads a stored or typed name (the store, a stored calibration, `--metric`) takes the
/// former name for the current one, so a case's history runs on across the rename and an old
/// database compares with new runs. A line is never removed.
pub const FORMER_NAMES: &[(&str, &str)] = &[
    // schbench's own spelling, before every name ended with its unit.
    ("rps_p20", "requests_p20_per_sec"),
    ("rps_p50", "requests_p50_per_sec"),
    ("rps_p90", "requests_p90_per_sec"),
    ("rps_p99", "requests_p99_per_sec"),
    ("rps_p99_9", "requests_p99_9_per_sec"),
    ("rps_avg", "requests_avg_per_sec"),
    // Named as its neighbours `min_task_ops_per_sec` and `max_task_ops_per_sec` are.
    ("ops_per_sec_per_task", "mean_task_ops_per_sec"),
];

/// The current name of a metric stored or typed as `name` (see [`FORMER_NAMES`]).
pub fn current_name(name: &str) -> &str {
    FORMER_NAMES
        .iter()
        .find(|(former, _)| *former == name)
        .map_or(name, |(_, current)| current)
}

/// Whether `name` ends with its unit, as every declared metric's does: `_usec` for `usec`, `_pct`
/// for `%`, `_per_sec` for a rate (`ops/sec`), or, for a cost per operation, the unit first
/// (`nsec_per_op`). A reader of `show`'s output or a CSV column then knows the unit from the name.
pub fn names_its_unit(name: &str, unit: &str) -> bool {
    let unit = match unit {
        "%" | "percent" => "pct".to_string(),
        _ => unit.to_ascii_lowercase(),
    };
    match unit.split_once('/') {
        Some((_, per)) => name.ends_with(&format!("_per_{per}")),
        None => name.ends_with(&format!("_{unit}")) || name.starts_with(&format!("{unit}_per_")),
    }
}

/// The secondary metrics the runner records for every iteration of a workload that runs tasks.
pub mod secondary {
    use super::{Better, MetricDef};

    pub const WALL_TIME_SEC: MetricDef =
        MetricDef::secondary("wall_time_sec", "sec", Better::Lower);
    pub const USER_CPU_SEC: MetricDef = MetricDef::secondary("user_cpu_sec", "sec", Better::Lower);
    pub const SYS_CPU_SEC: MetricDef = MetricDef::secondary("sys_cpu_sec", "sec", Better::Lower);
    pub const VOLUNTARY_CSW_COUNT: MetricDef =
        MetricDef::secondary_count("voluntary_csw_count", Better::Lower);
    pub const INVOLUNTARY_CSW_COUNT: MetricDef =
        MetricDef::secondary_count("involuntary_csw_count", Better::Lower);
    /// A perf software counter on every online CPU (system-wide): optional, as perf events may be
    /// unavailable (or forbidden).
    pub const CPU_MIGRATIONS_COUNT: MetricDef =
        MetricDef::secondary_count("cpu_migrations_count", Better::Lower).optional();
    /// Rows of /proc/interrupts, which not every architecture has.
    pub const RES_IPI_COUNT: MetricDef =
        MetricDef::secondary_count("res_ipi_count", Better::Lower).optional();
    pub const CAL_IPI_COUNT: MetricDef =
        MetricDef::secondary_count("cal_ipi_count", Better::Lower).optional();
    /// Steal time of /proc/stat summed over CPUs: in a guest, how long its vCPUs wanted to run
    /// while the host ran something else. Optional, as /proc may be unreadable.
    pub const STEAL_CPU_SEC: MetricDef =
        MetricDef::secondary("steal_cpu_sec", "sec", Better::Lower).optional();

    /// CPU pressure (PSI `some`, /proc/pressure/cpu) over the iteration: the share of its wall
    /// time in which some task waited for a CPU, in percent. Optional, as a kernel may have PSI
    /// off (`psi=0`); the run then says so in one line.
    pub const PSI_CPU_SOME_PCT: MetricDef =
        MetricDef::secondary("psi_cpu_some_pct", "%", Better::Lower).optional();

    /// What the runner measures of the workload's tasks, when it runs tasks.
    pub const TASKS: &[MetricDef] = &[
        WALL_TIME_SEC,
        USER_CPU_SEC,
        SYS_CPU_SEC,
        VOLUNTARY_CSW_COUNT,
        INVOLUNTARY_CSW_COUNT,
        CPU_MIGRATIONS_COUNT,
        RES_IPI_COUNT,
        CAL_IPI_COUNT,
    ];

    /// What the runner measures of the machine around every iteration of every workload: what
    /// else competed for the CPUs while it ran.
    pub const MACHINE: &[MetricDef] = &[STEAL_CPU_SEC, PSI_CPU_SOME_PCT];

    /// Every metric the runner declares: [`TASKS`] then [`MACHINE`].
    pub fn all() -> impl Iterator<Item = &'static MetricDef> {
        TASKS.iter().chain(MACHINE)
    }
}

/// The value of the measurement named `name`: what workloads' tests read; a missing one fails
/// the test naming what was measured.
#[cfg(test)]
pub(crate) fn value_of(m: &[Measurement], name: &str) -> f64 {
    m.iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no {name} in {m:?}"))
        .value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurement_carries_definition() {
        let m = secondary::RES_IPI_COUNT.value(3.0);
        assert_eq!(m.name, "res_ipi_count");
        assert_eq!(m.better, Better::Lower);
        assert_eq!(m.role, Role::Secondary);
        assert_eq!(m.shape, MetricShape::Count);
        assert_eq!(m.value, 3.0);
        assert!(secondary::RES_IPI_COUNT.describes(&m));

        const P99_9: MetricDef =
            MetricDef::primary("wait_p99_9_usec", "usec", Better::Lower).quantile("wait", 99.9);
        let m = P99_9.value(7.0);
        assert_eq!(m.shape, MetricShape::Quantile(99.9));
        assert_eq!(m.distribution.as_deref(), Some("wait"));
        assert!(P99_9.describes(&m));
        assert!(!P99_9.max_of("wait").describes(&m));
    }

    #[test]
    fn direction_round_trips_through_text() {
        for b in [Better::Lower, Better::Higher] {
            assert_eq!(Better::parse(b.as_str()), Some(b));
        }
        for r in [Role::Primary, Role::Secondary, Role::Explanatory] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Better::parse("sideways"), None);
    }

    #[test]
    fn shape_round_trips_through_text() {
        for s in [
            MetricShape::Scalar,
            MetricShape::Count,
            MetricShape::Quantile(99.9),
            MetricShape::Max,
        ] {
            assert_eq!(MetricShape::parse(s.as_str(), s.p()), Some(s));
        }
        assert_eq!(MetricShape::parse("quantile", None), None);
        assert_eq!(MetricShape::parse("quantile", Some(100.0)), None);
        assert_eq!(MetricShape::parse("scalar", Some(50.0)), None);
        assert_eq!(MetricShape::parse("mean", None), None);
    }

    #[test]
    fn iterations_are_held_to_their_declared_metrics() {
        const A: MetricDef = MetricDef::primary("a_usec", "usec", Better::Lower);
        const B: MetricDef = MetricDef::primary_count("b_count", Better::Lower);
        const C: MetricDef = MetricDef::primary("c_usec", "usec", Better::Lower).optional();
        let declared = [A, B, C];
        assert_eq!(check_declared(&declared, &[A.value(1.0), B.value(2.0)]), []);
        assert_eq!(
            check_declared(&declared, &[A.value(1.0), B.value(2.0), C.value(3.0)]),
            []
        );
        let stray = MetricDef::primary("d_sec", "sec", Better::Lower);
        assert_eq!(
            check_declared(&declared, &[stray.value(1.0), A.value(1.0)]),
            [
                Breach::Undeclared("d_sec".into()),
                Breach::Missing("b_count")
            ]
        );
        let mut as_scalar = B.value(2.0);
        as_scalar.shape = MetricShape::Scalar;
        assert_eq!(
            check_declared(&declared, &[A.value(1.0), A.value(1.0), as_scalar]),
            [
                Breach::Repeated("a_usec".into()),
                Breach::Misdescribed("b_count".into())
            ]
        );
        assert_eq!(
            check_declared(&declared, &[A.value(f64::INFINITY), B.value(f64::NAN)])
                .iter()
                .map(|b| match b {
                    Breach::NotFinite(name, _) => name.as_str(),
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>(),
            ["a_usec", "b_count"]
        );
    }

    #[test]
    fn the_runners_metrics_are_declared_once_with_counts_as_counts() {
        for (i, def) in secondary::all().enumerate() {
            assert!(secondary::all().take(i).all(|d| d.name != def.name));
            assert_eq!(def.role, Role::Secondary, "{}", def.name);
            assert_eq!(
                def.shape == MetricShape::Count,
                def.unit == "count",
                "{}",
                def.name
            );
        }
    }
}
