//! Every flag the wrapper adds by default, proven harmless against nvcc alone (issue 30): over a generated corpus of
//! call shapes, the wrapper (its host compiler, reproducible-builds flags, fatbin compression and dependency-file
//! inputs all on, as a user gets them) and nvcc alone given the same host compiler must end alike. Where nvcc alone
//! exits 0 the wrapper exits 0; where it fails the wrapper fails with its status; both leave the same names in the
//! call's directory; the wrapper leaves no more temporary files behind; nothing appears in `/dev`. Needs real NVCC
//! 11.8, 12.4 and 13.5, g++-11 and g++-12, and, run as root, `unshare` and `setpriv` (the shapes run as a user who
//! is not root: every Nix build runs as one).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::support::*;

const KERNEL: &str = "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\n";
const MAIN: &str = "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\nint main() { return 0; }\n";

/// What a call's standard input is.
#[derive(Clone, Copy, Debug)]
enum Input {
    Null,
    /// The kernel's source.
    Source,
    /// Closed, as `<&-` leaves it.
    Closed,
}

/// One call shape: nvcc's arguments, the files it starts with, its stdin, and who runs it.
#[derive(Clone, Debug)]
struct Shape {
    name: String,
    args: Vec<OsString>,
    /// Files to make first (relative path, contents; a path ending in `/` is a directory, `->` a symlink).
    files: Vec<(Vec<u8>, &'static str)>,
    stdin: Input,
    /// Standard output and error closed too.
    closed_output: bool,
    /// Run by a user who is not root.
    unprivileged: bool,
    /// Directories (relative) made read-only before the call.
    read_only: Vec<&'static str>,
}

fn shape(name: impl Into<String>, args: &[&[u8]]) -> Shape {
    Shape {
        name: name.into(),
        args: args.iter().map(|a| OsString::from_vec(a.to_vec())).collect(),
        files: vec![(b"k.cu".to_vec(), KERNEL), (b"o/".to_vec(), "")],
        stdin: Input::Null,
        closed_output: false,
        unprivileged: false,
        read_only: Vec::new(),
    }
}

/// The bytes a name may hold, each in an output name, and some in a source name.
const BYTES: &[&[u8]] = &[
    b" ",
    b"\"",
    b"'",
    b"`",
    b"$",
    b"$$",
    b"\\",
    b";",
    b"&",
    b"|",
    b"(",
    b"*",
    b"?",
    b"!",
    b"#",
    b"%",
    b"=",
    b":",
    b",",
    b"@",
    b"+",
    b"~",
    b"[",
    b"{",
    b"\n",
    b"\t",
    b"\r",
    b"\x01",
    b"\x7f",
    b"\xff",
    "\u{e9}".as_bytes(),
];

/// The corpus for a release: `full` for every shape, else the ones where releases differ and a sample of the rest.
fn corpus(full: bool) -> Vec<Shape> {
    let mut shapes = Vec::new();
    let sample: &[&[u8]] = if full { BYTES } else { &[b" ", b"\"", b"$", b"\\", b",", b"[", b"\n", b"\xff"] };
    for byte in sample {
        let output = [b"o/a".as_slice(), byte, b"b.o"].concat();
        shapes.push(shape(
            format!("-c, output o/a{}b.o", String::from_utf8_lossy(byte).escape_debug()),
            &[b"-c", b"k.cu", b"-o", &output],
        ));
    }
    let source_bytes: &[&[u8]] = if full {
        &[b"\"", b"\\", b",", b"\n", b"\r", b"`", b"$x", b" ", b"'", b"*", b"#", b"["]
    } else {
        &[b"\"", b"\n", b"["]
    };
    for byte in source_bytes {
        let source = [b"k".as_slice(), byte, b"x.cu"].concat();
        let mut s = shape(
            format!("-c, source k{}x.cu", String::from_utf8_lossy(byte).escape_debug()),
            &[b"-c", &source, b"-o", b"o/k.o"],
        );
        s.files.push((source.clone(), KERNEL));
        shapes.push(s);
    }
    let long_source = format!("{}.cu", "k".repeat(214)).into_bytes();
    let mut s = shape("-c, a 217-byte source name", &[b"-c", &long_source, b"-o", b"o/k.o"]);
    s.files.push((long_source.clone(), KERNEL));
    shapes.push(s);
    let named = |name: &str, args: &[&[u8]]| shape(name, args);
    shapes.push(named("-c, no -o", &[b"-c", b"k.cu"]));
    shapes.push(named("-c, output ./-a.o", &[b"-c", b"k.cu", b"-o", b"./-a.o"]));
    shapes.push(named("-c, output -a.o", &[b"-c", b"k.cu", b"-o", b"-a.o"]));
    let long = |n: usize| format!("o/{}.o", "a".repeat(n - 2)).into_bytes();
    shapes.push(named("-c, a 200-byte output name", &[b"-c", b"k.cu", b"-o", &long(200)]));
    shapes.push(named("-c, a 235-byte output name", &[b"-c", b"k.cu", b"-o", &long(235)]));
    shapes.push(named("-c, output /dev/null", &[b"-c", b"k.cu", b"-o", b"/dev/null"]));
    shapes.push(named("-c, output in a missing directory", &[b"-c", b"k.cu", b"-o", b"none/k.o"]));
    shapes.push(named("-c, output is a directory", &[b"-c", b"k.cu", b"-o", b"o"]));
    let mut s = named("-c, output a link to a file", &[b"-c", b"k.cu", b"-o", b"o/link.o"]);
    s.files.extend([(b"target.o".to_vec(), "old"), (b"o/link.o->../target.o".to_vec(), "")]);
    shapes.push(s);
    shapes.push(named("-dc", &[b"-dc", b"k.cu", b"-o", b"o/k.o"]));
    shapes.push(named("-c -MD", &[b"-MD", b"-c", b"k.cu", b"-o", b"o/k.o"]));
    shapes.push(named("-MD -MF /dev/null", &[b"-MD", b"-MF", b"/dev/null", b"-c", b"k.cu", b"-o", b"o/k.o"]));
    if full {
        shapes.push(named("-c -MD -MP", &[b"-MD", b"-MP", b"-c", b"k.cu", b"-o", b"o/k.o"]));
        shapes.push(named("-M", &[b"-M", b"k.cu"]));
        shapes.push(named("-E", &[b"-E", b"k.cu", b"-o", b"o/k.ii"]));
        shapes.push(named("-ptx", &[b"-ptx", b"k.cu", b"-o", b"o/k.ptx"]));
        shapes.push(named("-cubin", &[b"-cubin", b"-arch=sm_80", b"k.cu", b"-o", b"o/k.cubin"]));
        shapes.push(named("-fatbin", &[b"-fatbin", b"k.cu", b"-o", b"o/k.fatbin"]));
        shapes.push(named("-lib", &[b"-lib", b"k.cu", b"-o", b"o/libk.a"]));
        shapes.push(named("-g -c", &[b"-g", b"-c", b"k.cu", b"-o", b"o/k.o"]));
        let mut s = named("compile and link in one", &[b"m.cu", b"-o", b"o/app"]);
        s.files.push((b"m.cu".to_vec(), MAIN));
        shapes.push(s);
    }
    let mut s = named("-x cu -c - (stdin)", &[b"-x", b"cu", b"-c", b"-", b"-o", b"o/s.o"]);
    s.stdin = Input::Source;
    shapes.push(s);
    let mut s = named("-x cu -c - with stdin closed", &[b"-x", b"cu", b"-c", b"-", b"-o", b"o/s.o"]);
    s.stdin = Input::Closed;
    shapes.push(s);
    let mut s = named("-c with stdin, stdout and stderr closed", &[b"-c", b"k.cu", b"-o", b"o/k.o"]);
    s.stdin = Input::Closed;
    s.closed_output = true;
    shapes.push(s);
    let mut s = named("not root: -c, output /dev/null", &[b"-c", b"k.cu", b"-o", b"/dev/null"]);
    s.unprivileged = true;
    shapes.push(s);
    let mut s = named("not root: -c", &[b"-c", b"k.cu", b"-o", b"o/k.o"]);
    s.unprivileged = true;
    shapes.push(s);
    let mut s = named("not root: a writable output in a read-only directory", &[b"-c", b"k.cu", b"-o", b"ro/k.o"]);
    s.files.extend([(b"ro/".to_vec(), ""), (b"ro/k.o".to_vec(), "old")]);
    s.unprivileged = true;
    s.read_only.push("ro");
    shapes.push(s);
    shapes
}

/// How a call ended and what it left.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    code: Option<i32>,
    /// Every name in the call's directory afterwards (directories end in `/`).
    names: BTreeSet<Vec<u8>>,
    /// Files left in its TMPDIR.
    temporaries: usize,
    stderr: String,
}

