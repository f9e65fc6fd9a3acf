//! Turns the raw command line into a validated run plan (ripgrep's LowArgs → HiArgs), in one
//! place: every check of user input for `run` happens here or in the core types it builds.
use schedlab_core::plan::{RunPlan, DEFAULT_ITERATIONS, DEFAULT_WARMUP};
use schedlab_core::suite::{CaseOrder, Suite};
use schedlab_core::workload::fake::{FakeParams, StallIn};
use schedlab_core::workload::messaging::MessagingParams;
use schedlab_core::workload::pipe::PipeParams;
use schedlab_core::workload::wakeup::{parse_cpu_list, WakeupParams};
use schedlab_core::workload::WorkloadSpec;
use schedlab_core::workload::{cpudl, cpupri, fanout, semaphore, syscall};

use crate::cli::{
    MessagingArgs, OrderArg, PipeArgs, PlanOptions, RunArgs, StallInArg, WakeupArgs,
    WorkloadCommand,
};
use crate::failure::Failure;

pub fn run_plan(args: &RunArgs) -> Result<RunPlan, Failure> {
    plan_from_parts(
        args.suite.as_ref(),
        args.workload.as_ref(),
        &args.plan,
        args.label.as_ref(),
    )
}

/// The plan of `run`, `ab`, `campaign start` and `calibrate`: a suite or one workload, with the
/// run options and the command's label (schbench's --jobname stands in for it).
pub fn plan_from_parts(
    suite: Option<&String>,
    workload: Option<&WorkloadCommand>,
    options: &PlanOptions,
    label: Option<&String>,
) -> Result<RunPlan, Failure> {
    let label = label_with_jobname(label, workload)?;
    let suite_arg = suite;
    let suite = match (suite, workload) {
        (Some(_), Some(_)) => {
            return Err(Failure::bad_input(
                "give either --suite or a workload, not both",
            ));
        }
        (None, None) => {
            return Err(Failure::bad_input(
                "nothing to run: give a workload (see `schedlab list`) or --suite NAME",
            ));
        }
        (Some(name), None) => Suite::load(name)?,
        (None, Some(command)) => Suite {
            name: String::new(),
            description: String::new(),
            iterations: None,
            warmup: None,
            cooldown_sec: 0.0,
            order: CaseOrder::Listed,
            seed: None,
            cases: vec![workload_spec(command)?],
        },
    };
    let suite = match options.scale {
        Some(factor) => suite.scaled(factor)?,
        None => suite,
    };
    let cooldown_sec = options.cooldown.unwrap_or(suite.cooldown_sec);
    if !(cooldown_sec.is_finite() && (0.0..=3600.0).contains(&cooldown_sec)) {
        return Err(Failure::bad_input(
            "--cooldown must be between 0 and 3600 seconds",
        ));
    }
    let random = match options.order {
        Some(OrderArg::Random) => true,
        Some(OrderArg::Listed) => false,
        None => suite.order == CaseOrder::Random,
    };
    let mut plan = RunPlan::new(
        suite_arg.map(|_| suite.name.clone()),
        label,
        options
            .iterations
            .or(suite.iterations)
            .unwrap_or(DEFAULT_ITERATIONS),
        options.warmup.or(suite.warmup).unwrap_or(DEFAULT_WARMUP),
        suite.cases,
    )?
    .with_cooldown_ms((cooldown_sec * 1000.0).round() as u64)
    .with_scale(options.scale.unwrap_or(1.0));
    if random {
        plan = plan.shuffled(options.order_seed.or(suite.seed).unwrap_or_else(fresh_seed));
    }
    if let (Some(ci), Some(max)) = (options.until_ci, options.max_iterations) {
        plan = plan.with_adaptive_stopping(ci, max)?;
    }
    if let Some(seconds) = options.iteration_timeout {
        plan = plan.with_iteration_timeout_sec(seconds)?;
    }
    Ok(plan.with_keep_going(options.keep_going))
}

