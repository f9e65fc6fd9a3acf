//! `schedlab ab`: interleave two runtime settings. Each round applies A and runs every case, then
//! applies B and runs again, in ABBA order (AB, BA, AB, ...) so slow drift cancels; every visit is
//! a stored run tagged with its arm and round, and `compare LABEL-a LABEL-b` analyses the rounds as
//! pairs. The original setting is restored at the end, on Ctrl-C and on failure.
use std::process::{Command, ExitCode, Stdio};

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::plan::{validate_label, RunPlan};
use schedlab_core::record::{Arm, ExperimentTag, RunStatus};
use schedlab_core::sys;
use schedlab_store::{Experiment, ExperimentKind, SqliteStore, Store};

use super::db_path;
use super::run::{outcome_result, run_stored};
use crate::cli::AbArgs;
use crate::failure::Failure;
use crate::plan::plan_from_parts;
use crate::progress::ProgressLine;

/// The arms of round `round`: A first in even rounds, B first in odd ones.
pub fn abba(round: u32) -> [Arm; 2] {
    if round.is_multiple_of(2) {
        [Arm::A, Arm::B]
    } else {
        [Arm::B, Arm::A]
    }
}

/// The label of an arm's runs.
pub fn arm_label(name: &str, arm: Arm) -> String {
    format!("{name}-{}", arm.as_str())
}

/// Runs a setting command through `sh -c`; its output goes to stderr so stdout stays schedlab's.
pub fn shell(what: &str, command: &str) -> Result<(), Failure> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| Failure::failed(format!("cannot run the {what} command: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::failed(format!(
            "the {what} command `{command}` failed ({status})"
        )))
    }
}

pub fn ab(args: &AbArgs) -> Result<ExitCode, Failure> {
    if args.options.no_store {
        return Err(Failure::bad_input(
            "ab stores its runs as one experiment; --no-store does not apply",
        ));
    }
    if args.options.dry_run {
        return Err(Failure::bad_input(
            "ab has no --dry-run; use `schedlab run … --dry-run` for the cases",
        ));
    }
    if args.rounds == 0 || args.rounds > 1000 {
        return Err(Failure::bad_input(format!(
            "--rounds must be between 1 and 1000, not {}",
            args.rounds
        )));
    }
    let plan = plan_from_parts(args.suite.as_ref(), args.workload.as_ref(), &args.options)?;
    let name = match &args.options.label {
        Some(label) => label.clone(),
        None => format!("ab-{}", sys::realtime_ns() / 1_000_000_000),
    };
    validate_label(&arm_label(&name, Arm::A))?;
    let mut store = SqliteStore::open(&db_path(&args.options.db)?)?;
    let spec = serde_json::json!({
        "a": args.apply_a,
        "b": args.apply_b,
        "restore": args.restore,
        "rounds": args.rounds,
        "plan": plan,
    });
    let experiment_id = store.create_experiment(&Experiment {
        id: None,
        kind: ExperimentKind::Ab,
        name: name.clone(),
        spec,
        state: serde_json::json!({ "visits_done": 0 }),
        status: RunStatus::Running,
        created_at_ns: sys::realtime_ns(),
    })?;
    sys::install_interrupt_handlers()
        .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;

    let result = visit_all(args, &plan, &name, experiment_id, &mut store);
    // Restore whatever happened; a failing restore is reported but does not hide the run's own
    // failure.
    let restored = args
        .restore
        .as_deref()
        .map(|cmd| shell("--restore", cmd))
        .unwrap_or(Ok(()));
    let status = match &result {
        Ok(_) => RunStatus::Complete,
        Err(f) if f.code > 128 => RunStatus::Interrupted,
        Err(_) => RunStatus::Failed,
    };
    let done = result.as_ref().map_or(0, |v| *v);
    store.update_experiment(
        experiment_id,
        &serde_json::json!({ "visits_done": done }),
        status,
    )?;
    result?;
    restored?;
    println!(
        "ab experiment {name}: {} rounds × 2 arms stored as labels {} and {}; compare with:\n  schedlab compare {} {}",
        args.rounds,
        arm_label(&name, Arm::A),
        arm_label(&name, Arm::B),
        arm_label(&name, Arm::A),
        arm_label(&name, Arm::B)
    );
    Ok(ExitCode::SUCCESS)
}

/// Every round's two visits; returns how many visits completed.
fn visit_all(
    args: &AbArgs,
    plan: &RunPlan,
    name: &str,
    experiment_id: i64,
    store: &mut SqliteStore,
) -> Result<u32, Failure> {
    let fingerprint = Fingerprint::collect();
    let mut progress = ProgressLine::new(args.options.quiet);
    let mut visits = 0;
    for round in 0..args.rounds {
        for arm in abba(round) {
            if let Some(signal) = sys::interrupt_signal() {
                return Err(Failure::from(schedlab_core::Error::Interrupted(signal)));
            }
            let command = match arm {
                Arm::A => &args.apply_a,
                Arm::B => &args.apply_b,
            };
            shell(if arm == Arm::A { "--a" } else { "--b" }, command)?;
            let mut visit = plan.clone();
            visit.label = Some(arm_label(name, arm));
            if let Some(seed) = plan.order_seed {
                // A new order per visit (stored with the run), so no case always follows the
                // same one.
                visit = visit.shuffled(seed.wrapping_add(u64::from(visits)));
            }
            let tag = ExperimentTag {
                experiment_id,
                arm,
                round,
            };
            let (run_id, outcome) =
                run_stored(store, &visit, &fingerprint, Some(tag), &mut progress)?;
            outcome_result(outcome, Some(run_id))?;
            visits += 1;
            store.update_experiment(
                experiment_id,
                &serde_json::json!({ "visits_done": visits }),
                RunStatus::Running,
            )?;
        }
    }
    progress.finish();
    Ok(visits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_abba() {
        let order: Vec<Arm> = (0..4).flat_map(abba).collect();
        assert_eq!(
            order,
            [
                Arm::A,
                Arm::B,
                Arm::B,
                Arm::A,
                Arm::A,
                Arm::B,
                Arm::B,
                Arm::A
            ]
        );
    }
}
