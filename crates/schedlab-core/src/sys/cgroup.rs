//! The cgroup CPU controller: where this machine mounts it (cgroup v2's unified hierarchy, or the
//! `cpu` hierarchy of v1), the cgroups the scenario workload makes for its tasks with their
//! bandwidth, weight and idle flag written in that version's files, their throttling read back,
//! and the removal of cgroups a schedlab that died without cleaning up left behind. Part of the
//! audited OS layer (`crate::sys`).
//!
//! Every cgroup schedlab makes sits directly under the controller's root and is named
//! `schedlab-PID-START-LABEL`: the pid and start time (clock ticks since boot) of the schedlab
//! process that owns it. A cgroup whose owner is no longer running (no such pid, or a pid reused by
//! a process started at another time) is stale, and [`remove_stale_cgroups`] removes it. The root is
//! the one place that works on every machine: under cgroup v2 a cgroup with processes of its own
//! may not enable controllers for children, and schedlab's own cgroup usually has processes.
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::proc::{process_stat, this_process};
use super::time::sleep_ns;

/// Which cgroup hierarchy holds the CPU controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// A v1 hierarchy mounted with the `cpu` controller (`cpu.cfs_quota_us`, `cpu.shares`).
    V1,
    /// The unified v2 hierarchy with `cpu` in its controllers (`cpu.max`, `cpu.weight`).
    V2,
}

/// Where the CPU controller is mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuController {
    pub version: CgroupVersion,
    /// The hierarchy's mount point, where schedlab's cgroups are made.
    pub root: PathBuf,
}

/// How much a cgroup weighs against its siblings, in either version's scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuShare {
    /// cgroup v2's `cpu.weight`, 1 to 10,000 (100 is the default).
    Weight(u64),
    /// cgroup v1's `cpu.shares`, 2 to 262,144 (1,024 is the default).
    Shares(u64),
}

impl CpuShare {
    /// The v2 weight, converted from shares as systemd converts them.
    pub fn weight(self) -> u64 {
        match self {
            CpuShare::Weight(w) => w,
            CpuShare::Shares(s) => {
                (1 + (s.clamp(2, 262_144) - 2) * 9_999 / 262_142).clamp(1, 10_000)
            }
        }
    }

    /// The v1 shares, converted from a weight as systemd converts them.
    pub fn shares(self) -> u64 {
        match self {
            CpuShare::Shares(s) => s,
            CpuShare::Weight(w) => (w.clamp(1, 10_000) * 1_024 / 100).clamp(2, 262_144),
        }
    }
}

/// The CPU settings of one cgroup; `None` leaves the kernel's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSettings {
    /// CPU time the cgroup may use per period (CFS bandwidth control), nanoseconds.
    pub quota_ns: Option<u64>,
    /// The bandwidth period, nanoseconds (the kernel's default is 100 ms).
    pub period_ns: Option<u64>,
    pub share: Option<CpuShare>,
    /// `cpu.idle`: the cgroup's tasks run as SCHED_IDLE against its siblings (5.15 on).
    pub idle: Option<bool>,
}

/// What the controller's `cpu.stat` says of bandwidth control.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Throttling {
    /// Enforcement periods that elapsed with tasks runnable.
    pub periods: u64,
    /// Periods in which the cgroup ran out of quota.
    pub throttled_periods: u64,
    /// How long its tasks were throttled in all, nanoseconds.
    pub throttled_ns: u64,
}

impl Throttling {
    pub fn saturating_sub(self, earlier: Throttling) -> Throttling {
        Throttling {
            periods: self.periods.saturating_sub(earlier.periods),
            throttled_periods: self
                .throttled_periods
                .saturating_sub(earlier.throttled_periods),
            throttled_ns: self.throttled_ns.saturating_sub(earlier.throttled_ns),
        }
    }
}

/// The start of every cgroup schedlab makes.
const PREFIX: &str = "schedlab-";

