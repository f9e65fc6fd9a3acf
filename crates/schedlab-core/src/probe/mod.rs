//! Probes and profiles: why a case measured what it did (`--explain`, `--profile`).
//!
//! They run on iterations of their own, after a case's measured ones, and what those iterations
//! measure is a [`ProbeRecord`], never an `IterationRecord`: the store keeps them in tables of
//! their own, so no comparison of primary metrics can take a probed iteration for a plain one.
//! The workload's own metrics of a probed iteration are kept with it, which is how the probes'
//! overhead is measured (docs/explain.md).
//!
//! An explained iteration records, for the workload's tasks ([`explain`]): the run-queue delay
//! from wake-up (or preemption) to running, as a histogram per task group; where wake-ups placed
//! tasks; migrations; voluntary and involuntary switches; system calls by name; and, for the
//! whole machine, CPU pressure (PSI), the /proc/schedstat deltas where the kernel has SCHEDSTATS,
//! and hardware counters where there is a PMU. The scheduler and system-call events are
//! tracepoints sampled by perf into one preallocated ring per CPU, read and parsed only after the
//! iteration. Whatever this machine cannot give is recorded as an [`Unavailable`] with why,
//! never as zero.
pub mod explain;
pub mod kernel_stats;
pub mod profile;
pub mod records;
mod syscalls;

use serde::{Deserialize, Serialize};

use crate::attachment::Attachment;
use crate::metric::{Better, Measurement, MetricDef};
use crate::sys;
pub use explain::ProbeMeasurement;
pub use profile::{Origin, ProfileSymbol};
use records::{Decoder, Format, TRACEPOINTS};

/// An explained iteration or a profiled one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    Explain,
    Profile,
}

impl ProbeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Explain => "explain",
            ProbeKind::Profile => "profile",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "explain" => Some(ProbeKind::Explain),
            "profile" => Some(ProbeKind::Profile),
            _ => None,
        }
    }
}

/// A probe this machine could not give, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unavailable {
    /// `sched/sched_switch`, `hardware_counters`, `proc_schedstat`, ...
    pub probe: String,
    pub reason: String,
}

/// A binary attachment of one task group (the run-queue delay histogram).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupAttachment {
    pub group: Option<String>,
    pub attachment: Attachment,
}

/// One probed or profiled iteration of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub kind: ProbeKind,
    /// 0-based among the case's probe iterations of this kind.
    pub index: u32,
    /// Wall-clock start, nanoseconds since the Unix epoch.
    pub started_at_ns: i64,
    /// The workload's and the runner's metrics, measured under the probes: how much the probes
    /// cost, never evidence about the case.
    pub measurements: Vec<Measurement>,
    pub explanatory: Vec<ProbeMeasurement>,
    pub unavailable: Vec<Unavailable>,
    pub attachments: Vec<GroupAttachment>,
    /// A profile's symbols, largest share first.
    pub symbols: Vec<ProfileSymbol>,
}

/// The name of the run-queue delay histogram attachment (nanoseconds, HDR, per group).
pub const RUNQ_DELAY_ATTACHMENT: &str = "runq_delay_ns";

pub const PROBE_RECORDS_COUNT: MetricDef =
    MetricDef::explanatory("probe_records_count", "count", Better::Lower).count();
pub const PROBE_LOST_RECORDS_COUNT: MetricDef =
    MetricDef::explanatory("probe_lost_records_count", "count", Better::Lower).count();
/// How much of the iteration the scheduler events cover: less than 100 when a ring filled up.
pub const PROBE_WINDOW_PCT: MetricDef =
    MetricDef::explanatory("probe_window_pct", "%", Better::Higher);
pub const PROFILE_SAMPLES_COUNT: MetricDef =
    MetricDef::explanatory("profile_samples_count", "count", Better::Higher).count();
pub const CYCLES_COUNT: MetricDef =
    MetricDef::explanatory("cycles_count", "count", Better::Lower).count();
pub const INSTRUCTIONS_COUNT: MetricDef =
    MetricDef::explanatory("instructions_count", "count", Better::Lower).count();
