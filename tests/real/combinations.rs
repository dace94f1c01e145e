//! The truth table of capability combinations (compat-data/combinations.toml, issue 24) against every real NVCC
//! release the lab has: every pair of the capabilities a release accepts (compat-data/capabilities.toml), in each
//! form the wrapper writes (src/plan/gpu.rs), is refused by nvcc exactly when the table's rule says so, with the
//! table's message.
//!
//! - Every pair of every release, every form: `nvcc --dryrun`, which docs/nvcc-facts.md#capability-combinations
//!   shows refuses exactly what a real compile refuses (scripts/measure-combinations.py compare).
//! - Every refused pair of every release, in each form that refuses it: real nvcc (`-c`, or `-dc` then `-dlink
//!   -dlto`) refuses it with the table's message; for the newest (13.5), real nvcc builds it in the other forms.
//! - Every pair the newest release accepts, real, in every form: compiled as part of a few long lists (every
//!   capability it accepts, less one of each refused pair), chosen so that each accepted pair is in one of them. A
//!   list that holds no refused pair builds (the rule), so this compiles every accepted pair of it in a few minutes
//!   where one compile per pair would take half an hour. Of each other release, about six accepted cases, real.
//! - The wrapper, for every case of the newest and every refused pair in the gencode forms: `gencode` prints exactly
//!   the flags tried here for a list nvcc builds, and refuses a list nvcc refuses, as the drop-in does before nvcc
//!   runs.
//!
//! scripts/measure-combinations.py is the measurement this test re-checks; the triples, orders and `-arch` mixes
//! are there, not here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::support::*;

/// The release whose accepted pairs are all compiled for real (in the covering lists): the newest.
fn all_real() -> &'static str {
    releases().last().unwrap()
}

/// Of each other release, about this many accepted cases are compiled for real (the forms taken in turn).
const REAL_PER_RELEASE: usize = 6;

const KERNEL_CU: &str = "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n";

/// nvcc's prefix before the message of an option it refuses.
const FATAL: &str = "nvcc fatal   : ";

/// The forms of compat-data/README.md, "combinations.toml".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Gencode,
    GencodePtx,
    Lto,
    LtoPtx,
    LtoLink,
}

const FORMS: [Form; 5] = [Form::Gencode, Form::GencodePtx, Form::Lto, Form::LtoPtx, Form::LtoLink];

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Gencode => "gencode",
            Form::GencodePtx => "gencode-ptx",
            Form::Lto => "lto",
            Form::LtoPtx => "lto-ptx",
            Form::LtoLink => "lto-link",
        }
    }

    fn ptx(self) -> bool {
        matches!(self, Form::GencodePtx | Form::LtoPtx)
    }

    /// The `code=` prefix of the capabilities' own flags.
    fn code(self) -> &'static str {
        match self {
            Form::Lto | Form::LtoPtx => "lto",
            _ => "sm",
        }
    }
}

/// A capability as the tables write it; ordered as the wrapper sorts (number, then baseline < `a` < `f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cap {
    major: u32,
    minor: u32,
    /// 0: none, 1: `a`, 2: `f`.
    suffix: u8,
}

impl Cap {
    fn parse(text: &str) -> Cap {
        let (number, suffix) = match text.strip_suffix('a') {
            Some(n) => (n, 1),
            None => match text.strip_suffix('f') {
                Some(n) => (n, 2),
                None => (text, 0),
            },
        };
        let (major, minor) = number.split_once('.').unwrap_or_else(|| panic!("capability {text}"));
        Cap { major: major.parse().unwrap(), minor: minor.parse().unwrap(), suffix }
    }

    fn letter(self) -> &'static str {
        ["", "a", "f"][self.suffix as usize]
    }

    /// `100f`, as in `compute_100f`.
    fn compact(self) -> String {
        format!("{}{}{}", self.major, self.minor, self.letter())
    }

    fn kind(self) -> &'static str {
        ["baseline", "arch-specific", "family-specific"][self.suffix as usize]
    }

    fn baseline(self) -> Cap {
        Cap { suffix: 0, ..self }
    }
}

impl std::fmt::Display for Cap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}{}", self.major, self.minor, self.letter())
    }
}

