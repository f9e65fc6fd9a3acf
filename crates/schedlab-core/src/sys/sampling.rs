//! perf sampling into per-CPU ring buffers: tracepoints (`sched:sched_switch`, `raw_syscalls:*`,
//! ...) and cpu-clock samples, each CPU's events writing into one preallocated ring buffer that is
//! read only after the events are disabled, so nothing is parsed or allocated while they record;
//! and tracefs, found or mounted, for the tracepoints' ids and formats. Part of the audited OS
//! layer (`crate::sys`).
//!
//! The ring is mapped writable and its tail is never moved: once full, the kernel drops further
//! records (it counts them, and [`PerCpuSampler::counts`] tells how many events there were), rather
//! than overwrite the start of the window.
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

use perf_event_open_sys::bindings as pb;

/// Where tracefs is mounted, and whether schedlab mounted it just now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracefs {
    pub root: String,
    pub mounted_now: bool,
}

/// The mount points tracefs is looked for at, in order.
const TRACEFS_PLACES: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Finds tracefs, mounting it at /sys/kernel/tracing when it is not mounted (root only); the
/// error says why neither worked.
pub fn tracefs() -> io::Result<Tracefs> {
    for root in TRACEFS_PLACES {
        if std::path::Path::new(root).join("events").is_dir() {
            return Ok(Tracefs {
                root: root.to_string(),
                mounted_now: false,
            });
        }
    }
    let root = TRACEFS_PLACES[0];
    if !std::path::Path::new(root).is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{root} does not exist (a kernel without tracefs)"),
        ));
    }
    rustix::mount::mount(
        "nodev",
        root,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .map_err(|e| io::Error::new(e.kind(), format!("cannot mount tracefs at {root}: {e}")))?;
    Ok(Tracefs {
        root: root.to_string(),
        mounted_now: true,
    })
}

/// What one perf event samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleSource {
    /// A tracepoint by its tracefs id: every hit is a record.
    Tracepoint(u64),
    /// The cpu-clock software event, `frequency_hz` samples per second of CPU time.
    CpuClock { frequency_hz: u64 },
}

/// Whose events a sampler records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleScope {
    /// Everything that runs on each CPU (pid -1): adds nothing to a context switch.
    SystemWide,
    /// The calling thread and every task it creates after the events are opened (perf's
    /// inherit): the runner thread and the workload's tasks.
    ThisProcessAndChildren,
}

/// What every record carries after its header (perf's sample_type bits, in the order the kernel
/// writes them): PERF_SAMPLE_IP, TID, TIME and RAW, as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleFields {
    pub ip: bool,
    pub raw: bool,
}

impl SampleFields {
    fn bits(self) -> u64 {
        let mut bits = u64::from(pb::PERF_SAMPLE_TID | pb::PERF_SAMPLE_TIME);
        if self.ip {
            bits |= u64::from(pb::PERF_SAMPLE_IP);
        }
        if self.raw {
            bits |= u64::from(pb::PERF_SAMPLE_RAW);
        }
        bits
    }
}

/// The record type of a sample (PERF_RECORD_SAMPLE).
pub const RECORD_SAMPLE: u32 = pb::PERF_RECORD_SAMPLE;
/// The record type that counts records the kernel dropped (PERF_RECORD_LOST).
pub const RECORD_LOST: u32 = pb::PERF_RECORD_LOST;

/// One CPU's ring buffer: a page of control data, then a power-of-two data area.
struct Ring {
    cpu: u32,
    map: NonNull<std::ffi::c_void>,
    len: usize,
}

// SAFETY: the mapping is owned by the ring and only read through `&self` after the events are
// disabled; moving it to another thread moves nothing the kernel relies on.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `map` and `len` are the mapping this ring made in `PerCpuSampler::open` and
        // nothing borrows it any more (the ring is being dropped).
        let _ = unsafe { rustix::mm::munmap(self.map.as_ptr(), self.len) };
    }
}

/// One CPU's records, copied out of its ring after the events were disabled.
#[derive(Debug, Clone, Default)]
pub struct CpuRecords {
    pub cpu: u32,
    /// The bytes of the records, as the kernel wrote them (perf_event_header, then fields).
    pub bytes: Vec<u8>,
    /// The data area's size: a ring whose records come close to it was full.
    pub capacity: usize,
}

/// Events on each CPU writing into that CPU's ring.
pub struct PerCpuSampler {
    /// (cpu, source index, event): the first event of each CPU owns its ring.
    events: Vec<(u32, usize, OwnedFd)>,
    rings: Vec<Ring>,
}