pub const CACHE_MISSES_COUNT: MetricDef =
    MetricDef::explanatory("cache_misses_count", "count", Better::Lower).count();
pub const INSTRUCTIONS_PER_CYCLE: MetricDef = MetricDef::explanatory(
    "instructions_per_cycle",
    "instructions/cycle",
    Better::Higher,
);

/// All the explained iteration's rings together, at most (split over the online CPUs).
pub const RING_BUDGET_BYTES: usize = 256 << 20;
/// One CPU's ring, at most.
const RING_MAX_BYTES: usize = 128 << 20;
/// A profile's ring per CPU (32 bytes a sample: a minute of one CPU at 4 kHz).
const PROFILE_RING_BYTES: usize = 8 << 20;

/// What this machine offers, found once before a run (mounting tracefs if it must).
#[derive(Debug)]
pub struct Availability {
    pub tracefs: Result<sys::Tracefs, String>,
    /// Every tracepoint the explanation reads, with its format or why it cannot be had.
    pub tracepoints: Vec<(&'static str, Result<Format, String>)>,
    pub hardware: Result<(), String>,
    pub psi: Result<(), String>,
    pub proc_schedstat: Result<(), String>,
    pub cpus: Vec<u32>,
}

fn online_cpus() -> Vec<u32> {
    sys::read_text("/sys/devices/system/cpu/online")
        .and_then(|t| t.trim().parse::<crate::cpu_list::CpuList>().ok())
        .map(Vec::from)
        .unwrap_or_default()
}

/// Finds what the explanation can use on this machine.
pub fn availability() -> Availability {
    let cpus = online_cpus();
    let tracefs = sys::tracefs().map_err(|e| e.to_string());
    let tracepoints = TRACEPOINTS
        .iter()
        .map(|&tp| {
            let format = match &tracefs {
                Err(e) => Err(format!("no tracefs: {e}")),
                Ok(fs) => {
                    let path = format!("{}/events/{tp}/format", fs.root);
                    match sys::read_text(&path) {
                        None => Err(format!("{path} is missing (no such tracepoint)")),
                        Some(text) => {
                            records::parse_format(&text).ok_or_else(|| format!("{path} has no ID"))
                        }
                    }
                }
            };
            (tp, format)
        })
        .collect::<Vec<_>>();
    // Tracepoints need perf events system-wide: root or CAP_PERFMON.
    let tracepoints = match tracepoints.iter().find_map(|(_, f)| f.as_ref().ok()) {
        None => tracepoints,
        Some(format) => {
            let opened = sys::PerCpuSampler::open(
                &cpus[..cpus.len().min(1)],
                &[sys::SampleSource::Tracepoint(format.id)],
                sys::SampleFields {
                    ip: false,
                    raw: true,
                },
                sys::SampleScope::SystemWide,
                sys::page_size(),
            );
            match opened {
                Ok(_) => tracepoints,
                Err(e) => tracepoints
                    .into_iter()
                    .map(|(tp, f)| {
                        (
                            tp,
                            f.and(Err(format!("perf cannot sample tracepoints: {e}"))),
                        )
                    })
                    .collect(),
            }
        }
    };
    let hardware = sys::InheritedCounter::open(sys::HardwareEvent::Cycles)
        .map(drop)
        .map_err(|e| format!("no hardware counters (no PMU here): perf_event_open(cycles): {e}"));
    let psi = match sys::read_text("/proc/pressure/cpu") {
        Some(text) if kernel_stats::parse_psi(&text).is_some() => Ok(()),
        Some(_) => Err("/proc/pressure/cpu has no `some … total=` line".to_string()),
        None => Err("no /proc/pressure/cpu (a kernel without CONFIG_PSI, or psi=0)".to_string()),
    };
    let proc_schedstat = match sys::read_text("/proc/schedstat") {
        Some(text) if kernel_stats::parse_schedstat(&text).is_some() => Ok(()),
        Some(_) => Err("/proc/schedstat is of a version schedlab does not read".to_string()),
        None => Err("no /proc/schedstat (a kernel without CONFIG_SCHEDSTATS)".to_string()),
    };
    Availability {
        tracefs,
        tracepoints,
        hardware,
        psi,
        proc_schedstat,
        cpus,
    }
}

impl Availability {
    /// What was done to the machine to probe it, one line each (tracefs mounted).
    pub fn notes(&self) -> Vec<String> {
        match &self.tracefs {
            Ok(fs) if fs.mounted_now => vec![format!(
                "--explain: mounted tracefs at {} for the tracepoints' formats (left mounted)",
                fs.root
            )],
            _ => Vec::new(),
        }
    }

