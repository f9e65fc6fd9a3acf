//! A campaign as stored: its plan ([`CampaignSpec`]), its progress ([`CampaignState`]) and what
//! a boot does next ([`Step`]); loading it, a slot's plan, recording a slot done, and the line of
//! a campaign that is complete.
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use schedlab_core::experiment::{arm_label, AbbaSlot};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{Arm, RunStatus};
use schedlab_store::{Experiment, ExperimentKind, Store};

use crate::daemon::Daemons;
use crate::failure::Failure;
use crate::output::emit_line;
use crate::session::plan_for_visit;
use crate::vm::VmSpec;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignSpec {
    pub a_kernel: String,
    pub b_kernel: String,
    pub boots: u32,
    pub plan: RunPlan,
    /// Set for a campaign whose kernels boot in QEMU guests (`--vm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmSpec>,
    /// The daemons run beside each boot's run (`--a-daemon`, `--b-daemon`), when any is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemons: Option<Daemons>,
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
    /// Every boot of a guest that failed, oldest first (a `--vm` campaign's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailedSlot>,
}

/// A guest's boot that did not complete its slot: why, the run it began (if it said hello) and
/// the last lines of its console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedSlot {
    pub slot: u32,
    pub arm: Arm,
    pub at_ns: i64,
    pub reason: String,
    pub run_id: Option<i64>,
    pub console_tail: Vec<String>,
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
    pub(super) fn kernel(&self, arm: Arm) -> &str {
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

pub(super) fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::failed(format!("cannot encode the campaign: {e}")))
}

pub(super) fn load(
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
pub(super) fn decode(experiment: &Experiment) -> Result<(CampaignSpec, CampaignState), Failure> {
    let name = &experiment.name;
    let corrupt =
        |e: serde_json::Error| Failure::failed(format!("campaign {name} is unreadable: {e}"));
    let spec: CampaignSpec = serde_json::from_value(experiment.spec.clone()).map_err(corrupt)?;
    let state: CampaignState = serde_json::from_value(experiment.state.clone()).map_err(corrupt)?;
    Ok((spec, state))
}

/// The plan of one slot: the campaign's cases in this visit's order, labelled with its arm.
pub(super) fn slot_plan(spec: &CampaignSpec, name: &str, slot: u32, arm: Arm) -> RunPlan {
    let mut plan = plan_for_visit(&spec.plan, slot);
    plan.label = Some(arm_label(name, arm));
    plan
}

/// Adds a finished slot to the campaign's progress and stores it; true when it was the last.
pub(super) fn record_slot(
    store: &mut dyn Store,
    experiment_id: i64,
    spec: &CampaignSpec,
    state: &mut CampaignState,
    slot: Slot,
) -> Result<bool, Failure> {
    state.slots.push(slot);
    let finished = state.slots.len() as u32 >= spec.boots;
    let status = if finished {
        RunStatus::Complete
    } else {
        RunStatus::Running
    };
    store.update_experiment(experiment_id, &to_value(state)?, status)?;
    Ok(finished)
}

/// The line of a campaign whose slots are all done.
pub(super) fn finished(name: &str) -> Result<ExitCode, Failure> {
    emit_line(format_args!(
        "campaign {name} is complete; compare with:\n  schedlab compare {} {}",
        arm_label(name, Arm::A),
        arm_label(name, Arm::B)
    ))?;
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
            vm: None,
            daemons: None,
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