/// Rounds `bytes` down to a power-of-two number of pages, at least one.
pub fn ring_data_bytes(bytes: usize) -> usize {
    let page = super::page_size();
    let pages = (bytes / page).max(1);
    (1usize << (usize::BITS - 1 - pages.leading_zeros())) * page
}

fn open_event(
    source: SampleSource,
    fields: SampleFields,
    scope: SampleScope,
    cpu: u32,
) -> io::Result<OwnedFd> {
    let mut attr = pb::perf_event_attr {
        size: std::mem::size_of::<pb::perf_event_attr>() as u32,
        sample_type: fields.bits(),
        ..Default::default()
    };
    match source {
        SampleSource::Tracepoint(id) => {
            attr.type_ = pb::PERF_TYPE_TRACEPOINT;
            attr.config = id;
            attr.__bindgen_anon_1.sample_period = 1;
        }
        SampleSource::CpuClock { frequency_hz } => {
            attr.type_ = pb::PERF_TYPE_SOFTWARE;
            attr.config = u64::from(pb::PERF_COUNT_SW_CPU_CLOCK);
            attr.__bindgen_anon_1.sample_freq = frequency_hz;
            attr.set_freq(1);
        }
    }
    attr.set_disabled(1);
    // Timestamps on the clock the runner reads, so records and iteration bounds compare.
    attr.set_use_clockid(1);
    attr.clockid = libc::CLOCK_MONOTONIC;
    // Wake no reader: the ring is read once, after the events are disabled.
    attr.__bindgen_anon_2.wakeup_events = 0;
    let pid = match scope {
        SampleScope::SystemWide => -1,
        SampleScope::ThisProcessAndChildren => {
            attr.set_inherit(1);
            super::current_tid()
        }
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr whose size field is its own size;
    // the kernel only reads it (or writes the size it expects back into it).
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            pid,
            cpu as i32,
            -1,
            libc::c_ulong::from(pb::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned `fd`, a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl PerCpuSampler {
    /// Opens every source on each of `cpus`, disabled, each CPU's events writing into one ring of
    /// about `ring_bytes` (rounded down to a power-of-two number of pages). An error names the
    /// source and the CPU that failed.
    pub fn open(
        cpus: &[u32],
        sources: &[SampleSource],
        fields: SampleFields,
        scope: SampleScope,
        ring_bytes: usize,
    ) -> io::Result<Self> {
        let data = ring_data_bytes(ring_bytes);
        let len = data + super::page_size();
        let mut events = Vec::with_capacity(cpus.len() * sources.len());
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let mut owner: Option<i32> = None;
            for (index, &source) in sources.iter().enumerate() {
                let fd = open_event(source, fields, scope, cpu).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("perf_event_open({source:?}) on CPU {cpu}: {e}"),
                    )
                })?;
                match owner {
                    None => {
                        // SAFETY: a fresh shared mapping of the event's ring, of the length the
                        // kernel requires (one control page plus 2^n data pages); the ring owns
                        // it and unmaps it when dropped.
                        let map = unsafe {
                            rustix::mm::mmap(
                                std::ptr::null_mut(),
                                len,
                                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                                rustix::mm::MapFlags::SHARED,
                                &fd,
                                0,
                            )
                        }
                        .map_err(|e| {
                            io::Error::new(
                                e.kind(),
                                format!(
                                    "cannot map a {} MiB perf ring on CPU {cpu}: {e}",
                                    len >> 20
                                ),
                            )
                        })?;
                        let map = NonNull::new(map)
                            .ok_or_else(|| io::Error::other("mmap returned a null perf ring"))?;
                        rings.push(Ring { cpu, map, len });
                        owner = Some(fd.as_raw_fd());
                    }
                    Some(target) => {
                        // SAFETY: both descriptors are open perf events of this CPU; the ioctl
                        // only redirects the second's records into the first's ring.
                        let rc = unsafe {
                            perf_event_open_sys::ioctls::SET_OUTPUT(fd.as_raw_fd(), target)
                        };
                        if rc < 0 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                }
                events.push((cpu, index, fd));
            }
        }
        Ok(PerCpuSampler { events, rings })
    }

    fn each(&self, what: &str, ioctl: unsafe fn(i32, u32) -> i32) -> io::Result<()> {
        for (cpu, _, fd) in &self.events {
            // SAFETY: `fd` is an open perf event; ENABLE and DISABLE take no pointer.
            if unsafe { ioctl(fd.as_raw_fd(), 0) } < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot {what} perf events on CPU {cpu}: {e}"),
                ));
            }
        }
        Ok(())
    }

    pub fn enable(&self) -> io::Result<()> {
        self.each("enable", perf_event_open_sys::ioctls::ENABLE)
    }

    pub fn disable(&self) -> io::Result<()> {
        self.each("disable", perf_event_open_sys::ioctls::DISABLE)
    }

    /// How many times each (cpu, source index) fired, whether or not its record fit.
    pub fn counts(&self) -> Vec<(u32, usize, u64)> {
        self.events
            .iter()
            .map(|(cpu, index, fd)| {
                let mut count = [0u8; 8];
                let n = rustix::io::read(fd, &mut count).unwrap_or(0);
                let value = if n == 8 { u64::from_ne_bytes(count) } else { 0 };
                (*cpu, *index, value)
            })
            .collect()
    }

    /// Copies every ring's records out; call after [`PerCpuSampler::disable`].
    pub fn records(&self) -> Vec<CpuRecords> {
        let page = super::page_size();
        self.rings
            .iter()
            .map(|ring| {
                let control = ring.map.as_ptr().cast::<pb::perf_event_mmap_page>();
                // SAFETY: the control page is the first page of the ring's live mapping; the
                // kernel writes data_head, which is read once, volatile, before the data.
                let (head, offset, size) = unsafe {
                    let head = std::ptr::read_volatile(std::ptr::addr_of!((*control).data_head));
                    let offset =
                        std::ptr::read_volatile(std::ptr::addr_of!((*control).data_offset));
                    let size = std::ptr::read_volatile(std::ptr::addr_of!((*control).data_size));
                    (head, offset, size)
                };
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
                let (offset, size) = if size == 0 {
                    (page, ring.len - page)
                } else {
                    (offset as usize, size as usize)
                };
                // The tail never moved, so the kernel wrote at most one ring's worth.
                let used = (head as usize).min(size);
                let mut bytes = vec![0u8; used];
                // SAFETY: [offset, offset + used) lies inside the mapping (offset + size is its
                // length), the events are disabled so the kernel no longer writes it, and `bytes`
                // is a new buffer of `used` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        ring.map.as_ptr().cast::<u8>().add(offset),
                        bytes.as_mut_ptr(),
                        used,
                    );
                }
                CpuRecords {
                    cpu: ring.cpu,
                    bytes,
                    capacity: size,
                }
            })
            .collect()
    }
}

