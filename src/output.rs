//! Writing what the wrapper itself prints to stdout (`explain`, `doctor`, `gencode`, `compat scan`, a dry run). A
//! reader that went away (`nvcc-wrapper gencode 8.6 | head -1`) ends the command quietly and successfully, as
//! ripgrep and other command-line tools do; any other failure (a full disk) is reported as a write error, exit 74.
//! Nothing here panics, unlike `print!`.

use std::io::Write;

use crate::error::{Error, ErrorKind, Result};

/// Write all of `bytes` to stdout and flush.
pub fn stdout(bytes: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes.as_ref()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::new(ErrorKind::ClosedOutput, "")),
        Err(e) => Err(Error::new(ErrorKind::Output, format!("cannot write to stdout: {e}"))
            .with_help("make room on the device stdout goes to, or send the output elsewhere")),
    }
}
