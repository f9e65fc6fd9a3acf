//! `campaign start`: checks the name and flags, plans the runs (on the guests' CPUs for a `--vm`
//! campaign) and stores the campaign with no slot done.
use std::process::ExitCode;

use schedlab_core::experiment::arm_label;
use schedlab_core::plan::{CaseSpec, RunPlan, MAX_LABEL_CHARS};
use schedlab_core::record::{Arm, RunStatus};
use schedlab_core::suite::Suite;
use schedlab_core::sys;
use schedlab_core::words::check_printable;
use schedlab_core::workload::Topology;
use schedlab_store::{Experiment, ExperimentKind};

use super::guests::{describe_arm, describe_guests, vm_spec, VCPU_PREEMPT_SUITE};
use super::state::{to_value, CampaignSpec, CampaignState};
use crate::cli::{CampaignStartArgs, PlanOptions, PresetArg};
use crate::daemon::Daemons;
use crate::failure::Failure;
use crate::output::emit_line;
use crate::plan::{plan_from_parts, with_co_runners};
use crate::store_path::{db_location, open_writer};

pub(super) fn start(args: &CampaignStartArgs) -> Result<ExitCode, Failure> {
    // Its runs are labelled NAME-a and NAME-b, so a name that makes good labels is one that is
    // printable and leaves room for the suffix (it cannot be all digits with it).
    check_printable(&args.name)
        .map_err(|why| Failure::bad_input(format!("the campaign name {why}")))?;
    check_name_leaves_room(
        &args.name,
        &arm_label("", Arm::A),
        "its runs are labelled NAME-a and NAME-b",
    )?;
    let vm = args.vm || args.preset.is_some();
    let daemons = args.daemons.daemons();
    daemons.validate()?;
    check_flags_fit_kind(args, vm, &daemons)?;
    let suite = suite_of(args);
    let plan = plan_from_parts(suite.as_ref(), args.workload.as_ref(), &args.plan, None)?;
    if args.preset.is_some() {
        check_name_leaves_room(
            &args.name,
            "-load-a",
            "the preset's host load labels its runs NAME-load-a and NAME-load-b",
        )?;
    }
    if plan.label.is_some() {
        return Err(Failure::bad_input(
            "a campaign labels its runs NAME-a and NAME-b; --jobname does not apply",
        ));
    }
    let (vm, accel_note, plan) = if vm {
        let (vm, note) = vm_spec(args, &plan)?;
        let nodes = vm.numa.as_ref().map_or(1, |numa| numa.nodes.len());
        let guest = Topology::new(vm.vcpus, u32::try_from(nodes).unwrap_or(u32::MAX));
        let plan = for_guests(plan, suite.as_ref(), &args.plan, &guest)?;
        (Some(vm), note, plan)
    } else {
        (None, None, plan)
    };
    let spec = CampaignSpec {
        a_kernel: vm
            .as_ref()
            .map_or(args.a_kernel.clone(), |v| v.a.release.clone()),
        b_kernel: vm
            .as_ref()
            .map_or(args.b_kernel.clone(), |v| v.b.release.clone()),
        boots: args.boots,
        plan,
        vm,
        daemons: daemons.any().then_some(daemons),
    };
    store_new(args, &spec)?;
    announce(args, &spec, accel_note)
}

/// Fails unless the campaign's name leaves room in a run's label for `suffix`, which `labelled`
/// explains.
fn check_name_leaves_room(name: &str, suffix: &str, labelled: &str) -> Result<(), Failure> {
    let longest = MAX_LABEL_CHARS - suffix.chars().count();
    if name.chars().count() > longest {
        return Err(Failure::bad_input(format!(
            "the campaign name is longer than {longest} characters ({labelled})"
        )));
    }
    Ok(())
}

/// Refuses flags that do not fit the kind of campaign: daemons or two runs of one kernel for a
/// `--vm` campaign's arms, guest options for a reboot campaign.
fn check_flags_fit_kind(
    args: &CampaignStartArgs,
    vm: bool,
    daemons: &Daemons,
) -> Result<(), Failure> {
    if vm && daemons.any() {
        return Err(Failure::bad_input(
            "--a-daemon and --b-daemon run beside a boot's run on this machine; a --vm campaign's \
             runs are in its guests",
        ));
    }
    if !vm {
        if let Some(flag) = vm_flag_given(args) {
            return Err(Failure::bad_input(format!(
                "{flag} is a guest option: it needs --vm"
            )));
        }
    }
    if args.a_kernel == args.b_kernel && !vm {
        return Err(Failure::bad_input(
            "--a-kernel and --b-kernel are the same release; a campaign compares two kernels (use `schedlab ab` for settings)",
        ));
    }
    Ok(())
}

