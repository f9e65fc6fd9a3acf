//! The `cpupri` workload (seed 004, the per-NUMA-node split of `cpupri_vec->mask`): the RT
//! scheduler's per-priority CPU bitmaps, as modelled by `schedlab-kmodels`, under contention.
//! `threads` threads share one map of `cpus` modelled CPUs over `nodes` modelled NUMA nodes; each
//! owns a contiguous block of CPUs (like the seed's FFmpeg instances pinned to their cores) and
//! repeatedly sets one of its CPUs to a random level (`cpupri_set`) and searches for the lowest
//! level holding one of its CPUs below a random task priority (`cpupri_find`). With
//! `layout = shared` every level has one bitmap (upstream: every set anywhere writes the cache
//! lines every find reads); with `per-node` one bitmap per node on its own cache lines.
//!
//! Timing: each set and each find is bracketed by the TSC read between lfences on x86_64 (the
//! thread's TSC ticks are converted to ns with its own clock over the whole loop), elsewhere by
//! CLOCK_MONOTONIC; the brackets' own cost (tens of cycles) is included.
//!
//! Verification (the model's CpuOwner scheme): a thread's searches are restricted to its own
//! CPUs, whose levels only it changes, so each answer is exactly predictable despite the other
//! writers. Each thread records every answer (the CPU and a hash of the returned mask) in a buffer
//! allocated before the start; afterwards every thread's op stream is replayed and each answer is
//! compared with the plain reference search; the shared map must also be consistent at the end
//! and hold the replayed levels.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use schedlab_kmodels::cpupri::{
    partition_blocks, CpuMask, CpuOwner, CpuPri, Cpupri, Layout, NumaTopology,
    CPUPRI_NR_PRIORITIES, MAX_RT_PRIO,
};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::definition::{check_range, field, Choice, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{Better, MetricDef};
use crate::sys::{self, task_code, TaskCode};
use crate::{Error, Result};

pub const NSEC_PER_SET: MetricDef = MetricDef::primary("nsec_per_set", "nsec", Better::Lower);
pub const NSEC_PER_FIND: MetricDef = MetricDef::primary("nsec_per_find", "nsec", Better::Lower);
const METRICS: &[MetricDef] = &[NSEC_PER_SET, NSEC_PER_FIND];

const MAX_THREADS: u64 = 1_024;
const MAX_NODES: u64 = 64;
/// For the estimate, measured on a 2-vCPU VM (release build, 2 and 4 threads): one set + find
/// pair with its TSC brackets, its recorded answer and the untimed replay that checks it.
const PAIR_SEC: f64 = 3.5e-6;
/// Answers recorded across all threads (16 bytes each).
const MAX_TOTAL_OPS: u64 = 64_000_000;

/// Where the per-level bitmaps live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutKind {
    Shared,
    PerNode,
}

impl LayoutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutKind::Shared => "shared",
            LayoutKind::PerNode => "per-node",
        }
    }

    fn model(self) -> Layout {
        match self {
            LayoutKind::Shared => Layout::Shared,
            LayoutKind::PerNode => Layout::PerNode,
        }
    }
}

