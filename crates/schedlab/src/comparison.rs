//! Comparing stored sides, as `compare`, `report`, `ab` and `stat` do: the decision settings,
//! loading each side's runs (refusing comparisons across machines that differ where it matters,
//! finding the calibrations that apply), rendering in the chosen style and format, and the gate
//! `--fail-on-regression` and `--could-not-test-exit` apply.
use std::collections::HashMap;
use std::process::ExitCode;

use schedlab_analysis::calibration::Calibration;
use schedlab_analysis::latency::curves;
use schedlab_analysis::model::{Comparison, Verdict};
use schedlab_analysis::{
    AdjustmentName, CalibrationSet, MachineKey, MetricFilter, RunInput, SequentialPlan, Settings,
    Side, SideBuilder,
};
use schedlab_core::fingerprint::{Fingerprint, MustMatch, MUST_MATCH};
use schedlab_core::metric::{MetricShape, Role};
use schedlab_core::record::{ExperimentTag, RunRecord, RunStatus};
use schedlab_core::words;
use schedlab_report::compare::style::{self as layout, Style};
use schedlab_report::compare::{self};
use schedlab_store::{RunSelection, Store};

use crate::cli::{AdjustArg, CompareFormat, CompareStyle, DecisionArgs, ShapeArgs, SidesArgs};
use crate::failure::{Failure, FailureKind};
use crate::output::emit;
use crate::store_path::{db_location, open_reader};

/// The decision settings, each value already held to its rule by its flag's parser
/// (flag_values.rs).
pub fn settings(args: &DecisionArgs) -> Result<Settings, Failure> {
    Ok(Settings {
        min_effect: args.min_effect / 100.0,
        fdr: args.fdr,
        adjustment: match args.adjust {
            AdjustArg::Bh => AdjustmentName::Bh,
            AdjustArg::By => AdjustmentName::By,
            AdjustArg::Holm => AdjustmentName::Holm,
        },
        confidence: args.confidence / 100.0,
        noise_cap_pct: args.noise_cap,
        ministat_confidence: args.confidence / 100.0,
        include_incomplete: false,
        drop_disturbed: false,
    })
}

pub fn style(style: CompareStyle) -> Style {
    match style {
        CompareStyle::Schedtests => Style::Schedtests,
        CompareStyle::Mmtests => Style::Mmtests,
        CompareStyle::Ministat => Style::Ministat,
        CompareStyle::Benchstat => Style::Benchstat,
        CompareStyle::Lkp => Style::Lkp,
    }
}

/// `--brief` and `--normalise`, held to what they shape: text or Markdown, and for
/// `--normalise` the mmtests style.
pub fn options(
    shape: &ShapeArgs,
    style: CompareStyle,
    format: CompareFormat,
) -> Result<layout::Options, Failure> {
    if shape.normalise && style != CompareStyle::Mmtests {
        return Err(Failure::bad_input(
            "--normalise shapes the mmtests style: it needs --style mmtests",
        ));
    }
    let shaped = matches!(format, CompareFormat::Text | CompareFormat::Markdown);
    if (shape.brief || shape.normalise) && !shaped {
        return Err(Failure::bad_input(
            "--brief and --normalise shape text and markdown: csv and json carry every figure",
        ));
    }
    Ok(layout::Options {
        brief: shape.brief,
        normalised: shape.normalise,
    })
}

/// Prints the comparison, then applies the gate.
pub fn render(
    comparison: &Comparison,
    (style, options): (CompareStyle, layout::Options),
    format: CompareFormat,
    fail_on_regression: bool,
    could_not_test_exit: Option<u8>,
) -> Result<ExitCode, Failure> {
    let style = self::style(style);
    let document = || layout::document_with(comparison, style, options);
    emit(|out| match format {
        CompareFormat::Text => compare::text::write(&document(), out),
        CompareFormat::Markdown => compare::markdown::write(&document(), out),
        CompareFormat::Csv => compare::csv::write(comparison, out),
        CompareFormat::Json => compare::json::write(comparison, out),
    })?;
    gate(comparison, fail_on_regression, could_not_test_exit)?;
    Ok(ExitCode::SUCCESS)
}