    /// The probes this machine cannot give, with why: what every explained iteration records.
    pub fn unavailable(&self) -> Vec<Unavailable> {
        let mut out: Vec<Unavailable> = self
            .tracepoints
            .iter()
            .filter_map(|(tp, f)| {
                f.as_ref().err().map(|e| Unavailable {
                    probe: (*tp).to_string(),
                    reason: e.clone(),
                })
            })
            .collect();
        let mut add = |probe: &str, result: &Result<(), String>| {
            if let Err(reason) = result {
                out.push(Unavailable {
                    probe: probe.into(),
                    reason: reason.clone(),
                })
            }
        };
        add("hardware_counters", &self.hardware);
        add("psi_cpu", &self.psi);
        add("proc_schedstat", &self.proc_schedstat);
        out.push(Unavailable {
            probe: "task_schedstat".into(),
            reason: "/proc/<tid>/schedstat is gone once a task exits, and the workload's tasks \
                     exit inside the iteration; runq_delay_total_usec is the same sum, from \
                     sched_switch"
                .into(),
        });
        out
    }

    /// Whether any probe at all works here.
    pub fn offers_anything(&self) -> bool {
        self.tracepoints.iter().any(|(_, f)| f.is_ok())
            || self.hardware.is_ok()
            || self.psi.is_ok()
            || self.proc_schedstat.is_ok()
    }

    /// One line saying why nothing works, for `--explain` on such a machine.
    pub fn why_nothing(&self) -> String {
        let tracepoints = self
            .tracepoints
            .first()
            .and_then(|(_, f)| f.as_ref().err().cloned())
            .unwrap_or_default();
        format!(
            "--explain: this machine offers no probe: tracepoints: {tracepoints}; {}; {}; {}",
            self.hardware.as_ref().err().map_or("", String::as_str),
            self.psi.as_ref().err().map_or("", String::as_str),
            self.proc_schedstat
                .as_ref()
                .err()
                .map_or("", String::as_str),
        )
    }

    fn format(&self, tracepoint: &str) -> Option<&Format> {
        self.tracepoints
            .iter()
            .find(|(tp, _)| *tp == tracepoint)
            .and_then(|(_, f)| f.as_ref().ok())
    }
}

/// The probes of one explained iteration: opened (rings allocated) before it, enabled just
/// before the workload starts, disabled as soon as it returns, read after.
pub struct Explainer<'a> {
    availability: &'a Availability,
    sampler: Option<sys::PerCpuSampler>,
    decoder: Decoder,
    recorded: explain::Recorded,
    hardware: Vec<(sys::HardwareEvent, sys::InheritedCounter)>,
    unavailable: Vec<Unavailable>,
    psi_before: Option<(u64, Option<u64>)>,
    schedstat_before: Option<kernel_stats::Schedstat>,
    window: (u64, u64),
}

fn read_psi() -> Option<(u64, Option<u64>)> {
    kernel_stats::parse_psi(&sys::read_text("/proc/pressure/cpu")?)
}

fn read_schedstat() -> Option<kernel_stats::Schedstat> {
    kernel_stats::parse_schedstat(&sys::read_text("/proc/schedstat")?)
}

