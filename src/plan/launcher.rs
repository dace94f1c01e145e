//! The compiler cache nvcc runs through (`launcher`, `$NVCC_WRAPPER_LAUNCHER`): `<launcher> <real nvcc> <final
//! arguments>`. A cache in front of the wrapper hashes the arguments the build system gave and the wrapper's binary,
//! never the wrapper's configuration, so a change of `capabilities` would get objects for the old GPUs back; behind
//! the wrapper, its key covers every argument the wrapper added.
//!
//! A launcher some release of which is known to break with some NVCC releases (compat-data/launchers.toml) is left
//! out for those, with a note: the wrapper must never be the reason a build fails, and the build then runs as it
//! would without a cache.

use std::path::Path;

use super::{Addition, Plan};
use crate::args::{Channel, HostCompilerGiven, Invocation};
use crate::compat::LauncherTable;
use crate::config::Source;
use crate::context::vars;
use crate::error::{Error, ErrorKind, Result};
use crate::probe::system::Probes;
use crate::version::Version;

pub struct Step<'a> {
    pub invocation: &'a Invocation,
    /// The `launcher` setting, as the config (or its variable) gives it.
    pub setting: Option<&'a Path>,
    pub source: &'a Source,
    pub probes: &'a dyn Probes,
    pub release: &'a std::result::Result<Version, String>,
    /// The launchers known to fail with some NVCC releases.
    pub table: &'a LauncherTable,
}

impl Step<'_> {
    /// Find the launcher and put it in the plan, or say why nvcc runs without it. A launcher that cannot be found
    /// is an error: the user asked for a cache and would otherwise never learn that builds are not cached.
    pub fn decide(&self, plan: &mut Plan) -> Result<()> {
        let Some(setting) = self.setting else { return Ok(()) };
        let (kind, origin) = self.source.origin(vars::LAUNCHER);
        let Some(path) = self.probes.resolve(setting) else {
            let how = if setting.components().count() > 1 { "is not an executable file" } else { "is not on PATH" };
            return Err(Error::new(
                ErrorKind::Launcher,
                format!("the launcher {} (`launcher` in {origin}) {how}", setting.display()),
            )
            .with_help(format!(
                "install it or give its full path, or remove `launcher` from {origin} to run nvcc without a cache{}",
                if kind == ErrorKind::Environment { "" } else { " (or set NVCC_WRAPPER_LAUNCHER to another one)" }
            )));
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if self.table.names(&name) {
            if let Some(skip) = self.skip_reason(&path, &name) {
                plan.notes.push(skip);
                return Ok(());
            }
        }
        plan.notes.push(format!(
            "nvcc runs through the launcher {} (`launcher` in {origin}): its cache key covers the final command",
            path.display()
        ));
        plan.launcher = Some(path);
        self.fold_env_channels(plan);
        self.pass_nvcc_ccbin(plan);
        Ok(())
    }

    /// `NVCC_CCBIN` alone names the host compiler, and nvcc reads it itself (12.5 on; before, the host-compiler step
    /// already passes it as `-ccbin=`): pass the same value as `-ccbin=` too, which nvcc prefers and the cache
    /// hashes (ccache does not read the variable).
    fn pass_nvcc_ccbin(&self, plan: &mut Plan) {
        let Some(HostCompilerGiven::Env(value)) = self.invocation.host_compiler() else { return };
        if !self.release.as_ref().is_ok_and(|r| *r >= super::host_compiler::FIRST_HONOURING_NVCC_CCBIN) {
            return;
        }
        let mut arg = std::ffi::OsString::from("-ccbin=");
        arg.push(value);
        plan.before.push(Addition {
            args: vec![arg],
            reason: "$NVCC_CCBIN, also given as `-ccbin=` so that the launcher's cache key covers it".into(),
        });
    }

    /// Move what nvcc would read from `NVCC_PREPEND_FLAGS` and `NVCC_APPEND_FLAGS` onto the command line, in the
    /// places nvcc puts it (first and last), and empty the variables for nvcc: ccache does not read them, so a GPU
    /// target given there would otherwise be left out of its key. nvcc sees the same tokens in the same order.
    fn fold_env_channels(&self, plan: &mut Plan) {
        for (channel, name) in
            [(Channel::Prepend, vars::NVCC_PREPEND_FLAGS), (Channel::Append, vars::NVCC_APPEND_FLAGS)]
        {
            let tokens = super::edit::remaining(self.invocation, &plan.removed, channel);
            if tokens.is_empty() {
                continue;
            }
            let addition = Addition {
                args: tokens,
                reason: format!("${name}, moved onto the command line so that the launcher's cache key covers it"),
            };
            match channel {
                Channel::Prepend => plan.before.insert(0, addition),
                _ => plan.after.push(addition),
            }
            plan.env.retain(|(n, _)| *n != name);
            plan.env.push((name, "".into()));
        }
    }

    /// Why this launcher is left out for this release, when a row of the table says so.
    fn skip_reason(&self, path: &Path, name: &str) -> Option<String> {
        let release = self.release.as_ref().ok()?;
        let version = self.probes.launcher_version(path).ok()?;
        let row = self.table.known_bad(name, version, *release)?;
        let releases = match row.last_cuda {
            Some(last) => format!("{} to {last}", row.first_cuda),
            None => format!("{} and later", row.first_cuda),
        };
        Some(format!(
            "the launcher {} is left out: {name} {version} fails with nvcc {releases}, without the wrapper too: {} \
             ({}); nvcc runs without a cache",
            path.display(),
            row.why,
            row.source
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::KnownBad;

    /// The lookup the planner makes, in the built-in table (compat-data/launchers.toml).
    fn known_bad(launcher: &str, version: Version, release: Version) -> Option<&'static KnownBad> {
        LauncherTable::built_in().known_bad(launcher, version, release)
    }

    #[test]
    fn the_known_bad_table_keys_on_launcher_release_and_nvcc_release() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(known_bad("sccache", v("0.16.0"), v("13.5.44")).is_some());
        assert!(known_bad("sccache", v("0.16.2"), v("13.3")).is_some());
        assert!(known_bad("sccache", v("0.16.0"), v("14.0")).is_some());
        assert!(known_bad("sccache", v("0.16.0"), v("13.0.88")).is_none());
        assert!(known_bad("sccache", v("0.16.0"), v("12.4.131")).is_none());
        assert!(known_bad("sccache", v("0.15.0"), v("13.5")).is_none());
        assert!(known_bad("sccache", v("0.17.0"), v("13.5")).is_none());
        assert!(known_bad("ccache", v("0.16.0"), v("13.5")).is_none());
        for row in LauncherTable::built_in().all() {
            assert!(row.first_version <= row.last_version && !row.source.is_empty() && !row.why.is_empty(), "{row:?}");
        }
    }
}