/// The gate scripts rely on: with `--fail-on-regression`, a row marked a regression fails; with
/// `--could-not-test-exit CODE`, not one row judged is untestable (no test, so no regression
/// could have been seen: a pass would be a lie, and `git bisect run` must skip).
pub fn gate(
    comparison: &Comparison,
    fail_on_regression: bool,
    could_not_test_exit: Option<u8>,
) -> Result<(), Failure> {
    let regressions = comparison.count(Verdict::Regression);
    if fail_on_regression && regressions > 0 {
        return Err(Failure::new(
            FailureKind::Regression,
            format!(
                "{} marked (--fail-on-regression)",
                words::counted(regressions, "regression")
            ),
        ));
    }
    if let Some(code) = could_not_test_exit.filter(|_| comparison.footer.comparisons == 0) {
        return Err(Failure::untestable(format!(
            "could not test: none of the {} could be judged ({} not judged: \
             one run per side and no calibration, or too few units); exit {code} \
             (--could-not-test-exit)",
            words::counted(comparison.rows.len(), "row"),
            comparison.footer.not_judged
        ))
        .or_could_not_test(Some(code)));
    }
    Ok(())
}

/// A comparison with the stored runs it was built from, for reports that show more than rows;
/// the runs are without their iterations, whose values are in the comparison.
pub struct LoadedComparison {
    pub comparison: Comparison,
    pub base_runs: Vec<RunRecord>,
    /// In the order of the candidates.
    pub candidate_runs: Vec<Vec<RunRecord>>,
}

/// Which calibrations a comparison may use (`--calibration`).
pub enum CalibrationChoice {
    Auto,
    None,
    Id(i64),
}

impl CalibrationChoice {
    pub fn parse(text: &str) -> Result<Self, Failure> {
        match text {
            "auto" => Ok(CalibrationChoice::Auto),
            "none" => Ok(CalibrationChoice::None),
            id => id
                .parse::<i64>()
                .ok()
                .filter(|id| *id > 0)
                .map(CalibrationChoice::Id)
                .ok_or_else(|| {
                    Failure::bad_input(format!(
                        "--calibration takes auto, none or a calibration id, not {id:?}"
                    ))
                }),
        }
    }
}

/// The comparison of stored sides, as `compare`, `report` and `ab --until-decided` read them.
pub struct Query<'a> {
    pub base: &'a str,
    pub candidates: &'a [String],
    pub filter: MetricFilter,
    pub settings: Settings,
    pub calibration: CalibrationChoice,
    pub allow_fingerprint_mismatch: bool,
    /// Judge runs of TCG-emulated guests too (`--allow-tcg`).
    pub allow_tcg: bool,
    /// Only each side's runs that match (`--host`, `--kernel`, `--where`).
    pub selection: RunSelection,
}

/// Loads each side's runs, refuses machines that differ where it matters, and compares; a
/// comparison without a single row is bad input.
pub fn load_comparison(args: &SidesArgs) -> Result<LoadedComparison, Failure> {
    let mut settings = settings(&args.decision)?;
    settings.include_incomplete = args.include_incomplete;
    settings.drop_disturbed = args.drop_disturbed;
    let store = open_reader(&db_location(&args.db)?)?;
    let query = Query {
        base: &args.base,
        candidates: &args.candidates,
        filter: MetricFilter {
            names: args.metrics.to_vec(),
            all: args.all_metrics,
        },
        settings,
        calibration: CalibrationChoice::parse(&args.calibration)?,
        allow_fingerprint_mismatch: args.allow_fingerprint_mismatch,
        allow_tcg: args.allow_tcg,
        selection: crate::select::selection(&args.select)?,
    };
    let loaded = match &args.across {
        Some(across) => load_across(&*store, query, &parse_across(across)?)?,
        None => load_with(&*store, query)?,
    };
    if loaded.comparison.rows.is_empty() {
        return Err(Failure::untestable(format!(
            "nothing to compare: no case and metric is present on both sides{}",
            if args.metrics.is_empty() {
                ""
            } else {
                " (check --metric)"
            }
        )));
    }
    Ok(loaded)
}

/// A side's runs (without their iterations) with their experiment tags (runs of `schedlab ab` or
/// a campaign are compared as A/B pairs), the side the comparison judges and the side its latency
/// curves are drawn from.
struct LoadedSide {
    runs: Vec<RunRecord>,
    tags: Vec<Option<ExperimentTag>>,
    side: Side,
    curve_side: Side,
}

