//! Files named on the command line to read from, as ministat reads them: `-` is standard input,
//! and so is no file at all.
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use crate::failure::Failure;

/// The files to read: `files`, or standard input when none is named. Standard input can be read
/// once, so `-` may be named once. `what` says, when no file is named and standard input is a
/// terminal, what was expected on it (`None`: read the terminal, as ministat does).
pub fn files_or_stdin(files: &[PathBuf], what: Option<&str>) -> Result<Vec<PathBuf>, Failure> {
    if files.is_empty() {
        if let Some(what) = what.filter(|_| std::io::stdin().is_terminal()) {
            return Err(Failure::bad_input(format!(
                "no FILE named and standard input is a terminal: name the files, or pipe {what} in"
            )));
        }
        return Ok(vec![PathBuf::from("-")]);
    }
    if files.iter().filter(|p| is_stdin(p)).count() > 1 {
        return Err(Failure::bad_input(
            "standard input (`-`) can be read once; give it as one file only",
        ));
    }
    Ok(files.to_vec())
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// How a file is named in messages and records: `<stdin>` for standard input.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// The text of `path` (standard input for `-`), which must be UTF-8.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    let name = display_name(path);
    let bytes = if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(path)
    }
    .map_err(|e| Failure::bad_input(format!("cannot read {name}: {e}")))?;
    String::from_utf8(bytes).map_err(|_| Failure::bad_input(format!("{name} is not text (UTF-8)")))
}
