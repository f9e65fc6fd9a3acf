//! `schedlab campaign`: a per-boot kernel A/B campaign. `start` records the plan (two kernel
//! releases, an even number of boots in ABBA order, what to run on each boot) in the database;
//! `next`, run once after each boot (e.g. from a boot-time unit), runs this boot's slot if the
//! running kernel is the one the slot expects, and says which kernel to boot next. State lives in
//! the database, so the campaign resumes after every reboot; schedlab never reboots a machine
//! unless `next --reboot-cmd` tells it how.
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use schedlab_core::experiment::{arm_label, AbbaSlot};
use schedlab_core::plan::{RunPlan, MAX_LABEL_CHARS};
use schedlab_core::record::{Arm, ExperimentTag, RunStatus};
use schedlab_core::sys;
use schedlab_core::words;
use schedlab_core::words::check_printable;
use schedlab_store::{Experiment, ExperimentKind, Store};

use crate::cli::{
    CampaignAction, CampaignArgs, CampaignNextArgs, CampaignStartArgs, CampaignStatusArgs,
};
use crate::failure::Failure;
use crate::output::emit_line;
use crate::plan::plan_from_parts;
use crate::progress::ProgressLine;
use crate::session::{plan_for_visit, Session, Storage};
use crate::shell::run_shell_command;
use crate::store_path::{db_location, open_reader, open_writer};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignSpec {
    pub a_kernel: String,
    pub b_kernel: String,
    pub boots: u32,
    pub plan: RunPlan,
}

/// One finished boot of the campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub arm: Arm,
    pub run_id: i64,
    pub boot_id: String,
    pub kernel: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignState {
    pub slots: Vec<Slot>,
}

/// What `next` should do on this boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Finished,
    /// This boot already ran a slot; the next one needs a reboot.
    AlreadyRan {
        slot: u32,
        next_kernel: String,
    },
    WrongKernel {
        slot: u32,
        arm: Arm,
        wanted: String,
        running: String,
    },
    Run {
        slot: u32,
        arm: Arm,
        round: u32,
    },
}

impl CampaignSpec {
    fn kernel(&self, arm: Arm) -> &str {
        match arm {
            Arm::A => &self.a_kernel,
            Arm::B => &self.b_kernel,
        }
    }

    /// Decides this boot's step from the campaign's progress and the running kernel and boot.
    pub fn next_step(&self, state: &CampaignState, kernel: &str, boot_id: &str) -> Step {
        let slot = state.slots.len() as u32;
        if slot >= self.boots {
            return Step::Finished;
        }
        let AbbaSlot { arm, round } = AbbaSlot::of(slot);
        if let Some(done) = state.slots.iter().position(|s| s.boot_id == boot_id) {
            return Step::AlreadyRan {
                slot: done as u32,
                next_kernel: self.kernel(arm).to_string(),
            };
        }
        if kernel != self.kernel(arm) {
            return Step::WrongKernel {
                slot,
                arm,
                wanted: self.kernel(arm).to_string(),
                running: kernel.to_string(),
            };
        }
        Step::Run { slot, arm, round }
    }
}

pub fn campaign(args: &CampaignArgs) -> Result<ExitCode, Failure> {
    match &args.action {
        CampaignAction::Start(a) => start(a),
        CampaignAction::Next(a) => next(a),
        CampaignAction::Status(a) => status(a),
    }
}

