//! schedlab's entry point: parse the command line, dispatch, and turn any failure into one line on
//! stderr and a meaningful exit code.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
use std::io::Write;
use std::process::ExitCode;

use clap::FromArgMatches;

mod child;
mod cli;
mod commands;
mod comparison;
mod daemon;
mod explanation;
mod failure;
mod flag_values;
mod fleet;
mod input;
mod output;
mod plan;
mod progress;
mod select;
mod session;
mod setting;
mod shell;
mod store_path;
mod vm;
mod workload_flags;

use failure::Failure;

fn main() -> ExitCode {
    if let Err(e) = schedlab_core::sys::reap_own_children() {
        let _ = writeln!(std::io::stderr(), "schedlab: cannot restore SIGCHLD: {e}");
        return ExitCode::from(1);
    }
    // Before any thread starts, so that every thread inherits it (see the function).
    if let Err(e) = schedlab_core::sys::watch_for_suspension() {
        let _ = writeln!(std::io::stderr(), "schedlab: cannot block SIGCONT: {e}");
        return ExitCode::from(1);
    }
    // schedlab as the init of a guest that `campaign run` booted: no command line to parse.
    if vm::guest::is_guest_init() {
        vm::guest::main();
    }
    let parsed = cli::command()
        .try_get_matches()
        .and_then(|matches| cli::Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    remove_stale_cgroups();
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

/// Removes the cgroups a schedlab that died without cleaning up left behind (SIGKILL, a second
/// Ctrl-C), first thing in every command, and says so on stderr, one line each.
fn remove_stale_cgroups() {
    for stale in schedlab_core::sys::remove_stale_cgroups() {
        let path = stale.path.display();
        let owner = stale.owner_pid;
        let line = match stale.removed {
            Ok(()) => format!(
                "removed cgroup {path}, left by schedlab pid {owner}, which is no longer running"
            ),
            Err(e) => format!(
                "cannot remove cgroup {path}, left by schedlab pid {owner}, which is no longer \
                 running: {e}"
            ),
        };
        let _ = writeln!(std::io::stderr(), "schedlab: {line}");
    }
}

/// Help and version go to stdout as usual, as any output: a closed pipe (`| head`) is no error,
/// another write error (a full disk) is exit 1 with its line. A usage error is cut to its first
/// line so bad input always gets one line and exit code 2.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp => printed(e.print()),
        // clap names a subcommand's version `schedlab-run`; the program is schedlab whatever
        // subcommand asks.
        ErrorKind::DisplayVersion => printed(writeln!(
            std::io::stdout(),
            "schedlab {}",
            env!("CARGO_PKG_VERSION")
        )),
        // Not the whole help on stderr: one line naming the commands there are.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let message = missing_command();
            let _ = writeln!(std::io::stderr(), "schedlab: {}", one_line(&message));
            Failure::bad_input(message).exit_code()
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
            let message = if let Some(refusal) = value_refusal(&e) {
                refusal
            } else if message.is_empty() {
                "invalid arguments".to_string()
            } else {
                match misplaced_flag_owner(&e) {
                    // Before the workload's name it would be refused all the same.
                    Some((given, _)) if given == "--suite" || given.starts_with("--suite=") => {
                        "give either --suite or a workload, not both".to_string()
                    }
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

/// A flag's value that one of schedlab's value parsers refused (`flag_values.rs`), as every
/// other refusal of a value reads: the flag, then the reason (`--loops must be between 1 and
/// 10000000000, not 0`); the reasons are written to follow the flag, and say what was given
/// where it matters. clap's own parsers' errors keep clap's words.
fn value_refusal(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let flag = arg.split([' ', '=']).next()?;
    let source = std::error::Error::source(e)?;
    let refusal = source.downcast_ref::<flag_values::Refusal>()?;
    flag.starts_with("--").then(|| format!("{flag} {refusal}"))
}

/// The exit of help or version written on stdout (see [`clap_failure`]).
fn printed(written: std::io::Result<()>) -> ExitCode {
    match written.and_then(|()| std::io::stdout().flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let failure = Failure::failed(format!("cannot write output: {e}"));
            let _ = writeln!(std::io::stderr(), "schedlab: {}", failure.message);
            failure.exit_code()
        }
    }
}

/// The subcommands the command line named, in order (`db`, or `run`, `pipe`), as clap knows them.
fn command_path() -> (clap::Command, Vec<clap::Command>) {
    let command = cli::command();
    let mut path: Vec<clap::Command> = Vec::new();
    for word in std::env::args().skip(1).filter(|w| !w.starts_with('-')) {
        let current = path.last().unwrap_or(&command);
        let Some(next) = current.find_subcommand(&word).cloned() else {
            continue;
        };
        path.push(next);
    }
    (command, path)
}

/// `schedlab`, `schedlab db`: which commands may follow, on one line.
fn missing_command() -> String {
    let (top, path) = command_path();
    let names: Vec<&str> = path.iter().map(|c| c.get_name()).collect();
    let words = names.join(" ");
    let command = path.last().unwrap_or(&top);
    let commands: Vec<&str> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name())
        .collect();
    let help = if words.is_empty() {
        "schedlab --help".to_string()
    } else {
        format!("schedlab {words} --help")
    };
    match (words.is_empty(), commands.is_empty()) {
        (_, true) => format!("arguments are needed (see {help})"),
        (true, false) => format!("a command is needed: {} (see {help})", commands.join(", ")),
        (false, false) => format!(
            "{words} needs a command: {} (see {help})",
            commands.join(", ")
        ),
    }
}

/// For an unknown argument after a workload's name that a command above the workload takes
/// (`ab fanout --a …`, `calibrate pipe --runs 3`): the argument, and that command's name, as
/// `campaign start`.
/// Those flags are not global, since a workload may have one of the same name (fanout's
/// `--rounds`).
fn misplaced_flag_owner(e: &clap::Error) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = given.strip_prefix("--")?.split('=').next()?;
    let (_top, path) = command_path();
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
