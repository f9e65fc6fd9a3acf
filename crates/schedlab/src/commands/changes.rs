//! `schedlab changes [CASE…]`: the change points in each case's history on the selected
//! machine, with the first run and kernel after each.
use std::collections::HashSet;
use std::process::ExitCode;

use schedlab_analysis::history::HistoryError;
use schedlab_report::history as render;
use schedlab_report::refusals;
use schedlab_store::{RunSelection, Store};

use crate::cli::{ChangesArgs, HistoryFormat};
use crate::failure::Failure;
use crate::fleet::{history_and_changes_if_any, selection};
use crate::output::{emit, say};
use crate::store_path::{db_location, open_reader};

pub fn changes(args: &ChangesArgs) -> Result<ExitCode, Failure> {
    let selection = selection(&args.select)?;
    let store = open_reader(&db_location(&args.db)?)?;
    let listed = !args.cases.is_empty();
    let cases = if listed {
        args.cases.clone()
    } else {
        every_case(&*store, &selection)?
    };
    let mut all = Vec::new();
    let mut without_metric = None;
    let mut passed_over = Vec::new();
    for case in &cases {
        let history = history_and_changes_if_any(
            &*store,
            &selection,
            case,
            args.metric.as_deref(),
            &args.change,
        )?;
        match history {
            Ok((_, changes)) => all.push(changes),
            // A case named on the command line must have a history; of every stored case,
            // those only interrupted or abandoned runs measured (or without the metric) have
            // none to look at.
            Err(e @ HistoryError::ManyHosts(_)) => {
                return Err(Failure::bad_input(refusals::history(&e)))
            }
            Err(e) if listed => return Err(Failure::bad_input(refusals::history(&e))),
            Err(e @ HistoryError::NoMetric { .. }) => {
                without_metric.get_or_insert(e);
            }
            Err(HistoryError::NoRuns { .. }) => {}
            // One damaged case does not hide the others' changes; it is named.
            Err(e @ HistoryError::NotFinite { .. }) => passed_over.push(e),
        }
    }
    if all.is_empty() {
        return Err(Failure::bad_input(match without_metric {
            _ if !passed_over.is_empty() => {
                let others = match passed_over.len() - 1 {
                    0 => String::new(),
                    1 => " (and 1 other case likewise)".into(),
                    n => format!(" (and {n} other cases likewise)"),
                };
                format!(
                    "{}{others}; nothing else to look at",
                    refusals::history(&passed_over[0])
                )
            }
            Some(e) => refusals::history(&e),
            None => "no complete stored run matches; nothing to look at \
                     (--include-incomplete takes the others)"
                .to_string(),
        }));
    }
    for e in passed_over {
        say(format_args!("{}: passed over", refusals::history(&e)));
    }
    emit(|out| match args.format {
        HistoryFormat::Text => render::write_changes_text(&all, out),
        HistoryFormat::Csv => render::write_changes_csv(&all, out),
        HistoryFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &all)?;
            writeln!(out)
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Every case the selected runs measured, oldest run first, each run's as its plan listed them.
fn every_case(store: &dyn Store, selection: &RunSelection) -> Result<Vec<String>, Failure> {
    let oldest_first: Vec<i64> = store
        .select_runs(selection, None)?
        .iter()
        .rev()
        .map(|r| r.id)
        .collect();
    let mut seen = HashSet::new();
    Ok(store
        .case_names(&oldest_first)?
        .into_iter()
        .flatten()
        .filter(|name| seen.insert(name.clone()))
        .collect())
}
