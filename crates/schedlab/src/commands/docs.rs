//! `schedlab completions SHELL` and `schedlab man`: shell completion scripts and man pages
//! generated from the same command definition that parses the command line (workload flags
//! included, as built from the workload definitions), so neither can drift from `--help`.
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{self, CompletionsArgs, ManArgs};
use crate::failure::Failure;
use crate::output::emit;

pub fn completions(args: &CompletionsArgs) -> Result<ExitCode, Failure> {
    let mut command = cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "schedlab", &mut out);
    write_stdout(&out)
}

pub fn man(args: &ManArgs) -> Result<ExitCode, Failure> {
    let command = cli::command();
    match &args.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut out)
                .map_err(|e| Failure::failed(format!("cannot render the man page: {e}")))?;
            write_stdout(&out)
        }
        Some(dir) => {
            write_pages(command, dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// One page per command, named as `man` finds them: `schedlab-run-pipe.1` for `schedlab run pipe`.
fn write_pages(command: clap::Command, dir: &Path) -> Result<(), Failure> {
    // create_dir_all says "File exists" of a file in the way, which reads as if the directory were.
    if std::fs::metadata(dir).is_ok_and(|found| !found.is_dir()) {
        return Err(Failure::bad_input(format!(
            "--dir {}: it is not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::bad_input(format!("cannot create {}: {e}", dir.display())))?;
    let mut command = command;
    command.build();
    write_page(&command, "schedlab", dir)
}

fn write_page(command: &clap::Command, name: &str, dir: &Path) -> Result<(), Failure> {
    let page = command.clone().name(name.to_string());
    let path = dir.join(format!("{name}.1"));
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| Failure::failed(format!("cannot render {name}(1): {e}")))?;
    std::fs::write(&path, out)
        .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        write_page(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}

/// Standard output may be a closed pipe (`| head`): that is the reader's choice, not a failure.
fn write_stdout(bytes: &[u8]) -> Result<ExitCode, Failure> {
    emit(|out| out.write_all(bytes))?;
    Ok(ExitCode::SUCCESS)
}
