//! `compat-data/threads.toml`: what running a call's GPU targets at once (`--threads N`) costs each NVCC release in
//! memory, measured. Owns the row type, the lookup by release and the structural checks. Whether a call gets threads
//! (job slots free, memory free, the user's own choice) is the planner's job (`plan::threads`).

use super::schema::{ThreadsFile, ThreadsRow};
use super::Version;
use super::{invalid, within, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/threads.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/threads.rs"));

#[derive(Debug, Clone)]
pub struct ThreadsTable {
    file: Cow<'static, ThreadsFile>,
}

impl Table for ThreadsTable {
    type File = ThreadsFile;

    fn check(file: ThreadsFile, origin: &str) -> Result<Self, CompatError> {
        let fail = |message: String| Err(invalid(origin, message));
        for row in file.threads.iter() {
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail(format!("[[threads]] from {}: last-cuda is before first-cuda", row.first_cuda));
            }
            if row.peak_per_thread_mib == 0 {
                return fail(format!("[[threads]] from {}: peak-per-thread-mib must be more than 0", row.first_cuda));
            }
        }
        for pair in file.threads.windows(2) {
            if !pair[0].last_cuda.is_some_and(|last| last.release() < pair[1].first_cuda.release()) {
                return fail("[[threads]] ranges must be in order and must not overlap".to_string());
            }
        }
        Ok(ThreadsTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: ThreadsTable = ThreadsTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl ThreadsTable {
    #[cfg(test)]
    pub fn all(&self) -> &[ThreadsRow] {
        &self.file.threads
    }

    /// The row for NVCC release `cuda`, if the table has one.
    pub fn row(&self, cuda: Version) -> Option<&ThreadsRow> {
        self.file.threads.iter().find(|row| within(cuda, row.first_cuda, row.last_cuda))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measured_releases_have_a_row_with_a_source() {
        let table = ThreadsTable::built_in();
        for release in ["11.8.89", "12.4.131", "13.0.88", "13.5.37"] {
            let row = table.row(release.parse().unwrap()).unwrap_or_else(|| panic!("{release}"));
            assert!(row.source.starts_with("measured"), "{release}: {}", row.source);
        }
        assert!(table.row("11.7".parse().unwrap()).is_none(), "11.7 was not measured");
    }

    #[test]
    fn a_row_with_no_memory_or_out_of_order_is_refused() {
        let zero = "[[threads]]\nfirst-cuda = \"11.8\"\npeak-per-thread-mib = 0\nsource = \"x\"\n";
        assert!(ThreadsTable::parse(zero, "t").unwrap_err().to_string().contains("more than 0"));
        let overlap = "[[threads]]\nfirst-cuda = \"12.0\"\npeak-per-thread-mib = 1\nsource = \"x\"\n[[threads]]\nfirst-cuda = \"11.8\"\npeak-per-thread-mib = 1\nsource = \"x\"\n";
        assert!(ThreadsTable::parse(overlap, "t").unwrap_err().to_string().contains("in order"));
    }
}
