//! Turns the raw command line into a validated run plan (ripgrep's LowArgs → HiArgs), in one
//! place: every check of user input for `run` happens here or in the core types it builds.
use schedlab_core::plan::{RunPlan, DEFAULT_ITERATIONS, DEFAULT_WARMUP};
use schedlab_core::suite::{CaseOrder, Suite};
use schedlab_core::workload::{Given, ParamKind, WorkloadDefinition, WorkloadSpec};

use crate::cli::{OrderArg, PlanOptions, RunArgs, WorkloadCommand};
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
            backgrounds: vec![Vec::new()],
        },
    };
    let suite = with_co_runners(suite, &options.background)?;
    let suite = match options.scale {
        Some(factor) => suite.scaled(factor)?,
        None => suite,
    };
    // --cooldown is checked by clap, a suite's cooldown_sec where it is read.
    let cooldown_sec = options.cooldown.unwrap_or(suite.cooldown_sec);
    // A seed is only ever of a random order: given alone, it asks for that order.
    let random = match options.order {
        Some(OrderArg::Random) => true,
        Some(OrderArg::Listed) if options.order_seed.is_some() => {
            return Err(Failure::bad_input(
                "--order-seed is the seed of a random order; --order listed has none",
            ))
        }
        Some(OrderArg::Listed) => false,
        None => suite.order == CaseOrder::Random || options.order_seed.is_some(),
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
    .with_backgrounds(suite.backgrounds)?
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
    let plan = plan
        .with_probes(options.probes.explain.unwrap_or(0), options.probes.profile)?
        .with_keep_going(options.keep_going);
    let plan = match options.quiet.quiet_below {
        Some(below) => plan.with_quiet(
            below,
            options
                .quiet
                .quiet_wait
                .unwrap_or(schedlab_core::quiet::DEFAULT_WAIT_MS),
        )?,
        None => plan,
    };
    crate::session::check_probes(&plan)?;
    crate::session::check_quiet(&plan)?;
    Ok(plan)
}

/// The suite with `--background`'s workloads beside every case, after the case's own co-runners;
/// each is checked as `run`'s workload is, its errors naming the flag.
pub fn with_co_runners(mut suite: Suite, given: &[WorkloadCommand]) -> Result<Suite, Failure> {
    let co_runners = given
        .iter()
        .map(|command| {
            // Checked by `CaseSpec::beside` as a co-runner: a scenario needs no end of its own.
            command
                .definition
                .from_command_line(&command.given)
                .map_err(|e| flag_error(command.definition, e))
                .map_err(|e| {
                    Failure::bad_input(format!(
                        "--background {}: {}",
                        command.definition.name, e.message
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for background in &mut suite.backgrounds {
        background.extend(co_runners.iter().cloned());
    }
    Ok(suite)
}

/// A seed for a random order nobody chose; it is recorded with the run, so the order can be
/// replayed with --order-seed.
fn fresh_seed() -> u64 {
    let nanos = schedlab_core::sys::realtime_ns() as u64;
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

/// The workload's parameters from the flags given, each set through its declaration by the
/// workload's definition (a reference tool's flag without counterpart is refused with the
/// reason), then checked; every error names the flag.
fn workload_spec(command: &WorkloadCommand) -> Result<WorkloadSpec, Failure> {
    let definition = command.definition;
    let spec = definition
        .from_command_line(&command.given)
        .map_err(|e| flag_error(definition, e))?;
    spec.validate().map_err(|e| flag_error(definition, e))?;
    Ok(spec)
}

/// A parameter's error as the command line spells its flag (`--pin`, not the suite key `cpus`).
fn flag_error(definition: &WorkloadDefinition, error: schedlab_core::Error) -> Failure {
    match &error {
        schedlab_core::Error::InvalidParam { key, reason } => match definition.param(key) {
            Some(def) => Failure::bad_input(format!("--{} {reason}", def.long)),
            None => Failure::from(error),
        },
        _ => Failure::from(error),
    }
}

/// schbench's -J/--jobname names the run, as --label does; both at once must agree.
fn label_with_jobname(
    label: Option<&String>,
    workload: Option<&WorkloadCommand>,
) -> Result<Option<String>, Failure> {
    let jobname = workload.and_then(|command| {
        command.given.iter().find_map(|(index, given)| {
            let def = command.definition.params.get(*index)?;
            match (def.kind, given) {
                (ParamKind::Label, Given::Text(name)) => Some(name),
                _ => None,
            }
        })
    });
    match (label, jobname) {
        (Some(l), Some(j)) if l != j => Err(Failure::bad_input(format!(
            "--jobname {j:?} and --label {l:?} both name the run; give one"
        ))),
        (l, j) => Ok(l.or(j).cloned()),
    }
}