fn release(text: &str) -> (u32, u32) {
    let mut parts = text.split('.').map(|p| p.parse::<u32>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

/// Whether `row`'s inclusive `first-cuda`/`last-cuda` hold `r`.
fn within(row: &toml::Table, r: &str) -> bool {
    let r = release(r);
    let first = release(row["first-cuda"].as_str().unwrap());
    let last = row.get("last-cuda").map(|l| release(l.as_str().unwrap()));
    first <= r && last.map_or(true, |l| r <= l)
}

fn table(file: &str) -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-data").join(file);
    std::fs::read_to_string(&path).unwrap().parse().unwrap()
}

fn rows<'t>(table: &'t toml::Table, key: &str) -> Vec<&'t toml::Table> {
    table.get(key).and_then(|v| v.as_array()).map_or(vec![], |a| a.iter().map(|r| r.as_table().unwrap()).collect())
}

/// What release `r` accepts alone, sorted.
fn accepted(capabilities: &toml::Table, r: &str) -> Vec<Cap> {
    let mut caps: Vec<Cap> = rows(capabilities, "capability")
        .into_iter()
        .filter(|row| within(row, r))
        .map(|row| Cap::parse(row["capability"].as_str().unwrap()))
        .collect();
    caps.sort();
    caps
}

/// The rule of compat-data/README.md, "combinations.toml": nvcc's whole message line when release `r` refuses the
/// sorted list `caps` in `form` (naming the lowest-numbered refused pair), or `None` when it builds it.
fn refusal(combinations: &toml::Table, r: &str, caps: &[Cap], form: Form) -> Option<String> {
    caps.iter()
        .enumerate()
        .flat_map(|(i, &a)| caps[i + 1..].iter().map(move |&b| (a, b)))
        .find_map(|(a, b)| pair_refusal(combinations, r, a, b, form))
}

