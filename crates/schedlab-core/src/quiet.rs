//! The quiet-machine guard: the CPU pressure (PSI, /proc/pressure/cpu) an iteration ran under,
//! and, with `--quiet-below`, a bounded wait before each iteration until the machine is quiet.
//!
//! PSI's `some` line counts the microseconds in which at least one runnable task waited for a
//! CPU; its growth over a window, divided by the window's wall time, is the share of that window
//! (in percent) in which something wanted a CPU it could not have — the one figure that says a
//! neighbour (another build, another tenant's vCPU) competed with the measurement. An iteration
//! whose machine never became quiet within the bound, or that was itself run under pressure
//! above the limit, is marked disturbed ([`QuietMark`]); `compare` and `report` can leave such
//! iterations out and say so.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{sys, Error};

/// Where the kernel publishes CPU pressure.
pub const PSI_CPU: &str = "/proc/pressure/cpu";

/// How long each look at the pressure before an iteration lasts: long enough that PSI's
/// microsecond totals resolve a 1 % limit (2 ms of waiting in 200 ms), short enough that a quiet
/// machine costs an iteration a fifth of a second.
pub const SAMPLE_NS: u64 = 200_000_000;

/// The guard as a plan holds it: the pressure limit and how long to wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuietGuard {
    /// CPU `some` pressure, percent of wall time, under which the machine counts as quiet.
    pub below_pct: f64,
    /// The longest wait before an iteration, milliseconds; after it the iteration runs anyway,
    /// marked disturbed.
    pub wait_ms: u64,
}

/// `--quiet-wait`'s default: ten seconds.
pub const DEFAULT_WAIT_MS: u64 = 10_000;

/// The longest `--quiet-wait`: an hour.
pub const MAX_WAIT_MS: u64 = 3_600_000;

/// `--quiet-below`: a percentage of wall time, above 0 and at most 100.
pub fn check_below_pct(pct: f64) -> Result<(), String> {
    if !(pct.is_finite() && pct > 0.0 && pct <= 100.0) {
        return Err(format!(
            "must be a CPU pressure in percent, above 0 and at most 100, not {pct}"
        ));
    }
    Ok(())
}

/// `--quiet-wait`, milliseconds: from none (look once) to an hour.
pub fn check_wait_ms(ms: u64) -> Result<(), String> {
    if ms > MAX_WAIT_MS {
        return Err(format!(
            "must be at most an hour ({} s), not {} s",
            MAX_WAIT_MS / 1000,
            ms as f64 / 1000.0
        ));
    }
    Ok(())
}

/// Why an iteration is marked disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disturbance {
    /// The pressure before it stayed at or above the limit for the whole wait.
    NeverQuiet,
    /// The machine was quiet before it, but the pressure during it reached the limit.
    PressureDuring,
}

impl Disturbance {
    pub fn as_str(self) -> &'static str {
        match self {
            Disturbance::NeverQuiet => "never_quiet",
            Disturbance::PressureDuring => "pressure_during",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "never_quiet" => Some(Disturbance::NeverQuiet),
            "pressure_during" => Some(Disturbance::PressureDuring),
            _ => None,
        }
    }
}

/// What the guard did before an iteration and found after it, stored with the iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuietMark {
    /// The limit the iteration was held to, percent.
    pub limit_pct: f64,
    /// How long the guard waited before the iteration, nanoseconds.
    pub waited_ns: u64,
    /// The pressure of the last look before the iteration, percent; `None` when PSI could not
    /// be read then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_pct: Option<f64>,
    /// `None` for an iteration that ran on a quiet machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<Disturbance>,
}

impl QuietMark {
    /// The mark of an iteration that waited as `waited` says and ran under `during_pct` (`None`
    /// when the pressure during it is not the machine's to judge: its own co-runners made it).
    pub fn of(guard: &QuietGuard, waited: &Waited, during_pct: Option<f64>) -> QuietMark {
        let disturbed = if !waited.quiet {
            Some(Disturbance::NeverQuiet)
        } else if during_pct.is_some_and(|p| p >= guard.below_pct) {
            Some(Disturbance::PressureDuring)
        } else {
            None
        };
        QuietMark {
            limit_pct: guard.below_pct,
            waited_ns: waited.waited_ns,
            before_pct: waited.last_pct,
            disturbed,
        }
    }
}

/// The PSI file the runner reads; tests point it elsewhere.
#[derive(Debug, Clone)]
pub struct Pressure {
    path: PathBuf,
}

/// One reading of the `some` total, with the monotonic time it was taken at.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    some_us: u64,
    at_ns: u64,
}

impl Pressure {
    /// The kernel's.
    pub fn system() -> Self {
        Pressure::at(PSI_CPU)
    }

    /// The file at `path` (a test's missing or malformed one).
    pub fn at(path: impl AsRef<Path>) -> Self {
        Pressure {
            path: path.as_ref().to_path_buf(),
        }
    }

