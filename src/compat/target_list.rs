//! A list of GPU targets in any of the dialects people paste, read the way the tool that wrote it reads it, by one
//! parser for the config file, the environment, `gencode` and whatever else takes a list:
//!
//! | written | from | machine code (SASS) | PTX |
//! |---|---|---|---|
//! | `8.6`, `sm_86` | Nixpkgs' `cudaCapabilities`, `TORCH_CUDA_ARCH_LIST`; nvcc's `code=sm_86` | 8.6 | |
//! | `8.6+PTX` | `TORCH_CUDA_ARCH_LIST` | 8.6 | 8.6 |
//! | `86` | CMake's `CUDA_ARCHITECTURES` | 8.6 | 8.6 |
//! | `86-real` / `86-virtual` | CMake | 8.6 / | / 8.6 |
//! | `compute_86` | nvcc (`-arch=compute_86` embeds PTX alone) | | 8.6 |
//! | `Ampere`, `Hopper`, `Ampere+Tegra` | `TORCH_CUDA_ARCH_LIST` (`PYTORCH_NAMES`) | 8.0, 8.6 / 9.0 / 8.7 | 8.6 / 9.0 / |
//! | `-gencode=arch=compute_86,code=[sm_86,compute_86]` | nvcc's flags, conda-forge's `NVCC_GENCODE` | 8.6 | 8.6 |
//! | `all`, `all-major` | nvcc `-arch=`, CMake 3.23 | as nvcc defines them for the release in use | |
//! | `native` | nvcc `-arch=`, CMake 3.24 | this machine's GPUs | |
//!
//! Items are separated by `;`, `,` or blanks (a `-gencode` value keeps its own commas). What `all` and `native`
//! stand for is decided later, with the release and the machine: `Targets::resolve`.

use std::collections::BTreeSet;
use std::fmt;

use super::Capability;

/// One item of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// A capability, with what to embed for it.
    One { capability: Capability, sass: bool, ptx: bool },
    /// Every capability the release compiles for (nvcc's `-arch=all`).
    All,
    /// Every major one, and the oldest (nvcc's `-arch=all-major`).
    AllMajor,
    /// The GPUs of this machine (nvcc's `-arch=native`).
    Native,
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            Item::One { capability, sass: true, ptx: false } => write!(f, "{capability}"),
            Item::One { capability, sass: true, ptx: true } => write!(f, "{capability}+PTX"),
            Item::One { capability, .. } => write!(f, "{capability} PTX"),
            Item::All => f.write_str("all"),
            Item::AllMajor => f.write_str("all-major"),
            Item::Native => f.write_str("native"),
        }
    }
}

/// A list as written: its items in order, duplicates kept (resolving merges them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetList(pub Vec<Item>);

/// An item that is none of the dialects, with the word as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseTargetError(pub String);

impl fmt::Display for ParseTargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = &self.0;
        if word.starts_with("Blackwell") {
            // PyTorch's releases disagree: `10.0;12.0+PTX` and `10.1` before CUDA 13 renamed sm_101 to sm_110,
            // `10.0;10.3;12.0;12.1+PTX` and `11.0` after. Guessing which one the list was written for is not ours.
            return write!(
                f,
                "`{word}` stands for other capabilities in different PyTorch releases: name them, like 10.0;12.0+PTX"
            );
        }
        if let Some((name, _)) = PYTORCH_NAMES.iter().find(|(name, _)| name.eq_ignore_ascii_case(word)) {
            return write!(f, "`{word}` is not a GPU target: PyTorch's name is `{name}`, written as it writes it");
        }
        if let Some(meant) = decimal_comma(word) {
            return write!(f, "`{word}` is not a GPU target: did you mean {meant}? (a comma separates two targets)");
        }
        let lower = word.to_ascii_lowercase();
        if lower != *word && word.chars().any(|c| c.is_ascii_digit()) && lower.parse::<Item>().is_ok() {
            return write!(f, "`{word}` is not a GPU target: nvcc's suffixes are lower case, `{lower}`");
        }
        write!(
            f,
            "`{word}` is not a GPU target like 8.6, 9.0a, 8.6+PTX, 86-real, sm_86, compute_90, Ampere, all, all-major \
             or native"
        )
    }
}