impl Choice for LayoutKind {
    const ALL: &'static [Self] = &[LayoutKind::Shared, LayoutKind::PerNode];

    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// The NUMA nodes of this machine (`/sys/devices/system/node/online`), 1 when unknown.
pub fn machine_numa_nodes() -> u32 {
    std::fs::read_to_string("/sys/devices/system/node/online")
        .map(|list| crate::fingerprint::count_cpu_list(list.trim()))
        .unwrap_or(1)
        .max(1)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CpupriParams {
    /// Threads setting and searching at once.
    pub threads: u64,
    pub layout: LayoutKind,
    /// Modelled NUMA nodes (this machine's count when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// Modelled CPUs in the map.
    pub cpus: u32,
    /// Set + find pairs per thread per iteration.
    pub ops: u64,
}

impl Default for CpupriParams {
    fn default() -> Self {
        CpupriParams {
            threads: 2,
            layout: LayoutKind::Shared,
            nodes: None,
            // The seed's machine: 2 sockets, 480 logical CPUs.
            cpus: 480,
            ops: 200_000,
        }
    }
}

impl CpupriParams {
    pub fn nodes(&self) -> u32 {
        self.nodes.unwrap_or_else(machine_numa_nodes)
    }

}

impl WorkloadParams for CpupriParams {
    const NAME: &'static str = "cpupri";
    const SUMMARY: &'static str =
        "RT cpupri priority masks set and searched by many threads, shared or per-NUMA-node bitmaps";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(threads), "threads", ParamKind::Count { min: 1, max: MAX_THREADS })
            .value("T")
            .help("Threads setting and searching at once (at most --modelled-cpus).")
            .details("Threads setting and searching at once (1 to 1,024, at most `--modelled-cpus`).")
            .task_count(),
        Param::new(
            field!(layout),
            "layout",
            ParamKind::Choice(&[
                ("shared", "one bitmap per priority level (upstream)"),
                ("per-node", "one bitmap per level and NUMA node, each on its own cache lines"),
            ]),
        )
        .value("LAYOUT")
        .help("Bitmap layout: shared (one per priority) or per-node.")
            .details("`shared`: one bitmap per priority (upstream); `per-node`: one bitmap per priority per NUMA node, each on its own cache lines."),
        Param::new(field!(nodes), "nodes", ParamKind::Count { min: 1, max: MAX_NODES })
            .value("N")
            .help("Modelled NUMA nodes [default: this machine's]")
            .details("Modelled NUMA nodes (1 to 64, at most `--modelled-cpus`); `--layout per-node` needs 2 or more (with one it is `shared`), so a one-node machine must give them."),
        Param::new(field!(cpus), "modelled-cpus", ParamKind::Count { min: 1, max: 4_096 })
            .aliases(&["cpus"])
            .value("N")
            .help("Modelled CPUs in the map.")
            .details("Modelled CPUs (1 to 4,096; the seed's machine had 480)."),
        Param::new(field!(ops), "ops", ParamKind::Count { min: 1, max: 10_000_000 })
            .value("N")
            .help("Set + find pairs per thread per iteration.")
            .details("Set + find pairs per thread per iteration (1 to 10^7; `--threads` × `--ops` at most 6.4 × 10^7).")
            .work_size(),
    ];

    fn check_rules(&self) -> Result<()> {
        check_range(
            "threads",
            self.threads,
            1,
            MAX_THREADS.min(u64::from(self.cpus)),
        )?;
        check_range(
            "nodes",
            u64::from(self.nodes()),
            1,
            MAX_NODES.min(u64::from(self.cpus)),
        )?;
        // One node's per-node bitmaps are the shared ones: a comparison of the two layouts would
        // measure nothing while its case names said it measured the split.
        if self.layout == LayoutKind::PerNode && self.nodes() == 1 {
            let whose = if self.nodes.is_some() {
                ""
            } else {
                " (this machine's count, the default)"
            };
            return Err(Error::param(
                "layout",
                format!(
                    "per-node needs at least 2 modelled NUMA nodes (with one it is the shared \
                     layout), not 1{whose}"
                ),
            ));
        }
        if self.threads * self.ops > MAX_TOTAL_OPS {
            return Err(Error::invalid(format!(
                "--threads × --ops must be at most {MAX_TOTAL_OPS} (every answer is recorded for \
                 checking), not {}",
                self.threads * self.ops
            )));
        }
        Ok(())
    }

    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(self.threads, "threads", "use fewer --threads")
    }

    fn case_name(&self) -> String {
        format!(
            "cpupri:{} cpus={} nodes={} threads={} ops={}",
            self.layout.as_str(),
            self.cpus,
            self.nodes(),
            self.threads,
            self.ops
        )
    }


    /// Threads beyond the CPUs queue behind each other.
    fn estimate_sec(&self) -> f64 {
        let cpus = u64::from(crate::fingerprint::online_cpu_count());
        self.threads.div_ceil(cpus) as f64 * self.ops as f64 * PAIR_SEC
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(CpupriWorkload::new(self.clone())?))
    }
}

/// Small xorshift64 generator: the same seed gives the same op stream in the thread and in the
/// replay.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// One step of a thread: which of its CPUs changes to which level, and the priority of the task
/// searched for. CPUs spend half their time at NORMAL (no RT task), a quarter at RT99 (the seed's
/// FIFO 99 threads) and a quarter at other RT levels; searches are for RT tasks of any level.
#[derive(Clone, Copy)]
struct Step {
    cpu: u32,
    level: Option<CpuPri>,
    task_pri: CpuPri,
}