    /// The `some` total now; `None` where the file is missing, unreadable or malformed.
    pub fn read(&self) -> Option<Reading> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let (some_us, _) = crate::probe::kernel_stats::parse_psi(&text)?;
        Some(Reading {
            some_us,
            at_ns: sys::monotonic_ns(),
        })
    }

    /// Why this machine gives no CPU pressure, or `Ok` where it does.
    pub fn availability(&self) -> Result<(), String> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) if crate::probe::kernel_stats::parse_psi(&text).is_some() => Ok(()),
            Ok(_) => Err(format!(
                "{} has no `some … total=` line",
                self.path.display()
            )),
            Err(e) => Err(format!(
                "cannot read {} ({e}): a kernel without CONFIG_PSI, or booted with psi=0",
                self.path.display()
            )),
        }
    }

    /// Waits, looking at the pressure over windows of `sample_ns`, until one is below the
    /// guard's limit or the guard's bound has passed (after at least one look). A stop signal
    /// ends the wait with `Interrupted`.
    pub fn wait_quiet(&self, guard: &QuietGuard, sample_ns: u64) -> Result<Waited, Error> {
        let began = sys::monotonic_ns();
        let bound_ns = guard.wait_ms.saturating_mul(1_000_000);
        loop {
            let start = self.read();
            look_sleep(sample_ns)?;
            let pct = match (start, self.read()) {
                (Some(a), Some(b)) => pressure_pct(a, b),
                // Gone between the check before the run and now: nothing to wait for.
                _ => None,
            };
            let waited_ns = sys::monotonic_ns().saturating_sub(began);
            let Some(pct) = pct else {
                return Ok(Waited {
                    waited_ns,
                    last_pct: None,
                    quiet: false,
                });
            };
            if pct < guard.below_pct || waited_ns >= bound_ns {
                return Ok(Waited {
                    waited_ns,
                    last_pct: Some(pct),
                    quiet: pct < guard.below_pct,
                });
            }
        }
    }
}

/// Sleeps for a look; a stop signal ends it with `Interrupted`.
fn look_sleep(ns: u64) -> Result<(), Error> {
    match sys::sleep_unless_interrupted(ns) {
        Some(signal) => Err(Error::Interrupted(signal)),
        None => Ok(()),
    }
}

/// The pressure between two readings: the growth of `some`, percent of the wall time between
/// them; `None` for readings taken at the same instant.
pub fn pressure_pct(before: Reading, after: Reading) -> Option<f64> {
    let wall_ns = after.at_ns.checked_sub(before.at_ns).filter(|&ns| ns > 0)?;
    let stalled_ns = after.some_us.saturating_sub(before.some_us) as f64 * 1000.0;
    Some((stalled_ns / wall_ns as f64 * 100.0).min(100.0))
}

/// How a wait before an iteration went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waited {
    pub waited_ns: u64,
    /// The pressure of the last look, percent; `None` when PSI could not be read.
    pub last_pct: Option<f64>,
    /// Whether the last look was below the limit.
    pub quiet: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(some_us: u64, at_ns: u64) -> Reading {
        Reading { some_us, at_ns }
    }

    #[test]
    fn pressure_is_the_share_of_wall_time_something_waited() {
        // 20 ms of waiting in 200 ms: 10 %.
        let pct = pressure_pct(reading(1_000, 0), reading(21_000, 200_000_000)).unwrap();
        assert!((pct - 10.0).abs() < 1e-9, "{pct}");
        assert_eq!(pressure_pct(reading(5, 7), reading(9, 7)), None);
        // `some` counts wall time, so it cannot pass 100 %; a late reading does not make it.
        let pct = pressure_pct(reading(0, 0), reading(300, 100_000)).unwrap();
        assert_eq!(pct, 100.0);
    }

    #[test]
    fn a_missing_or_malformed_file_is_unavailable_with_why() {
        let dir = std::env::temp_dir().join(format!("schedlab-psi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = Pressure::at(dir.join("absent"));
        assert!(missing.read().is_none());
        let why = missing.availability().unwrap_err();
        assert!(why.contains("absent") && why.contains("psi=0"), "{why}");
        let malformed = dir.join("malformed");
        std::fs::write(&malformed, "full avg10=0.00 total=3\n").unwrap();
        let why = Pressure::at(&malformed).availability().unwrap_err();
        assert!(why.contains("some"), "{why}");
        let good = dir.join("good");
        std::fs::write(&good, "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n").unwrap();
        assert_eq!(Pressure::at(&good).availability(), Ok(()));
        assert_eq!(Pressure::at(&good).read().unwrap().some_us, 42);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_wait_without_pressure_to_read_is_not_quiet() {
        let guard = QuietGuard {
            below_pct: 1.0,
            wait_ms: 0,
        };
        let waited = Pressure::at("/nonexistent/pressure/cpu")
            .wait_quiet(&guard, 1_000_000)
            .unwrap();
        assert!(!waited.quiet && waited.last_pct.is_none());
    }

    #[test]
    fn the_mark_says_why() {
        let guard = QuietGuard {
            below_pct: 5.0,
            wait_ms: 1000,
        };
        let quiet = Waited {
            waited_ns: 200,
            last_pct: Some(1.0),
            quiet: true,
        };
        assert_eq!(QuietMark::of(&guard, &quiet, Some(4.9)).disturbed, None);
        assert_eq!(
            QuietMark::of(&guard, &quiet, Some(5.0)).disturbed,
            Some(Disturbance::PressureDuring)
        );
        assert_eq!(QuietMark::of(&guard, &quiet, None).disturbed, None);
        let loud = Waited {
            quiet: false,
            last_pct: Some(40.0),
            ..quiet
        };
        let mark = QuietMark::of(&guard, &loud, Some(0.0));
        assert_eq!(mark.disturbed, Some(Disturbance::NeverQuiet));
        assert_eq!((mark.before_pct, mark.waited_ns), (Some(40.0), 200));
        for d in [Disturbance::NeverQuiet, Disturbance::PressureDuring] {
            assert_eq!(Disturbance::parse(d.as_str()), Some(d));
        }
        assert_eq!(Disturbance::parse("loud"), None);
    }
}