fn start(args: &CampaignStartArgs) -> Result<ExitCode, Failure> {
    // Its runs are labelled NAME-a and NAME-b, so a name that makes good labels is one that is
    // printable and leaves room for the suffix (it cannot be all digits with it).
    check_printable(&args.name)
        .map_err(|why| Failure::bad_input(format!("the campaign name {why}")))?;
    let longest = MAX_LABEL_CHARS - arm_label("", Arm::A).chars().count();
    if args.name.chars().count() > longest {
        return Err(Failure::bad_input(format!(
            "the campaign name is longer than {longest} characters (its runs are labelled NAME-a and NAME-b)"
        )));
    }
    if args.a_kernel == args.b_kernel {
        return Err(Failure::bad_input(
            "--a-kernel and --b-kernel are the same release; a campaign compares two kernels (use `schedlab ab` for settings)",
        ));
    }
    let plan = plan_from_parts(
        args.suite.as_ref(),
        args.workload.as_ref(),
        &args.plan,
        None,
    )?;
    if plan.label.is_some() {
        return Err(Failure::bad_input(
            "a campaign labels its runs NAME-a and NAME-b; --jobname does not apply",
        ));
    }
    let spec = CampaignSpec {
        a_kernel: args.a_kernel.clone(),
        b_kernel: args.b_kernel.clone(),
        boots: args.boots,
        plan,
    };
    let mut store = open_writer(&db_location(&args.db)?)?;
    store.create_experiment(&Experiment {
        id: None,
        kind: ExperimentKind::Campaign,
        name: args.name.clone(),
        spec: to_value(&spec)?,
        state: to_value(&CampaignState::default())?,
        status: RunStatus::Running,
        created_at_ns: sys::realtime_ns(),
    })?;
    emit_line(format_args!(
        "campaign {} planned: {} boots in ABBA order, A = {}, B = {}.\nBoot kernel {} and run `schedlab campaign next {}` after each boot.",
        args.name, args.boots, args.a_kernel, args.b_kernel, args.a_kernel, args.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::failed(format!("cannot encode the campaign: {e}")))
}

fn load(
    store: &dyn Store,
    name: &str,
) -> Result<(Experiment, CampaignSpec, CampaignState), Failure> {
    let experiment = store
        .experiment(ExperimentKind::Campaign, name)?
        .ok_or_else(|| {
            Failure::bad_input(format!(
                "no campaign named {name:?} (see `schedlab campaign start`)"
            ))
        })?;
    let (spec, state) = decode(&experiment)?;
    Ok((experiment, spec, state))
}

/// A stored campaign's plan and progress.
fn decode(experiment: &Experiment) -> Result<(CampaignSpec, CampaignState), Failure> {
    let name = &experiment.name;
    let corrupt =
        |e: serde_json::Error| Failure::failed(format!("campaign {name} is unreadable: {e}"));
    let spec: CampaignSpec = serde_json::from_value(experiment.spec.clone()).map_err(corrupt)?;
    let state: CampaignState = serde_json::from_value(experiment.state.clone()).map_err(corrupt)?;
    Ok((spec, state))
}

fn next(args: &CampaignNextArgs) -> Result<ExitCode, Failure> {
    let mut session = Session::open(Storage::ExistingFile(db_location(&args.db)?))?;
    let (experiment, spec, mut state) = load(session.store(), &args.name)?;
    let experiment_id = experiment.id.unwrap_or_default();
    let fingerprint = session.fingerprint().clone();
    let (slot, arm, round) = match spec.next_step(
        &state,
        &fingerprint.kernel_release,
        &fingerprint.boot_id,
    ) {
        Step::Finished => {
            emit_line(format_args!(
                "campaign {} is complete; compare with:\n  schedlab compare {} {}",
                args.name,
                arm_label(&args.name, Arm::A),
                arm_label(&args.name, Arm::B)
            ))?;
            return Ok(ExitCode::SUCCESS);
        }
        Step::AlreadyRan { slot, next_kernel } => {
            return Err(Failure::bad_input(format!(
                "this boot already ran slot {} of campaign {}; reboot into {next_kernel} for the next one",
                slot + 1,
                args.name
            )));
        }
        Step::WrongKernel {
            slot,
            arm,
            wanted,
            running,
        } => {
            return Err(Failure::bad_input(format!(
                "slot {} of campaign {} is arm {} and wants kernel {wanted}, but this boot runs {running}; boot {wanted} and run `schedlab campaign next {}` again",
                slot + 1,
                args.name,
                arm.as_str().to_uppercase(),
                args.name
            )));
        }
        Step::Run { slot, arm, round } => (slot, arm, round),
    };
    let mut plan = plan_for_visit(&spec.plan, slot);
    plan.label = Some(arm_label(&args.name, arm));
    if args.probes.explain.is_some() || args.probes.profile {
        let (explain, profile) = (
            args.probes.explain.unwrap_or(plan.explain),
            args.probes.profile || plan.profile,
        );
        plan = plan.with_probes(explain, profile)?;
        crate::session::check_probes(&plan)?;
    }
    let mut progress = ProgressLine::new(args.quiet);
    let tag = ExperimentTag {
        experiment_id,
        arm,
        round,
    };
    let measured = session.measure(&plan, Some(tag), &mut progress)?;
    progress.finish();
    // A failed slot stays open: the next boot of the same kernel runs it again.
    let run_id = measured.completed()?;
    state.slots.push(Slot {
        arm,
        run_id,
        boot_id: fingerprint.boot_id.clone(),
        kernel: fingerprint.kernel_release,
    });
    let finished = state.slots.len() as u32 >= spec.boots;
    let status = if finished {
        RunStatus::Complete
    } else {
        RunStatus::Running
    };
    session
        .store_mut()
        .update_experiment(experiment_id, &to_value(&state)?, status)?;
    if finished {
        emit_line(format_args!(
            "campaign {}: slot {} of {} done (run {run_id}); the campaign is complete. Compare with:\n  schedlab compare {} {}",
            args.name, slot + 1, spec.boots, arm_label(&args.name, Arm::A), arm_label(&args.name, Arm::B)
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
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

fn status(args: &CampaignStatusArgs) -> Result<ExitCode, Failure> {
    let store = open_reader(&db_location(&args.db)?)?;
    let Some(name) = &args.name else {
        return list(&*store);
    };
    let (experiment, spec, state) = load(&*store, name)?;
    emit_line(format_args!("{}", headline(&experiment, &spec, &state)))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    fn spec() -> CampaignSpec {
        let plan = RunPlan::new(
            None,
            None,
            1,
            0,
            vec![WorkloadSpec::Fake(FakeParams::default())],
        )
        .unwrap();
        CampaignSpec {
            a_kernel: "6.1-a".into(),
            b_kernel: "6.1-b".into(),
            boots: 4,
            plan,
        }
    }

    fn slot(arm: Arm, boot: &str) -> Slot {
        Slot {
            arm,
            run_id: 1,
            boot_id: boot.into(),
            kernel: String::new(),
        }
    }

    #[test]
    fn next_step_checks_kernel_and_boot() {
        let spec = spec();
        let run = |slot, arm, round| Step::Run { slot, arm, round };
        let mut state = CampaignState::default();
        assert_eq!(spec.next_step(&state, "6.1-a", "boot1"), run(0, Arm::A, 0));
        assert!(matches!(
            spec.next_step(&state, "6.1-b", "boot1"),
            Step::WrongKernel { slot: 0, .. }
        ));
        state.slots.push(slot(Arm::A, "boot1"));
        assert_eq!(
            spec.next_step(&state, "6.1-a", "boot1"),
            Step::AlreadyRan {
                slot: 0,
                next_kernel: "6.1-b".into()
            }
        );
        assert_eq!(spec.next_step(&state, "6.1-b", "boot2"), run(1, Arm::B, 0));
        state.slots.push(slot(Arm::B, "boot2"));
        assert_eq!(spec.next_step(&state, "6.1-b", "boot3"), run(2, Arm::B, 1));
        state.slots.push(slot(Arm::B, "boot3"));
        state.slots.push(slot(Arm::A, "boot4"));
        assert_eq!(spec.next_step(&state, "6.1-a", "boot5"), Step::Finished);
    }
}
