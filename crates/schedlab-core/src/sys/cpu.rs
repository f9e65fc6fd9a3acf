//! CPU placement: pinning and restricting the calling thread, the CPUs it may use and the one it
//! runs on. Part of the audited OS layer (`crate::sys`).
use std::io;

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: u32) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu as usize);
    Ok(rustix::thread::sched_setaffinity(None, &set)?)
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> io::Result<Vec<u32>> {
    let set = rustix::thread::sched_getaffinity(None)?;
    Ok((0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .map(|cpu| cpu as u32)
        .collect())
}

/// The CPU the calling thread is running on now (sched_getcpu).
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

/// Restricts the calling thread to the CPUs in `cpus`.
pub fn set_current_thread_cpus(cpus: &[u32]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &cpu in cpus {
        set.set(cpu as usize);
    }
    Ok(rustix::thread::sched_setaffinity(None, &set)?)
}

/// Restricts the thread `tid` (of any process this user may change) to the CPUs in `cpus`.
pub fn set_thread_cpus(tid: i32, cpus: &[u32]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &cpu in cpus {
        set.set(cpu as usize);
    }
    let pid = rustix::process::Pid::from_raw(tid)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "thread id 0"))?;
    Ok(rustix::thread::sched_setaffinity(Some(pid), &set)?)
}
