//! The one audited place where schedlab talks to the kernel, and the only module of this crate
//! allowed `unsafe` code: clocks, descriptors, fork and reaping, other programs run as a workload,
//! futexes, CPU placement, resource usage and limits, the scheduling policy, the cgroup CPU
//! controller, signals and the iteration watchdog, memory mappings, perf software counters, perf
//! sampling into per-CPU rings (tracepoints, cpu-clock) and tracefs, the C library's pthread mutex,
//! the request math's inner loop (machine code matching schbench's), the scenario workload's unit of
//! work (machine code too, so it costs the same in every build), the /proc and /sys files the
//! fingerprint reads, and what schedlab does as the init of a guest it booted (mounts, the results
//! serial port, CPUID's hypervisor leaves, power-off). One file per topic; everything is re-exported
//! here, so callers name
//! `sys::monotonic_ns`, never the file it lives in.
//!
//! rustix first; libc where rustix has no call (fork, sigaction, getrusage, prctl, timer_create,
//! open-file-description record locks, pthread mutexes), raw `syscall` where no libc call works
//! in both builds (sched_getattr, sched_setattr, close_range), and for the workloads' read/write data path, which must take
//! the same path as the reference tools. Every `unsafe` block says why it is sound in a
//! `// SAFETY:` comment, which clippy enforces here.
//!
//! Two C libraries: glibc (the host build) and musl (the static `x86_64-unknown-linux-musl`
//! build, `.ci/musl-smoke`). Each libc call here was checked against musl's source (1.2.5, what
//! Rust bundles); none needs a raw system call to work on musl:
//! - passed through to the kernel as is by musl: read, write, fcntl (F_OFD_SETLKW/GETLK),
//!   getrusage (RUSAGE_THREAD), prctl, kill, setpgid, waitpid, _exit, sigaction, sigprocmask,
//!   pthread_sigmask, sigtimedwait, timer_settime, timer_delete, timer_create with
//!   SIGEV_THREAD_ID (musl since 1.2.2; older musl refuses it with EINVAL and the watchdog would
//!   fail to arm) or SIGEV_SIGNAL (the stop bound's);
//! - musl's own code, measured as such: fork (takes musl's internal locks, so the child's malloc
//!   works; `external`'s reaper forks again in such a child, single-threaded by then) and the pthread mutex of the contention workload; the fingerprint's `libc` names the
//!   library and version, so runs of the two builds are never taken for one another;
//! - sysconf(_SC_PAGESIZE), the signal-set helpers: no system call.
//!
//! What musl would get wrong is not called through it: musl's sched_setscheduler,
//! sched_getscheduler, sched_setparam and sched_getparam fail with ENOSYS on purpose (Linux
//! applies them to one thread, POSIX to the process), so any scheduling-policy call added here
//! must be `libc::syscall(SYS_…)`, as sched_getattr and sched_setattr are ([`current_sched_policy`], [`set_current_sched`]); semaphores are
//! futex words of schedlab's own (`workload::semaphore`), not sem_*, so both builds time the same
//! code; futexes, clocks, affinity, pipes, sockets, mappings, uname, and the guest's mount,
//! sethostname, termios and reboot go through rustix's raw system calls, whatever the libc. [`raw_getpid`] and its kin are `syscall(SYS_…)` so that no
//! libc answers from a cache.
#![deny(clippy::undocumented_unsafe_blocks)]

mod cgroup;
mod command;
mod cpu;
mod fd;
mod futex;
mod guest;
mod handler;
mod host;
mod matrix;
mod mem;
mod perf;
mod proc;
mod process;
mod pthread;
mod raw;
mod resource;
mod rt;
mod sampling;
mod sched;
mod signal;
mod time;
mod watchdog;
mod work;

pub use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

pub use cgroup::{
    cpu_controller, join_cgroup, remove_cgroup, remove_stale_cgroups, CgroupVersion, CpuController,
    CpuSettings, CpuShare, StaleCgroup, Throttling,
};
pub use command::{
    find_program, run_command, why_not_runnable, Background, CommandError, CommandRun,
    MAX_OUTPUT_BYTES,
};
pub use cpu::{
    allowed_cpus, current_cpu, pin_current_thread, set_current_thread_cpus, set_thread_cpus,
};
pub use fd::{
    lock_file_descriptions, memfd, ofd_record_lock, open_device, pipe, poll_readable,
    poll_with_stop, read_full, read_interruptible, set_nonblocking, set_pipe_size,
    unix_stream_pair, write_full, write_once, RecordLock,
};
pub use futex::{
    futex_wait, futex_wait_in, futex_wait_until_in, futex_wake, futex_wake_in, FutexScope,
};
pub use guest::{
    drain_serial, hypervisor_cpuid, mount_guest_filesystems, open_serial_raw, power_off,
    set_hostname, KVM_FEATURE_STEAL_TIME,
};
pub use host::{boot_id, dir_names, hostname, libc_description, read_bytes, read_text};
pub use matrix::dot_column_storing;
pub use mem::{page_size, ProcessShared, SharedValue, ZeroPageWords};
pub(crate) use mem::{process_shared, TransferBuffer};
pub use perf::SystemCounter;
pub use proc::{
    current_tid, open_thread_schedstat, parse_task_stat, process_stat, read_schedstat, stop_self,
    this_process, thread_stat, SchedStat, TaskStat,
};
pub use process::{task_code, ChildExit, ChildSet, TaskCode};
pub use pthread::{PthreadGuard, PthreadMutex};
pub use raw::{raw_getpid, raw_getppid, raw_getrlimit_nofile, raw_sched_yield};
pub use resource::{
    available_memory_bytes, check_task_budget, effective_uid_is_root, open_files_limit,
    process_count_limit, raise_open_files_limit, usage, Limit, OverBudget, TaskLimits, Usage,
    UsageOf,
};
pub use rt::{
    set_current_thread_nice, set_current_thread_policy, sleep_until_ns, try_policy, POLICY_FIFO,
    POLICY_OTHER, POLICY_RR,
};
pub use sampling::{
    ring_data_bytes, tracefs, CpuRecords, HardwareEvent, InheritedCounter, PerCpuSampler,
    SampleFields, SampleScope, SampleSource, Tracefs, RECORD_LOST, RECORD_SAMPLE,
};
pub use sched::{
    current_sched_policy, policy, probe_sched, set_current_sched, SchedPolicy, SchedRequest,
};
pub use signal::{
    bound_clean_stops, install_interrupt_handlers, interrupt_arrived_ns, interrupt_signal,
    reap_own_children, signal_name, sleep_unless_interrupted, take_continued, watch_for_suspension,
    with_interrupts_blocked, STOP_BOUND_SECS, STOP_SIGNALS,
};
pub use time::{
    clock_ticks_per_sec, monotonic_ns, realtime_ns, sleep_interruptible_ns, sleep_ns,
    thread_cpu_ns, tsc_serialized, HAS_TSC,
};
pub use watchdog::{deadline_expired, take_look_due, Watchdog, WATCHDOG_SIGNAL};
pub use work::dependent_work;
