//! `schedlab changes [CASE…]`: the change points in each case's history on the selected
//! machine, with the first run and kernel after each.
use std::process::ExitCode;

use schedlab_report::history as render;
use schedlab_store::{RunSelection, Store};

use crate::cli::{ChangesArgs, HistoryFormat};
use crate::failure::Failure;
use crate::fleet::{history_and_changes, selection};
use crate::output::emit;
use crate::store_path::{db_location, open_reader};

pub fn changes(args: &ChangesArgs) -> Result<ExitCode, Failure> {
    let selection = selection(&args.select)?;
    let store = open_reader(&db_location(&args.db)?)?;
    let cases = if args.cases.is_empty() {
        every_case(&*store, &selection)?
    } else {
        args.cases.clone()
    };
    if cases.is_empty() {
        return Err(Failure::bad_input(
            "no stored run matches; nothing to look at",
        ));
    }
    let mut all = Vec::new();
    for case in &cases {
        let (_, changes) = history_and_changes(
            &*store,
            &selection,
            case,
            args.metric.as_deref(),
            &args.change,
        )?;
        all.push(changes);
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

/// Every case the selected runs measured, in the order they first ran.
fn every_case(store: &dyn Store, selection: &RunSelection) -> Result<Vec<String>, Failure> {
    let mut cases: Vec<String> = Vec::new();
    for run in store.select_runs(selection, None)?.iter().rev() {
        for case in store.load_run(run.id)?.cases {
            if !cases.contains(&case.spec.name) {
                cases.push(case.spec.name);
            }
        }
    }
    Ok(cases)
}