fn next_step(rng: &mut Rng, own: &[u32]) -> Step {
    let cpu = own[rng.below(own.len() as u64) as usize];
    let level = match rng.below(4) {
        0 | 1 => Some(CpuPri::NORMAL),
        2 => CpuPri::rt(MAX_RT_PRIO - 1),
        _ => CpuPri::rt(1 + rng.below(u64::from(MAX_RT_PRIO) - 1) as u8),
    };
    let task_pri =
        CpuPri::new(1 + rng.below(CPUPRI_NR_PRIORITIES as u64 - 1) as u8).unwrap_or(CpuPri::HIGHER);
    Step {
        cpu,
        level,
        task_pri,
    }
}

/// What a find returned, recorded in the timed loop: the CPU (`u32::MAX` for none) and a hash of
/// the mask it filled.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Answer {
    cpu: u32,
    mask_hash: u64,
}

const NO_CPU: u32 = u32::MAX;

/// Hashes words `words` of a mask (the ones a thread's CPUs can occupy).
#[inline]
fn mask_hash(mask: &CpuMask, words: std::ops::Range<usize>) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for &w in &mask.words()[words] {
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    h
}

/// A thread's share of the map.
struct ThreadPlan {
    cpus: Vec<u32>,
    mask: CpuMask,
    words: std::ops::Range<usize>,
    start_node: u32,
    seed: u64,
}

/// A thread's results: tick sums for sets and finds, and its clock and tick span for conversion.
#[derive(Default)]
struct ThreadReport {
    set_ticks: AtomicU64,
    find_ticks: AtomicU64,
    span_ns: AtomicU64,
    span_ticks: AtomicU64,
    done: AtomicU64,
    answers: Mutex<Vec<Answer>>,
}

fn thread_body(
    map: &Cpupri,
    plan: &ThreadPlan,
    ops: u64,
    mut answers: Vec<Answer>,
    report: &ThreadReport,
) -> TaskCode {
    let mut rng = Rng::new(plan.seed);
    let mut out = CpuMask::new();
    let (mut set_ticks, mut find_ticks, mut done) = (0u64, 0u64, 0u64);
    let mut code = task_code::OK;
    let t_start = sys::monotonic_ns();
    let c_start = sys::tsc_serialized();
    for answer in answers.iter_mut().take(ops as usize) {
        let step = next_step(&mut rng, &plan.cpus);
        let t0 = sys::tsc_serialized();
        let set = map.set(step.cpu, step.level);
        let t1 = sys::tsc_serialized();
        if set.is_err() {
            code = task_code::VERIFY_FAILED;
            break;
        }
        let t2 = sys::tsc_serialized();
        let got = map.find_from_node(plan.start_node, step.task_pri, &plan.mask, &mut out);
        let t3 = sys::tsc_serialized();
        set_ticks += t1.wrapping_sub(t0);
        find_ticks += t3.wrapping_sub(t2);
        *answer = Answer {
            cpu: got.unwrap_or(NO_CPU),
            mask_hash: mask_hash(&out, plan.words.clone()),
        };
        done += 1;
    }
    let c_end = sys::tsc_serialized();
    let t_end = sys::monotonic_ns();
    report.set_ticks.store(set_ticks, Ordering::SeqCst);
    report.find_ticks.store(find_ticks, Ordering::SeqCst);
    report
        .span_ns
        .store(t_end.saturating_sub(t_start), Ordering::SeqCst);
    report
        .span_ticks
        .store(c_end.saturating_sub(c_start), Ordering::SeqCst);
    report.done.store(done, Ordering::SeqCst);
    if let Ok(mut slot) = report.answers.lock() {
        *slot = answers;
    }
    code
}

pub struct CpupriWorkload {
    params: CpupriParams,
    topology: NumaTopology,
}

impl CpupriWorkload {
    pub fn new(params: CpupriParams) -> Result<Self> {
        let topology = NumaTopology::new(params.cpus, params.nodes())
            .map_err(|e| Error::invalid(format!("--cpus/--nodes: {e}")))?;
        Ok(CpupriWorkload { params, topology })
    }

    fn plans(&self) -> Vec<ThreadPlan> {
        partition_blocks(self.params.cpus, self.params.threads as u32)
            .into_iter()
            .enumerate()
            .map(|(t, mask)| {
                let cpus: Vec<u32> = mask.iter().collect();
                let first = cpus.first().copied().unwrap_or(0);
                let last = cpus.last().copied().unwrap_or(0);
                ThreadPlan {
                    start_node: self.topology.node_of(first).unwrap_or(0),
                    words: (first / 64) as usize..(last / 64) as usize + 1,
                    cpus,
                    mask,
                    seed: 0x5EED_0000 + t as u64 * 0x9E37_79B9,
                }
            })
            .collect()
    }