/// Where the CPU controller is mounted, from /proc/self/mounts: a v1 hierarchy with the `cpu`
/// controller among its options, else the v2 hierarchy whose `cgroup.controllers` lists `cpu`.
/// `None` where neither is mounted.
pub fn cpu_controller() -> Option<CpuController> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let mut v2 = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, mount_point, fs_type, options, ..] = fields[..] else {
            continue;
        };
        let root = PathBuf::from(unescape_mount_field(mount_point));
        match fs_type {
            "cgroup" if options.split(',').any(|o| o == "cpu") => {
                return Some(CpuController {
                    version: CgroupVersion::V1,
                    root,
                })
            }
            "cgroup2" if v2.is_none() => {
                let controllers =
                    std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "cpu") {
                    v2 = Some(CpuController {
                        version: CgroupVersion::V2,
                        root,
                    });
                }
            }
            _ => {}
        }
    }
    v2
}

/// /proc/mounts writes a space in a path as `\040` (and tab, newline and backslash alike).
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let octal = std::str::from_utf8(&bytes[i + 1..i + 4]).ok();
            if let Some(value) = octal.and_then(|o| u8::from_str_radix(o, 8).ok()) {
                out.push(value);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl CpuController {
    /// Why cgroups cannot be made here, if they cannot: the root is not writable (not root), or
    /// under v2 the root does not hand the `cpu` controller to its children.
    pub fn unusable(&self) -> Option<String> {
        let root = self.root.display();
        if rustix::fs::access(&self.root, rustix::fs::Access::WRITE_OK).is_err() {
            return Some(format!(
                "cannot make cgroups in {root} (the {} cpu controller): not writable by this \
                 user (run as root)",
                self.version_name()
            ));
        }
        if self.version == CgroupVersion::V2 {
            let enabled = std::fs::read_to_string(self.root.join("cgroup.subtree_control"))
                .unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "cpu") {
                return Some(format!(
                    "cgroup v2 at {root} does not enable the cpu controller for its children \
                     (cgroup.subtree_control lacks `cpu`)"
                ));
            }
        }
        None
    }

    /// `cgroup v1` or `cgroup v2`, for messages.
    pub fn version_name(&self) -> &'static str {
        match self.version {
            CgroupVersion::V1 => "cgroup v1",
            CgroupVersion::V2 => "cgroup v2",
        }
    }

    /// Whether this kernel's controller has `file` (`cpu.idle` came in 5.15): under v1 the root
    /// has every file a child gets; under v2 the root has none of the cpu controller's, so the
    /// answer is true there and a missing file shows when a cgroup is made.
    pub fn has_file(&self, file: &str) -> bool {
        match self.version {
            CgroupVersion::V1 => self.root.join(file).exists(),
            CgroupVersion::V2 => true,
        }
    }

    /// Makes the cgroup `schedlab-PID-START-LABEL` of this process with `settings`; a cgroup made
    /// but not configured is removed again before the error returns.
    pub fn create(&self, label: &str, settings: &CpuSettings) -> io::Result<PathBuf> {
        let (pid, start) = this_process();
        let dir = self
            .root
            .join(format!("{PREFIX}{pid}-{}-{label}", start.unwrap_or(0)));
        std::fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("mkdir {}: {e}", dir.display())))?;
        if let Err(e) = self.apply(&dir, settings) {
            let _ = remove_cgroup(&dir);
            return Err(e);
        }
        Ok(dir)
    }

    fn apply(&self, dir: &Path, settings: &CpuSettings) -> io::Result<()> {
        let us = |ns: u64| (ns / 1_000).max(1);
        match self.version {
            CgroupVersion::V1 => {
                if let Some(period) = settings.period_ns {
                    write_file(dir, "cpu.cfs_period_us", &us(period).to_string())?;
                }
                if let Some(quota) = settings.quota_ns {
                    write_file(dir, "cpu.cfs_quota_us", &us(quota).to_string())?;
                }
                if let Some(share) = settings.share {
                    write_file(dir, "cpu.shares", &share.shares().to_string())?;
                }
            }
            CgroupVersion::V2 => {
                if settings.quota_ns.is_some() || settings.period_ns.is_some() {
                    let quota = settings
                        .quota_ns
                        .map_or_else(|| "max".to_string(), |q| us(q).to_string());
                    let period = us(settings.period_ns.unwrap_or(100_000_000));
                    write_file(dir, "cpu.max", &format!("{quota} {period}"))?;
                }
                if let Some(share) = settings.share {
                    write_file(dir, "cpu.weight", &share.weight().to_string())?;
                }
            }
        }
        if let Some(idle) = settings.idle {
            write_file(dir, "cpu.idle", if idle { "1" } else { "0" })?;
        }
        Ok(())
    }

    /// The bandwidth counters of the cgroup at `dir`.
    pub fn throttling(&self, dir: &Path) -> io::Result<Throttling> {
        let text = std::fs::read_to_string(dir.join("cpu.stat"))?;
        let field = |name: &str| {
            text.lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        Ok(Throttling {
            periods: field("nr_periods"),
            throttled_periods: field("nr_throttled"),
            throttled_ns: match self.version {
                CgroupVersion::V1 => field("throttled_time"),
                CgroupVersion::V2 => field("throttled_usec").saturating_mul(1_000),
            },
        })
    }
}

