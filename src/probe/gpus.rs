//! The GPUs of this machine, for `native` in a capability list: their compute capabilities, as the NVIDIA driver's
//! `nvidia-smi` reports them (`--query-gpu=compute_cap`, driver 510 and later). Asked only when a list names
//! `native`, on every such call (nvcc's own `-arch=native` asks the driver on every call too).

use std::path::Path;

use super::{run, ProbeError};
use crate::compat::Capability;

const ARGS: [&str; 2] = ["--query-gpu=compute_cap", "--format=csv,noheader"];

/// One capability per line (`9.0`), one line per GPU; duplicates kept (the caller merges them).
pub fn parse(out: &str) -> Result<Vec<Capability>, ProbeError> {
    let caps: Result<Vec<Capability>, _> =
        out.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::parse::<Capability>).collect();
    match caps {
        Ok(caps) if !caps.is_empty() => Ok(caps),
        _ => Err(ProbeError::unexpected(&ARGS, "one compute capability per GPU, like `9.0`", out)),
    }
}

/// Run `nvidia_smi` and read the capabilities of the GPUs it sees.
pub fn probe(nvidia_smi: &Path) -> Result<Vec<Capability>, ProbeError> {
    parse(&run(nvidia_smi, &ARGS)?).map_err(|e| e.with_program(nvidia_smi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_one_capability_per_gpu() {
        // nvidia-smi 580 on the project's GPU machine (one H100), and a made-up mixed machine.
        assert_eq!(parse("9.0\n").unwrap(), ["9.0".parse::<Capability>().unwrap()]);
        let mixed: Vec<String> = parse("8.6\n8.9\n8.6\n").unwrap().iter().map(|c| c.to_string()).collect();
        assert_eq!(mixed, ["8.6", "8.9", "8.6"]);
        assert!(parse("").is_err());
        assert!(parse("No devices were found\n").is_err());
        assert!(parse("[N/A]\n").is_err());
    }
}
