//! schedlab's entry point: parse the command line, dispatch, and turn any failure into one line on
//! stderr and a meaningful exit code.
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod failure;
mod plan;
mod progress;

use failure::{Failure, EXIT_BAD_INPUT};

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("schedlab: {failure}");
            failure.exit_code()
        }
    }
}

/// Help and version go to stdout as usual; a usage error is cut to its first line so bad input
/// always gets one line and exit code 2.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let _ = e.print();
            ExitCode::from(EXIT_BAD_INPUT)
        }
        _ => {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            let _ = writeln!(std::io::stderr(), "schedlab: {first} (see --help)");
            Failure::bad_input(first).exit_code()
        }
    }
}
