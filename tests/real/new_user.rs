//! A new user's session, replayed (issue 33): a fresh clone of this repository's HEAD, the README's demo command,
//! the README's install block run twice, a configuration in `~/.config`, `nvcc` on the wrong PATH (doctor fails and
//! says what to change), then the right one, with a real compile through the installed `nvcc` and the README's
//! CMake line (built as its "Parallel builds" says) and Meson recipe on small projects. Every step runs the README's
//! own words (read from the clone's README), with a home of its own; only the Rust toolchain, the crates and the NVCC download
//! cache are shared with this machine. (The test-suite command is not replayed inside the suite;
//! scripts/check-fresh-machine.sh runs the demo on a fresh Debian root.)

// The test hands this machine's Rust toolchain to the replayed user: it reads where that is.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

/// The fenced `sh` block that follows `heading` in `markdown`.
fn block_after(markdown: &str, heading: &str) -> String {
    let rest = &markdown[markdown.find(heading).unwrap_or_else(|| panic!("no {heading:?} in the README"))..];
    let start = rest.find("```sh\n").expect("an sh block after the heading") + "```sh\n".len();
    rest[start..start + rest[start..].find("```").unwrap()].to_string()
}

fn shown(out: &Output) -> String {
    format!("exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), stdout(out), stderr(out))
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_33_a_new_users_session_from_a_fresh_clone() {
    let Some(toolkit) = real_toolkit("13.0") else { return };
    let (Some(git), Some(_)) = (real_program("git"), real_program("g++")) else { return };
    let work = tempfile::tempdir().unwrap();
    let (clone, home) = (work.path().join("clone"), work.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let repo = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(&git).args(["clone", "--quiet", repo]).arg(&clone).output().unwrap();
    assert!(out.status.success(), "git clone: {}", shown(&out));
    // One build directory for every run of this test, so that the crates are built once; the clone's own sources
    // are rebuilt each time. Release builds here skip fat LTO (minutes on two cores): the commands are the README's.
    let target = cache_dir().join("new-user-target");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, clone.join("target")).unwrap();
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let cargo_home = std::env::var_os("CARGO_HOME").map_or(real_home.join(".cargo"), PathBuf::from);
    let rustup_home = std::env::var_os("RUSTUP_HOME").map_or(real_home.join(".rustup"), PathBuf::from);
    let system_path = std::env::var("PATH").unwrap();
    let user = |path: &str| {
        let mut cmd = Command::new("bash");
        cmd.env_clear()
            .current_dir(&clone)
            .env("HOME", &home)
            .env("PATH", path)
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .env("NVCC_WRAPPER_CACHE", cache_dir())
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16");
        cmd
    };

    // The demo: builds, installs before real NVCC 13.0, compiles examples/hello.cu and runs it.
    let began = std::time::SystemTime::now();
    let out = user(&system_path).args(["-c", "scripts/demo.sh"]).output().unwrap();
    assert!(out.status.success(), "scripts/demo.sh: {}", shown(&out));
    let text = stdout(&out);
    // What the wrapper decides is shown once, by explain, not again as the compile's debug log; only the wrapper is
    // built, not the test suite's stand-ins; and the two install lines, the demo's and the README's, are explained
    // (issue 60, rows 11 and 12).
    assert_eq!(text.matches("runs:        ").count(), 1, "{text}");
    assert!(!stderr(&out).contains("nvcc-wrapper[DEBUG]"), "{}", stderr(&out));
    let fake = target.join("release/fake-nvcc");
    let built = std::fs::metadata(&fake).and_then(|m| m.modified()).is_ok_and(|at| at >= began);
    assert!(!built, "the demo built the test suite's fake nvcc");
    assert!(text.contains("linked dynamically,\n   is the same wrapper and works as well"), "{text}");
    assert!(text.contains("== nvcc is the wrapper:"), "{text}");
    assert!(text.contains("Cuda compilation tools, release 13.0"), "{text}");
    // Its fetch line names the cache it fills, NVCC_WRAPPER_CACHE's (issue 50, row 12: it said ~/.cache/nvcc-wrapper).
    let fetching = format!("into the scripts' download cache, {} (", cache_dir().display());
    assert!(stderr(&out).contains(&fetching), "{}", stderr(&out));
    // It ends by saying what to type next, with the paths it used (issue 50, item 5): typed as shown, in a home of
    // their own, the wrapper is `nvcc` before the demo's real nvcc and doctor finds no problem.
    let next: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("== next:")).collect();
    let typed: Vec<&str> = next.iter().filter_map(|l| l.strip_prefix("  $ ")).collect();
    assert!(typed.len() >= 3 && typed.iter().any(|l| l.contains(&*toolkit.to_string_lossy())), "{text}");
    let demo_home = work.path().join("demo-home");
    std::fs::create_dir_all(&demo_home).unwrap();
    let out = user(&system_path).env("HOME", &demo_home).args(["-e", "-c", &typed.join("\n")]).output().unwrap();
    assert!(out.status.success(), "the demo's next steps:\n{}\n{}", typed.join("\n"), shown(&out));
    assert!(stdout(&out).ends_with("no problems found\n"), "{}", shown(&out));

    // The README's install block, twice (a second run must not fail on what the first made).
    let readme = std::fs::read_to_string(clone.join("README.md")).unwrap();
    let install = block_after(&readme, "## Install");
    for run in 1..=2 {
        let out = user(&system_path).args(["-e", "-c", &install]).output().unwrap();
        assert!(out.status.success(), "the README's install block, run {run}:\n{install}\n{}", shown(&out));
    }
    let bin = home.join(".local/bin");
    assert_eq!(std::fs::read_link(bin.join("nvcc")).unwrap(), Path::new("nvcc-wrapper"));
    assert!(home.join(".local/share/man/man1/nvcc-wrapper.1").is_file());

    // A configuration where people look for one.
    let config = home.join(".config/nvcc-wrapper/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[gpu]\ncapabilities = [\"8.6\"]\n").unwrap();

    // The CUDA bin first, as a common ~/.bashrc has it: `nvcc` is the real one, and doctor says so and fails.
    let cuda_bin = toolkit.join("bin");
    let wrong = format!("{}:{}:/usr/bin:/bin", cuda_bin.display(), bin.display());
    let out = user(&wrong).args(["-c", "nvcc-wrapper doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "doctor on the wrong PATH: {}", shown(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("problem: `nvcc` on PATH is {}, not this wrapper", cuda_bin.join("nvcc").display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("help: put the directory of the wrapper's `nvcc` link before {}", cuda_bin.display())),
        "{text}"
    );

    // The right order: doctor passes, names the user's file, and `nvcc` builds and runs the example with it.
    let right = format!("{}:{}:/usr/bin:/bin", bin.display(), cuda_bin.display());
    let out = user(&right).args(["-c", "command -v nvcc; nvcc-wrapper doctor"]).output().unwrap();
    assert!(out.status.success(), "doctor on the right PATH: {}", shown(&out));
    let text = stdout(&out);
    assert!(text.starts_with(&format!("{}\n", bin.join("nvcc").display())), "{text}");
    assert!(text.contains(&format!("config file: {} (the user's)", config.display())), "{text}");
    assert!(text.contains("-gencode=arch=compute_86,code=sm_86"), "{text}");
    assert!(text.ends_with("no problems found\n"), "{text}");
    let hello = work.path().join("hello");
    let out = user(&right)
        .args(["-c", "nvcc -cudart static examples/hello.cu -o \"$1\"", "sh"])
        .arg(&hello)
        .output()
        .unwrap();
    assert!(out.status.success(), "nvcc examples/hello.cu: {}", shown(&out));
    run_smoke(&hello);

    // The README's CMake line, as written, on a CMake project (tests/real/cmake-project): CMake adds no GPU flags,
    // the wrapper adds the user's 8.6, and the object holds exactly that.
    let Some(cuobjdump) = real_tool("cuobjdump") else { return };
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    for file in ["CMakeLists.txt", "kern.cu", "dev.cu", "main.cpp"] {
        std::fs::copy(Path::new(repo).join("tests/real/cmake-project").join(file), project.join(file)).unwrap();
    }
    let configure = block_after(&readme, "**CMake.**");
    let out = user(&right).current_dir(&project).args(["-e", "-c", &configure]).output().unwrap();
    assert!(out.status.success(), "the README's CMake line:\n{configure}\n{}", shown(&out));
    // Built as the README's "Parallel builds" says for Ninja, with two job slots: Debian 12's Ninja 1.11 is refused,
    // saying what to do (issue 39), and with the Ninja 1.13 the README names first on PATH the build runs.
    let parallel = inline_code(&readme, "**Parallel builds.**", "nvcc-wrapper jobserver").replace(" N ", " 2 ");
    let out = user(&right).current_dir(&project).args(["-e", "-c", &parallel]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{parallel} with Debian's Ninja: {}", shown(&out));
    assert!(
        stderr(&out).contains("help: put Ninja 1.13 or later first on PATH (`pip install ninja`)"),
        "{}",
        shown(&out)
    );
    let readme_flowing = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(readme_flowing.contains("`pip install ninja`"), "the README no longer says how to get Ninja 1.13");
    let Some(ninja) = pypi_tool("ninja") else { return };
    let newer = format!("{}:{right}", ninja.parent().unwrap().display());
    let out = user(&newer).current_dir(&project).args(["-e", "-c", &parallel]).output().unwrap();
    assert!(out.status.success(), "{parallel}: {}", shown(&out));
    let embedded = embedded(&cuobjdump, &project.join("build/CMakeFiles/kern.dir/kern.cu.o"));
    assert_eq!(embedded.into_iter().collect::<Vec<_>>(), ["sm_86"]);

    // The README's Meson recipe: a native file naming the wrapper, and its setup line.
    if real_program("meson").is_none() {
        return;
    }
    let meson = work.path().join("meson-project");
    std::fs::create_dir_all(&meson).unwrap();
    std::fs::write(meson.join("meson.build"), "project('hello', 'cuda')\nexecutable('hello', 'hello.cu')\n").unwrap();
    std::fs::copy(Path::new(repo).join("examples/hello.cu"), meson.join("hello.cu")).unwrap();
    let binaries = inline_code(&readme, "**Meson.**", "[binaries]");
    let cuda = inline_code(&readme, "**Meson.**", "cuda = ").replace("/home/you", home.to_str().unwrap());
    std::fs::write(meson.join("native.ini"), format!("{binaries}\n{cuda}\n")).unwrap();
    let setup = inline_code(&readme, "**Meson.**", "meson setup");
    let out =
        user(&right).current_dir(&meson).args(["-e", "-c", &format!("{setup}\nninja -C build")]).output().unwrap();
    assert!(out.status.success(), "{setup}: {}", shown(&out));
    assert!(stdout(&out).contains(&format!("{}", bin.join("nvcc").display())), "{}", shown(&out));
    run_smoke(&meson.join("build/hello"));
}

/// The inline code (`...`, its line breaks as spaces) that starts with `start` in the paragraph that begins with
/// `paragraph`.
fn inline_code(markdown: &str, paragraph: &str, start: &str) -> String {
    let at = markdown.find(paragraph).unwrap_or_else(|| panic!("no {paragraph:?} in the README"));
    let text = &markdown[at..at + markdown[at..].find("\n\n").unwrap_or(markdown.len() - at)];
    let text = text.replace('\n', " ");
    text.split('`')
        .skip(1)
        .step_by(2)
        .find(|code| code.starts_with(start))
        .unwrap_or_else(|| panic!("no `{start}...` in the README's {paragraph:?} paragraph"))
        .to_string()
}

/// `scripts/test.sh | tee log` (issue 60, rows 4 and 5): the script's own set-up steps, each done already here, then
/// the tests (here a stand-in `cargo` that prints two tests' lines at once): the pipe ends when the tests do, not up
/// to a minute later when the heartbeat's `sleep` would have let it go; and the script says how many tests it runs,
/// the M of the heartbeat's "N of M".
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_suites_script_through_a_pipe_ends_when_its_tests_do() {
    if real_toolkit("13.0").is_none() || !as_root("the Debian packages' check of scripts/install-deps.sh") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cargo = dir.path().join("cargo");
    let fake = "#!/bin/sh\ncase \"$*\" in\n  *--no-run*) echo '   Compiling nothing';;\n  *--list*) printf 'a: test\\nb: test\\n';;\n  *) echo 'test a ... ok'; echo 'test b ... ok';;\nesac\n";
    std::fs::write(&cargo, fake).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    #[allow(clippy::disallowed_methods)]
    let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap());
    let at = std::time::Instant::now();
    let out = Command::new("bash")
        .args(["-c", "scripts/test.sh 2>&1 | cat"])
        .current_dir(repo)
        .env("PATH", path)
        .output()
        .unwrap();
    let took = at.elapsed();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", shown(&out));
    assert!(text.contains("test a ... ok") && text.contains("test b ... ok"), "{text}");
    assert!(text.contains(" in, 2 tests to run\n"), "the script did not say how many tests it runs:\n{text}");
    // The set-up steps take a second or two here; the heartbeat's sleep would have held the pipe for 60 s.
    assert!(took < std::time::Duration::from_secs(40), "the pipe ended {took:?} after the script began:\n{text}");
}
