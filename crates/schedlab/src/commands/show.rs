//! `schedlab show`: stored runs by id or label, in the same formats as `run` prints, or their raw
//! samples as CSV.
use std::process::ExitCode;

use schedlab_report::RunReport;

use crate::cli::{ShowArgs, ShowFormat};
use crate::failure::Failure;
use crate::output::emit;
use crate::store_path::{db_location, open_reader};

pub fn show(args: &ShowArgs) -> Result<ExitCode, Failure> {
    let store = open_reader(&db_location(&args.db)?)?;
    let runs = store
        .resolve(&args.run)?
        .into_iter()
        .map(|id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    emit(|out| match args.format {
        ShowFormat::Text => schedlab_report::text::write(&RunReport::new(&runs), out),
        ShowFormat::Json => schedlab_report::json::write(&RunReport::new(&runs), out),
        ShowFormat::Csv => schedlab_report::csv::write(&runs, out),
    })?;
    Ok(ExitCode::SUCCESS)
}
