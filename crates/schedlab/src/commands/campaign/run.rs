//! `campaign run`: a `--vm` campaign's remaining slots, each booted in a QEMU guest
//! ([`crate::vm::boot`]) and recorded as it ends: a slot done, or a failed boot with its
//! console's tail, booted again up to `--retries` times.
use std::path::PathBuf;
use std::process::ExitCode;

use schedlab_core::experiment::AbbaSlot;
use schedlab_core::record::{ExperimentTag, RunStatus};
use schedlab_core::sys;
use schedlab_core::vm::qemu::Accel;
use schedlab_core::words;
use schedlab_store::Store;

use super::guests::describe_guests;
use super::state::{
    finished, load, record_slot, slot_plan, to_value, CampaignSpec, CampaignState, FailedSlot, Slot,
};
use crate::cli::CampaignRunArgs;
use crate::failure::Failure;
use crate::output::{emit_line, say};
use crate::session::{Session, Storage};
use crate::store_path::db_location;
use crate::vm::accel;
use crate::vm::boot::{arm_name, boot_slot, Boot, SlotEnd, SlotRequest};
use crate::vm::{guest_binary, VmSpec};

/// `campaign run`: boots every remaining slot of a `--vm` campaign in a QEMU guest, in ABBA
/// order, storing the guests' runs as they arrive. A slot whose guest fails is booted again up to
/// `--retries` times, then the campaign stops (exit 1) with the slot open, as a failed boot
/// leaves it in a reboot campaign; `campaign run` again goes on from there.
pub(super) fn run(args: &CampaignRunArgs) -> Result<ExitCode, Failure> {
    let mut session = Session::open(Storage::ExistingFile(db_location(&args.db)?))?;
    let (experiment, spec, state) = load(session.store(), &args.name)?;
    let experiment_id = experiment.id.unwrap_or_default();
    let Some(vm) = &spec.vm else {
        return Err(Failure::bad_input(format!(
            "campaign {} reboots this machine into its kernels: run `schedlab campaign next {}` \
                 after each boot (`campaign run` boots the kernels of a --vm campaign in guests)",
            args.name, args.name
        )));
    };
    if state.slots.len() as u32 >= spec.boots {
        return finished(&args.name);
    }
    let (binary, init) = guest_binary(args.guest_binary.as_deref())?;
    let qemu_version = accel::qemu_version(&vm.qemu)?;
    check_accel(&args.name, vm.accel)?;
    if !args.quiet {
        say(format_args!(
            "campaign {}: {}; /init is {} ({} MiB)",
            args.name,
            describe_guests(vm),
            binary.display(),
            init.len() >> 20
        ));
    }
    let host = session.fingerprint().clone();
    let boot = Boot {
        campaign: &args.name,
        spec: vm,
        init: &init,
        host: &host,
        qemu_version: &qemu_version,
        db: args.db.db.clone().map(PathBuf::into_os_string),
    };
    let mut guests = GuestRun {
        name: &args.name,
        quiet: args.quiet,
        experiment_id,
        spec: &spec,
        vm,
        state,
        failed_here: 0,
    };
    while (guests.state.slots.len() as u32) < spec.boots {
        session.check_interrupted()?;
        let slot = guests.state.slots.len() as u32;
        guests.boot(&mut session, &boot, slot)?;
    }
    finished(&args.name)
}

/// Refuses a campaign's KVM guests where KVM cannot be had, and says why its guests run under
/// TCG.
fn check_accel(name: &str, accel: Accel) -> Result<(), Failure> {
    match accel {
        Accel::Kvm => {
            if let Some(why) = accel::kvm_unusable() {
                return Err(Failure::bad_input(format!(
                    "campaign {name} boots its guests with KVM, but {why}"
                )));
            }
        }
        Accel::Tcg => {
            let why = accel::kvm_unusable().map_or("as the campaign asked".to_string(), |why| {
                format!("since {why}")
            });
            say(format_args!(
                "campaign {name}: guests under tcg, {why}; {}.",
                accel::TCG_IS_FOR
            ));
        }
    }
    Ok(())
}

