//! Turns the raw command line into a validated run plan (ripgrep's LowArgs → HiArgs), in one
//! place: every check of user input for `run` happens here or in the core types it builds.
use schedlab_core::plan::{RunPlan, DEFAULT_ITERATIONS, DEFAULT_WARMUP};
use schedlab_core::suite::Suite;
use schedlab_core::workload::fake::FakeParams;
use schedlab_core::workload::messaging::MessagingParams;
use schedlab_core::workload::pipe::PipeParams;
use schedlab_core::workload::WorkloadSpec;

use crate::cli::{RunArgs, WorkloadCommand};
use crate::failure::Failure;

pub fn run_plan(args: &RunArgs) -> Result<RunPlan, Failure> {
    let options = &args.options;
    let (suite_name, iterations, warmup, workloads) = match (&args.suite, &args.workload) {
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
        (Some(name), None) => {
            let suite = Suite::load(name)?;
            (
                Some(suite.name.clone()),
                options
                    .iterations
                    .or(suite.iterations)
                    .unwrap_or(DEFAULT_ITERATIONS),
                options.warmup.or(suite.warmup).unwrap_or(DEFAULT_WARMUP),
                suite.cases,
            )
        }
        (None, Some(command)) => (
            None,
            options.iterations.unwrap_or(DEFAULT_ITERATIONS),
            options.warmup.unwrap_or(DEFAULT_WARMUP),
            vec![workload_spec(command)?],
        ),
    };
    Ok(RunPlan::new(
        suite_name,
        options.label.clone(),
        iterations,
        warmup,
        workloads,
    )?)
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
