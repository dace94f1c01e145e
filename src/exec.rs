//! The one place that starts nvcc: Unix exec, so that its exit code, signals, stdin, stdout and stderr are nvcc's
//! own. argv[0] is the real nvcc's path, because nvcc finds `nvcc.profile` next to argv[0] (with a bare name it runs
//! without its profile or crashes).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use crate::context::Env;
use crate::error::{Error, ErrorKind};

/// Replace this process with nvcc. Returns only if that fails.
pub fn exec(nvcc: &Path, args: &[OsString], env: &Env) -> Error {
    let err = Command::new(nvcc).arg0(nvcc).args(args).env_clear().envs(env.iter()).exec();
    Error::new(ErrorKind::CannotExec, format!("cannot run the real nvcc {}: {err}", nvcc.display()))
        .with_help("check that it is an executable for this machine, or set `nvcc` in the config file")
}
