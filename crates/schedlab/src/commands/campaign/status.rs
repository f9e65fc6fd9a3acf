//! `campaign status`: one campaign's slots, guests and failed boots, or every campaign's
//! headline.
use std::process::ExitCode;

use schedlab_core::experiment::AbbaSlot;
use schedlab_core::words;
use schedlab_store::{Experiment, ExperimentKind, Store};

use super::guests::{describe_arm, describe_guests};
use super::state::{decode, load, CampaignSpec, CampaignState};
use crate::cli::CampaignStatusArgs;
use crate::failure::Failure;
use crate::output::emit_line;
use crate::store_path::{db_location, open_reader};
use crate::vm::boot::arm_name;

pub(super) fn status(args: &CampaignStatusArgs) -> Result<ExitCode, Failure> {
    let store = open_reader(&db_location(&args.db)?)?;
    let Some(name) = &args.name else {
        return list(&*store);
    };
    let (experiment, spec, state) = load(&*store, name)?;
    emit_line(format_args!("{}", headline(&experiment, &spec, &state)))?;
    if let Some(vm) = &spec.vm {
        emit_line(format_args!("  {}", describe_guests(vm)))?;
        emit_line(format_args!("  A: {}", describe_arm(&vm.a)))?;
        emit_line(format_args!("  B: {}", describe_arm(&vm.b)))?;
    }
    for slot in 0..spec.boots {
        let arm = AbbaSlot::of(slot).arm;
        match state.slots.get(slot as usize) {
            Some(s) => emit_line(format_args!(
                "  slot {:>3}  {}  run {:<6} kernel {}  boot {}",
                slot + 1,
                arm.as_str().to_uppercase(),
                s.run_id,
                s.kernel,
                s.boot_id
            ))?,
            None => emit_line(format_args!(
                "  slot {:>3}  {}  pending (kernel {})",
                slot + 1,
                arm.as_str().to_uppercase(),
                spec.kernel(arm)
            ))?,
        }
    }
    for failure in &state.failures {
        emit_line(format_args!(
            "  slot {:>3}  {}  failed boot{}: {}",
            failure.slot + 1,
            arm_name(failure.arm),
            failure
                .run_id
                .map(|id| format!(" (run {id})"))
                .unwrap_or_default(),
            failure.reason
        ))?;
        for line in &failure.console_tail {
            emit_line(format_args!(
                " \
                 | {line}"
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A campaign in one line: its name, status, progress and kernels.
fn headline(experiment: &Experiment, spec: &CampaignSpec, state: &CampaignState) -> String {
    format!(
        "campaign {} · {} · {} of {} boots done · A = {} · B = {} · {} per boot",
        experiment.name,
        experiment.status.as_str(),
        state.slots.len(),
        spec.boots,
        spec.a_kernel,
        spec.b_kernel,
        words::counted(spec.plan.cases.len(), "case")
    )
}

/// `campaign status` with no name: every campaign's headline, newest first.
fn list(store: &dyn Store) -> Result<ExitCode, Failure> {
    let campaigns = store.experiments(ExperimentKind::Campaign)?;
    if campaigns.is_empty() {
        emit_line(format_args!(
            "no campaigns stored (see `schedlab campaign start --help`)"
        ))?;
    }
    for experiment in &campaigns {
        let (spec, state) = decode(experiment)?;
        emit_line(format_args!("{}", headline(experiment, &spec, &state)))?;
    }
    Ok(ExitCode::SUCCESS)
}