/// A seed for a random order nobody chose; it is recorded with the run, so the order can be
/// replayed with --order-seed.
fn fresh_seed() -> u64 {
    let nanos = schedlab_core::sys::realtime_ns() as u64;
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

fn workload_spec(command: &WorkloadCommand) -> Result<WorkloadSpec, Failure> {
    Ok(match command {
        WorkloadCommand::Pipe(a) => pipe_spec(a)?,
        WorkloadCommand::Messaging(a) => messaging_spec(a)?,
        WorkloadCommand::Fake(a) => WorkloadSpec::Fake(FakeParams {
            value_usec: a.value_usec,
            spread_pct: a.spread_pct,
            seed: a.seed,
            effect_pct: a.effect_pct,
            fail_at: a.fail_at,
            sleep_ms: a.sleep_ms,
            stall_at: a.stall_at,
            stall_in: a.stall_in.map(|s| match s {
                StallInArg::Thread => StallIn::Thread,
                StallInArg::Process => StallIn::Process,
            }),
            stall_spin: a.stall_spin,
        }),
        WorkloadCommand::Wakeup(a) => wakeup_spec(a)?,
        WorkloadCommand::Semaphore(a) => WorkloadSpec::Semaphore(semaphore::SemaphoreParams {
            items: a.items,
            work: a.work,
            wait: semaphore::WaitStrategy::parse(&a.wait)?,
            processes: a.processes,
            cpus: a.cpus.as_deref().map(parse_cpu_pair).transpose()?,
        }),
        WorkloadCommand::Syscall(a) => WorkloadSpec::Syscall(syscall::SyscallParams {
            threads: a.threads,
            calls: a.calls,
            kind: syscall::SyscallKind::parse(&a.kind)?,
        }),
        WorkloadCommand::Fanout(a) => WorkloadSpec::Fanout(fanout::FanoutParams {
            workers: a.workers,
            rounds: a.rounds,
            work: a.work,
            capacity: a.capacity,
        }),
        WorkloadCommand::Cpudl(a) => WorkloadSpec::Cpudl(cpudl::CpudlParams {
            variant: a
                .variant
                .as_deref()
                .map(|v| cpudl::HeapVariant::parse("--variant", v))
                .transpose()?,
            cpus: a.cpus,
            ops: a.ops,
            mix: cpudl::MixKind::parse(&a.mix)?,
            seed: a.seed,
            deadline_granularity: a.deadline_granularity,
            check: a.check,
            equivalence: a.equivalence,
            variants: a
                .variants
                .as_deref()
                .map(cpudl::HeapVariant::parse_pair)
                .transpose()?,
            allow_ties: a.allow_ties,
        }),
        WorkloadCommand::Cpupri(a) => WorkloadSpec::Cpupri(cpupri::CpupriParams {
            threads: a.threads,
            layout: cpupri::LayoutKind::parse(&a.layout)?,
            nodes: a.nodes,
            cpus: a.cpus,
            ops: a.ops,
        }),
    })
}

/// schbench's -J/--jobname names the run, as --label does; both at once must agree.
fn label_with_jobname(
    label: Option<&String>,
    workload: Option<&WorkloadCommand>,
) -> Result<Option<String>, Failure> {
    let jobname = match workload {
        Some(WorkloadCommand::Wakeup(a)) => a.jobname.as_ref(),
        _ => None,
    };
    match (label, jobname) {
        (Some(l), Some(j)) if l != j => Err(Failure::bad_input(format!(
            "--jobname {j:?} and --label {l:?} both name the run; give one"
        ))),
        (l, j) => Ok(l.or(j).cloned()),
    }
}

/// A reference tool's flag with no counterpart here: one line naming the flag and why.
fn refuse(tool: &str, flag: &str, why: &str) -> Failure {
    Failure::bad_input(format!("{tool}'s {flag} is not supported: {why}"))
}

fn pipe_spec(a: &PipeArgs) -> Result<WorkloadSpec, Failure> {
    if a.refused_cgroups.is_some() {
        return Err(refuse(
            "perf bench sched pipe",
            "-G/--cgroups",
            "schedlab does not move its tasks into cgroups; start schedlab inside the cgroup",
        ));
    }
    Ok(WorkloadSpec::Pipe(PipeParams {
        loops: a.loops,
        threads: a.threads,
        cpus: a.cpus.as_deref().map(parse_cpu_pair).transpose()?,
    }))
}

fn messaging_spec(a: &MessagingArgs) -> Result<WorkloadSpec, Failure> {
    if a.refused_fifo {
        return Err(refuse(
            "hackbench",
            "-F/--fifo",
            "schedlab's parent never switches to SCHED_FIFO; its tasks run under the caller's policy",
        ));
    }
    if a.refused_inet {
        return Err(refuse(
            "hackbench",
            "-i/--inet",
            "messaging has no TCP-over-loopback channel, only AF_UNIX sockets and pipes (-p)",
        ));
    }
    Ok(WorkloadSpec::Messaging(MessagingParams {
        groups: a.groups,
        fds: a.fds,
        loops: a.loops,
        datasize: a.datasize,
        pipe: a.pipe,
        threads: a.threads,
    }))
}

fn wakeup_spec(a: &WakeupArgs) -> Result<WorkloadSpec, Failure> {
    const SCHBENCH: &str = "schbench";
    if a.refused_calibrate {
        return Err(refuse(
            SCHBENCH,
            "-C/--calibrate",
            "wakeup has no calibration mode (schedlab's `calibrate` command measures run-to-run \
             noise instead); to time the request's math alone, compare -L -s 0 runs",
        ));
    }
    let refused = [
        (
            &a.refused_auto_rps,
            "-A/--auto-rps",
            "a rate that follows CPU use while measuring would give no two iterations the same \
             load; give a fixed --rps",
        ),
        (
            &a.refused_intervaltime,
            "-i/--intervaltime",
            "schedlab reports each iteration at its end, never in the middle of a window",
        ),
        (
            &a.refused_zerotime,
            "-z/--zerotime",
            "each iteration measures its own window from zero; use --runtime and --iterations",
        ),
        (
            &a.refused_json,
            "-j/--json",
            "schedlab writes no side file; use --format json (stdout) or `schedlab show --format json`",
        ),
        (
            &a.refused_split,
            "--split",
            "every worker's matrices are private (schbench's default); there is no shared part",
        ),
    ];
    if let Some((_, flag, why)) = refused.iter().find(|(given, _, _)| given.is_some()) {
        return Err(refuse(SCHBENCH, flag, why));
    }
    let (message_cpus, worker_cpus) = wakeup_cpus(a)?;
    // schbench's 0 means "the default" for -t and "off" for -p and -R.
    let nonzero = |v: Option<u64>| v.filter(|&v| v != 0);
    Ok(WorkloadSpec::Wakeup(WakeupParams {
        message_threads: a.message_threads,
        workers: nonzero(a.workers),
        runtime: a.runtime,
        warmup_sec: a.warmup_sec,
        sleep_usec: a.sleep_usec,
        operations: a.operations,
        cache_footprint: a.cache_footprint,
        no_lock: a.no_lock,
        pipe: nonzero(a.pipe),
        rps: nonzero(a.rps),
        message_cpus,
        worker_cpus,
    }))
}

/// -M and -W: CPU lists, or schbench's `auto` (either flag): message thread i alone on the i-th
/// CPU this process may use, every worker on the CPUs after those. schbench itself means the
/// same but, through a shadowed loop variable, leaves the workers on every CPU, and counts from
/// CPU 0 whether or not it may use it.
type CpuLists = (Option<Vec<u32>>, Option<Vec<u32>>);

fn wakeup_cpus(a: &WakeupArgs) -> Result<CpuLists, Failure> {
    let is_auto = |v: &Option<String>| v.as_deref().map(str::trim) == Some("auto");
    let (message_auto, worker_auto) = (is_auto(&a.message_cpus), is_auto(&a.worker_cpus));
    if message_auto || worker_auto {
        if (a.message_cpus.is_some() && !message_auto) || (a.worker_cpus.is_some() && !worker_auto)
        {
            return Err(Failure::bad_input(
                "--message-cpus auto and --worker-cpus auto place both kinds of thread; give \
                 `auto` alone, or a CPU list for each",
            ));
        }
        let allowed = schedlab_core::sys::allowed_cpus()
            .map_err(|e| Failure::bad_input(format!("cannot read the allowed CPUs: {e}")))?;
        let m = usize::try_from(a.message_threads).unwrap_or(usize::MAX);
        if m == 0 || m >= allowed.len() {
            return Err(Failure::bad_input(format!(
                "`auto` pinning gives each of the {} message threads a CPU of its own and the \
                 workers the rest, but this process may use {} CPUs",
                a.message_threads,
                allowed.len()
            )));
        }
        return Ok((Some(allowed[..m].to_vec()), Some(allowed[m..].to_vec())));
    }
    let list = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(|t| parse_cpu_list(t).map_err(|e| Failure::bad_input(format!("--{flag}: {e}"))))
            .transpose()
    };
    Ok((
        list("message-cpus", &a.message_cpus)?,
        list("worker-cpus", &a.worker_cpus)?,
    ))
}

fn parse_cpu_pair(text: &str) -> Result<[u32; 2], Failure> {
    let bad = || {
        Failure::bad_input(format!(
            "--cpus expects two CPU numbers like 0,1, not {text:?}"
        ))
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    Ok([
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_pairs() {
        assert_eq!(parse_cpu_pair("0,1").unwrap(), [0, 1]);
        assert_eq!(parse_cpu_pair(" 3 , 3").unwrap(), [3, 3]);
        assert!(parse_cpu_pair("0").is_err());
        assert!(parse_cpu_pair("0,x").is_err());
        assert!(parse_cpu_pair("0,-1").is_err());
    }
}