/// PyTorch's names for architectures in `TORCH_CUDA_ARCH_LIST`, and the list each stands for, as PyTorch's
/// extension builder expands them (`named_arches` in `_get_cuda_arch_flags`, torch/utils/cpp_extension.py,
/// pytorch/pytorch at 0011ec5c): spelled as there, whole words only (PyTorch also refuses `Ampere+PTX`).
/// `Blackwell` is left out: its meaning changed between releases (see `ParseTargetError`).
pub const PYTORCH_NAMES: &[(&str, &str)] = &[
    ("Kepler+Tesla", "3.7"),
    ("Kepler", "3.5+PTX"),
    ("Maxwell+Tegra", "5.3"),
    ("Maxwell", "5.0;5.2+PTX"),
    ("Pascal", "6.0;6.1+PTX"),
    ("Volta+Tegra", "7.2"),
    ("Volta", "7.0+PTX"),
    ("Turing", "7.5+PTX"),
    ("Ampere+Tegra", "8.7"),
    ("Ampere", "8.0;8.6+PTX"),
    ("Ada", "8.9+PTX"),
    ("Hopper", "9.0+PTX"),
];

impl std::error::Error for ParseTargetError {}

/// `8,6` (a capability written with a decimal comma, issue 60) as the one target it stands for, `8.6`; `None` for
/// anything else, `86,90` (two targets) included.
fn decimal_comma(word: &str) -> Option<String> {
    let (major, minor) = word.split_once(',')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let minor_digits = minor.trim_end_matches(|c: char| c.is_ascii_lowercase());
    if !digits(major) || !digits(minor_digits) || minor_digits.len() != 1 {
        return None;
    }
    let meant = format!("{major}.{minor}");
    meant.parse::<Item>().ok().map(|_| meant)
}

impl TargetList {
    /// Parse a list (see the module header). Empty items are skipped; the first item that is none of the dialects
    /// is the error.
    pub fn parse(text: &str) -> Result<TargetList, ParseTargetError> {
        let mut items = Vec::new();
        let mut words = text.split(|c: char| c == ';' || c.is_whitespace()).filter(|w| !w.is_empty());
        while let Some(word) = words.next() {
            // nvcc's flags: `-gencode=VALUE`, `-gencode VALUE`, `--generate-code ...`; the value keeps its commas.
            if let Some(flag) = ["--generate-code", "-gencode"].into_iter().find(|f| word.starts_with(f)) {
                let value = match &word[flag.len()..] {
                    "" => words.next().ok_or_else(|| ParseTargetError(word.to_string()))?,
                    rest => rest.strip_prefix('=').ok_or_else(|| ParseTargetError(word.to_string()))?,
                };
                items.extend(gencode(value).ok_or_else(|| ParseTargetError(format!("{flag} {value}")))?);
                continue;
            }
            if word.starts_with("arch=") {
                items.extend(gencode(word).ok_or_else(|| ParseTargetError(word.to_string()))?);
                continue;
            }
            for item in word.split(',').filter(|i| !i.is_empty()) {
                match PYTORCH_NAMES.iter().find(|(name, _)| *name == item) {
                    Some((_, list)) => items.extend(TargetList::parse(list)?.0),
                    // `8,6`, a decimal comma: the word is the error, with what it meant.
                    None => items.push(item.parse().map_err(|e| match decimal_comma(word) {
                        Some(_) => ParseTargetError(word.to_string()),
                        None => e,
                    })?),
                }
            }
        }
        Ok(TargetList(items))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The capabilities the list names itself (not those `all` or `native` stand for).
    pub fn named(&self) -> impl Iterator<Item = Capability> + '_ {
        self.0.iter().filter_map(|i| match i {
            Item::One { capability, .. } => Some(*capability),
            _ => None,
        })
    }

    /// Whether the list names a keyword that stands for capabilities.
    pub fn has(&self, keyword: Item) -> bool {
        self.0.contains(&keyword)
    }
}

/// A config value: one list (`"8.6;9.0+PTX"`) or an array of them (`["8.6", "9.0+PTX"]`).
impl<'de> serde::Deserialize<'de> for TargetList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = TargetList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of GPU targets, like [\"8.6\", \"9.0a\"] or \"8.6;9.0+PTX\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TargetList, E> {
                TargetList::parse(text).map_err(E::custom)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<TargetList, A::Error> {
                let mut all = TargetList::default();
                while let Some(text) = seq.next_element::<String>()? {
                    all.0.extend(TargetList::parse(&text).map_err(serde::de::Error::custom)?.0);
                }
                Ok(all)
            }
        }
        d.deserialize_any(V)
    }
}

