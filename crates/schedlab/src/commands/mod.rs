//! One module per subcommand; `dispatch` routes the parsed command line to them.
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use schedlab_store::Location;

use crate::cli::{Cli, Command, DbArg, OutputFormat};
use crate::failure::Failure;

mod ab;
mod calibrate;
mod campaign;
mod compare;
mod db;
mod docs;
mod env;
mod list;
mod report;
mod run;
mod runs;
mod show;
mod stat;

pub fn dispatch(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::List => list::list(),
        Command::Run(args) => run::run(&args),
        Command::Runs(args) => runs::runs(&args),
        Command::Show(args) => show::show(&args),
        Command::Ab(args) => ab::ab(&args),
        Command::Campaign(args) => campaign::campaign(&args),
        Command::Calibrate(args) => calibrate::calibrate(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Report(args) => report::report(&args),
        Command::Stat(args) => stat::stat(&args),
        Command::Env(args) => env::env(&args),
        Command::Db(args) => db::db(&args),
        Command::Completions(args) => docs::completions(&args),
        Command::Man(args) => docs::man(&args),
    }
}

/// The SQLite file `--db` (or `$SCHEDLAB_DB`, or the default) names. A `--db` value with a URL
/// scheme is parsed, never taken as a file name: `sqlite:` gives a path, others are refused.
pub(crate) fn db_path(arg: &DbArg) -> Result<PathBuf, Failure> {
    let given = arg
        .db
        .clone()
        .map(PathBuf::into_os_string)
        .or_else(|| std::env::var_os("SCHEDLAB_DB"))
        .filter(|v| !v.is_empty());
    if let Some(value) = given {
        return match Location::parse(&value)? {
            Location::Sqlite(path) => Ok(path),
        };
    }
    schedlab_store::default_db_path().ok_or_else(|| {
        Failure::bad_input("no results database path: set --db, SCHEDLAB_DB, XDG_DATA_HOME or HOME")
    })
}

pub(crate) fn report_format(format: OutputFormat) -> schedlab_report::Format {
    match format {
        OutputFormat::Text => schedlab_report::Format::Text,
        OutputFormat::Json => schedlab_report::Format::Json,
    }
}

/// Writes command output to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn emit(
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match render(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::failed(format!("cannot write output: {e}"))),
    }
}
