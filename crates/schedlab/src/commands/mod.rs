//! One module per subcommand; `dispatch` routes the parsed command line to them. A command uses
//! what it shares with others from modules outside this one (the session, the comparison, the
//! output), never another command.
use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::failure::Failure;

mod ab;
mod calibrate;
mod campaign;
mod changes;
mod compare;
mod db;
mod docs;
mod env;
mod history;
mod hosts;
mod import;
mod list;
mod push;
mod report;
mod run;
mod runs;
mod show;
mod stat;

pub fn dispatch(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::List(args) => list::list(&args),
        Command::Run(args) => run::run(&args),
        Command::Runs(args) => runs::runs(&args),
        Command::Hosts(args) => hosts::hosts(&args),
        Command::History(args) => history::history(&args),
        Command::Changes(args) => changes::changes(&args),
        Command::Show(args) => show::show(&args),
        Command::Ab(args) => ab::ab(&args),
        Command::Campaign(args) => campaign::campaign(&args),
        Command::Calibrate(args) => calibrate::calibrate(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Report(args) => report::report(&args),
        Command::Stat(args) => stat::stat(&args),
        Command::Import(args) => import::import(&args),
        Command::Env(args) => env::env(&args),
        Command::Db(args) => db::db(&args),
        Command::Push(args) => push::push(&args),
        Command::Completions(args) => docs::completions(&args),
        Command::Man(args) => docs::man(&args),
    }
}
