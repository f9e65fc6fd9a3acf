//! schedlab's analysis: from stored runs to decisions, with no I/O.
//!
//! - [`across`]: one set of runs split into sides by the value of a workload parameter
//!   (`compare --across`).
//! - [`series`]: a comparison's sides — each side's runs and, per case × metric, their values.
//! - [`units`]: the unit of replication of a row (runs, boots, A/B pairs or plain values) and
//!   the run summaries (the mean of ln x over a run's iterations) it is built from.
//! - [`machine`]: the hardware-and-tuning key runs must share to be compared or calibrated alike.
//! - [`calibration`]: a machine's noise model (`schedlab calibrate`): between-run, within-run and
//!   boot-to-boot variance per case × metric, and how a comparison finds the one that applies.
//! - [`compare`]: the decision procedure — variance from today's units and/or a calibration, the
//!   stale-calibration guard ([`guard`]), Student's t, multiplicity, verdicts, sequential looks.
//! - [`figures`] and [`latency`]: every descriptive number the report styles print.
//! - [`case_summary`] and [`latency_table`]: every number `run` and `show` print — each metric's
//!   summary over a case's iterations and the schbench-style tables of its pooled samples.
//! - [`grouping`] and [`scaling`]: matrix cases that vary one numeric parameter, found among case
//!   specs, and a comparison's sides as curves against it.
//! - [`history`]: one machine's run summaries of a metric over time and kernels, and the
//!   change points in them (E-divisive means, judged against the calibrated noise).
//! - [`model`]: the comparison model the reports render and the JSON serialises; [`notes`] and
//!   [`footer`]: what it says besides numbers, as typed facts (why a row is not judged, the
//!   notes under the tables). No sentence is written here: `schedlab-report` words every fact
//!   (tests/no_prose.rs reads these sources), and no module reaches back to itself through its
//!   imports (tests/no_cycles.rs).
//!
//! Iterations within a run are not independent evidence about a kernel; runs (and boots) are.
//! Nothing here prints a verdict the data cannot support: a row without a variance estimate is
//! shown but not judged.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod across;
pub mod calibration;
pub mod case_summary;
pub mod compare;
pub mod figures;
pub mod footer;
pub mod grouping;
pub mod guard;
pub mod history;
pub mod latency;
pub mod latency_table;
pub mod machine;
pub mod model;
pub mod notes;
pub mod scaling;
pub mod series;
pub mod settings;
pub mod units;

#[cfg(test)]
mod testutil;

pub use calibration::{Calibration, CalibrationSet};
pub use compare::{compare, compare_across};
pub use machine::MachineKey;
pub use model::{Comparison, Row, Verdict};
pub use series::{MetricFilter, RunInput, Side, SideBuilder};
pub use settings::{AdjustmentName, SequentialPlan, Settings};
