//! `schedlab show`: stored runs by id or label, in the same formats as `run` prints.
use std::process::ExitCode;

use schedlab_report::RunReport;
use schedlab_store::{SqliteStore, Store};

use super::{db_path, emit, report_format};
use crate::cli::ShowArgs;
use crate::failure::Failure;

pub fn show(args: &ShowArgs) -> Result<ExitCode, Failure> {
    let store = SqliteStore::open_existing(&db_path(&args.db)?)?;
    let runs = store
        .resolve(&args.run)?
        .into_iter()
        .map(|id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    emit(|out| schedlab_report::write(&RunReport::new(&runs), report_format(args.format), out))?;
    Ok(ExitCode::SUCCESS)
}
