//! Resource usage and limits: getrusage, RLIMIT_NOFILE and RLIMIT_NPROC, and whether we run as
//! root. Part of the audited OS layer (`crate::sys`).

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