impl fmt::Display for TargetList {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let words: Vec<String> = self.0.iter().map(Item::to_string).collect();
        f.write_str(&words.join(", "))
    }
}

impl std::str::FromStr for Item {
    type Err = ParseTargetError;

    fn from_str(word: &str) -> Result<Item, ParseTargetError> {
        let err = || ParseTargetError(word.to_string());
        let one = |capability, sass, ptx| Ok(Item::One { capability, sass, ptx });
        match word {
            "all" => return Ok(Item::All),
            "all-major" => return Ok(Item::AllMajor),
            "native" => return Ok(Item::Native),
            _ => {}
        }
        if let Some(number) = strip_suffix_ignore_case(word, "+PTX") {
            let capability: Capability = number.parse().map_err(|_| err())?;
            return one(capability, true, true);
        }
        for (suffix, sass, ptx) in [("-real", true, false), ("-virtual", false, true)] {
            if let Some(number) = word.strip_suffix(suffix) {
                return one(cmake_number(number).ok_or_else(err)?, sass, ptx);
            }
        }
        if let Some(number) = word.strip_prefix("compute_") {
            return one(format!("sm_{number}").parse().map_err(|_| err())?, false, true);
        }
        if word.starts_with("sm_") || word.contains('.') {
            return one(word.parse().map_err(|_| err())?, true, false);
        }
        // A bare number is CMake's: machine code and PTX.
        one(cmake_number(word).ok_or_else(err)?, true, true)
    }
}

/// CMake's compact number (`86`, `90a`, `100f`): no dot, no prefix.
fn cmake_number(word: &str) -> Option<Capability> {
    if word.contains('.') || word.contains('_') {
        return None;
    }
    word.parse().ok()
}

fn strip_suffix_ignore_case<'a>(word: &'a str, suffix: &str) -> Option<&'a str> {
    let cut = word.len().checked_sub(suffix.len())?;
    (word.is_char_boundary(cut) && word[cut..].eq_ignore_ascii_case(suffix)).then(|| &word[..cut])
}

/// `arch=compute_XY,code=sm_XY`, `code=[sm_XY,compute_XY]`, `code=compute_XY`: the items, when every code is the
/// architecture's own (the wrapper builds a capability's machine code from its own PTX only) and nothing else is
/// named.
fn gencode(value: &str) -> Option<Vec<Item>> {
    let (arch, code) = value.split_once(",code=")?;
    let arch: Capability =
        arch.strip_prefix("arch=")?.strip_prefix("compute_").map(|n| format!("sm_{n}"))?.parse().ok()?;
    let codes = code.strip_prefix('[').and_then(|c| c.strip_suffix(']')).unwrap_or(code);
    let (mut sass, mut ptx) = (false, false);
    for code in codes.split(',') {
        let (real, number) = match (code.strip_prefix("sm_"), code.strip_prefix("compute_")) {
            (Some(n), _) => (true, n),
            (_, Some(n)) => (false, n),
            _ => return None,
        };
        if format!("sm_{number}").parse::<Capability>().ok()? != arch {
            return None;
        }
        if real {
            sass = true;
        } else {
            ptx = true;
        }
    }
    Some(vec![Item::One { capability: arch, sass, ptx }])
}

/// What a list stands for, once `all`, `all-major` and `native` are known: machine code and PTX, each sorted and
/// without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    pub sass: BTreeSet<Capability>,
    pub ptx: BTreeSet<Capability>,
}

/// Why a keyword cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// `all` or `all-major` with the release unknown.
    NoRelease(Item),
    /// `all` or `all-major` where none of what it stands for runs on the target platform (`all-major` for a Jetson:
    /// every `X.0` is a GPU of another platform).
    NoneOnPlatform(Item),
    /// `native`, with why this machine's GPUs are not known.
    NoGpus(String),
}

