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

use crate::cli::{OrderArg, RunArgs, RunOptions, StallInArg, WorkloadCommand};
use crate::failure::Failure;

pub fn run_plan(args: &RunArgs) -> Result<RunPlan, Failure> {
    plan_from_parts(args.suite.as_ref(), args.workload.as_ref(), &args.options)
}

/// The plan of `run`, `ab` and `campaign start`: a suite or one workload, with the run options.
pub fn plan_from_parts(
    suite: Option<&String>,
    workload: Option<&WorkloadCommand>,
    options: &RunOptions,
) -> Result<RunPlan, Failure> {
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
        options.label.clone(),
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
        WorkloadCommand::Pipe(a) => WorkloadSpec::Pipe(PipeParams {
            loops: a.loops,
            threads: a.threads,
            cpus: a.cpus.as_deref().map(parse_cpu_pair).transpose()?,
        }),
        WorkloadCommand::Messaging(a) => WorkloadSpec::Messaging(MessagingParams {
            groups: a.groups,
            fds: a.fds,
            loops: a.loops,
            datasize: a.datasize,
            pipe: a.pipe,
            threads: a.threads,
        }),
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
        WorkloadCommand::Wakeup(a) => {
            let cpus = |flag: &str, text: &Option<String>| {
                text.as_deref()
                    .map(|t| {
                        parse_cpu_list(t).map_err(|e| Failure::bad_input(format!("--{flag}: {e}")))
                    })
                    .transpose()
            };
            WorkloadSpec::Wakeup(WakeupParams {
                message_threads: a.message_threads,
                workers: a.workers,
                runtime: a.runtime,
                warmup_sec: a.warmup_sec,
                sleep_usec: a.sleep_usec,
                operations: a.operations,
                cache_footprint: a.cache_footprint,
                no_lock: a.no_lock,
                pipe: a.pipe,
                rps: a.rps,
                message_cpus: cpus("message-cpus", &a.message_cpus)?,
                worker_cpus: cpus("worker-cpus", &a.worker_cpus)?,
            })
        }
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
