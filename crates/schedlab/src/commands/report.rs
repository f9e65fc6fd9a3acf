//! `schedlab report`: the comparison `compare` would print, written as one self-contained HTML
//! page. The file is written beside its destination and renamed into place, so a failed run
//! never leaves a half-written report where the old one was.
use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use schedlab_report::compare::html;

use crate::cli::ReportArgs;
use crate::comparison::{gate, load_comparison};
use crate::failure::Failure;

pub fn report(args: &ReportArgs) -> Result<ExitCode, Failure> {
    let loaded = load_comparison(&args.sides)
        .map_err(|f| f.or_could_not_test(args.sides.could_not_test_exit))?;
    write_atomically(&args.html, |out| {
        html::write(
            &loaded.comparison,
            &loaded.base_runs,
            &loaded.candidate_runs,
            out,
        )
    })?;
    let c = &loaded.comparison;
    println!(
        "wrote {}: {} rows, {} of {} judged rows marked, {} not judged",
        args.html.display(),
        c.rows.len(),
        c.footer.marked,
        c.footer.comparisons,
        c.footer.not_judged
    );
    gate(
        c,
        args.sides.decision.fail_on_regression,
        args.sides.could_not_test_exit,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `path` through a temporary file in the same directory (so the rename cannot cross
/// file systems) and renames it into place; on any error the temporary file is removed. A path
/// that cannot be created or replaced is bad input (exit 2); a write that fails midway is a
/// failure (exit 1).
fn write_atomically(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    let cannot = |e: io::Error| format!("cannot write {}: {e}", path.display());
    let name = path
        .file_name()
        .ok_or_else(|| Failure::bad_input(format!("--html {}: not a file name", path.display())))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temp: PathBuf = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| Failure::bad_input(cannot(e)))?;
    let mut out = BufWriter::new(file);
    let written = render(&mut out)
        .and_then(|()| out.flush())
        .and_then(|()| out.get_ref().sync_all());
    drop(out);
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(Failure::failed(cannot(e)));
    }
    if let Err(e) = fs::rename(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(Failure::bad_input(cannot(e)));
    }
    Ok(())
}
