//! What commands print on stdout, and how.
use std::io::Write;

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
