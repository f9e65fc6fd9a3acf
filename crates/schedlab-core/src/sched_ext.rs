//! sched_ext as sysfs shows it (`/sys/kernel/sched_ext`): whether a BPF scheduler is loaded and
//! which, so that an A/B arm that runs one (`ab --a-daemon scx_rusty --a-scx rusty`) can be held
//! to it before and after every run. A scheduler the kernel ejected (its watchdog, an error, a
//! SysRq-S) leaves the fair class scheduling: measuring on would compare the default scheduler
//! with itself under the arm's name.
use std::path::Path;

use crate::sys;

/// Where the kernel shows sched_ext's state (Linux 6.12 and later, `CONFIG_SCHED_CLASS_EXT`).
pub const SYSFS_DIR: &str = "/sys/kernel/sched_ext";

/// sched_ext's state at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedExt {
    /// `state` (`enabled`, `disabled`, `enabling`, `disabling`, `bypassing`); `None` when the
    /// kernel has no sched_ext.
    pub state: Option<String>,
    /// `root/ops`: the name of the BPF scheduler loaded (`rusty`, or as scx_utils builds it,
    /// `rusty_1.0.14_g…_x86_64_unknown_linux_gnu`); `None` when none is.
    pub ops: Option<String>,
}

/// How sched_ext differs from what an arm expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// The kernel has no sched_ext, so no BPF scheduler can run.
    Missing,
    /// The arm expects its scheduler, and sched_ext is in another state (`disabled` once the
    /// kernel ejected it).
    NotEnabled { state: String },
    /// sched_ext is enabled with another scheduler, or with none named.
    OtherScheduler { ops: Option<String> },
    /// The arm expects the kernel's own scheduler, and a BPF scheduler is loaded.
    Loaded { ops: Option<String> },
}

impl SchedExt {
    /// sched_ext's state on this machine now.
    pub fn read() -> Self {
        SchedExt::read_from(Path::new(SYSFS_DIR))
    }

    /// The state the files under `dir` show (a copy of the sysfs folder in tests).
    pub fn read_from(dir: &Path) -> Self {
        let read = |name: &str| {
            let path = dir.join(name);
            sys::read_text(path.to_str()?)
                .map(|text| text.trim().to_string())
                .filter(|text| !text.is_empty())
        };
        SchedExt {
            state: read("state"),
            ops: read("root/ops"),
        }
    }

    /// Whether this is what an arm expects: with `expected`, that scheduler enabled; without, no
    /// BPF scheduler enabled (the kernel's own scheduler; a kernel without sched_ext qualifies).
    pub fn check(&self, expected: Option<&str>) -> Result<(), Mismatch> {
        let enabled = self.state.as_deref() == Some("enabled");
        match (expected, &self.state) {
            (None, _) if !enabled => Ok(()),
            (None, _) => Err(Mismatch::Loaded {
                ops: self.ops.clone(),
            }),
            (Some(_), None) => Err(Mismatch::Missing),
            (Some(_), Some(state)) if !enabled => Err(Mismatch::NotEnabled {
                state: state.clone(),
            }),
            (Some(name), Some(_)) => match &self.ops {
                Some(ops) if names(ops, name) => Ok(()),
                ops => Err(Mismatch::OtherScheduler { ops: ops.clone() }),
            },
        }
    }
}

/// Whether the ops name `ops` names the scheduler `name`: the same, or `name` followed by `_` and
/// the version scx_utils appends (`lavd_1.0.14_gce7e69c0_x86_64_unknown_linux_gnu` is `lavd`).
pub fn names(ops: &str, name: &str) -> bool {
    ops == name
        || ops
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sysfs(state: Option<&str>, ops: Option<&str>) -> (tempfile::TempDir, SchedExt) {
        let dir = tempfile::tempdir().unwrap();
        if let Some(state) = state {
            std::fs::write(dir.path().join("state"), format!("{state}\n")).unwrap();
        }
        if let Some(ops) = ops {
            std::fs::create_dir(dir.path().join("root")).unwrap();
            std::fs::write(dir.path().join("root/ops"), format!("{ops}\n")).unwrap();
        }
        let read = SchedExt::read_from(dir.path());
        (dir, read)
    }

    #[test]
    fn an_arm_is_held_to_its_scheduler() {
        let (_d, rusty) = sysfs(Some("enabled"), Some("rusty_1.0.14_gce7e69c0_x86_64"));
        assert_eq!(rusty.check(Some("rusty")), Ok(()));
        assert_eq!(
            rusty.check(Some("lavd")),
            Err(Mismatch::OtherScheduler {
                ops: Some("rusty_1.0.14_gce7e69c0_x86_64".into())
            })
        );
        // A prefix that is not the name up to its `_` is another scheduler.
        assert!(rusty.check(Some("rust")).is_err());
        assert!(matches!(rusty.check(None), Err(Mismatch::Loaded { .. })));

        let (_d, ejected) = sysfs(Some("disabled"), None);
        assert_eq!(
            ejected.check(Some("rusty")),
            Err(Mismatch::NotEnabled {
                state: "disabled".into()
            })
        );
        assert_eq!(ejected.check(None), Ok(()));

        let (_d, missing) = sysfs(None, None);
        assert_eq!(missing.check(Some("rusty")), Err(Mismatch::Missing));
        assert_eq!(missing.check(None), Ok(()));

        let (_d, cake) = sysfs(Some("enabled"), Some("cake"));
        assert_eq!(cake.check(Some("cake")), Ok(()));
    }
}