/// Every name under `dir`, relative, directories with a `/`, digits as `N` (`pids_as_n`); `skip` names are not
/// entered or listed.
fn names(dir: &Path, skip: &[&str]) -> BTreeSet<Vec<u8>> {
    let mut found = BTreeSet::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else { continue };
        for entry in entries.flatten() {
            let name = rel.join(entry.file_name());
            if rel.as_os_str().is_empty() && skip.iter().any(|s| entry.file_name() == *s) {
                continue;
            }
            let kind = entry.file_type().unwrap();
            let mut bytes = pids_as_n(name.as_os_str().as_bytes());
            if kind.is_dir() {
                bytes.push(b'/');
                stack.push(name);
            }
            found.insert(bytes);
        }
    }
    found
}

/// A name with each run of digits as `N`: a name with `$$` is expanded by the shell nvcc runs to that shell's pid.
fn pids_as_n(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    for &b in name {
        if !b.is_ascii_digit() {
            out.push(b);
        } else if out.last() != Some(&b'N') {
            out.push(b'N');
        }
    }
    out
}

/// Lay out a shape's files in `dir` (owned by `owner` when given).
fn lay_out(shape: &Shape, dir: &Path, owner: Option<u32>) {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    for (path, text) in &shape.files {
        if let Some(at) = path.windows(2).position(|w| w == b"->") {
            let link = dir.join(OsStr::from_bytes(&path[..at]));
            std::os::unix::fs::symlink(OsStr::from_bytes(&path[at + 2..]), link).unwrap();
        } else if path.ends_with(b"/") {
            std::fs::create_dir_all(dir.join(OsStr::from_bytes(path))).unwrap();
        } else {
            let file = dir.join(OsStr::from_bytes(path));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
        }
    }
    if let Some(uid) = owner {
        let status = Command::new("chown").args(["-R", "-h"]).arg(format!("{uid}:{uid}")).arg(dir).status().unwrap();
        assert!(status.success());
    }
    for ro in &shape.read_only {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join(ro), std::fs::Permissions::from_mode(0o555)).unwrap();
    }
}