/// The rule for one pair, `a` before `b` on the command line.
fn pair_refusal(combinations: &toml::Table, r: &str, a: Cap, b: Cap, form: Form) -> Option<String> {
    rows(combinations, "refused-pair").into_iter().find_map(|rule| {
        let forms: Vec<&str> = rule["forms"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        let mut kinds: Vec<&str> = rule["kinds"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        kinds.sort();
        let mut pair = [a.kind(), b.kind()];
        pair.sort();
        let same = match rule["same"].as_str().unwrap() {
            "number" => (a.major, a.minor) == (b.major, b.minor),
            other => panic!("combinations.toml: unknown same = {other:?}"),
        };
        (within(rule, r) && forms.contains(&form.name()) && kinds == pair && same).then(|| {
            let later = format!("{}_{}", form.code(), b.compact());
            format!("{FATAL}{}", rule["message"].as_str().unwrap().replace("{later}", &later))
        })
    })
}

/// The flags the wrapper writes for `caps` in `form` (src/plan/gpu.rs): one per capability, then the PTX of the
/// highest capability's baseline.
fn gencode(caps: &[Cap], form: Form) -> Vec<String> {
    let mut flags: Vec<String> =
        caps.iter().map(|c| format!("-gencode=arch=compute_{0},code={1}_{0}", c.compact(), form.code())).collect();
    if form.ptx() {
        let base = caps.iter().max().unwrap().baseline().compact();
        flags.push(format!("-gencode=arch=compute_{base},code=compute_{base}"));
    }
    flags
}

/// Lists of the capabilities `r` accepts that hold no refused pair, long enough that every accepted pair is in
/// one of them: each leaves out one capability of every refused pair (2^n ways), chosen greedily.
fn covering_lists(
    combinations: &toml::Table,
    r: &str,
    caps: &[Cap],
    pairs: &[Vec<Cap>],
    refused: &[&Vec<Cap>],
) -> Vec<Vec<Cap>> {
    assert!(refused.len() <= 12, "nvcc {r}: {} refused pairs, too many to choose from", refused.len());
    let candidates: Vec<Vec<Cap>> = (0..1u32 << refused.len())
        .map(|drop| {
            let out: Vec<Cap> = refused.iter().enumerate().map(|(i, p)| p[(drop >> i) as usize & 1]).collect();
            caps.iter().copied().filter(|c| !out.contains(c)).collect()
        })
        .collect();
    let mut uncovered: Vec<&Vec<Cap>> = pairs.iter().filter(|p| !refused.contains(p)).collect();
    let mut lists = Vec::new();
    while !uncovered.is_empty() {
        let holds = |list: &Vec<Cap>, p: &Vec<Cap>| p.iter().all(|c| list.contains(c));
        let best = candidates.iter().max_by_key(|l| uncovered.iter().filter(|p| holds(l, p)).count()).unwrap();
        assert!(uncovered.iter().any(|p| holds(best, p)), "nvcc {r}: no list holds {:?}", uncovered[0]);
        assert!(FORMS.iter().all(|&f| refusal(combinations, r, best, f).is_none()), "{best:?} holds a refused pair");
        uncovered.retain(|p| !holds(best, p));
        lists.push(best.clone());
    }
    lists
}

/// One list (a pair, or a covering list) in one form on one release, and what the table says nvcc does with it.
struct Case {
    release: &'static str,
    nvcc: PathBuf,
    ccbin: &'static str,
    /// Sorted: a pair, or a covering list.
    caps: Vec<Cap>,
    form: Form,
    expected: Option<String>,
    real: bool,
}

impl Case {
    fn describe(&self) -> String {
        let caps: Vec<String> = self.caps.iter().map(|c| c.to_string()).collect();
        format!("nvcc {} {} {}", self.release, self.form.name(), caps.join("+"))
    }

    /// Run nvcc in `dir` (which holds k.cu): `Ok(())` when it built, `Err(first fatal line)` when it refused.
    fn run(&self, dir: &Path, dryrun: bool) -> Result<(), String> {
        let flags = gencode(&self.caps, self.form);
        let mut args: Vec<String> = match self.form {
            Form::Lto | Form::LtoPtx => vec!["-dc".into(), "k.cu".into()],
            Form::LtoLink => vec!["-dlink".into(), "-dlto".into(), "k.o".into()],
            _ => vec!["-c".into(), "k.cu".into()],
        };
        if self.form == Form::LtoLink && !dryrun {
            // The link takes the objects the wrapper's device-LTO compile of the same list writes.
            let lto = gencode(&self.caps, Form::Lto);
            nvcc(
                &self.nvcc,
                self.ccbin,
                dir,
                &[&["-dc".into(), "k.cu".into()], &lto[..], &["-o".into(), "k.o".into()]].concat(),
            )
            .map_err(|e| format!("the device-LTO compile before the link: {e}"))?;
        }
        args.extend(flags);
        args.extend(["-o".into(), "out.o".into()]);
        if dryrun {
            args.insert(0, "--dryrun".into());
        }
        nvcc(&self.nvcc, self.ccbin, dir, &args)
    }
}

fn nvcc(nvcc: &Path, ccbin: &str, dir: &Path, args: &[String]) -> Result<(), String> {
    let out = Command::new(nvcc).arg("-ccbin").arg(ccbin).args(args).current_dir(dir).output().unwrap();
    if out.status.success() {
        return Ok(());
    }
    let text = stderr(&out);
    let fatal = text.lines().find(|l| l.contains("fatal") || l.contains("error")).or_else(|| text.lines().last());
    Err(fatal.unwrap_or("(no message)").trim_end().to_string())
}

/// Run `check` on every case, on two threads (the lab has two cores), each in a directory of its own with k.cu;
/// the failures it returns.
fn on_two_threads(cases: &[&Case], check: impl Fn(&Case, &Path) -> Option<String> + Sync) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("k.cu"), KERNEL_CU).unwrap();
                while let Some(case) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Some(failure) = check(case, dir.path()) {
                        failures.lock().unwrap().push(failure);
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// What nvcc did against what the table says.
fn verdict(case: &Case, got: Result<(), String>, how: &str) -> Option<String> {
    match (&case.expected, got) {
        (None, Ok(())) => None,
        (Some(want), Err(got)) if *want == got => None,
        (want, got) => Some(format!(
            "{} ({how}): nvcc {}, but combinations.toml says {}",
            case.describe(),
            match got {
                Ok(()) => "built it".to_string(),
                Err(e) => format!("refused it: {e}"),
            },
            want.as_deref().map_or("it builds".to_string(), |w| format!("it is refused: {w}"))
        )),
    }
}

/// The wrapper on a list, as `nvcc-wrapper gencode` and as the drop-in (in `sandbox`, whose toolkit is the real
/// `case.release`): a list nvcc builds, `gencode` prints exactly the flags tried here; a list nvcc refuses, both
/// refuse it with one error line, naming the pair and quoting nvcc, and one help line, and the drop-in never starts
/// nvcc (no object, no nvcc message). A pair of Jetson capabilities (Thor) goes to the drop-in configured for the
/// platform that serves it (sbsa), where only the pair is wrong.
fn wrapper_refuses_before_nvcc(case: &Case, sandbox: &RealSandbox, jetson: &[Cap]) -> Option<String> {
    let caps: Vec<String> = case.caps.iter().map(Cap::to_string).collect();
    let mut cmd = Command::new(WRAPPER);
    // No config, no environment: the built-in tables only.
    cmd.env_clear();
    cmd.args(["gencode", "--format", "json", "--cuda-version", case.release]);
    // `gencode` answers for this machine's platform, as the drop-in does: a Jetson part is built for the Arm-server
    // target that serves it (the drop-in's jetson.toml below).
    let for_jetson = case.caps.iter().any(|c| jetson.contains(c));
    if for_jetson {
        cmd.args(["--system", "aarch64-linux", "--platform", "sbsa"]);
    }
    if case.form.ptx() {
        cmd.arg("--forward-compat");
    }
    let out = cmd.args(&caps).output().unwrap();
    let Some(expected) = &case.expected else {
        if !out.status.success() {
            return Some(format!("{}: nvcc-wrapper gencode failed: {}", case.describe(), stderr(&out)));
        }
        let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let printed: Vec<String> =
            json["gencode"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
        let tried = gencode(&case.caps, case.form);
        return (printed != tried)
            .then(|| format!("{}: nvcc-wrapper gencode printed {printed:?}, tried {tried:?}", case.describe()));
    };
    let [a, b] = case.caps[..] else { return None };
    let nvcc_says = expected.strip_prefix(FATAL).unwrap();
    let error =
        format!("nvcc {} cannot build {a} and {b} together: it refuses the pair (\"{nvcc_says}\")", case.release);
    let refused = |how: &str, out: &std::process::Output| {
        let text = stderr(out);
        let lines: Vec<&str> = text.lines().collect();
        let said = lines.len() == 2
            && lines[0] == format!("nvcc-wrapper: error: {error}")
            && lines[1].starts_with(&format!("help: keep one of {a} and {b}: nvcc {} ", case.release));
        (out.status.code() != Some(65) || !said || !out.stdout.is_empty()).then(|| {
            format!(
                "{} ({how}): want exit 65, `{error}` and a help line; got {:?}:\n{text}",
                case.describe(),
                out.status
            )
        })
    };
    if let Some(failure) = refused("gencode", &out) {
        return Some(failure);
    }
    let object = sandbox.file(&format!("refused-{a}-{b}.o"));
    let config = if for_jetson { "jetson.toml" } else { "wrapper.toml" };
    let out = sandbox
        .nvcc()
        .env("NVCC_WRAPPER_CONFIG", sandbox.file(config))
        .env("NVCC_WRAPPER_CAPABILITIES", caps.join(";"))
        .env("NVCC_WRAPPER_FORWARD_COMPAT", if case.form.ptx() { "1" } else { "0" })
        .args(["-c", "k.cu", "-o"])
        .arg(&object)
        .output()
        .unwrap();
    refused("the drop-in", &out)
        .or_else(|| object.exists().then(|| format!("{}: the drop-in wrote {}", case.describe(), object.display())))
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_pair_of_every_release_is_refused_exactly_as_the_truth_table_says() {
    let start = Instant::now();
    let capabilities = table("capabilities.toml");
    let combinations = table("combinations.toml");
    let mut cases = Vec::new();
    for &r in releases() {
        let Some(root) = real_toolkit(r) else { continue };
        let ccbin = if release(r) < (12, 0) { "g++-11" } else { "g++-12" };
        let Some(_) = real_program(ccbin) else { continue };
        let caps = accepted(&capabilities, r);
        let pairs: Vec<Vec<Cap>> =
            caps.iter().enumerate().flat_map(|(i, &a)| caps[i + 1..].iter().map(move |&b| vec![a, b])).collect();
        // Pairs some form refuses: of the newest, compiled for real in every form (the others: where refused).
        let refused: Vec<&Vec<Cap>> =
            pairs.iter().filter(|p| FORMS.iter().any(|&f| refusal(&combinations, r, p, f).is_some())).collect();
        let step = (pairs.len() * FORMS.len() / REAL_PER_RELEASE).max(1);
        for (p, pair) in pairs.iter().enumerate() {
            for (f, form) in FORMS.into_iter().enumerate() {
                let expected = refusal(&combinations, r, pair, form);
                let real = expected.is_some()
                    || if r == all_real() { refused.contains(&pair) } else { (p * FORMS.len() + f) % step == 0 };
                let nvcc = root.join("bin/nvcc");
                cases.push(Case { release: r, nvcc, ccbin, caps: pair.clone(), form, expected, real });
            }
        }
        if r == all_real() {
            for list in covering_lists(&combinations, r, &caps, &pairs, &refused) {
                for form in FORMS {
                    let expected = refusal(&combinations, r, &list, form);
                    let nvcc = root.join("bin/nvcc");
                    cases.push(Case { release: r, nvcc, ccbin, caps: list.clone(), form, expected, real: true });
                }
            }
        }
    }
    if cases.is_empty() {
        return;
    }
    let all: Vec<&Case> = cases.iter().collect();
    let mut failures = on_two_threads(&all, |case, dir| verdict(case, case.run(dir, true), "--dryrun"));
    let dry_done = start.elapsed();

    let real: Vec<&Case> = cases.iter().filter(|c| c.real).collect();
    failures.extend(on_two_threads(&real, |case, dir| verdict(case, case.run(dir, false), "real")));
    let real_done = start.elapsed();

    let wrapped: Vec<&Case> = cases
        .iter()
        .filter(|c| matches!(c.form, Form::Gencode | Form::GencodePtx))
        .filter(|c| c.release == all_real() || c.expected.is_some())
        .collect();
    let jetson: Vec<Cap> = rows(&capabilities, "capability")
        .into_iter()
        .filter(|row| row.contains_key("jetson-part"))
        .map(|row| Cap::parse(row["capability"].as_str().unwrap()))
        .collect();
    let mut sandboxes: HashMap<&str, RealSandbox> = HashMap::new();
    for case in &wrapped {
        let sandbox = sandboxes.entry(case.release).or_insert_with(|| {
            let sandbox = RealSandbox::new(case.nvcc.parent().and_then(Path::parent).unwrap());
            sandbox.write("k.cu", KERNEL_CU);
            let host = format!("[host-compiler]\nstdenv = \"/usr/bin/{}\"\n", case.ccbin);
            sandbox.write("wrapper.toml", &host);
            sandbox.write("jetson.toml", &format!("{host}[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"\n"));
            sandbox
        });
        failures.extend(wrapper_refuses_before_nvcc(case, sandbox, &jetson));
    }

    let refused = cases.iter().filter(|c| c.expected.is_some()).count();
    let lists = cases.iter().filter(|c| c.caps.len() > 2).count() / FORMS.len();
    eprintln!(
        "{} cases ({refused} refused, {lists} covering lists in {} forms) by --dryrun in {:.0?}; {} real ({} accepted) in {:.0?}; {} through `gencode`; {:.0?} in all",
        cases.len(),
        FORMS.len(),
        dry_done,
        real.len(),
        real.iter().filter(|c| c.expected.is_none()).count(),
        real_done - dry_done,
        wrapped.len(),
        start.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements with compat-data/combinations.toml:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every 13.x release refuses some pairs: an empty or misread table fails here too.
    let newest = cases.iter().map(|c| release(c.release)).max().unwrap();
    assert!(newest < (13, 0) || refused > 0, "combinations.toml refuses no pair of nvcc {newest:?}");
}
