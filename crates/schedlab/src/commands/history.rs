//! `schedlab history CASE`: one metric's run summaries over time on one machine, with the
//! changes in them marked; optionally also as an HTML page with an SVG plot.
use std::process::ExitCode;

use schedlab_report::history as render;

use crate::cli::{HistoryArgs, HistoryFormat};
use crate::failure::Failure;
use crate::fleet::history_and_changes;
use crate::output::{emit, is_stdout, write_atomically};
use crate::select::selection;
use crate::store_path::{db_location, open_reader};

pub fn history(args: &HistoryArgs) -> Result<ExitCode, Failure> {
    // The page on stdout is all that goes there: a format for the table would be ignored.
    if let (Some(path), Some(_)) = (&args.html, args.format) {
        if is_stdout(path) {
            return Err(Failure::bad_input(format!(
                "--format shapes what goes on stdout, and --html {} puts the page there instead; give one of them",
                path.display()
            )));
        }
    }
    let selection = selection(&args.select)?;
    let store = open_reader(&db_location(&args.db)?)?;
    let (history, changes) = history_and_changes(
        &*store,
        &selection,
        &args.case,
        args.metric.as_deref(),
        &args.change,
    )?;
    if let Some(path) = &args.html {
        let to_stdout = is_stdout(path);
        write_atomically(path, |out| {
            render::write_history_html(&history, &changes, out)
        })?;
        // The page on stdout stays a page.
        if to_stdout {
            return Ok(ExitCode::SUCCESS);
        }
    }
    emit(|out| match args.format.unwrap_or(HistoryFormat::Text) {
        HistoryFormat::Text => render::write_history_text(&history, &changes, out),
        HistoryFormat::Csv => render::write_history_csv(&history, &changes, out),
        HistoryFormat::Json => render::write_history_json(&history, &changes, out),
    })?;
    Ok(ExitCode::SUCCESS)
}