/// The user the unprivileged shapes run as, when the tests run as root (65534, `nobody`); `None` when they already
/// run as another user.
fn unprivileged_user() -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } == 0).then_some(65534)
}

/// Run one side of a shape in `dir`: `program` with `args`, and `env`.
fn run(
    shape: &Shape,
    dir: &Path,
    program: &Path,
    args: &[OsString],
    env: &[(&str, OsString)],
    toolkit: &Path,
) -> Outcome {
    let owner = if shape.unprivileged { unprivileged_user() } else { None };
    lay_out(shape, dir, owner);
    let mut cmd = match owner {
        // A mount namespace in which the toolkit (under root's 0700 home) is bound where the user can reach it.
        Some(uid) => {
            let mut cmd = Command::new("unshare");
            cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg(r#"mount --bind "$1" "$2" && shift 2 && exec setpriv --reuid="$UID_" --regid="$UID_" --clear-groups -- "$@""#)
                .arg("sh")
                .arg(toolkit)
                .arg(dir.join("tk"))
                .arg(program)
                .args(args)
                .env("UID_", uid.to_string());
            std::fs::create_dir_all(dir.join("tk")).unwrap();
            cmd
        }
        None => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    };
    // The test's own PATH, for the compilers and nvcc's own programs.
    #[allow(clippy::disallowed_methods)]
    let path = std::env::var_os("PATH").unwrap_or_default();
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir)
        .env("TMPDIR", dir.join("tmp"))
        .envs(env.iter().map(|(k, v)| (*k, v)));
    isolate(&mut cmd, dir, false);
    match shape.stdin {
        Input::Null => {
            cmd.stdin(Stdio::null());
        }
        Input::Source => {
            cmd.stdin(std::fs::File::open(dir.join("k.cu")).unwrap());
        }
        Input::Closed => {}
    }
    let closed_stdin = matches!(shape.stdin, Input::Closed);
    let closed_output = shape.closed_output;
    if !closed_output {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    // SAFETY: close() is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(move || {
            if closed_stdin {
                libc::close(0);
            }
            if closed_output {
                libc::close(1);
                libc::close(2);
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    Outcome {
        code: out.status.code(),
        names: names(dir, &["tmp", "tk", "probe-cache", "config.toml", "wrapper"]),
        temporaries: names(&dir.join("tmp"), &[]).len(),
        stderr: stderr(&out),
    }
}

/// `/dev`'s names starting with `null.` (where `-objtemp -o /dev/null` puts nvcc's files as root).
fn dev_null_files() -> Vec<String> {
    std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("null."))
        .collect()
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_default_flag_leaves_every_call_ending_as_with_nvcc_alone() {
    if unprivileged_user().is_some() && (real_program("unshare").is_none() || real_program("setpriv").is_none()) {
        return;
    }
    let releases =
        [("13.5", "/usr/bin/g++-12", true), ("12.4", "/usr/bin/g++-12", false), ("11.8", "/usr/bin/g++-11", false)];
    let mut work = Vec::new();
    for (release, compiler, full) in releases {
        let Some(root) = real_toolkit(release) else { return };
        for shape in corpus(full) {
            work.push((release, root.clone(), compiler, shape));
        }
    }
    let tried = work.len();
    let failures = Mutex::new(Vec::<String>::new());
    let scratch = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    on_two_threads(work, |n, (release, root, compiler, shape)| {
        let base = scratch.path().join(n.to_string());
        let (alone_dir, wrapper_dir) = (base.join("alone"), base.join("wrapper"));
        // The toolkit as nvcc alone and the wrapper reach it: through the bind mount for a user who is not root.
        let unprivileged = shape.unprivileged && unprivileged_user().is_some();
        let toolkit = |dir: &Path| if unprivileged { dir.join("tk") } else { root.clone() };
        let mut args = vec![OsString::from(format!("-ccbin={compiler}"))];
        args.extend(shape.args.iter().cloned());
        let alone = run(&shape, &alone_dir, &toolkit(&alone_dir).join("bin/nvcc"), &args, &[], &root);
        let dev_before = dev_null_files();
        // The wrapper, installed as `nvcc` in front of the same toolkit, with only the host compiler set.
        let bin = wrapper_dir.join("wrapper");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(WRAPPER, bin.join("nvcc")).unwrap();
        let config = wrapper_dir.join("config.toml");
        std::fs::write(
            &config,
            format!(
                "nvcc = \"{}\"\n[host-compiler]\nstdenv = \"{compiler}\"\n",
                toolkit(&wrapper_dir).join("bin/nvcc").display()
            ),
        )
        .unwrap();
        let env = [
            ("NVCC_WRAPPER_CONFIG", config.clone().into_os_string()),
            ("NVCC_WRAPPER_PROBE_CACHE_DIR", wrapper_dir.join("probe-cache").into_os_string()),
        ];
        let wrapper = run(&shape, &wrapper_dir, &bin.join("nvcc"), &shape.args, &env, &root);
        let mut problems = Vec::new();
        match (alone.code, wrapper.code) {
            (Some(0), Some(0)) => {}
            (Some(0), code) => problems.push(format!("nvcc alone exits 0, the wrapper {code:?}")),
            (a, w) if a != w => problems.push(format!("nvcc alone exits {a:?}, the wrapper {w:?}")),
            _ => {}
        }
        if alone.names != wrapper.names {
            let show =
                |s: &BTreeSet<Vec<u8>>| s.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect::<Vec<_>>();
            problems.push(format!(
                "nvcc alone leaves {:?}, the wrapper {:?}",
                show(&alone.names),
                show(&wrapper.names)
            ));
        }
        if wrapper.temporaries > alone.temporaries {
            problems.push(format!(
                "the wrapper leaves {} temporary files, nvcc alone {}",
                wrapper.temporaries, alone.temporaries
            ));
        }
        let dev_after = dev_null_files();
        if dev_after.len() > dev_before.len() {
            problems.push(format!("new in /dev: {dev_after:?}"));
        }
        if !problems.is_empty() {
            failures.lock().unwrap().push(format!(
                "nvcc {release}, {}: {}\n  nvcc alone said: {}\n  the wrapper said: {}",
                shape.name,
                problems.join("; "),
                alone.stderr.trim(),
                wrapper.stderr.trim()
            ));
        }
        let _ = Command::new("chmod").args(["-R", "u+w"]).arg(&base).status();
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("differential corpus: {tried} call shapes tried over nvcc 13.5, 12.4 and 11.8, {} ended otherwise than with nvcc alone", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
