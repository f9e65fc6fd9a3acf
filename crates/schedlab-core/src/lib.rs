//! schedlab's core: the validated run plan, the workloads behind one trait, the runner that measures
//! them, the OS layer they share, and the machine fingerprint stored with every run.
//!
//! `unsafe` code is denied everywhere but in [`sys`], the one audited OS layer.
#![deny(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod attachment;
pub mod co_runner;
pub mod counters;
pub mod cpu_list;
pub mod error;
pub mod estimate;
pub mod experiment;
pub mod fingerprint;
pub mod import;
pub mod latency;
pub mod metric;
pub mod plan;
pub mod probe;
pub mod quiet;
pub mod record;
pub mod rng;
pub mod runner;
pub mod sched_ext;
pub mod suite;
pub mod summary;
#[allow(unsafe_code)]
pub mod sys;
pub mod vm;
pub mod words;
pub mod workload;

pub use error::{Error, Result};

/// schedlab's version, stored with every run.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit schedlab was built from (`unknown` outside a checkout; `-dirty` with local edits).
pub const GIT_COMMIT: &str = env!("SCHEDLAB_GIT_COMMIT");
