//! Metrics: snake_case names with a unit suffix, each knowing its unit, whether lower or higher is
//! better, and whether it is a workload's own result or a secondary measurement of the iteration.
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

/// A workload's own result (primary) or what the runner measured around it (secondary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Secondary,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "primary" => Some(Role::Primary),
            "secondary" => Some(Role::Secondary),
            _ => None,
        }
    }
}

/// The static description of a metric; workloads declare theirs as constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub role: Role,
}

impl MetricDef {
    pub const fn primary(name: &'static str, unit: &'static str, better: Better) -> Self {
        MetricDef {
            name,
            unit,
            better,
            role: Role::Primary,
        }
    }

    pub const fn secondary(name: &'static str, unit: &'static str, better: Better) -> Self {
        MetricDef {
            name,
            unit,
            better,
            role: Role::Secondary,
        }
    }

    pub fn value(self, value: f64) -> Measurement {
        Measurement {
            name: self.name.to_string(),
            unit: self.unit.to_string(),
            better: self.better,
            role: self.role,
            value,
        }
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
    pub value: f64,
}

const NSEC_PER_SEC: f64 = 1e9;

/// Seconds from integer nanoseconds, for display-unit metrics.
pub fn ns_to_sec(ns: u64) -> f64 {
    ns as f64 / NSEC_PER_SEC
}

/// The secondary metrics the runner records for every iteration of a workload that runs tasks.
pub mod secondary {
    use super::{Better, MetricDef};

    pub const WALL_TIME_SEC: MetricDef =
        MetricDef::secondary("wall_time_sec", "sec", Better::Lower);
    pub const USER_CPU_SEC: MetricDef = MetricDef::secondary("user_cpu_sec", "sec", Better::Lower);
    pub const SYS_CPU_SEC: MetricDef = MetricDef::secondary("sys_cpu_sec", "sec", Better::Lower);
    pub const VOLUNTARY_CSW_COUNT: MetricDef =
        MetricDef::secondary("voluntary_csw_count", "count", Better::Lower);
    pub const INVOLUNTARY_CSW_COUNT: MetricDef =
        MetricDef::secondary("involuntary_csw_count", "count", Better::Lower);
    pub const CPU_MIGRATIONS_COUNT: MetricDef =
        MetricDef::secondary("cpu_migrations_count", "count", Better::Lower);
    pub const RES_IPI_COUNT: MetricDef =
        MetricDef::secondary("res_ipi_count", "count", Better::Lower);
    pub const CAL_IPI_COUNT: MetricDef =
        MetricDef::secondary("cal_ipi_count", "count", Better::Lower);
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
        assert_eq!(m.value, 3.0);
    }

    #[test]
    fn direction_round_trips_through_text() {
        for b in [Better::Lower, Better::Higher] {
            assert_eq!(Better::parse(b.as_str()), Some(b));
        }
        for r in [Role::Primary, Role::Secondary] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Better::parse("sideways"), None);
    }
}
