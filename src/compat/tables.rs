//! The tables of compat-data/, listed once: build.rs compiles each file into the binary by this list, and
//! src/compat/mod.rs makes `Compat` (a field per table), its built-in and override loading, `FILES` and the test that
//! the compiled-in tables equal the files from it. A new table is one line here (and its module and schema type).
//!
//! Each line: the field of `Compat`, the table's type, the schema type its file holds (src/compat/schema.rs), and the
//! file's name in compat-data/.
macro_rules! compat_tables {
    ($then:ident) => {
        $then! {
            host_compilers: HostCompilerTable, HostCompilersFile, "host-compilers.toml";
            capabilities: CapabilityTable, CapabilitiesFile, "capabilities.toml";
            platforms: PlatformTable, PlatformsFile, "platforms.toml";
            fatbin: FatbinTable, FatbinFile, "fatbin.toml";
            launchers: LauncherTable, LaunchersFile, "launchers.toml";
            combinations: CombinationTable, CombinationsFile, "combinations.toml";
            reproducible: ReproducibleTable, ReproducibleFile, "reproducible.toml";
            threads: ThreadsTable, ThreadsFile, "threads.toml";
        }
    };
}