impl Targets {
    /// The list's targets: `all`/`all-major` from `release_sets` (the release's own `(all, all-major, ptx)`, of
    /// the target platform's GPUs: a set may be empty, and then has no PTX), `native` from `gpus` (asked only when the
    /// list names it).
    pub fn resolve(
        list: &TargetList,
        release_sets: Option<(Vec<Capability>, Vec<Capability>, Option<Capability>)>,
        gpus: impl FnOnce() -> Result<Vec<Capability>, String>,
    ) -> Result<Targets, Unresolved> {
        let mut targets = Targets::default();
        let mut gpus = Some(gpus);
        for item in &list.0 {
            match *item {
                Item::One { capability, sass, ptx } => {
                    if sass {
                        targets.sass.insert(capability);
                    }
                    if ptx {
                        targets.ptx.insert(capability);
                    }
                }
                Item::All | Item::AllMajor => {
                    let Some((all, major, ptx)) = &release_sets else { return Err(Unresolved::NoRelease(*item)) };
                    let set = if *item == Item::All { all } else { major };
                    let Some(ptx) = ptx.filter(|_| !set.is_empty()) else {
                        return Err(Unresolved::NoneOnPlatform(*item));
                    };
                    targets.sass.extend(set);
                    targets.ptx.insert(ptx);
                }
                Item::Native => {
                    let Some(ask) = gpus.take() else { continue };
                    let found = ask().map_err(Unresolved::NoGpus)?;
                    targets.sass.extend(found);
                }
            }
        }
        Ok(targets)
    }