/// Each CPU's last-level cache (the highest cache level's shared CPU list, numbered) and NUMA
/// node, from sysfs.
fn topology(cpus: &[u32]) -> (Vec<Option<u32>>, Vec<Option<u32>>) {
    let top = cpus.iter().copied().max().map_or(0, |c| c as usize + 1);
    let (mut llc, mut node) = (vec![None; top], vec![None; top]);
    let mut caches: Vec<String> = Vec::new();
    for &cpu in cpus {
        let base = format!("/sys/devices/system/cpu/cpu{cpu}");
        let highest = sys::dir_names(&format!("{base}/cache"))
            .into_iter()
            .filter(|n| n.starts_with("index"))
            .filter_map(|n| {
                let level: u32 = sys::read_text(&format!("{base}/cache/{n}/level"))?
                    .trim()
                    .parse()
                    .ok()?;
                let shared = sys::read_text(&format!("{base}/cache/{n}/shared_cpu_list"))?;
                Some((level, shared.trim().to_string()))
            })
            .max_by_key(|(level, _)| *level);
        if let Some((_, shared)) = highest {
            let id = caches.iter().position(|c| *c == shared).unwrap_or_else(|| {
                caches.push(shared);
                caches.len() - 1
            });
            llc[cpu as usize] = Some(id as u32);
        }
        node[cpu as usize] = sys::dir_names(&base)
            .iter()
            .find_map(|n| n.strip_prefix("node")?.parse().ok());
    }
    (llc, node)
}

impl<'a> Explainer<'a> {
    /// Opens what `availability` offers; what fails to open joins the unavailable probes.
    pub fn open(availability: &'a Availability) -> Self {
        let mut unavailable = availability.unavailable();
        let mut decoder = Decoder::default();
        let mut sources = Vec::new();
        let mut recorded = explain::Recorded::default();
        for tp in TRACEPOINTS {
            let Some(format) = availability.format(tp) else {
                continue;
            };
            if let Err(reason) = decoder.learn(tp, format) {
                unavailable.push(Unavailable {
                    probe: tp.into(),
                    reason,
                });
                continue;
            }
            sources.push((tp, sys::SampleSource::Tracepoint(format.id)));
        }
        let cpus = &availability.cpus;
        let ring = (RING_BUDGET_BYTES / cpus.len().max(1)).min(RING_MAX_BYTES);
        let sampler = if sources.is_empty() {
            None
        } else {
            let opened = sys::PerCpuSampler::open(
                cpus,
                &sources.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
                sys::SampleFields {
                    ip: false,
                    raw: true,
                },
                sys::SampleScope::SystemWide,
                ring,
            );
            match opened {
                Ok(sampler) => {
                    for (tp, _) in &sources {
                        match *tp {
                            records::SCHED_SWITCH => recorded.switch = true,
                            records::SCHED_WAKING => recorded.waking = true,
                            records::SCHED_WAKEUP => recorded.wakeup = true,
                            records::SCHED_WAKEUP_NEW => recorded.wakeup_new = true,
                            records::SCHED_MIGRATE_TASK => recorded.migrate = true,
                            _ => recorded.sys_exit = true,
                        }
                    }
                    Some(sampler)
                }
                Err(e) => {
                    for (tp, _) in &sources {
                        unavailable.push(Unavailable {
                            probe: (*tp).into(),
                            reason: e.to_string(),
                        });
                    }
                    None
                }
            }
        };
        let mut hardware = Vec::new();
        if availability.hardware.is_ok() {
            for event in [
                sys::HardwareEvent::Cycles,
                sys::HardwareEvent::Instructions,
                sys::HardwareEvent::CacheMisses,
            ] {
                match sys::InheritedCounter::open(event) {
                    Ok(counter) => hardware.push((event, counter)),
                    Err(e) => unavailable.push(Unavailable {
                        probe: format!("hardware_counters/{event:?}").to_lowercase(),
                        reason: e.to_string(),
                    }),
                }
            }
        }
        Explainer {
            availability,
            sampler,
            decoder,
            recorded,
            hardware,
            unavailable,
            psi_before: None,
            schedstat_before: None,
            window: (0, 0),
        }
    }