    /// A map with every modelled CPU online at NORMAL, the state before the run.
    fn fresh_map(&self, layout: Layout) -> Result<Cpupri> {
        let map = Cpupri::new(self.topology, layout);
        for cpu in 0..self.params.cpus {
            map.set(cpu, Some(CpuPri::NORMAL))
                .map_err(|e| Error::failed(format!("cpupri: {e}")))?;
        }
        Ok(map)
    }
}

/// Replays every thread's op stream on a private map and checks each recorded answer against
/// the reference search over the thread's own CPUs; then the shared map must be consistent and
/// hold the replayed levels.
fn verify(
    shared: &Cpupri,
    replay: &Cpupri,
    plans: &[ThreadPlan],
    reports: &[ThreadReport],
    ops: u64,
) -> Result<()> {
    for (t, (plan, report)) in plans.iter().zip(reports).enumerate() {
        let done = report.done.load(Ordering::SeqCst);
        if done != ops {
            return Err(Error::failed(format!(
                "cpupri thread {t} finished {done} of {ops} ops"
            )));
        }
        let answers = report
            .answers
            .lock()
            .map_err(|_| Error::failed("cpupri: a thread's answers are unreadable"))?;
        let mut owner = CpuOwner::new(replay, plan.mask.clone())
            .map_err(|e| Error::failed(format!("cpupri: {e}")))?;
        let mut rng = Rng::new(plan.seed);
        for (i, answer) in answers.iter().enumerate().take(ops as usize) {
            let step = next_step(&mut rng, &plan.cpus);
            owner
                .set(replay, step.cpu, step.level)
                .map_err(|e| Error::failed(format!("cpupri replay: {e}")))?;
            let expected = owner.expected(step.task_pri, &plan.mask);
            let acceptable = expected
                .as_ref()
                .map_or_else(CpuMask::new, |a| a.acceptable(&plan.mask));
            let cpu_ok = match answer.cpu {
                NO_CPU => expected.is_none(),
                cpu => acceptable.contains(cpu),
            };
            if !cpu_ok || answer.mask_hash != mask_hash(&acceptable, plan.words.clone()) {
                let got = match answer.cpu {
                    NO_CPU => "no CPU".to_string(),
                    cpu => format!("cpu {cpu}"),
                };
                let want = match &expected {
                    Some(a) => format!("a CPU of {acceptable} at level {}", a.level),
                    None => "no CPU".to_string(),
                };
                return Err(Error::failed(format!(
                    "cpupri find disagrees with the reference: thread {t}, op #{i}, task \
                     priority {}: find returned {got}{}, the reference expects {want}",
                    step.task_pri,
                    if cpu_ok { " with a different mask" } else { "" }
                )));
            }
        }
    }
    shared
        .check_quiescent()
        .map_err(|e| Error::failed(format!("cpupri map inconsistent after the run: {e}")))?;
    if shared.cpu_to_pri_snapshot() != replay.cpu_to_pri_snapshot() {
        return Err(Error::failed(
            "cpupri: the map's final levels differ from the replayed ones",
        ));
    }
    Ok(())
}

