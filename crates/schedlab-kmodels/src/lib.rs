//! User-space models of kernel scheduler data structures.
//!
//! Everything here is pure computation: no system calls, no clocks, no I/O.
//! Benchmarks and reports elsewhere in schedlab drive these models; this crate
//! only answers "what does the kernel's algorithm do with this input".
//!
//! - [`cpudl`]: the sched/deadline max-heap of CPUs ordered by deadline, in
//!   the three variants measured by cpudl-bench (original with the wraparound
//!   bug, bug-fixed, and the hole-based "fast" form that went upstream), the
//!   cpudl-bench operation mix and a realistic one, and a lock-step
//!   equivalence checker.
//! - [`cpupri`]: the RT push/pull CPU-priority map, usable from many threads
//!   at once, with the upstream single-bitmap layout and the per-NUMA-node
//!   split proposed to reduce cache-line contention, plus a plain reference
//!   search to check answers against.
//! - [`rump`]: the rump kernel's scheduler of virtual CPUs onto host threads, in the old global
//!   freelist form and the per-lwp cached-CPU form with a lock-free fast path, with a checker of
//!   who holds which virtual CPU after every entry and exit.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod cpudl;
pub mod cpupri;
pub mod rng;
pub mod rump;
