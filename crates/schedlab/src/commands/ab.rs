//! `schedlab ab`: interleave two runtime settings. Each round applies A and runs every case, then
//! applies B and runs again, in ABBA order (AB, BA, AB, ...) so slow drift cancels; every visit is
//! a stored run tagged with its arm and round, and `compare LABEL-a LABEL-b` analyses the rounds as
//! pairs. The original setting is restored at the end, on Ctrl-C and on failure. An arm may be a
//! daemon (`--a-daemon scx_rusty --a-scx rusty`): started before each of its visits, held to
//! running (and its scheduler to loaded) before and after the visit's run, stopped after it.
use std::process::ExitCode;

use schedlab_analysis::model::Comparison;
use schedlab_analysis::{MetricFilter, SequentialPlan};
use schedlab_core::experiment::{arm_label, AbbaSlot};
use schedlab_core::plan::{validate_label, RunPlan};
use schedlab_core::record::{Arm, ExperimentTag, RunStatus};
use schedlab_core::sys;
use schedlab_core::words;
use schedlab_stats::sequential::Spending;
use schedlab_store::{Experiment, ExperimentKind, Store};

use crate::cli::AbArgs;
use crate::comparison::{gate, load_with, settings, CalibrationChoice, LoadedComparison, Query};
use crate::daemon::Daemons;
use crate::explanation::{attach, Need};
use crate::failure::Failure;
use crate::output::{emit, emit_line};
use crate::plan::plan_from_parts;
use crate::progress::ProgressLine;
use crate::session::{plan_for_visit, Session, Storage};
use crate::setting::Setting;
use crate::store_path::db_location;

pub fn ab(args: &AbArgs) -> Result<ExitCode, Failure> {
    let sequential = sequential_plan(args);
    let rounds = sequential.map_or(args.rounds, |s| s.max_rounds);
    // Checked before anything runs, so a typo never costs a night.
    settings(&args.decision)?;
    let daemons = args.daemons.daemons();
    daemons.validate()?;
    daemons.check_kernel()?;
    let setting = arm_setting(args)?;
    // The label (or schbench's --jobname) names the experiment; each visit gets its arm's label
    // below.
    let plan = plan_from_parts(
        args.suite.as_ref(),
        args.workload.as_ref(),
        &args.plan,
        args.label.as_ref(),
    )?;
    let name = match &plan.label {
        Some(label) => label.clone(),
        None => format!("ab-{}", sys::realtime_ns() / 1_000_000_000),
    };
    validate_label(&arm_label(&name, Arm::A))?;
    let mut session = Session::open(Storage::File(db_location(&args.db)?))?;
    let experiment_id = session.store_mut().create_experiment(&Experiment {
        id: None,
        kind: ExperimentKind::Ab,
        name: name.clone(),
        spec: experiment_spec(&setting, rounds, &plan, &daemons, sequential)?,
        state: serde_json::json!({ "visits_done": 0 }),
        status: RunStatus::Running,
        created_at_ns: sys::realtime_ns(),
    })?;

    let result = visit_all(
        args,
        ArmSettings {
            daemons: &daemons,
            setting: &setting,
        },
        &plan,
        &name,
        experiment_id,
        rounds,
        &mut session,
    );
    // Restore whatever happened; a failing restore is reported but does not hide the run's own
    // failure.
    let restored = setting.restore();
    let done = result.as_ref().map_or(0, |(visits, _)| *visits);
    session.finish_experiment(
        experiment_id,
        &serde_json::json!({ "visits_done": done }),
        &result,
    )?;
    let (visits, comparison) = result?;
    restored?;
    let mut loaded = match comparison {
        Some(c) => c,
        None => decide(args, &name, session.store())?,
    };
    // Probed visits are explained beside the verdicts.
    attach(session.store(), &mut loaded, Need::WhereProbed)?;
    let comparison = loaded.comparison;
    print_outcome(&comparison, &name, visits)?;
    gate(&comparison, args.decision.fail_on_regression, None)?;
    Ok(ExitCode::SUCCESS)
}

/// `--until-decided`'s plan: at most `--max-rounds` rounds, with O'Brien-Fleming spending.
fn sequential_plan(args: &AbArgs) -> Option<SequentialPlan> {
    // --rounds and --max-rounds were held to their ranges by their flags' parsers.
    match (args.until_decided, args.max_rounds) {
        (true, Some(max)) => Some(SequentialPlan {
            max_rounds: max,
            spending: Spending::OBrienFleming,
        }),
        _ => None,
    }
}

/// The runtime setting that tells the arms apart: a file's two values, or two shell commands.
fn arm_setting(args: &AbArgs) -> Result<Setting, Failure> {
    Ok(match (&args.write, &args.apply_a, &args.apply_b) {
        (Some(write), _, _) => Setting::file(write)?,
        (None, a, b) => Setting::Shell {
            a: a.clone(),
            b: b.clone(),
            restore: args.restore.clone(),
        },
    })
}