/// The suite the campaign runs: the one given, or a preset's when neither a suite nor a workload
/// is.
fn suite_of(args: &CampaignStartArgs) -> Option<String> {
    match (args.preset, &args.suite, &args.workload) {
        (Some(PresetArg::VcpuPreempt), None, None) => Some(VCPU_PREEMPT_SUITE.to_string()),
        _ => args.suite.clone(),
    }
}

/// Stores the planned campaign, with no slot done yet.
fn store_new(args: &CampaignStartArgs, spec: &CampaignSpec) -> Result<(), Failure> {
    let mut store = open_writer(&db_location(&args.db)?)?;
    store.create_experiment(&Experiment {
        id: None,
        kind: ExperimentKind::Campaign,
        name: args.name.clone(),
        spec: to_value(spec)?,
        state: to_value(&CampaignState::default())?,
        status: RunStatus::Running,
        created_at_ns: sys::realtime_ns(),
    })?;
    Ok(())
}

/// The lines saying what was planned and what to run next.
fn announce(
    args: &CampaignStartArgs,
    spec: &CampaignSpec,
    accel_note: Option<String>,
) -> Result<ExitCode, Failure> {
    if let Some(vm) = &spec.vm {
        emit_line(format_args!(
            "campaign {} planned: {} guest boots in ABBA order, A = {}, B = {}; {}.",
            args.name,
            args.boots,
            describe_arm(&vm.a),
            describe_arm(&vm.b),
            describe_guests(vm)
        ))?;
        if let Some(note) = accel_note {
            emit_line(format_args!("{note}."))?;
        }
        emit_line(format_args!(
            "Run it with `schedlab campaign run {}`.",
            args.name
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    emit_line(format_args!(
        "campaign {} planned: {} boots in ABBA order, A = {}, B = {}.\nBoot kernel {} and run `schedlab campaign next {}` after each boot.",
        args.name, args.boots, args.a_kernel, args.b_kernel, args.a_kernel, args.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The first guest option given, for a campaign without --vm.
fn vm_flag_given(args: &CampaignStartArgs) -> Option<&'static str> {
    [
        ("--a-append", args.a_append.is_some()),
        ("--b-append", args.b_append.is_some()),
        ("--vcpus", args.vcpus.is_some()),
        ("--memory", args.memory.is_some()),
        ("--numa", args.numa.is_some()),
        ("--accel", args.accel.is_some()),
        ("--a-steal-time", args.a_steal_time.is_some()),
        ("--b-steal-time", args.b_steal_time.is_some()),
        ("--boot-timeout", args.boot_timeout.is_some()),
        ("--guest-timeout", args.guest_timeout.is_some()),
        ("--retries", args.retries.is_some()),
        ("--qemu", args.qemu.is_some()),
        ("--pin-vcpus", args.pin_vcpus.is_some()),
        ("--a-pin-vcpus", args.a_pin_vcpus.is_some()),
        ("--b-pin-vcpus", args.b_pin_vcpus.is_some()),
        ("--host-load", args.host_load.is_some()),
        ("--a-host-load", args.a_host_load.is_some()),
        ("--b-host-load", args.b_host_load.is_some()),
    ]
    .into_iter()
    .find(|(_, given)| *given)
    .map(|(flag, _)| flag)
}

/// The plan with a suite's counts relative to the CPUs and nodes (`2x`, `50%`, `1n`) counted on
/// the guests' vCPUs and NUMA nodes, where they run, instead of this machine's; in the order the
/// plan runs its cases.
/// (A workload's flags on the command line were counted on this machine's CPUs as they were read.)
fn for_guests(
    plan: RunPlan,
    suite: Option<&String>,
    options: &PlanOptions,
    guest: &Topology,
) -> Result<RunPlan, Failure> {
    let Some(name) = suite else {
        return Ok(plan);
    };
    let mut guests = Suite::load_on(name, guest)?;
    if let Some(factor) = options.scale {
        guests = guests.scaled(factor)?;
    }
    let guests = with_co_runners(guests, &options.background)?;
    let cases = guests
        .cases
        .into_iter()
        .zip(guests.backgrounds)
        .map(|(workload, background)| CaseSpec::new(workload)?.beside(background))
        .collect::<Result<Vec<_>, _>>()?;
    let seed = plan.order_seed;
    let plan = RunPlan {
        cases,
        order_seed: None,
        ..plan
    };
    Ok(match seed {
        Some(seed) => plan.shuffled(seed),
        None => plan,
    })
}
