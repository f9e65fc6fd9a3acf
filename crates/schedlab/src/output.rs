//! What commands print on stdout, and how.
use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::cli::OutputFormat;
use crate::failure::Failure;

/// The run report format `--format` names.
pub fn report_format(format: OutputFormat) -> schedlab_report::Format {
    match format {
        OutputFormat::Text => schedlab_report::Format::Text,
        OutputFormat::Json => schedlab_report::Format::Json,
    }
}

/// Writes command output to stdout; a closed pipe (`| head`) is not an error.
pub fn emit(render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match render(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::failed(format!("cannot write output: {e}"))),
    }
}

/// One line of `args` on stdout through [`emit`]: a closed pipe loses it quietly, where
/// `println!` would panic.
pub fn emit_line(args: std::fmt::Arguments<'_>) -> Result<(), Failure> {
    emit(|out| writeln!(out, "{args}"))
}

/// One line on stderr, for what a command says beside its output. A stderr that is gone (the
/// terminal of a dropped ssh session, a closed pipe) loses the line, where `eprintln!` would
/// panic in the middle of a run.
pub fn say(args: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr(), "{args}");
}

/// Whether a file named on the command line is standard output: `-`, or a name for the file
/// stdout already is (`/dev/stdout`, `/proc/self/fd/1`). What else the command would print then
/// goes elsewhere or nowhere, so that the file comes out whole.
pub fn is_stdout(path: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    if path.as_os_str() == "-" {
        return true;
    }
    let Ok(named) = fs::metadata(path) else {
        return false;
    };
    let Ok(stdout) = io::stdout().as_fd().try_clone_to_owned() else {
        return false;
    };
    fs::File::from(stdout)
        .metadata()
        .is_ok_and(|out| out.dev() == named.dev() && out.ino() == named.ino())
}

/// Writes a file the user named, whole or not at all where that can be had: stdout (see
/// [`is_stdout`]) is written as any output is; a terminal, a pipe, a FIFO or a device is written
/// into as it is; a regular
/// file is written through a temporary file beside it and renamed into place (see
/// [`replace_file`]), after following symbolic links, so a link stays a link (a rename onto
/// `/dev/stdout` itself would replace the machine's link with a regular file, given the right).
/// A link to nothing yet makes the file it names.
pub fn write_atomically(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    let cannot = |e: io::Error| format!("cannot write {}: {e}", path.display());
    if is_stdout(path) {
        return emit(render);
    }
    match fs::metadata(path) {
        Ok(found) if found.is_dir() => Err(Failure::bad_input(format!(
            "cannot write {}: it is a directory",
            path.display()
        ))),
        Ok(found) if !found.is_file() => write_through(path, render),
        Ok(_) => {
            let real = fs::canonicalize(path).map_err(|e| Failure::bad_input(cannot(e)))?;
            replace_file(path, &real, render)
        }
        Err(_) if fs::symlink_metadata(path).is_ok() => write_through(path, render),
        Err(_) => replace_file(path, path, render),
    }
}

/// Writes into what `path` is or leads to, creating a file where a link leads to nothing.
fn write_through(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    let cannot = |e: io::Error| format!("cannot write {}: {e}", path.display());
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| Failure::bad_input(cannot(e)))?;
    let mut out = BufWriter::new(file);
    render(&mut out)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::failed(cannot(e)))
}

/// Writes `path` (named `shown` in messages) through a temporary file in the same directory (so
/// the rename cannot cross file systems) and renames it into place; on any error the temporary
/// file is removed. A path that cannot be created or replaced is bad input (exit 2); a write
/// that fails midway is a failure (exit 1).
fn replace_file(
    shown: &Path,
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    let cannot = |e: io::Error| format!("cannot write {}: {e}", shown.display());
    let name = path
        .file_name()
        .ok_or_else(|| Failure::bad_input(format!("{}: not a file name", path.display())))?;
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