/// A `--vm` campaign under way in `campaign run`: its progress, stored after every boot.
struct GuestRun<'a> {
    name: &'a str,
    quiet: bool,
    experiment_id: i64,
    spec: &'a CampaignSpec,
    vm: &'a VmSpec,
    state: CampaignState,
    /// Failed boots of the open slot in this `campaign run`.
    failed_here: u32,
}

impl GuestRun<'_> {
    /// Boots `slot` in a guest and records how it ended; an error stops the campaign.
    fn boot(&mut self, session: &mut Session, boot: &Boot, slot: u32) -> Result<(), Failure> {
        let AbbaSlot { arm, round } = AbbaSlot::of(slot);
        let plan = slot_plan(self.spec, self.name, slot, arm);
        let tag = ExperimentTag {
            experiment_id: self.experiment_id,
            arm,
            round,
        };
        let where_ = format!(
            "slot {} of {} ({})",
            slot + 1,
            self.spec.boots,
            arm_name(arm)
        );
        if !self.quiet {
            say(format_args!(
                "{where_}: booting {} under {}",
                self.vm.arm(arm).release,
                self.vm.accel
            ));
        }
        let request = SlotRequest {
            slot,
            tag,
            plan: &plan,
        };
        match boot_slot(session.store_mut(), boot, &request)? {
            SlotEnd::Complete {
                run_id,
                boot_id,
                kernel,
                boot_ms,
                total_ms,
            } => {
                let done = Slot {
                    arm,
                    run_id,
                    boot_id,
                    kernel,
                };
                self.completed(session.store_mut(), &where_, done, boot_ms, total_ms)
            }
            SlotEnd::Failed {
                reason,
                run_id,
                console_tail,
                retry,
            } => {
                let failure = FailedSlot {
                    slot,
                    arm,
                    at_ns: sys::realtime_ns(),
                    reason,
                    run_id,
                    console_tail,
                };
                self.failed(session.store_mut(), &where_, failure, retry)
            }
            SlotEnd::Interrupted { signal } => {
                Err(Failure::from(schedlab_core::Error::Interrupted(signal)))
            }
        }
    }

    /// Records a slot its guest ran to the end.
    fn completed(
        &mut self,
        store: &mut dyn Store,
        where_: &str,
        done: Slot,
        boot_ms: u64,
        total_ms: u64,
    ) -> Result<(), Failure> {
        let (run_id, kernel) = (done.run_id, done.kernel.clone());
        self.failed_here = 0;
        record_slot(store, self.experiment_id, self.spec, &mut self.state, done)?;
        emit_line(format_args!(
            "{where_}: run {run_id} complete; guest {kernel} booted in {:.1} s, {:.1} s in all",
            boot_ms as f64 / 1e3,
            total_ms as f64 / 1e3
        ))
    }

    /// Records a failed boot of a slot; an error when booting it again would not help or its
    /// retries are spent.
    fn failed(
        &mut self,
        store: &mut dyn Store,
        where_: &str,
        failure: FailedSlot,
        retry: bool,
    ) -> Result<(), Failure> {
        let slot = failure.slot;
        let run = failure
            .run_id
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default();
        let reason = failure.reason.clone();
        self.state.failures.push(failure);
        store.update_experiment(
            self.experiment_id,
            &to_value(&self.state)?,
            RunStatus::Running,
        )?;
        self.failed_here += 1;
        emit_line(format_args!("{where_}: failed{run}: {reason}"))?;
        let name = self.name;
        if !retry {
            return Err(Failure::failed(format!(
                "slot {} of campaign {name} cannot run as planned (booting it again would not \
                 help); plan a campaign that fits its guests",
                slot + 1,
            )));
        }
        if self.failed_here > self.vm.retries {
            return Err(Failure::failed(format!(
                "slot {} of campaign {name} failed {}; its console is in `schedlab campaign \
                     status {name}`, and `schedlab campaign run {name}` boots it again",
                slot + 1,
                words::counted(self.failed_here as usize, "time"),
            )));
        }
        Ok(())
    }
}
