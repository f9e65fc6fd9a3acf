//! `campaign next`: a reboot campaign's slot on this boot, when the running kernel is the slot's,
//! beside its arm's daemon when it has one; then which kernel to boot next (and the reboot, when
//! `--reboot-cmd` says how).
use std::process::ExitCode;

use schedlab_core::experiment::{arm_label, AbbaSlot};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{Arm, ExperimentTag};

use super::state::{finished, load, record_slot, slot_plan, CampaignSpec, Slot, Step};
use crate::cli::CampaignNextArgs;
use crate::daemon::Daemons;
use crate::failure::Failure;
use crate::output::emit_line;
use crate::progress::ProgressLine;
use crate::session::{MeasuredRun, Session, Storage};
use crate::shell::run_shell_command;
use crate::store_path::db_location;

pub(super) fn next(args: &CampaignNextArgs) -> Result<ExitCode, Failure> {
    let mut session = Session::open(Storage::ExistingFile(db_location(&args.db)?))?;
    let (experiment, spec, mut state) = load(session.store(), &args.name)?;
    if spec.vm.is_some() {
        return Err(Failure::bad_input(format!(
            "campaign {} boots its kernels in QEMU guests: run `schedlab campaign run {}`",
            args.name, args.name
        )));
    }
    let experiment_id = experiment.id.unwrap_or_default();
    let fingerprint = session.fingerprint().clone();
    let step = spec.next_step(&state, &fingerprint.kernel_release, &fingerprint.boot_id);
    let Some((slot, arm, round)) = slot_of_this_boot(&args.name, step)? else {
        return finished(&args.name);
    };
    let plan = probed(args, slot_plan(&spec, &args.name, slot, arm))?;
    let mut progress = ProgressLine::new(args.quiet);
    let tag = ExperimentTag {
        experiment_id,
        arm,
        round,
    };
    let measured = measure_slot(
        &mut session,
        spec.daemons.as_ref(),
        &plan,
        tag,
        &mut progress,
    )?;
    progress.finish();
    // A failed slot stays open: the next boot of the same kernel runs it again.
    let run_id = measured.completed()?;
    let slot_done = Slot {
        arm,
        run_id,
        boot_id: fingerprint.boot_id.clone(),
        kernel: fingerprint.kernel_release,
    };
    if record_slot(
        session.store_mut(),
        experiment_id,
        &spec,
        &mut state,
        slot_done,
    )? {
        emit_line(format_args!(
            "campaign {}: slot {} of {} done (run {run_id}); the campaign is complete. Compare with:\n  schedlab compare {} {}",
            args.name, slot + 1, spec.boots, arm_label(&args.name, Arm::A), arm_label(&args.name, Arm::B)
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    boot_next(args, &spec, slot, run_id)
}

/// The slot this boot runs (its number, arm and round), or `None` when the campaign is complete;
/// refuses a boot that ran a slot already or runs another kernel than the slot's.
fn slot_of_this_boot(name: &str, step: Step) -> Result<Option<(u32, Arm, u32)>, Failure> {
    match step {
        Step::Finished => Ok(None),
        Step::AlreadyRan { slot, next_kernel } => Err(Failure::bad_input(format!(
            "this boot already ran slot {} of campaign {name}; reboot into {next_kernel} for the next one",
            slot + 1,
        ))),
        Step::WrongKernel {
            slot,
            arm,
            wanted,
            running,
        } => Err(Failure::bad_input(format!(
            "slot {} of campaign {name} is arm {} and wants kernel {wanted}, but this boot runs {running}; boot {wanted} and run `schedlab campaign next {name}` again",
            slot + 1,
            arm.as_str().to_uppercase(),
        ))),
        Step::Run { slot, arm, round } => Ok(Some((slot, arm, round))),
    }
}

/// The slot's plan with the probes `next --explain`/`--profile` ask for on this boot.
fn probed(args: &CampaignNextArgs, plan: RunPlan) -> Result<RunPlan, Failure> {
    if args.probes.explain.is_none() && !args.probes.profile {
        return Ok(plan);
    }
    let (explain, profile) = (
        args.probes.explain.unwrap_or(plan.explain),
        args.probes.profile || plan.profile,
    );
    let plan = plan.with_probes(explain, profile)?;
    crate::session::check_probes(&plan)?;
    Ok(plan)
}

/// Runs a reboot campaign's slot on this machine, beside its arm's daemon when it has one.
fn measure_slot(
    session: &mut Session,
    daemons: Option<&Daemons>,
    plan: &RunPlan,
    tag: ExperimentTag,
    progress: &mut ProgressLine,
) -> Result<MeasuredRun, Failure> {
    let Some(daemons) = daemons else {
        return session.measure(plan, Some(tag), progress);
    };
    let mut daemon = daemons.start(tag.arm.as_str())?;
    session.refresh_fingerprint();
    let measured =
        session.measure_guarded(plan, Some(tag), progress, &mut |when| daemon.check(when))?;
    daemon.stop();
    Ok(measured)
}

/// Says which kernel the next slot wants, and reboots into it when `--reboot-cmd` says how.
fn boot_next(
    args: &CampaignNextArgs,
    spec: &CampaignSpec,
    slot: u32,
    run_id: i64,
) -> Result<ExitCode, Failure> {
    let next_kernel = spec.kernel(AbbaSlot::of(slot + 1).arm).to_string();
    emit_line(format_args!(
        "campaign {}: slot {} of {} done (run {run_id}); next: boot kernel {next_kernel} and run `schedlab campaign next {}`",
        args.name, slot + 1, spec.boots, args.name
    ))?;
    if let Some(command) = &args.reboot_cmd {
        std::env::set_var("SCHEDLAB_NEXT_KERNEL", &next_kernel);
        run_shell_command("--reboot-cmd", command)?;
    }
    Ok(ExitCode::SUCCESS)
}