    /// Reads the machine-wide counters and enables the events: call just before the workload.
    pub fn start(&mut self) {
        self.psi_before = read_psi();
        self.schedstat_before = read_schedstat();
        for (_, counter) in &self.hardware {
            let _ = counter.enable();
        }
        self.window.0 = sys::monotonic_ns();
        if let Some(sampler) = &self.sampler {
            if let Err(e) = sampler.enable() {
                self.unavailable.push(Unavailable {
                    probe: "tracepoints".into(),
                    reason: e.to_string(),
                });
                self.sampler = None;
                self.recorded = explain::Recorded::default();
            }
        }
    }

    /// Disables the events: call as soon as the workload returns.
    pub fn stop(&mut self) {
        if let Some(sampler) = &self.sampler {
            let _ = sampler.disable();
        }
        self.window.1 = sys::monotonic_ns();
        for (_, counter) in &self.hardware {
            let _ = counter.disable();
        }
    }

    /// Reads and explains what was recorded; `runner_tid` is the thread that ran the iteration.
    pub fn finish(
        self,
        runner_tid: i32,
    ) -> (
        Vec<ProbeMeasurement>,
        Vec<Unavailable>,
        Vec<GroupAttachment>,
    ) {
        let mut measurements: Vec<ProbeMeasurement> = Vec::new();
        let mut attachments = Vec::new();
        if let Some(sampler) = &self.sampler {
            let traced = self.traced(sampler);
            let explained = self.explained(&traced, runner_tid);
            measurements.extend(explained.measurements);
            for (group, histogram) in &explained.histograms {
                attachments.push(GroupAttachment {
                    group: group.clone(),
                    attachment: crate::latency::attachment(RUNQ_DELAY_ATTACHMENT, histogram),
                });
            }
            measurements.extend(self.coverage(&traced).map(machine));
        }
        measurements.extend(self.kernel_deltas().into_iter().map(machine));
        measurements.extend(self.hardware_counts().into_iter().map(machine));
        (measurements, self.unavailable, attachments)
    }

    /// The recorded events of every CPU's ring, decoded and in time order, with how many records
    /// there were and were lost.
    fn traced(&self, sampler: &sys::PerCpuSampler) -> Traced {
        let rings = sampler.records();
        let counts = sampler.counts();
        let mut traced = Traced {
            events: Vec::new(),
            recorded: 0,
            lost: 0,
            cutoff: None,
        };
        for ring in &rings {
            let contents = records::walk(&ring.bytes, false, true);
            let fired: u64 = counts
                .iter()
                .filter(|(cpu, _, _)| *cpu == ring.cpu)
                .map(|(_, _, n)| n)
                .sum();
            let recorded = contents.samples.len() as u64;
            traced.recorded += recorded;
            let lost = fired.saturating_sub(recorded).max(contents.lost);
            traced.lost += lost;
            if lost > 0 {
                let last = contents.samples.last().map_or(self.window.0, |s| s.time_ns);
                traced.cutoff = Some(traced.cutoff.map_or(last, |c: u64| c.min(last)));
            }
            for sample in &contents.samples {
                let Some(kind) = sample.raw.and_then(|raw| self.decoder.decode(raw)) else {
                    continue;
                };
                traced.events.push(records::Event {
                    time_ns: sample.time_ns,
                    cpu: ring.cpu,
                    pid: sample.pid,
                    tid: sample.tid,
                    kind,
                });
            }
        }
        traced.events.sort_by_key(|e| e.time_ns);
        traced
    }

    /// The explanatory metrics of the workload's tasks among the events.
    fn explained(&self, traced: &Traced, runner_tid: i32) -> explain::Explained {
        let (llc_of, node_of) = topology(&self.availability.cpus);
        let context = explain::Context {
            own_pid: std::process::id(),
            runner_tid: runner_tid as u32,
            cutoff_ns: traced.cutoff,
            llc_of,
            node_of,
        };
        explain::explain(&traced.events, &context, self.recorded)
    }