/// A counting perf event on the calling thread and the tasks it creates afterwards (inherit): the
/// hardware counters of a probed iteration, where the machine has a PMU.
pub struct InheritedCounter {
    fd: OwnedFd,
}

/// Hardware events a probed iteration counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardwareEvent {
    Cycles,
    Instructions,
    CacheMisses,
}

impl InheritedCounter {
    /// Opens the counter, disabled; ENOENT or EOPNOTSUPP mean the machine has no such counter
    /// (a VM without a PMU).
    pub fn open(event: HardwareEvent) -> io::Result<Self> {
        let mut attr = pb::perf_event_attr {
            size: std::mem::size_of::<pb::perf_event_attr>() as u32,
            type_: pb::PERF_TYPE_HARDWARE,
            config: u64::from(match event {
                HardwareEvent::Cycles => pb::PERF_COUNT_HW_CPU_CYCLES,
                HardwareEvent::Instructions => pb::PERF_COUNT_HW_INSTRUCTIONS,
                HardwareEvent::CacheMisses => pb::PERF_COUNT_HW_CACHE_MISSES,
            }),
            ..Default::default()
        };
        attr.set_disabled(1);
        attr.set_inherit(1);
        // SAFETY: a fully initialised attr of its own size, read by the kernel only.
        let fd = unsafe {
            perf_event_open_sys::perf_event_open(
                &mut attr,
                super::current_tid(),
                -1,
                -1,
                libc::c_ulong::from(pb::PERF_FLAG_FD_CLOEXEC),
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned `fd`, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(InheritedCounter { fd })
    }

    pub fn enable(&self) -> io::Result<()> {
        // SAFETY: an open perf event; ENABLE takes no pointer.
        match unsafe { perf_event_open_sys::ioctls::ENABLE(self.fd.as_raw_fd(), 0) } {
            rc if rc < 0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }

    pub fn disable(&self) -> io::Result<()> {
        // SAFETY: an open perf event; DISABLE takes no pointer.
        match unsafe { perf_event_open_sys::ioctls::DISABLE(self.fd.as_raw_fd(), 0) } {
            rc if rc < 0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }

    /// The count, summed over every task that inherited it and has exited.
    pub fn read(&self) -> io::Result<u64> {
        let mut count = [0u8; 8];
        let n = rustix::io::read(&self.fd, &mut count)?;
        if n != 8 {
            return Err(io::Error::other("short read of a perf counter"));
        }
        Ok(u64::from_ne_bytes(count))
    }
}