/// The side `name` of runs `ids`. Each run's values go into its side's series as it is read, and
/// its iterations are dropped: hundreds of runs of a matrix would otherwise be held whole at once.
fn load_side(
    store: &dyn Store,
    name: &str,
    ids: &[i64],
    filter: &MetricFilter,
    (include, drop): (bool, bool),
) -> Result<LoadedSide, Failure> {
    // The curves are drawn from distributions, whatever the filter takes.
    let keep = compared_or_curved(filter);
    let tags = ids
        .iter()
        .map(|&id| store.run_tag(id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut compared = SideBuilder::new(name, filter.clone(), include).dropping_disturbed(drop);
    let mut curved = SideBuilder::of_distributions(name, include).dropping_disturbed(drop);
    let mut runs = Vec::with_capacity(ids.len());
    for (&id, &tag) in ids.iter().zip(&tags) {
        let mut record = store.load_run_keeping(id, &keep)?;
        let input = RunInput {
            record: &record,
            tag,
        };
        compared.add_run(input);
        curved.add_run(input);
        for case in &mut record.cases {
            case.iterations = Vec::new();
        }
        runs.push(record);
    }
    Ok(LoadedSide {
        runs,
        tags,
        side: compared.finish(),
        curve_side: curved.finish(),
    })
}

/// The runs each side names (`query.base`, then each candidate) that the selection takes, each
/// side's alone: a candidate that names no run could not be tested, a run on two sides is refused.
fn side_ids(store: &dyn Store, query: &Query<'_>) -> Result<(Vec<i64>, Vec<Vec<i64>>), Failure> {
    let resolve = |side: &str| -> Result<Vec<i64>, Failure> {
        let ids = store.resolve(side).map_err(|e| match e {
            // A candidate that never stored a run (its build broke before it ran) could not be
            // tested; a missing baseline is a set-up error, and stays one.
            schedlab_store::StoreError::NotFound(what) if side != query.base => {
                Failure::untestable(what)
            }
            other => Failure::from(other),
        })?;
        select(store, &query.selection, side, ids)
    };
    let base_ids = resolve(query.base)?;
    let candidate_ids = query
        .candidates
        .iter()
        .map(|c| resolve(c))
        .collect::<Result<Vec<_>, _>>()?;
    for (candidate, ids) in query.candidates.iter().zip(&candidate_ids) {
        refuse_shared_runs(query.base, &base_ids, candidate, ids)?;
    }
    Ok((base_ids, candidate_ids))
}

/// Builds a comparison from an open store.
pub fn load_with(store: &dyn Store, query: Query<'_>) -> Result<LoadedComparison, Failure> {
    let (base_ids, candidate_ids) = side_ids(store, &query)?;
    let include = (
        query.settings.include_incomplete,
        query.settings.drop_disturbed,
    );
    let filter = &query.filter;
    let base_loaded = load_side(store, query.base, &base_ids, filter, include)?;
    let candidates_loaded: Vec<LoadedSide> = query
        .candidates
        .iter()
        .zip(&candidate_ids)
        .map(|(name, ids)| load_side(store, name, ids, filter, include))
        .collect::<Result<Vec<_>, _>>()?;
    std::iter::once(&base_loaded.side)
        .chain(candidates_loaded.iter().map(|c| &c.side))
        .try_for_each(refuse_non_finite)?;
    for (name, runs) in std::iter::once((query.base, &base_loaded.runs)).chain(
        query
            .candidates
            .iter()
            .map(String::as_str)
            .zip(candidates_loaded.iter().map(|c| &c.runs)),
    ) {
        refuse_without_a_complete_run(&format!("{name} has"), runs, include.0)?;
    }
    if !query.allow_fingerprint_mismatch {
        let reference = &base_loaded.runs[0];
        for run in base_loaded
            .runs
            .iter()
            .chain(candidates_loaded.iter().flat_map(|c| &c.runs))
        {
            check_comparable(reference, run)?;
        }
    }
    if !query.allow_tcg {
        refuse_emulated(
            base_loaded
                .runs
                .iter()
                .chain(candidates_loaded.iter().flat_map(|c| &c.runs)),
        )?;
    }
    let first = base_loaded.runs.first().map(|r| &r.fingerprint);
    let calibrations = calibrations(store, &query.calibration, first)?;
    let sequential = sequential_plan(
        store,
        std::iter::once(&base_loaded.tags)
            .chain(candidates_loaded.iter().map(|c| &c.tags))
            .flatten(),
    )?;
    let mut curve_sides = vec![base_loaded.curve_side];
    let mut candidates = Vec::with_capacity(candidates_loaded.len());
    let mut candidate_runs = Vec::with_capacity(candidates_loaded.len());
    for loaded in candidates_loaded {
        curve_sides.push(loaded.curve_side);
        candidates.push(loaded.side);
        candidate_runs.push(loaded.runs);
    }
    let mut comparison = schedlab_analysis::compare(
        base_loaded.side,
        candidates,
        &calibrations,
        query.settings,
        sequential,
    );
    comparison.latency_curves = curves(&curve_sides.iter().collect::<Vec<_>>());
    Ok(LoadedComparison {
        comparison,
        base_runs: base_loaded.runs,
        candidate_runs,
    })
}

/// `--across KEY` or `--across KEY=BASE,CAND...`: the key and the values listed, if any.
pub struct AcrossArg {
    pub key: String,
    pub values: Option<Vec<String>>,
}

fn parse_across(text: &str) -> Result<AcrossArg, Failure> {
    let (key, values) = match text.split_once('=') {
        Some((key, values)) => (key, Some(values.split(',').map(String::from).collect())),
        None => (text, None),
    };
    if key.is_empty() {
        return Err(Failure::bad_input(format!(
            "--across {text}: name a workload parameter, e.g. --across variant or --across variant=orig,fast"
        )));
    }
    Ok(AcrossArg {
        key: key.to_string(),
        values,
    })
}

/// `compare --across`: every run the selections name (`query.base` and `query.candidates`, each
/// an id or a label), together, split into sides by the value of one parameter. The same run
/// feeds every side, so the shared-run refusal of plain comparisons does not apply: its cases
/// differ from side to side.
fn load_across(
    store: &dyn Store,
    query: Query<'_>,
    across: &AcrossArg,
) -> Result<LoadedComparison, Failure> {
    let mut ids: Vec<i64> = Vec::new();
    for selection in std::iter::once(query.base).chain(query.candidates.iter().map(String::as_str))
    {
        for id in select(
            store,
            &query.selection,
            selection,
            store.resolve(selection)?,
        )? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let keep = compared_or_curved(&query.filter);
    let mut runs = ids
        .iter()
        .map(|&id| store.load_run_keeping(id, &keep))
        .collect::<Result<Vec<_>, _>>()?;
    let tags = ids
        .iter()
        .map(|&id| store.run_tag(id))
        .collect::<Result<Vec<_>, _>>()?;
    let include = query.settings.include_incomplete;
    refuse_without_a_complete_run("the selected runs hold", &runs, include)?;
    if !query.allow_fingerprint_mismatch {
        for run in &runs {
            check_comparable(&runs[0], run)?;
        }
    }
    if !query.allow_tcg {
        refuse_emulated(runs.iter())?;
    }
    refuse_cases_sharing_a_name(&runs)?;
    refuse_a_key_the_name_hides(&runs, &across.key)?;
    let inputs: Vec<RunInput> = runs
        .iter()
        .zip(&tags)
        .map(|(record, tag)| RunInput { record, tag: *tag })
        .collect();
    let drop = query.settings.drop_disturbed;
    let project = |filter: &MetricFilter| {
        let mut all =
            SideBuilder::new("selected runs", filter.clone(), include).dropping_disturbed(drop);
        for input in &inputs {
            all.add_run(*input);
        }
        let all = all.finish();
        schedlab_analysis::across::project(&all, &across.key, across.values.as_deref())
            .map_err(|e| Failure::bad_input(schedlab_report::refusals::across(&e)))
    };
    let projection = project(&query.filter)?;
    projection.sides.iter().try_for_each(refuse_non_finite)?;
    let first = runs.first().map(|r| &r.fingerprint);
    let calibrations = calibrations(store, &query.calibration, first)?;
    let mut comparison =
        schedlab_analysis::compare_across(&projection, &calibrations, query.settings);
    let every = project(&MetricFilter::every_metric())?;
    comparison.latency_curves = curves(&every.sides.iter().collect::<Vec<_>>());
    // Their values are in the comparison; reports read the runs' plans and fingerprints.
    for case in runs.iter_mut().flat_map(|r| &mut r.cases) {
        case.iterations = Vec::new();
    }
    Ok(LoadedComparison {
        comparison,
        candidate_runs: vec![runs.clone(); projection.sides.len() - 1],
        base_runs: runs,
    })
}

/// Cases are told apart by their names: two cases of one run with one name and different
/// parameters (a workload whose name leaves out the parameter a matrix varies, such as `fake`'s
/// `seed` and `effect_pct`) would have their iterations merged, and --across would split them
/// by the first one's value alone.
fn refuse_cases_sharing_a_name(runs: &[RunRecord]) -> Result<(), Failure> {
    for run in runs {
        for (i, a) in run.cases.iter().enumerate() {
            if let Some(b) = run.cases[i + 1..]
                .iter()
                .find(|b| b.spec.name == a.spec.name && b.spec.workload != a.spec.workload)
            {
                let params = |spec: &schedlab_core::plan::CaseSpec| {
                    serde_json::to_string(&spec.workload).unwrap_or_default()
                };
                return Err(Failure::bad_input(format!(
                    "--across: run {} has two cases named {:?} with different parameters ({} and {}); \
                     --across tells cases apart by name, so vary a parameter the case name shows",
                    run.id.unwrap_or_default(),
                    a.spec.name,
                    params(&a.spec),
                    params(&b.spec)
                )));
            }
        }
    }
    Ok(())
}

/// --across reads each case name's parameters from the first run that has it: runs whose cases
/// of one name differ in `key` (a parameter the name leaves out, such as `fake`'s `effect_pct`
/// or an import's `tool_version`, or a default that depends on the machine left unset in one
/// run and written out in another) cannot be split by it. Defaults that are the same on every
/// machine count as written out (`WorkloadSpec::settled`).
fn refuse_a_key_the_name_hides(runs: &[RunRecord], key: &str) -> Result<(), Failure> {
    let mut first: HashMap<&str, (i64, Option<serde_json::Value>)> = HashMap::new();
    for run in runs {
        let id = run.id.unwrap_or_default();
        for case in &run.cases {
            let value = serde_json::to_value(case.spec.workload.settled())
                .ok()
                .and_then(|mut v| v.get_mut(key).map(serde_json::Value::take));
            let (first_id, first_value) = first
                .entry(case.spec.name.as_str())
                .or_insert((id, value.clone()));
            if *first_value != value {
                let shown = |v: &Option<serde_json::Value>| match v {
                    None => format!("{key} unset"),
                    Some(serde_json::Value::String(text)) => format!("{key}={text}"),
                    Some(other) => format!("{key}={other}"),
                };
                return Err(Failure::bad_input(format!(
                    "--across {key}: case {:?} has {} in run {first_id} and {} in run {id}, \
                     which its name does not tell apart, so --across cannot either: compare the \
                     runs as sides instead (schedlab compare A B)",
                    case.spec.name,
                    shown(first_value),
                    shown(&value),
                )));
            }
        }
    }
    Ok(())
}

/// Unless `include` (`--include-incomplete`), runs of which none completed cannot be compared:
/// `whose` names them with its verb ("base has").
fn refuse_without_a_complete_run(
    whose: &str,
    runs: &[RunRecord],
    include: bool,
) -> Result<(), Failure> {
    if include || runs.iter().any(|r| r.status == RunStatus::Complete) {
        return Ok(());
    }
    Err(Failure::untestable(format!(
        "{whose} no complete run ({}); pass --include-incomplete to compare what they kept",
        runs.iter()
            .map(|r| format!("run {} {}", r.id.unwrap_or_default(), r.status.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// What a comparison reads of a stored run: the metrics it compares, and the distributions its
/// latency curves are drawn from.
fn compared_or_curved(filter: &MetricFilter) -> impl Fn(&str, Role, MetricShape) -> bool + '_ {
    |name, role, shape| filter.accepts(name, role) || shape.of_distribution()
}

/// A side whose compared values are all finite numbers. The runner refuses the others, but a
/// database from before it did may hold one, which no figure or test can take.
fn refuse_non_finite(side: &Side) -> Result<(), Failure> {
    for series in &side.series {
        for (run, values) in &series.runs {
            if values.iter().any(|v| !v.is_finite()) {
                let run = side.runs[*run]
                    .id
                    .map_or_else(|| "a run".to_string(), |id| format!("run {id}"));
                return Err(Failure::bad_input(format!(
                    "case {}, metric {}: {run} stored a value that is not a finite number, which \
                     no comparison can use (--metric can leave the metric out)",
                    series.case.name, series.metric
                )));
            }
        }
    }
    Ok(())
}

/// A run is evidence for one side only: on both, the two sides' units are not independent and
/// `compare A A` would find them alike by construction.
fn refuse_shared_runs(
    base: &str,
    base_ids: &[i64],
    candidate: &str,
    candidate_ids: &[i64],
) -> Result<(), Failure> {
    let shared: Vec<String> = candidate_ids
        .iter()
        .filter(|id| base_ids.contains(id))
        .map(|id| id.to_string())
        .collect();
    if shared.is_empty() {
        return Ok(());
    }
    let (noun, verb) = if shared.len() == 1 {
        ("run", "is")
    } else {
        ("runs", "are")
    };
    Err(Failure::bad_input(format!(
        "{noun} {} {verb} on both sides ({base} and {candidate}): a run can be evidence for one \
         side only",
        shared.join(", ")
    )))
}

/// The ids of `ids` that `selection` takes, in their order; a side left with none names what was
/// asked. One query on the side's runs alone, which reads no iteration.
fn select(
    store: &dyn Store,
    selection: &RunSelection,
    side: &str,
    ids: Vec<i64>,
) -> Result<Vec<i64>, Failure> {
    if selection.is_empty() {
        return Ok(ids);
    }
    let of_side = RunSelection {
        ids: Some(ids.clone()),
        ..selection.clone()
    };
    let chosen: std::collections::HashSet<i64> = store
        .select_runs(&of_side, None)?
        .iter()
        .map(|r| r.id)
        .collect();
    let kept: Vec<i64> = ids.into_iter().filter(|id| chosen.contains(id)).collect();
    if kept.is_empty() {
        return Err(Failure::from(schedlab_store::select::nothing_selected(
            side, selection,
        )));
    }
    Ok(kept)
}

/// The calibrations `--calibration` allows. A calibration chosen by id must be of the machine
/// the runs ran on (`machine`: a run's fingerprint).
pub fn calibrations(
    store: &dyn Store,
    choice: &CalibrationChoice,
    machine: Option<&Fingerprint>,
) -> Result<CalibrationSet, Failure> {
    if matches!(choice, CalibrationChoice::None) {
        return Ok(CalibrationSet::default());
    }
    let mut all = Vec::new();
    for stored in store.calibrations()? {
        let id = stored.id;
        match serde_json::from_value::<Calibration>(stored.model) {
            Ok(mut c) => {
                c.id = id;
                all.push(c);
            }
            Err(e) => {
                return Err(Failure::failed(format!(
                    "calibration {} is unreadable: {e}",
                    id.unwrap_or_default()
                )))
            }
        }
    }
    if let CalibrationChoice::Id(id) = choice {
        let chosen = all
            .into_iter()
            .find(|c| c.id == Some(*id))
            .ok_or_else(|| Failure::bad_input(format!("no calibration with id {id}")))?;
        if let Some(fingerprint) = machine {
            let here = MachineKey::of(fingerprint);
            let differences = chosen.machine.differences(&here);
            if !differences.is_empty() {
                return Err(Failure::bad_input(format!(
                    "calibration {id} was made on another machine ({} differ)",
                    differences.join(", ")
                )));
            }
        }
        return Ok(CalibrationSet::new(vec![chosen]));
    }
    Ok(CalibrationSet::new(all))
}

/// The sequential plan of an adaptive `ab` experiment, when both sides are its two arms: `tags`
/// are every run's, the baseline's first.
fn sequential_plan<'a>(
    store: &dyn Store,
    tags: impl Iterator<Item = &'a Option<ExperimentTag>>,
) -> Result<Option<SequentialPlan>, Failure> {
    let mut ids = tags.map(|t| t.map(|t| t.experiment_id));
    let Some(Some(first)) = ids.next() else {
        return Ok(None);
    };
    if !ids.all(|id| id == Some(first)) {
        return Ok(None);
    }
    let Some(experiment) = store.experiment_by_id(first)? else {
        return Ok(None);
    };
    Ok(experiment
        .spec
        .get("sequential")
        .and_then(|s| serde_json::from_value::<SequentialPlan>(s.clone()).ok()))
}

/// A guest QEMU emulated (TCG) ran every instruction through a translator: its timings say how
/// fast the emulator is, not how the kernel schedules, so they are not judged as a kernel
/// comparison unless asked (`--allow-tcg`: checking the mechanism, functional differences).
fn refuse_emulated<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Result<(), Failure> {
    let emulated: Vec<String> = runs
        .filter(|r| {
            r.fingerprint
                .guest
                .as_ref()
                .is_some_and(|g| g.accelerator == "tcg")
        })
        .map(|r| r.id.map_or("?".into(), |i| i.to_string()))
        .collect();
    if emulated.is_empty() {
        return Ok(());
    }
    Err(Failure::bad_input(format!(
        "refusing to judge: {} measured in a guest QEMU emulated (TCG, no KVM), whose timings \
             are the emulator's, not the kernel's; pass --allow-tcg to compare them anyway (to check \
             the mechanism or a functional difference), or measure on a host with KVM",
        match emulated.as_slice() {
            [one] => format!("run {one} was"),
            few if few.len() <= 6 => format!("runs {} were", few.join(", ")),
            many => format!(
                "runs {}, ... ({} in all) were",
                many[..5].join(", "),
                many.len()
            ),
        }
    )))
}

/// Kernel differences are the point of a comparison; hardware and tuning differences are not.
fn check_comparable(reference: &RunRecord, run: &RunRecord) -> Result<(), Failure> {
    let (a, b) = (&reference.fingerprint, &run.fingerprint);
    for MustMatch { name, read, .. } in &MUST_MATCH {
        if read(a) != read(b) {
            let id = |r: &RunRecord| r.id.map_or("?".into(), |i| i.to_string());
            return Err(Failure::bad_input(format!(
                "refusing to compare: {name} differs (run {}: {:?}, run {}: {:?}); \
                 pass --allow-fingerprint-mismatch to compare anyway",
                id(reference),
                read(a),
                id(run),
                read(b)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::fingerprint::{Fingerprint, GuestOrigin};
    use schedlab_core::plan::RunPlan;
    use schedlab_core::record::RunStatus;
    use schedlab_core::workload::{fake::FakeParams, WorkloadSpec};

    fn run(id: i64, accelerator: Option<&str>) -> RunRecord {
        RunRecord {
            id: Some(id),
            label: None,
            plan: RunPlan::new(
                None,
                None,
                1,
                0,
                vec![WorkloadSpec::Fake(FakeParams::default())],
            )
            .unwrap(),
            fingerprint: Fingerprint {
                guest: accelerator.map(|a| GuestOrigin {
                    accelerator: a.into(),
                    ..GuestOrigin::default()
                }),
                ..Fingerprint::default()
            },
            started_at_ns: 0,
            ended_at_ns: None,
            status: RunStatus::Complete,
            error: None,
            cases: Vec::new(),
        }
    }

    /// Runs of the machine itself and of KVM guests are judged; a TCG guest's are refused,
    /// each named, with the way to compare them anyway.
    #[test]
    fn runs_of_emulated_guests_are_refused() {
        let judged = [run(1, None), run(2, Some("kvm"))];
        assert!(refuse_emulated(judged.iter()).is_ok());
        let one = [run(1, None), run(3, Some("tcg"))];
        let refusal = refuse_emulated(one.iter()).unwrap_err();
        assert_eq!(refusal.kind, crate::failure::FailureKind::BadInput);
        assert!(
            refusal
                .message
                .starts_with("refusing to judge: run 3 was measured in a guest QEMU emulated (TCG"),
            "{}",
            refusal.message
        );
        assert!(refusal.message.contains("--allow-tcg"));
        let many: Vec<RunRecord> = (1..=8).map(|id| run(id, Some("tcg"))).collect();
        let refusal = refuse_emulated(many.iter()).unwrap_err();
        assert!(
            refusal
                .message
                .contains("runs 1, 2, 3, 4, 5, ... (8 in all) were"),
            "{}",
            refusal.message
        );
    }
}