    /// The list `gencode --format torch` writes (`TORCH_CUDA_ARCH_LIST`): `8.6;9.0+PTX`. PTX of a capability without
    /// its machine code has no spelling there: the error names it.
    pub fn torch(&self) -> Result<String, Capability> {
        if let Some(alone) = self.ptx.iter().find(|p| !self.sass.contains(p)) {
            return Err(*alone);
        }
        let words: Vec<String> =
            self.sass.iter().map(|c| if self.ptx.contains(c) { format!("{c}+PTX") } else { c.to_string() }).collect();
        Ok(words.join(";"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_comma_is_named_with_the_target_it_meant() {
        for (text, said) in [
            ("8,6", "`8,6` is not a GPU target: did you mean 8.6? (a comma separates two targets)"),
            ("7.5;10,0a", "`10,0a` is not a GPU target: did you mean 10.0a? (a comma separates two targets)"),
        ] {
            assert_eq!(TargetList::parse(text).unwrap_err().to_string(), said);
        }
        // Two targets, or a word no comma explains, are as before.
        assert_eq!(TargetList::parse("86,90").unwrap().0.len(), 2);
        assert!(TargetList::parse("8,66").unwrap_err().to_string().starts_with("`8` is not a GPU target like"));
    }

    fn cap(s: &str) -> Capability {
        s.parse().unwrap()
    }

    fn targets(text: &str) -> Targets {
        let list = TargetList::parse(text).unwrap_or_else(|e| panic!("{e}"));
        Targets::resolve(&list, None, || Err("no GPU".into())).unwrap()
    }

    fn shown(set: &BTreeSet<Capability>) -> Vec<String> {
        set.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn each_dialect_means_what_its_tool_means() {
        // (written, machine code, PTX)
        let rows: &[(&str, &[&str], &[&str])] = &[
            ("8.6", &["8.6"], &[]),
            ("sm_86", &["8.6"], &[]),
            ("8.6+PTX", &["8.6"], &["8.6"]),
            ("8.6+ptx", &["8.6"], &["8.6"]),
            ("86", &["8.6"], &["8.6"]),
            ("90a", &["9.0a"], &["9.0a"]),
            ("86-real", &["8.6"], &[]),
            ("86-virtual", &[], &["8.6"]),
            ("100f-real", &["10.0f"], &[]),
            ("compute_80", &[], &["8.0"]),
            ("-gencode=arch=compute_86,code=sm_86", &["8.6"], &[]),
            ("-gencode arch=compute_86,code=[sm_86,compute_86]", &["8.6"], &["8.6"]),
            ("--generate-code=arch=compute_90a,code=compute_90a", &[], &["9.0a"]),
            ("arch=compute_75,code=sm_75", &["7.5"], &[]),
            // PyTorch's space-separated form, CMake's semicolons, commas: mixed freely.
            ("7.5 8.6+PTX;89-real,9.0", &["7.5", "8.6", "8.9", "9.0"], &["8.6"]),
            // PyTorch's names, as its extension builder expands them.
            ("Ampere", &["8.0", "8.6"], &["8.6"]),
            ("Ampere+Tegra", &["8.7"], &[]),
            ("Turing Hopper", &["7.5", "9.0"], &["7.5", "9.0"]),
            ("Volta+Tegra;Ada", &["7.2", "8.9"], &["8.9"]),
        ];
        for (text, sass, ptx) in rows {
            let t = targets(text);
            assert_eq!(
                (shown(&t.sass), shown(&t.ptx)),
                (sass.iter().map(|s| s.to_string()).collect(), ptx.iter().map(|s| s.to_string()).collect()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn words_of_no_dialect_are_refused_by_name() {
        for bad in [
            "8",
            "8.6+SASS",
            "86-both",
            "compute_8.6",
            "sm_8.6",
            "ampere",
            "Ampere+PTX",
            "Blackwell",
            "9.0A",
            "-gencode",
            "-gencode=arch=compute_80,code=sm_86",
            "-gencode=arch=compute_80,code=lto_80",
            "86.0-real",
            "x86",
        ] {
            assert!(TargetList::parse(bad).is_err(), "{bad:?} should not parse");
        }
        assert_eq!(TargetList::parse("8.6;9.x").unwrap_err(), ParseTargetError("9.x".into()));
        // What was meant, where it is plain.
        let said = |bad: &str| TargetList::parse(bad).unwrap_err().to_string();
        assert!(said("ampere").contains("PyTorch's name is `Ampere`"), "{}", said("ampere"));
        assert!(said("9.0A").contains("lower case, `9.0a`"), "{}", said("9.0A"));
        assert!(said("Blackwell+Tegra").contains("name them"), "{}", said("Blackwell+Tegra"));
    }

    #[test]
    fn every_pytorch_name_stands_for_a_list_of_numbers() {
        for (name, list) in PYTORCH_NAMES {
            let items = TargetList::parse(list).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!items.is_empty() && items.named().count() == items.0.len(), "{name}: {list}");
        }
    }

    #[test]
    fn keywords_resolve_from_the_release_and_the_machine() {
        let list = TargetList::parse("all-major 8.6 native").unwrap();
        let sets = Some((vec![cap("7.5"), cap("8.0"), cap("8.6")], vec![cap("7.5"), cap("8.0")], Some(cap("8.0"))));
        let t = Targets::resolve(&list, sets, || Ok(vec![cap("9.0")])).unwrap();
        assert_eq!(shown(&t.sass), ["7.5", "8.0", "8.6", "9.0"]);
        assert_eq!(shown(&t.ptx), ["8.0"]);
        assert_eq!(Targets::resolve(&list, None, || Ok(vec![])), Err(Unresolved::NoRelease(Item::AllMajor)));
        // A Jetson's: `all` is its parts, `all-major` nothing.
        let jetson = || Some((vec![cap("7.2"), cap("8.7")], vec![], Some(cap("8.7"))));
        let all = Targets::resolve(&TargetList::parse("all").unwrap(), jetson(), || Ok(vec![])).unwrap();
        assert_eq!(
            (shown(&all.sass), shown(&all.ptx)),
            (vec!["7.2".to_string(), "8.7".into()], vec!["8.7".to_string()])
        );
        let major = TargetList::parse("all-major").unwrap();
        assert_eq!(Targets::resolve(&major, jetson(), || Ok(vec![])), Err(Unresolved::NoneOnPlatform(Item::AllMajor)));
        let native = TargetList::parse("native").unwrap();
        assert_eq!(Targets::resolve(&native, None, || Err("no GPU".into())), Err(Unresolved::NoGpus("no GPU".into())));
    }

    #[test]
    fn torch_lists_round_trip_and_ptx_alone_has_no_torch_spelling() {
        for text in ["8.6", "7.5;8.6+PTX", "8.0+PTX;9.0a;10.0f+PTX"] {
            let t = targets(text);
            let out = t.torch().unwrap();
            assert_eq!(targets(&out), t, "{text} -> {out}");
        }
        assert_eq!(targets("86-virtual").torch(), Err(cap("8.6")));
    }
}