    /// How many records there were and were lost, and how much of the window the events cover.
    fn coverage(&self, traced: &Traced) -> [Measurement; 3] {
        let (start, end) = self.window;
        let covered = traced.cutoff.map_or(end, |c| c.clamp(start, end));
        [
            PROBE_RECORDS_COUNT.value(traced.recorded as f64),
            PROBE_LOST_RECORDS_COUNT.value(traced.lost as f64),
            PROBE_WINDOW_PCT.value(100.0 * (covered - start) as f64 / (end - start).max(1) as f64),
        ]
    }

    /// The machine's CPU pressure and scheduler statistics over the iteration, each where it
    /// could be read before and after.
    fn kernel_deltas(&self) -> Vec<Measurement> {
        let mut deltas = Vec::new();
        if let (Some(before), Some(after)) = (self.psi_before, read_psi()) {
            deltas.extend(kernel_stats::psi_delta(before, after));
        }
        if let (Some(before), Some(after)) = (self.schedstat_before, read_schedstat()) {
            deltas.extend(kernel_stats::schedstat_delta(&before, &after));
        }
        deltas
    }

    /// The hardware counters that could be read, and instructions per cycle from them.
    fn hardware_counts(&self) -> Vec<Measurement> {
        let mut counts = Vec::new();
        let mut cycles = None;
        let mut instructions = None;
        for (event, counter) in &self.hardware {
            let Ok(value) = counter.read() else { continue };
            let def = match event {
                sys::HardwareEvent::Cycles => {
                    cycles = Some(value);
                    CYCLES_COUNT
                }
                sys::HardwareEvent::Instructions => {
                    instructions = Some(value);
                    INSTRUCTIONS_COUNT
                }
                sys::HardwareEvent::CacheMisses => CACHE_MISSES_COUNT,
            };
            counts.push(def.value(value as f64));
        }
        if let (Some(c), Some(i)) = (cycles.filter(|c| *c > 0), instructions) {
            counts.push(INSTRUCTIONS_PER_CYCLE.value(i as f64 / c as f64));
        }
        counts
    }
}

/// The decoded events of an explained iteration, in time order, and how complete they are.
struct Traced {
    events: Vec<records::Event>,
    /// Records read from the rings, and records the rings had no room for.
    recorded: u64,
    lost: u64,
    /// The earliest last record of a ring that lost some: the events are judged up to there.
    cutoff: Option<u64>,
}

/// A measurement of the whole machine (no task group).
fn machine(measurement: Measurement) -> ProbeMeasurement {
    ProbeMeasurement {
        group: None,
        measurement,
    }
}

/// The sampler of one profiled iteration.
pub struct Profiler {
    sampler: sys::PerCpuSampler,
}

impl Profiler {
    /// cpu-clock sampling of this thread and the tasks it creates, on every online CPU.
    pub fn open() -> Result<Self, Unavailable> {
        let cpus = online_cpus();
        sys::PerCpuSampler::open(
            &cpus,
            &[sys::SampleSource::CpuClock {
                frequency_hz: profile::FREQUENCY_HZ,
            }],
            sys::SampleFields {
                ip: true,
                raw: false,
            },
            sys::SampleScope::ThisProcessAndChildren,
            PROFILE_RING_BYTES,
        )
        .map(|sampler| Profiler { sampler })
        .map_err(|e| Unavailable {
            probe: "profile".into(),
            reason: format!("cpu-clock sampling: {e}"),
        })
    }

    pub fn start(&self) -> Result<(), Unavailable> {
        self.sampler.enable().map_err(|e| Unavailable {
            probe: "profile".into(),
            reason: e.to_string(),
        })
    }

    pub fn stop(&self) {
        let _ = self.sampler.disable();
    }

    /// The symbols and how many samples they were resolved from.
    pub fn finish(self) -> (Vec<ProfileSymbol>, Vec<ProbeMeasurement>) {
        let (symbols, total) = profile::symbolize(&self.sampler.records());
        let measurements = vec![ProbeMeasurement {
            group: None,
            measurement: PROFILE_SAMPLES_COUNT.value(total as f64),
        }];
        (symbols, measurements)
    }
}
