//! `schedlab completions SHELL` and `schedlab man`: shell completion scripts and man pages
//! generated from the same command definition that parses the command line (workload flags
//! included, as built from the workload definitions), so neither can drift from `--help`. Each
//! page lists the pages of its subcommands (never a `help` page: `schedlab help` is `--help`, not
//! a page) and ends with EXIT STATUS, ENVIRONMENT and FILES, as man pages do.
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
    let mut command = cli::command();
    hide_help(&mut command);
    match &args.dir {
        None => {
            let out = render(command, "schedlab")?;
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
    write_page(&command, "schedlab", dir)
}

fn write_page(command: &clap::Command, name: &str, dir: &Path) -> Result<(), Failure> {
    let path = dir.join(format!("{name}.1"));
    let out = render(command.clone(), name)?;
    std::fs::write(&path, out)
        .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_page(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}

/// Hides every `help` subcommand from the pages: it is a way to ask for --help, not a command
/// with a page of its own, and a page that lists `schedlab-help(1)` names one never written.
fn hide_help(command: &mut clap::Command) {
    for sub in command.get_subcommands_mut() {
        if sub.get_name() == "help" {
            *sub = std::mem::take(sub).hide(true);
        } else {
            hide_help(sub);
        }
    }
}

/// The page `name`(1) of `command`: clap_mangen's sections, then EXIT STATUS, ENVIRONMENT and
/// FILES (docs/cli.md says the same at more length).
fn render(command: clap::Command, name: &str) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let page = command.name(name.to_string());
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| Failure::failed(format!("cannot render {name}(1): {e}")))?;
    let mut roff = clap_mangen::roff::Roff::new();
    for (heading, paragraphs) in TRAILING_SECTIONS {
        roff.control("SH", [*heading]);
        // A build without PostgreSQL reads no PostgreSQL password.
        let in_this_build = |term: &&str| cfg!(feature = "postgres") || *term != "PGPASSWORD";
        for (term, text) in paragraphs.iter().filter(|(term, _)| in_this_build(term)) {
            if term.is_empty() {
                roff.control("PP", []);
            } else {
                roff.control("TP", []);
                roff.text([clap_mangen::roff::bold(*term)]);
            }
            roff.text([clap_mangen::roff::roman(*text)]);
        }
    }
    roff.to_writer(&mut out)
        .map_err(|e| Failure::failed(format!("cannot render {name}(1): {e}")))?;
    Ok(out)
}

/// What `SCHEDLAB_DB` may name, in this build.
#[cfg(feature = "postgres")]
const SCHEDLAB_DB: &str =
    "The results database (a path, or a postgres:// URL) when --db is not given; \
     an empty value is refused.";
#[cfg(not(feature = "postgres"))]
const SCHEDLAB_DB: &str =
    "The results database (a path; this schedlab was built without PostgreSQL) \
     when --db is not given; an empty value is refused.";

/// The sections every page ends with: (heading, [(term, text)]), an empty term a paragraph.
const TRAILING_SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "EXIT STATUS",
        &[
            ("0", "Success."),
            (
                "1",
                "A run failed (a workload could not complete or verify its work, an iteration \
                 passed its deadline, or with --keep-going a case failed), the store failed, \
                 db check found damage, or --fail-on-regression found a regression.",
            ),
            (
                "2",
                "Bad input: an unknown command, workload or flag, a value out of range, a limit \
                 of this machine the run cannot fit in, a missing or unusable database, a run \
                 that does not exist.",
            ),
            (
                "CODE",
                "compare and report with --could-not-test-exit CODE, when nothing could be \
                 tested (125 for git bisect run).",
            ),
            (
                "128 + N",
                "Interrupted by signal N (130 for Ctrl-C, 143 for SIGTERM): every task was \
                 reaped and the finished iterations are stored.",
            ),
        ],
    ),
    (
        "ENVIRONMENT",
        &[
            ("SCHEDLAB_DB", SCHEDLAB_DB),
            (
                "XDG_DATA_HOME",
                "Where the default database lives, $XDG_DATA_HOME/schedlab/results.db, when \
                 absolute.",
            ),
            (
                "HOME",
                "The default database is ~/.local/share/schedlab/results.db without \
                 XDG_DATA_HOME.",
            ),
            (
                "PGPASSWORD",
                "The PostgreSQL password when a postgres:// URL has none.",
            ),
            (
                "PATH",
                "Where run external and ab's commands are looked for.",
            ),
        ],
    ),
    (
        "FILES",
        &[
            (
                "~/.local/share/schedlab/results.db",
                "The default results database (SQLite), made with its folder when missing.",
            ),
            (
                "",
                "docs/cli.md, docs/statistics.md and docs/json-schema.md in the source tree say \
                 more about every command, the statistics and the JSON outputs.",
            ),
        ],
    ),
];

/// Standard output may be a closed pipe (`| head`): that is the reader's choice, not a failure.
fn write_stdout(bytes: &[u8]) -> Result<ExitCode, Failure> {
    emit(|out| out.write_all(bytes))?;
    Ok(ExitCode::SUCCESS)
}