impl Workload for CpupriWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let p = &self.params;
        let map = Arc::new(self.fresh_map(p.layout.model())?);
        let plans = Arc::new(self.plans());
        let reports: Arc<Vec<ThreadReport>> =
            Arc::new((0..p.threads).map(|_| ThreadReport::default()).collect());
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for t in 0..p.threads as usize {
            let answers = vec![Answer::default(); p.ops as usize];
            let (map, plans, reports, ops) = (
                Arc::clone(&map),
                Arc::clone(&plans),
                Arc::clone(&reports),
                p.ops,
            );
            launch.spawn(format!("cpupri {t}"), move || {
                thread_body(&map, &plans[t], ops, answers, &reports[t])
            })?;
        }
        launch.start()?;
        launch.wait_all()?;
        drop(launch);

        let replay = self.fresh_map(Layout::Shared)?;
        verify(&map, &replay, &plans, &reports, p.ops)?;

        let (mut set_ns, mut find_ns) = (0.0, 0.0);
        for r in reports.iter() {
            let ns_per_tick = if sys::HAS_TSC {
                r.span_ns.load(Ordering::SeqCst) as f64
                    / r.span_ticks.load(Ordering::SeqCst).max(1) as f64
            } else {
                1.0
            };
            set_ns += r.set_ticks.load(Ordering::SeqCst) as f64 * ns_per_tick;
            find_ns += r.find_ticks.load(Ordering::SeqCst) as f64 * ns_per_tick;
        }
        let total = p.ops as f64 * p.threads as f64;
        Ok(vec![
            NSEC_PER_SET.value(set_ns / total),
            NSEC_PER_FIND.value(find_ns / total),
        ]
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(params: CpupriParams) -> Result<IterationOutput> {
        params.validate().unwrap();
        CpupriWorkload::new(params)?.run_iteration(IterationInfo::FIRST)
    }

    #[test]
    fn both_layouts_run_and_every_find_matches_the_reference() {
        for layout in [LayoutKind::Shared, LayoutKind::PerNode] {
            for (cpus, nodes, threads) in [(130, 3, 4), (480, 2, 2), (8, 1, 3)] {
                if layout == LayoutKind::PerNode && nodes == 1 {
                    continue;
                }
                let m = run(CpupriParams {
                    threads,
                    layout,
                    nodes: Some(nodes),
                    cpus,
                    ops: 2_000,
                })
                .unwrap()
                .measurements;
                assert_eq!(m[0].name, "nsec_per_set");
                assert!(m[0].value > 0.0 && m[1].value > 0.0, "{m:?}");
            }
        }
    }

    #[test]
    fn a_wrong_recorded_answer_is_caught() {
        let w = CpupriWorkload::new(CpupriParams {
            threads: 2,
            nodes: Some(2),
            cpus: 64,
            ops: 50,
            ..Default::default()
        })
        .unwrap();
        let plans = w.plans();
        let map = w.fresh_map(Layout::PerNode).unwrap();
        let reports: Vec<ThreadReport> = (0..2).map(|_| ThreadReport::default()).collect();
        for (t, plan) in plans.iter().enumerate() {
            assert_eq!(
                thread_body(&map, plan, 50, vec![Answer::default(); 50], &reports[t]),
                task_code::OK
            );
        }
        let replay = w.fresh_map(Layout::Shared).unwrap();
        verify(&map, &replay, &plans, &reports, 50).unwrap();

        // Corrupt one answer of thread 1: the replay must name it.
        reports[1].answers.lock().unwrap()[17].cpu = 3;
        let replay = w.fresh_map(Layout::Shared).unwrap();
        let err = verify(&map, &replay, &plans, &reports, 50)
            .unwrap_err()
            .to_string();
        assert!(err.contains("thread 1, op #17"), "{err}");
    }

    #[test]
    fn threads_own_disjoint_blocks_on_their_nodes() {
        let w = CpupriWorkload::new(CpupriParams {
            threads: 4,
            nodes: Some(2),
            cpus: 480,
            ..Default::default()
        })
        .unwrap();
        let plans = w.plans();
        assert_eq!(plans.iter().map(|p| p.cpus.len()).sum::<usize>(), 480);
        assert_eq!(
            plans.iter().map(|p| p.start_node).collect::<Vec<_>>(),
            vec![0, 0, 1, 1]
        );
        assert_eq!(plans[0].words, 0..2);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (p, flag) in [
            (
                CpupriParams {
                    threads: 0,
                    ..Default::default()
                },
                "--threads",
            ),
            (
                CpupriParams {
                    threads: 9,
                    cpus: 8,
                    ..Default::default()
                },
                "--threads",
            ),
            (
                CpupriParams {
                    nodes: Some(0),
                    ..Default::default()
                },
                "--nodes",
            ),
            (
                CpupriParams {
                    layout: LayoutKind::PerNode,
                    nodes: Some(1),
                    ..Default::default()
                },
                "--layout per-node needs at least 2",
            ),
            (
                CpupriParams {
                    cpus: 5_000,
                    ..Default::default()
                },
                "--cpus",
            ),
            (
                CpupriParams {
                    threads: 1_000,
                    cpus: 4_000,
                    ops: 10_000_000,
                    ..Default::default()
                },
                "--threads × --ops",
            ),
        ] {
            let err = p.validate().unwrap_err().to_string();
            assert!(err.contains(flag), "{err}");
        }
        assert!(serde_json::from_value::<LayoutKind>("numa".into()).is_err());
        let read: LayoutKind = serde_json::from_value("per-node".into()).unwrap();
        assert_eq!(read, LayoutKind::PerNode);
    }
}