/// Writes `value` to the control file `file` of the cgroup at `dir`, in one write as the kernel
/// expects; the error names the file.
fn write_file(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    let path = dir.join(file);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("writing {value:?} to {}: {e}", path.display()),
            )
        })
}

/// Moves the calling process into the cgroup at `dir` (its pid into `cgroup.procs`). A forked task
/// calls it on itself before it starts, with the path made before the fork.
pub fn join_cgroup(dir: &Path) -> io::Result<()> {
    let pid = rustix::process::getpid().as_raw_nonzero().get();
    write_file(dir, "cgroup.procs", &pid.to_string())
}

/// How long a removal waits for tasks that were killed to leave the cgroup.
const REMOVE_WAIT_NS: u64 = 1_000_000_000;

/// Removes the (empty) cgroup at `dir`; EBUSY, tasks still leaving it, is retried for up to a
/// second. A cgroup already gone is no error.
pub fn remove_cgroup(dir: &Path) -> io::Result<()> {
    let mut waited = 0;
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && waited < REMOVE_WAIT_NS => {
                sleep_ns(10_000_000);
                waited += 10_000_000;
            }
            Err(e) => {
                let tasks = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                let tasks: Vec<&str> = tasks.split_whitespace().collect();
                let holding = if tasks.is_empty() {
                    String::new()
                } else {
                    format!(" (it still holds pid {})", tasks.join(", "))
                };
                return Err(io::Error::new(
                    e.kind(),
                    format!("rmdir {}: {e}{holding}", dir.display()),
                ));
            }
        }
    }
}

/// A cgroup left by a schedlab that is gone, and whether removing it worked.
#[derive(Debug)]
pub struct StaleCgroup {
    pub path: PathBuf,
    pub owner_pid: i32,
    pub removed: io::Result<()>,
}