/// The experiment's stored spec: its setting, rounds, plan, daemons and sequential plan.
fn experiment_spec(
    setting: &Setting,
    rounds: u32,
    plan: &RunPlan,
    daemons: &Daemons,
    sequential: Option<SequentialPlan>,
) -> Result<serde_json::Value, Failure> {
    let unstorable = |e: serde_json::Error| Failure::failed(format!("cannot store the plan: {e}"));
    let mut spec = setting.spec();
    spec["rounds"] = serde_json::json!(rounds);
    spec["plan"] = serde_json::to_value(plan).map_err(unstorable)?;
    spec["daemons"] = serde_json::to_value(daemons.any().then_some(daemons)).map_err(unstorable)?;
    spec["sequential"] = serde_json::to_value(sequential).map_err(unstorable)?;
    Ok(spec)
}

/// The verdicts, then where the experiment's runs are stored and how to compare them again.
fn print_outcome(comparison: &Comparison, name: &str, visits: u32) -> Result<(), Failure> {
    emit(|out| {
        schedlab_report::compare::text::write(
            &schedlab_report::compare::style::document(
                comparison,
                schedlab_report::compare::style::Style::Schedtests,
            ),
            out,
        )
    })?;
    emit_line(format_args!(
        "ab experiment {name}: {} × 2 arms stored as labels {} and {}; compare again with:\n  schedlab compare {} {}",
        words::counted(visits as usize / 2, "round"),
        arm_label(name, Arm::A),
        arm_label(name, Arm::B),
        arm_label(name, Arm::A),
        arm_label(name, Arm::B)
    ))
}

/// The experiment's comparison so far, decided as `compare` would (sequentially for
/// `--until-decided`: the plan is in the experiment's spec).
fn decide(args: &AbArgs, name: &str, store: &dyn Store) -> Result<LoadedComparison, Failure> {
    let candidates = [arm_label(name, Arm::B)];
    let loaded = load_with(
        store,
        Query {
            base: &arm_label(name, Arm::A),
            candidates: &candidates,
            filter: MetricFilter::default(),
            settings: settings(&args.decision)?,
            calibration: CalibrationChoice::Auto,
            allow_fingerprint_mismatch: false,
            allow_tcg: false,
            selection: Default::default(),
        },
    )?;
    Ok(loaded)
}

/// What makes an arm A or B: the setting applied before each visit, and the daemons beside it.
#[derive(Clone, Copy)]
struct ArmSettings<'a> {
    daemons: &'a Daemons,
    setting: &'a Setting,
}

/// Every round's two visits; returns how many visits completed and, with `--until-decided`, the
/// comparison it stopped on.
fn visit_all(
    args: &AbArgs,
    arms: ArmSettings<'_>,
    plan: &RunPlan,
    name: &str,
    experiment_id: i64,
    rounds: u32,
    session: &mut Session,
) -> Result<(u32, Option<LoadedComparison>), Failure> {
    let ArmSettings { daemons, setting } = arms;
    let mut progress = ProgressLine::new(args.quiet);
    let mut visits = 0;
    let mut last = None;
    for round in 0..rounds {
        for slot in 2 * round..2 * round + 2 {
            let arm = AbbaSlot::of(slot).arm;
            session.check_interrupted()?;
            setting.apply(arm == Arm::B)?;
            let mut visit = plan_for_visit(plan, slot);
            visit.label = Some(arm_label(name, arm));
            progress.note(format!(
                "round {} of {rounds}, arm {} ({})",
                round + 1,
                if arm == Arm::A { "A" } else { "B" },
                arm_label(name, arm)
            ));
            let tag = ExperimentTag {
                experiment_id,
                arm,
                round,
            };
            if daemons.any() {
                let mut daemon = daemons.start(arm.as_str())?;
                // The runs record the scheduler the daemon loaded (or that none is).
                session.refresh_fingerprint();
                let measured =
                    session.measure_guarded(&visit, Some(tag), &mut progress, &mut |when| {
                        daemon.check(when)
                    })?;
                daemon.stop();
                measured.completed()?;
            } else {
                session
                    .measure(&visit, Some(tag), &mut progress)?
                    .completed()?;
            }
            visits += 1;
            session.store_mut().update_experiment(
                experiment_id,
                &serde_json::json!({ "visits_done": visits }),
                RunStatus::Running,
            )?;
        }
        if args.until_decided {
            let c = decide(args, name, session.store())?;
            if !args.quiet {
                progress.note(format!(
                    "round {} of at most {rounds}: {} of {} decided",
                    round + 1,
                    c.comparison.decided_rows(),
                    words::counted(c.comparison.rows.len(), "row")
                ));
            }
            let done = c.comparison.is_decided();
            last = Some(c);
            if done {
                break;
            }
        }
    }
    progress.finish();
    Ok((visits, last))
}
