//! What the fleet commands share (`runs`, `hosts`, `history`, `changes`, and `compare`'s
//! selection): the selection the command line asks for, and one case's history with its
//! changes, built from the store through the `Store` trait.
use schedlab_analysis::history::{self, ChangeSettings, Changes, History, HistoryError};
use schedlab_core::record::RunRecord;
use schedlab_stats::edivisive::EDivisiveSettings;
use schedlab_store::{RunSelection, Store};

use crate::cli::{ChangeArgs, SelectArgs};
use crate::comparison::{calibrations, CalibrationChoice};
use crate::failure::Failure;

/// The selection of `--host`, `--kernel` and `--where`.
pub fn selection(args: &SelectArgs) -> Result<RunSelection, Failure> {
    let mut selection = RunSelection {
        host: args.host.clone(),
        kernel: args.kernel.clone(),
        ..RunSelection::default()
    };
    for field in &args.fields {
        selection.add_where(field).map_err(Failure::bad_input)?;
    }
    Ok(selection)
}

/// The change-detection settings of the command line, checked.
pub fn change_settings(args: &ChangeArgs) -> Result<ChangeSettings, Failure> {
    if !(args.noise_multiple.is_finite() && args.noise_multiple >= 0.0) {
        return Err(Failure::bad_input("--noise-multiple must be 0 or more"));
    }
    if !(args.min_effect.is_finite() && args.min_effect >= 0.0 && args.min_effect < 100.0) {
        return Err(Failure::bad_input(
            "--min-effect must be a percentage from 0 to below 100",
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(Failure::bad_input("--alpha must be between 0 and 1"));
    }
    if args.min_runs < 2 {
        return Err(Failure::bad_input("--min-runs must be at least 2"));
    }
    Ok(ChangeSettings {
        edivisive: EDivisiveSettings {
            alpha: args.alpha,
            min_segment: args.min_runs,
            ..EDivisiveSettings::default()
        },
        min_effect: args.min_effect / 100.0,
        noise_multiple: args.noise_multiple,
    })
}

/// The stored runs of `case` that `selection` takes, each with that case alone: a history reads
/// one case of years of runs, not every case of each.
pub fn case_runs(
    store: &dyn Store,
    selection: &RunSelection,
    case: &str,
) -> Result<Vec<RunRecord>, Failure> {
    let selection = RunSelection {
        case: Some(case.to_string()),
        ..selection.clone()
    };
    let ids: Vec<i64> = store
        .select_runs(&selection, None)?
        .iter()
        .map(|r| r.id)
        .collect();
    Ok(store.load_runs_of_case(&ids, case)?)
}

/// `case`'s history on the selected runs, and the changes in it.
pub fn history_and_changes(
    store: &dyn Store,
    selection: &RunSelection,
    case: &str,
    metric: Option<&str>,
    args: &ChangeArgs,
) -> Result<(History, Changes), Failure> {
    history_and_changes_if_any(store, selection, case, metric, args)?
        .map_err(|e| Failure::bad_input(schedlab_report::refusals::history(&e)))
}

/// As [`history_and_changes`], with the reason there is no history to show apart from the
/// failures: a caller looking through every stored case passes over one that no complete run
/// measured, or that has no such metric.
pub fn history_and_changes_if_any(
    store: &dyn Store,
    selection: &RunSelection,
    case: &str,
    metric: Option<&str>,
    args: &ChangeArgs,
) -> Result<Result<(History, Changes), HistoryError>, Failure> {
    let settings = change_settings(args)?;
    let runs = case_runs(store, selection, case)?;
    let history = match history::history(&runs, case, metric, args.include_incomplete) {
        Ok(history) => history,
        Err(e) => return Ok(Err(e)),
    };
    let choice = CalibrationChoice::parse(&args.calibration)?;
    let newest: Vec<RunRecord> = runs
        .iter()
        .filter(|r| r.id == history.points.last().and_then(|p| p.run_id))
        .cloned()
        .collect();
    let calibrations = calibrations(store, &choice, &newest)?;
    let changes = history::changes(&history, &calibrations, &settings)
        .map_err(|e| Failure::failed(format!("change detection failed: {e}")))?;
    Ok(Ok((history, changes)))
}
