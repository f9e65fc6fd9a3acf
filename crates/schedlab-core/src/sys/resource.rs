//! Resource usage and limits: getrusage, RLIMIT_NOFILE and RLIMIT_NPROC, whether we run as root,
//! the kernel's task limits and available memory, and the one check of a run's tasks and
//! descriptors against them ([`TaskLimits::check`]). Part of the audited OS layer (`crate::sys`).

/// The parts of `struct rusage` schedlab reports, with times in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
}

impl Usage {
    pub fn saturating_sub(self, earlier: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
        }
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns + other.user_ns,
            sys_ns: self.sys_ns + other.sys_ns,
            voluntary_csw: self.voluntary_csw + other.voluntary_csw,
            involuntary_csw: self.involuntary_csw + other.involuntary_csw,
        }
    }
}

/// Whose resource usage to read.
#[derive(Debug, Clone, Copy)]
pub enum UsageOf {
    /// This process, all its threads, including ones that have exited.
    Process,
    /// The calling thread only.
    CurrentThread,
    /// Child processes that have been waited for.
    ReapedChildren,
}

pub fn usage(of: UsageOf) -> Usage {
    let who = match of {
        UsageOf::Process => libc::RUSAGE_SELF,
        UsageOf::CurrentThread => libc::RUSAGE_THREAD,
        UsageOf::ReapedChildren => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: getrusage only writes the struct we pass; a zeroed rusage is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `who` is one of the three valid constants and `ru` is a valid pointer.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return Usage::default();
    }
    let tv_ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    Usage {
        user_ns: tv_ns(ru.ru_utime),
        sys_ns: tv_ns(ru.ru_stime),
        voluntary_csw: ru.ru_nvcsw as u64,
        involuntary_csw: ru.ru_nivcsw as u64,
    }
}

/// A resource limit: the soft value in force and the hard ceiling (`None` is unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

pub fn open_files_limit() -> Limit {
    let l = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    Limit {
        soft: l.current,
        hard: l.maximum,
    }
}

pub fn process_count_limit() -> Limit {
    let l = rustix::process::getrlimit(rustix::process::Resource::Nproc);
    Limit {
        soft: l.current,
        hard: l.maximum,
    }
}

/// Raises the soft open-files limit to the hard limit, as big hackbench runs need; returns the new
/// soft limit.
pub fn raise_open_files_limit() -> Limit {
    let current = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if current.current != current.maximum {
        let raised = rustix::process::Rlimit {
            current: current.maximum,
            maximum: current.maximum,
        };
        let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, raised);
    }
    open_files_limit()
}

pub fn effective_uid_is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The machine's limits on the tasks a run may start at once and the descriptors it may hold,
/// read together: what a planned run is checked against, and what an error names when fork or
/// thread creation fails anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// RLIMIT_NOFILE; runs that need many descriptors raise the soft limit to the hard one first.
    pub open_files: Limit,
    /// RLIMIT_NPROC: every process and thread of the user counts against it.
    pub processes: Limit,
    /// RLIMIT_NPROC does not bind root.
    pub processes_bind: bool,
    /// `kernel.threads-max`: every thread of the machine counts against it.
    pub threads_max: Option<u64>,
    /// `kernel.pid_max`: every task needs an id.
    pub pid_max: Option<u64>,
}

/// The limit a run would exceed, as [`TaskLimits::check`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBudget {
    /// More open descriptors than RLIMIT_NOFILE's hard limit, which no raise can pass.
    OpenFiles { hard: u64 },
    /// More tasks than a machine-wide limit: `limit` is `kernel.threads-max` or `kernel.pid_max`.
    Kernel { limit: &'static str, max: u64 },
    /// More tasks than RLIMIT_NPROC's soft limit (`ulimit -u`).
    Processes { soft: u64 },
}

impl TaskLimits {
    pub fn read() -> Self {
        TaskLimits {
            open_files: open_files_limit(),
            processes: process_count_limit(),
            processes_bind: !effective_uid_is_root(),
            threads_max: read_u64("/proc/sys/kernel/threads-max"),
            pid_max: read_u64("/proc/sys/kernel/pid_max"),
        }
    }

    /// Whether `tasks` tasks running at once, holding `descriptors` descriptors open (0: none
    /// beyond schedlab's own), fit under these limits; the first one exceeded otherwise, in the
    /// order descriptors, threads-max, pid_max, RLIMIT_NPROC. A limit that could not be read does
    /// not refuse anything.
    pub fn check(&self, tasks: u64, descriptors: u64) -> Result<(), OverBudget> {
        if let Some(hard) = self.open_files.hard {
            if descriptors > hard {
                return Err(OverBudget::OpenFiles { hard });
            }
        }
        for (limit, max) in [
            ("kernel.threads-max", self.threads_max),
            ("kernel.pid_max", self.pid_max),
        ] {
            if let Some(max) = max {
                if tasks > max {
                    return Err(OverBudget::Kernel { limit, max });
                }
            }
        }
        if self.processes_bind {
            if let Some(soft) = self.processes.soft {
                if tasks > soft {
                    return Err(OverBudget::Processes { soft });
                }
            }
        }
        Ok(())
    }
}

/// Checks a planned run against this machine's limits now: see [`TaskLimits::check`].
pub fn check_task_budget(tasks: u64, descriptors: u64) -> Result<(), OverBudget> {
    TaskLimits::read().check(tasks, descriptors)
}

/// The memory the kernel estimates is available for new allocations without swapping
/// (`MemAvailable` of /proc/meminfo), in bytes; `None` where it does not say.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> TaskLimits {
        TaskLimits {
            open_files: Limit {
                soft: Some(1024),
                hard: Some(4096),
            },
            processes: Limit {
                soft: Some(500),
                hard: None,
            },
            processes_bind: true,
            threads_max: Some(1000),
            pid_max: Some(800),
        }
    }

    #[test]
    fn the_first_limit_exceeded_is_named() {
        let l = limits();
        assert_eq!(l.check(100, 4096), Ok(()));
        assert_eq!(
            l.check(100, 4097),
            Err(OverBudget::OpenFiles { hard: 4096 })
        );
        assert_eq!(
            l.check(1001, 0),
            Err(OverBudget::Kernel {
                limit: "kernel.threads-max",
                max: 1000
            })
        );
        assert_eq!(
            l.check(801, 0),
            Err(OverBudget::Kernel {
                limit: "kernel.pid_max",
                max: 800
            })
        );
        assert_eq!(l.check(501, 0), Err(OverBudget::Processes { soft: 500 }));
    }

    #[test]
    fn unknown_and_unbinding_limits_refuse_nothing() {
        let l = TaskLimits {
            open_files: Limit {
                soft: None,
                hard: None,
            },
            processes_bind: false,
            threads_max: None,
            pid_max: None,
            ..limits()
        };
        assert_eq!(l.check(u64::MAX, u64::MAX), Ok(()));
    }
}