/// The owner a cgroup's name gives (`schedlab-PID-START-…`), if it is one of schedlab's.
fn owner_of(name: &str) -> Option<(i32, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.splitn(3, '-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next()?;
    Some((pid, start))
}

/// Removes every cgroup of schedlab's under the CPU controller whose owner is no longer running
/// (SIGKILLed, or ended by a second Ctrl-C before it could clean up), and says which: every
/// schedlab command calls this first. Cgroups of a schedlab still running are left alone.
pub fn remove_stale_cgroups() -> Vec<StaleCgroup> {
    let Some(controller) = cpu_controller() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&controller.root) else {
        return Vec::new();
    };
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = owner_of(&name) else {
            continue;
        };
        let alive = process_stat(pid).is_some_and(|s| s.start_ticks == start && !s.is_dead());
        if alive {
            continue;
        }
        let path = entry.path();
        let removed = remove_cgroup(&path);
        stale.push(StaleCgroup {
            path,
            owner_pid: pid,
            removed,
        });
    }
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_fields_unescape_spaces() {
        assert_eq!(
            unescape_mount_field("/sys/fs/cgroup/cpu"),
            "/sys/fs/cgroup/cpu"
        );
        assert_eq!(unescape_mount_field("/a\\040b"), "/a b");
        assert_eq!(unescape_mount_field("/a\\04"), "/a\\04");
        assert_eq!(unescape_mount_field("\\"), "\\");
    }

    #[test]
    fn owners_read_from_names() {
        assert_eq!(owner_of("schedlab-12-3456-half"), Some((12, 3456)));
        assert_eq!(owner_of("schedlab-12-3456-a-b"), Some((12, 3456)));
        assert_eq!(owner_of("schedlab-12-3456"), None);
        assert_eq!(owner_of("schedlab-x-1-a"), None);
        assert_eq!(owner_of("system.slice"), None);
    }

    #[test]
    fn shares_and_weights_convert_as_systemd_does() {
        assert_eq!(CpuShare::Weight(100).shares(), 1_024);
        assert_eq!(CpuShare::Shares(1_024).shares(), 1_024);
        assert_eq!(CpuShare::Weight(10_000).shares(), 102_400);
        assert_eq!(CpuShare::Shares(2).weight(), 1);
        assert_eq!(CpuShare::Shares(262_144).weight(), 10_000);
        assert_eq!(CpuShare::Weight(50).weight(), 50);
    }

    /// A test's cgroup, removed however the test ends.
    struct Removed(PathBuf);

    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = remove_cgroup(&self.0);
        }
    }

    /// The controller this machine mounts; the cgroup tests need one they may write to (CI runs
    /// as root), and fail saying so where there is none.
    fn usable_controller() -> CpuController {
        let controller = cpu_controller()
            .expect("no cgroup cpu controller is mounted: this test needs one (run as root)");
        if let Some(why) = controller.unusable() {
            panic!("{why}: this test needs a cgroup cpu controller it may write to");
        }
        controller
    }

    #[test]
    fn a_cgroup_is_made_configured_joined_and_removed() {
        let controller = usable_controller();
        let settings = CpuSettings {
            quota_ns: Some(2_000_000),
            period_ns: Some(20_000_000),
            share: Some(CpuShare::Weight(50)),
            idle: None,
        };
        let dir = controller.create("sys-test", &settings).unwrap();
        let _removed = Removed(dir.clone());
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (pid, _) = this_process();
        assert_eq!(owner_of(&name).map(|(p, _)| p), Some(pid), "{name}");
        let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
        match controller.version {
            CgroupVersion::V1 => {
                assert_eq!(read("cpu.cfs_quota_us").trim(), "2000");
                assert_eq!(read("cpu.cfs_period_us").trim(), "20000");
                assert_eq!(read("cpu.shares").trim(), "512");
            }
            CgroupVersion::V2 => {
                assert_eq!(read("cpu.max").trim(), "2000 20000");
                assert_eq!(read("cpu.weight").trim(), "50");
            }
        }
        // A child that joins, uses ten times its quota of CPU time, and exits: throttled at
        // least once, however busy the machine.
        let mut children = super::super::ChildSet::new();
        let joined = dir.clone();
        children
            .spawn(move || {
                if join_cgroup(&joined).is_err() {
                    return 9;
                }
                let give_up = super::super::monotonic_ns() + 30_000_000_000;
                while super::super::thread_cpu_ns() < 20_000_000 {
                    if super::super::monotonic_ns() > give_up {
                        return 8;
                    }
                    std::hint::spin_loop();
                }
                0
            })
            .unwrap();
        let mut reaped = None;
        while reaped.is_none() && !children.is_empty() {
            reaped = children.reap_one(false).unwrap();
        }
        assert_eq!(
            reaped.map(|(_, e)| e),
            Some(super::super::ChildExit::Code(0))
        );
        let throttling = controller.throttling(&dir).unwrap();
        // The throttled periods are the controller's report; the throttled time is not checked:
        // under 6.18's per-task throttling it was 0 in one run of nine throttled periods (the
        // time is added when the group is unthrottled, which a task that exits may not see).
        assert!(throttling.throttled_periods > 0, "{throttling:?}");
        // Not stale while this process owns it.
        assert!(remove_stale_cgroups().iter().all(|s| s.path != dir));
        remove_cgroup(&dir).unwrap();
        assert!(!dir.exists());
        remove_cgroup(&dir).unwrap();
    }

    #[test]
    fn cgroups_of_a_schedlab_that_is_gone_are_removed() {
        let controller = usable_controller();
        // No process has a pid this high (pid_max is at most 2^22).
        let dir = controller
            .root
            .join(format!("{PREFIX}2147483000-1-sys-test"));
        std::fs::create_dir(&dir).unwrap();
        let _removed = Removed(dir.clone());
        let stale = remove_stale_cgroups();
        let found = stale.iter().find(|s| s.path == dir).expect("found stale");
        assert_eq!(found.owner_pid, 2_147_483_000);
        assert!(found.removed.is_ok(), "{:?}", found.removed);
        assert!(!dir.exists());
    }
}
