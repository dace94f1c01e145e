//! Compiles `compat-data/*.toml` into Rust statics (`$OUT_DIR/<table>.rs`, each a `static BUILT_IN`, included by
//! `src/compat/`), so that the drop-in parses no TOML for its tables on every call.
//!
//! The schema is written once, in src/compat/schema.rs: this script declares those types with its own `schema!`
//! (the crate's declares them for serde alone; this one also makes each type spell itself as a Rust expression),
//! parses every file into them with serde, as the crate's override loader does, and writes what it parsed. A key
//! the schema does not know, a missing one or a value of the wrong type stops the build with the file, line and
//! column. The invariants (order, ranges) are the crate's to check: its tests parse each file with the override
//! loader, checks included, and compare the result with these statics field by field.
// cargo reads a build script's directives from its stdout.
#![allow(clippy::disallowed_macros)]

use std::borrow::Cow;
use std::path::Path;

#[allow(dead_code)]
#[path = "src/compat/version.rs"]
mod version;

#[macro_use]
#[path = "src/compat/tables.rs"]
mod tables;

#[allow(dead_code)]
#[path = "src/compat/capability.rs"]
mod capability;

use capability::{Capability, Suffix};
use version::Version;

/// Text in a row, as in the crate (`compat::Text`).
type Text = Cow<'static, str>;

/// A value spelled as a Rust expression of the crate, for a `static`.
trait Emit {
    fn emit(&self) -> String;
}

/// Declares the types of schema.rs, each with serde's `Deserialize` (as the crate does) and `Emit`.
macro_rules! schema {
    ($($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty),* $(,)? })*) => {
        $(
            $(#[$meta])*
            #[derive(Clone, serde::Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "kebab-case")]
            pub struct $name {
                $($(#[$fmeta])* pub $field: $ty),*
            }

            impl crate::Emit for $name {
                fn emit(&self) -> String {
                    let fields: Vec<String> =
                        vec![$(format!("{}: {}", stringify!($field), crate::Emit::emit(&self.$field))),*];
                    format!("{} {{ {} }}", stringify!($name), fields.join(", "))
                }
            }
        )*
    };
}

#[allow(dead_code)]
#[path = "src/compat/schema.rs"]
mod schema;

impl Emit for u32 {
    fn emit(&self) -> String {
        self.to_string()
    }
}

impl Emit for bool {
    fn emit(&self) -> String {
        self.to_string()
    }
}

impl Emit for Text {
    fn emit(&self) -> String {
        format!("Cow::Borrowed({:?})", &**self)
    }
}

/// The parts as written (`12.4` stays `major_minor`, `12.2.128` is `new`), so that a version prints as the file
/// spells it.
impl Emit for Version {
    fn emit(&self) -> String {
        let parts: Vec<String> = self.to_string().split('.').map(String::from).collect();
        match &parts[..] {
            [major, minor] => format!("Version::major_minor({major}, {minor})"),
            [major, minor, patch] => format!("Version::new({major}, {minor}, {patch})"),
            _ => panic!("compat-data: version {self} is not major.minor or major.minor.patch"),
        }
    }
}

impl Emit for Capability {
    fn emit(&self) -> String {
        let suffix = match self.suffix {
            None => "None",
            Some(Suffix::A) => "Some(Suffix::A)",
            Some(Suffix::F) => "Some(Suffix::F)",
        };
        format!("Capability::new({}, {}, {suffix})", self.major, self.minor)
    }
}

/// The enums of schema.rs: each variant spelled by its name.
macro_rules! emit_enum {
    ($($ty:ident),*) => {
        $(impl Emit for schema::$ty {
            fn emit(&self) -> String {
                format!("{}::{self:?}", stringify!($ty))
            }
        })*
    };
}

emit_enum!(Kind, Same, Form, Cause, Call, CompilerFamily, Output, LauncherCall);

impl<T: Emit> Emit for Option<T> {
    fn emit(&self) -> String {
        match self {
            Some(value) => format!("Some({})", value.emit()),
            None => "None".to_string(),
        }
    }
}

impl<T: Emit + Clone> Emit for Cow<'static, [T]> {
    fn emit(&self) -> String {
        let items: Vec<String> = self.iter().map(Emit::emit).collect();
        format!("Cow::Borrowed(&[{}])", items.join(", "))
    }
}

/// Parse `compat-data/<file>` as `T` and write it as `static BUILT_IN: <type> = ...;`.
fn translate<T: serde::de::DeserializeOwned + Emit>(manifest: &Path, out: &Path, file: &str, type_name: &str) {
    let path = manifest.join("compat-data").join(file);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let table: T = toml::from_str(&text).unwrap_or_else(|e| panic!("compat-data/{file}: {e}"));
    let code =
        format!("/// compat-data/{file}, as build.rs parsed it.\nstatic BUILT_IN: {type_name} = {};\n", table.emit());
    let target = out.join(file.replace('-', "_").replace(".toml", ".rs"));
    std::fs::write(&target, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", target.display()));
}

// A build script is handed its inputs by cargo in the environment; there is no Context here.
#[allow(clippy::disallowed_methods)]
fn main() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let (out, manifest) = (Path::new(&out), Path::new(&manifest));
    println!("cargo:rerun-if-changed=build.rs");
    for source in ["src/compat/schema.rs", "src/compat/tables.rs", "src/compat/version.rs", "src/compat/capability.rs"]
    {
        println!("cargo:rerun-if-changed={source}");
    }
    macro_rules! translate_each {
        ($($field:ident: $table:ident, $schema:ident, $file:literal;)*) => {
            $(translate::<schema::$schema>(manifest, out, $file, stringify!($schema));)*
        };
    }
    compat_tables!(translate_each);
    hot_path(manifest);
}

/// Hands the linker link/hot-path.ld (scripts/hot-path.sh writes it), which places the code a drop-in call runs at
/// the front of the text: measured, a call then faults in a third fewer pages of code (docs/benchmarks.md, "The
/// drop-in's code in one place"). GNU ld and LLD both keep their own layout for the rest (the script's INSERT). Not
/// for mold or gold, which take no such script, nor outside Linux. Names the script does not find place nothing: a
/// stale list costs speed, never a build.
#[allow(clippy::disallowed_methods)]
fn hot_path(manifest: &Path) {
    println!("cargo:rerun-if-changed=link/hot-path.ld");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_default();
    let script = manifest.join("link/hot-path.ld");
    let other_linker = ["mold", "gold"].iter().any(|l| flags.contains(l) || linker.contains(l));
    if target_os == "linux" && !other_linker && script.is_file() {
        println!("cargo:rustc-link-arg-bins=-T");
        println!("cargo:rustc-link-arg-bins={}", script.display());
    }
}
