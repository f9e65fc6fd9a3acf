//! schedlab's entry point: parse the command line, dispatch, and turn any failure into one line on
//! stderr and a meaningful exit code.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod comparison;
mod failure;
mod fleet;
mod input;
mod output;
mod plan;
mod progress;
mod session;
mod shell;
mod store_path;
mod workload_flags;

use failure::{Failure, FailureKind};

fn main() -> ExitCode {
    // Before any thread starts, so that every thread inherits it (see the function).
    if let Err(e) = schedlab_core::sys::watch_for_suspension() {
        let _ = writeln!(std::io::stderr(), "schedlab: cannot block SIGCONT: {e}");
        return ExitCode::from(1);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(failure) => {
            // Not eprintln!: after a hang-up stderr may be a terminal that is gone (EIO), and a
            // panic here would replace the exit code that says what happened.
            if !failure.message.is_empty() {
                let _ = writeln!(
                    std::io::stderr(),
                    "schedlab: {}",
                    one_line(&failure.message)
                );
            }
            failure.exit_code()
        }
    }
}

/// Help and version go to stdout as usual; a usage error is cut to its first line so bad input
/// always gets one line and exit code 2.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        // clap names a subcommand's version `schedlab-run`; the program is schedlab whatever
        // subcommand asks.
        ErrorKind::DisplayVersion => {
            let _ = writeln!(std::io::stdout(), "schedlab {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let _ = e.print();
            ExitCode::from(FailureKind::BadInput.exit_code())
        }
        _ => {
            // clap puts the detail (which argument, a tip) on the lines after the first; keep
            // all of it up to the usage block, on one line.
            let text = e.to_string();
            let message = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            let message = if message.is_empty() {
                "invalid arguments".to_string()
            } else {
                match misplaced_flag_owner(&e) {
                    Some((given, owner)) => format!(
                        "unexpected argument '{given}' after the workload's name: it is \
                         `{owner}`'s, so it goes before the workload's name"
                    ),
                    None => message.to_string(),
                }
            };
            let _ = writeln!(
                std::io::stderr(),
                "schedlab: {} (see --help)",
                one_line(&message)
            );
            Failure::bad_input(message).exit_code()
        }
    }
}

/// For an unknown argument after a workload's name that a command above the workload takes
/// (`ab fanout --a …`, `calibrate pipe --runs 3`): the argument, and that command's name, as
/// `campaign start`.
/// Those flags are not global, since a workload may have one of the same name (fanout's
/// `--rounds`).
fn misplaced_flag_owner(e: &clap::Error) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory;
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = given.strip_prefix("--")?.split('=').next()?;
    let mut command = cli::Cli::command();
    command.build();
    let mut path: Vec<clap::Command> = Vec::new();
    for word in std::env::args().skip(1).filter(|w| !w.starts_with('-')) {
        let current = path.last().unwrap_or(&command);
        let Some(next) = current.find_subcommand(&word).cloned() else {
            continue;
        };
        path.push(next);
    }
    let (_workload, above) = path.split_last()?;
    let owner = above
        .iter()
        .rposition(|c| c.get_arguments().any(|a| a.get_long() == Some(long)))?;
    let names: Vec<&str> = above[..=owner].iter().map(|c| c.get_name()).collect();
    Some((given.clone(), names.join(" ")))
}

/// A message may quote what the user gave (a path, a label); a newline or another control
/// character in it would break the one line scripts read, or drive the terminal, so it is shown
/// escaped.
fn one_line(message: &str) -> String {
    let mut line = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}
