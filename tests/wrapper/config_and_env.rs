//! The configuration file and the wrapper's environment switches, as a user meets them.

use crate::support::*;

#[test]
fn config_named_by_env_chooses_the_nvcc() {
    let sb = Sandbox::new();
    // Move the fake off PATH: only the config can find it.
    std::fs::rename(&sb.cuda_bin, sb.dir.path().join("elsewhere")).unwrap();
    let config = sb.write("conf/wrapper.toml", "nvcc = \"../elsewhere/nvcc\"\n");
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).arg("-c").assert().success();
    assert!(sb.recorded().argv[0].ends_with(b"conf/../elsewhere/nvcc"));
}

#[test]
fn config_next_to_the_installed_nvcc_is_found() {
    let sb = Sandbox::new();
    sb.write("wrapper/share/nvcc-wrapper/config.toml", "[gpu]\nbogus = 1\n");
    let out = sb.nvcc().env_remove("NVCC_WRAPPER_CONFIG").arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(78));
    let err = stderr(&out);
    assert!(err.contains("wrapper/bin/../share/nvcc-wrapper/config.toml:2:1"), "{err}");
    assert!(err.contains("bogus"), "{err}");
}

/// A configured `nvcc` or `compat-data` that names the wrong thing is said with the file and the line that set it
/// (issue 51: every key carries its origin), with the exit code of what is wrong: 127 for an nvcc that is not there,
/// 78 for a setting of the file.
#[test]
fn a_configured_nvcc_or_compat_data_that_names_the_wrong_thing_names_its_line() {
    let sb = Sandbox::new();
    let config = sb.write("c.toml", "reproducible = true\nnvcc = \"/nowhere/nvcc\"\n");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    let at = format!("{}:2", config.display());
    assert!(stderr(&out).contains(&format!("`nvcc` (/nowhere/nvcc, from {at}) does not exist")), "{}", stderr(&out));
    let config = sb.write("d.toml", "\ncompat-data = \"c.toml\"\n");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let said = format!(
        "`compat-data` ({}, from {}:2) is not a directory",
        sb.dir.path().join("c.toml").display(),
        config.display()
    );
    assert!(stderr(&out).contains(&said), "{}", stderr(&out));
    assert!(!sb.ran());
}

/// A configured compiler that is not there is left out, as before, and `explain` names the key and the line that
/// named it, each candidate its own; a release the config states is named with its line too (issue 51: every key
/// carries its origin).
#[test]
fn a_configured_compiler_left_out_and_a_stated_release_name_their_lines() {
    let sb = Sandbox::new();
    let text = format!(
        "cuda-version = \"13.0\"\n[host-compiler]\nstdenv = \"/nowhere/g++\"\ncandidates = [\n  {{ path = \"{}\", family = \"gcc\", version = \"12.2.0\" }},\n  \"/nowhere/clang++\",\n]\n",
        sb.cc.display()
    );
    let config = sb.write("c.toml", &text);
    let out =
        sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let at = |line: u32| format!("{}:{line}", config.display());
    for said in [
        format!("release:     13.0 (from `cuda-version` in {})", at(1)),
        format!(
            "note: the stdenv compiler is left out: `[host-compiler] stdenv` (/nowhere/g++, from {}) is not",
            at(3)
        ),
        format!("note: candidate left out: `[host-compiler] candidates` (/nowhere/clang++, from {}) is not", at(6)),
    ] {
        assert!(stdout(&out).contains(&said), "no `{said}` in:\n{}", stdout(&out));
    }
    // With nothing left to choose from, the error names each compiler the config named, not "none" of them.
    let text =
        "cuda-version = \"13.0\"\n[host-compiler]\nstdenv = \"/nowhere/g++\"\ncandidates = [\"/nowhere/clang++\"]\n";
    let config = sb.write("d.toml", text);
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    let at = |line: u32| format!("{}:{line}", config.display());
    let said = format!(
        "and what the config names was left out (`[host-compiler] stdenv` (/nowhere/g++, from {}), `[host-compiler] \
         candidates` (/nowhere/clang++, from {}))",
        at(3),
        at(4)
    );
    assert!(stderr(&out).contains(&said), "no `{said}` in:\n{}", stderr(&out));
    assert!(!sb.ran());
}

#[test]
fn bad_config_files_are_errors_with_exit_78() {
    let sb = Sandbox::new();
    // (file, text, what stderr says): the position; then (issue 60, row 7) where a key belongs, the form a key takes,
    // and which key or table is there twice; and (row 14) a capability written with a decimal comma, named whole.
    let cases = [
        ("unknown.toml", "nvcc = \"x\"\nhost-compilers = []\n", "unknown.toml:2:1"),
        ("syntax.toml", "[gpu\ncapabilities = 1\n", "syntax.toml:1:"),
        ("value.toml", "[gpu]\nforward-compat = \"yes\"\n", "value.toml:2:18"),
        ("above.toml", "capabilities = [\"8.6\"]\n[gpu]\n", "help: `capabilities` is a key of `[gpu]`: put it below a `[gpu]` line"),
        ("table.toml", "host-compiler = \"clang++-21\"\n", "help: `host-compiler` is a table: write `[host-compiler]` on a line of its own, and its keys below it (`stdenv`"),
        ("array.toml", "[host-compiler]\ncandidates = \"g++-11\"\n", "help: `candidates` takes an array: `candidates = [\"g++-11\"]`"),
        ("twice.toml", "[gpu]\ncapabilities = [\"8.6\"]\n[gpu]\nforward-compat = true\n", "twice.toml:3:2: the table `[gpu]` is opened twice\nhelp: put all of its keys below one `[gpu]` line"),
        ("key-twice.toml", "[gpu]\nforward-compat = true\nforward-compat = false\n", "the key `forward-compat` is set twice in one table\nhelp: keep one of the two lines"),
        ("comma.toml", "[gpu]\ncapabilities = [\"8,6\"]\n", "`8,6` is not a GPU target: did you mean 8.6?"),
    ];
    for (name, text, said) in cases {
        let path = sb.write(name, text);
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &path).arg("-c").output().unwrap();
        assert_eq!(out.status.code(), Some(78), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{name}: {}", stderr(&out));
        assert!(!sb.ran(), "{name}: nvcc must not run with a bad config");
    }
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", sb.dir.path().join("missing.toml")).arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(stderr(&out).contains("cannot read config file") && stderr(&out).contains("missing.toml"));
}

#[test]
fn options_file_problems_exit_66() {
    let sb = Sandbox::new();
    let out = sb.nvcc().args(["-optf", "nope.opt", "-c", "a.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    assert!(stderr(&out).contains("nope.opt"));
    sb.write("self.opt", "-c\n-optf self.opt\n");
    let out = sb.nvcc().args(["--options-file=self.opt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    assert!(stderr(&out).contains("includes itself"));
    assert!(!sb.ran());
}

#[test]
fn dry_run_prints_the_command_and_runs_nothing() {
    let sb = Sandbox::new();
    let out = sb.nvcc().env("NVCC_WRAPPER_DRY_RUN", "1").args(["-c", "my file.cu"]).output().unwrap();
    assert!(out.status.success());
    let nvcc = sb.cuda_bin.join("nvcc");
    assert_eq!(stdout(&out), format!("{} {} {} -c 'my file.cu'\n", nvcc.display(), sb.ccbin(), sb.compression()));
    assert!(!sb.ran());
}

#[test]
fn disable_execs_untouched_without_parsing() {
    let sb = Sandbox::new();
    // The options file does not exist: with the wrapper disabled nobody reads it but nvcc.
    sb.nvcc().env("NVCC_WRAPPER_DISABLE", "1").args(["-optf", "nope.opt", "-c"]).assert().success();
    assert_eq!(sb.recorded().args(), ["-optf", "nope.opt", "-c"]);
}

#[test]
fn debug_log_goes_to_stderr_and_shows_both_commands() {
    let sb = Sandbox::new();
    let out = sb.nvcc().env("NVCC_WRAPPER_LOG", "debug").args(["-c", "a b.cu"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(err.contains("nvcc-wrapper[DEBUG]: you ran:     nvcc -c 'a b.cu'\n"), "{err}");
    let runs = format!(
        "nvcc-wrapper[DEBUG]: runs:        {} {} {} -c 'a b.cu'\n",
        sb.cuda_bin.join("nvcc").display(),
        sb.ccbin(),
        sb.compression()
    );
    assert!(err.contains(&runs), "{err}");
    assert!(
        err.contains(&format!("nvcc-wrapper[DEBUG]:   + {} (before your arguments): the stdenv compiler", sb.ccbin())),
        "{err}"
    );
    // The log's lines are `explain`'s, in the same order (the probe cache's own lines aside: the release is probed).
    assert!(
        err.contains("nvcc-wrapper[DEBUG]: probe cache off (no XDG_CACHE_HOME and no HOME): probing nvcc"),
        "{err}"
    );
    let explain =
        sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).args(["explain", "--", "-c", "a b.cu"]).output();
    let logged: String = err
        .lines()
        .filter_map(|l| l.strip_prefix("nvcc-wrapper[DEBUG]: "))
        .filter(|l| !l.starts_with("probe cache"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(logged, stdout(&explain.unwrap()));
}

#[test]
fn bad_switch_values_exit_64() {
    let sb = Sandbox::new();
    for (var, value) in [
        ("NVCC_WRAPPER_DRY_RUN", "maybe"),
        ("NVCC_WRAPPER_DISABLE", "2"),
        ("NVCC_WRAPPER_LOG", "[[["),
        ("NVCC_WRAPPER_LOG", "garbage"),
        ("NVCC_WRAPPER_DEPTH", "x"),
    ] {
        let out = sb.nvcc().env(var, value).arg("-c").output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{var}={value}: {}", stderr(&out));
        assert!(stderr(&out).contains(var), "{var}");
    }
}

#[test]
fn explain_shows_what_would_run() {
    let sb = Sandbox::new();
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .args(["explain", "--", "-c", "a.cu", "--version"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("config file: {}", sb.config.display())), "{text}");
    assert!(text.contains(&format!("real nvcc:   {}", sb.cuda_bin.join("nvcc").display())), "{text}");
    assert!(text.contains("you ran:     nvcc -c a.cu --version"), "{text}");
    assert!(text.contains("`--version` only asks nvcc for information"), "{text}");
}

#[test]
fn wrapper_version_and_usage_errors() {
    let sb = Sandbox::new();
    sb.wrapper_cli()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("nvcc-wrapper {}\n", env!("CARGO_PKG_VERSION")));
    sb.wrapper_cli().arg("frobnicate").assert().code(2);
}

/// Issue 33, item 6: the help for a broken `compat-data` table pointed at compat-data/README.md "in the source",
/// which an installed user does not have. `nvcc-wrapper compat dump DIR` writes the built-in tables as the binary was
/// built with them (each with its comments on the fields): the files of compat-data/, byte for byte, which a config's
/// `compat-data` then reads as they are; nothing is overwritten; the help names the command.
#[test]
fn compat_dump_writes_the_built_in_tables_which_a_config_can_start_from() {
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("tables");
    let out = sb.wrapper_cli().args(["compat", "dump"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("set `compat-data = "), "{}", stdout(&out));
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-data");
    let mut files = 0;
    for entry in std::fs::read_dir(&repo).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_name().unwrap();
            assert_eq!(std::fs::read(dir.join(name)).unwrap(), std::fs::read(&path).unwrap(), "{name:?}");
            files += 1;
        }
    }
    assert_eq!(files, std::fs::read_dir(&dir).unwrap().count(), "compat dump wrote another set of files");
    assert!(files >= 8);

    // Nothing is overwritten: exit 2, naming the file.
    let out = sb.wrapper_cli().args(["compat", "dump"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("host-compilers.toml already exists"), "{}", stderr(&out));

    // A config reads the dump as it is; a broken row names the file and the command.
    let config = sb.write("config.toml", &format!("compat-data = {:?}\n", dir.display().to_string()));
    let explain =
        || sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    let out = explain();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.join("launchers.toml")).unwrap();
    std::fs::write(dir.join("launchers.toml"), text.replacen("last-version = \"0.16\"", "last-version = \"0.15\"", 1))
        .unwrap();
    let out = explain();
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("launchers.toml") && stderr(&out).contains("help: `nvcc-wrapper compat dump DIR`"),
        "{}",
        stderr(&out)
    );

    // A host-compilers.toml dumped before its rows said `accepts = { gcc, clang }` (issue 40): the old column is
    // named with its line, and the help says what it became.
    std::fs::remove_file(dir.join("launchers.toml")).unwrap();
    let text = std::fs::read_to_string(dir.join("host-compilers.toml")).unwrap();
    let old = text.replacen("accepts = { gcc = 9, clang = 9 }", "newest-gcc = 9\nnewest-clang = 9", 1);
    assert_ne!(old, text);
    std::fs::write(dir.join("host-compilers.toml"), old).unwrap();
    let out = explain();
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("host-compilers.toml:") && said.contains("unknown field `newest-"), "{said}");
    assert!(said.contains("help: host-compilers.toml's rows now say `accepts = { gcc = N, clang = M }`"), "{said}");
    assert_eq!(said.lines().count(), 2, "{said}");
}

/// Issue 38, item 9: `compat dump` wrote the tables one by one, so a name that existed stopped it with some written,
/// and a full disk left a file cut short. Every name is checked before one is written, and a failure leaves nothing.
#[test]
fn compat_dump_writes_all_of_its_files_or_none() {
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("tables");
    std::fs::create_dir_all(&dir).unwrap();
    sb.write("tables/threads.toml", "mine\n");
    let out = sb.wrapper_cli().args(["compat", "dump"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("threads.toml already exists"), "{}", stderr(&out));
    let names = |dir: &std::path::Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(names(&dir), ["threads.toml"], "something was written before the check");
    assert_eq!(std::fs::read_to_string(dir.join("threads.toml")).unwrap(), "mine\n");
    // A full disk, as a file-size limit of 8 KiB makes it for this process (the largest table is bigger).
    let full = sb.dir.path().join("full");
    let mut cmd = std::process::Command::new(WRAPPER);
    cmd.args(["compat", "dump"]).arg(&full).env_clear().env("PATH", sb.path());
    // SAFETY: setrlimit and signal are async-signal-safe and change only the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 8192, rlim_max: 8192 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    assert!(names(&full).is_empty(), "a failed dump left {:?}", names(&full));
}

/// An `NVCC_WRAPPER_*` variable no one reads (issue 60, row 8: `NVCC_WRAPPER_CAPABILITES=8.6`, a typo, and
/// `NVCC_WRAPPER_NVCC`, a guess, were ignored silently): the call goes on as without it, with a warning naming the
/// variable and, for a typo, the one meant; explain shows the warning, and doctor counts it a problem.
#[test]
fn an_unknown_wrapper_variable_is_a_warning_that_names_the_one_meant() {
    let sb = Sandbox::new();
    let out = sb.nvcc().env("NVCC_WRAPPER_CAPABILITES", "8.6").args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        warnings(&out),
        ["nvcc-wrapper: warning: $NVCC_WRAPPER_CAPABILITES is not a variable the wrapper reads, so it changes nothing: did you mean NVCC_WRAPPER_CAPABILITIES?"]
    );
    let want = [sb.ccbin(), sb.compression(), "-c".into(), "k.cu".into()];
    assert_eq!(sb.recorded().args(), want, "the typo changed the call");

    let guess = "$NVCC_WRAPPER_NVCC is not a variable the wrapper reads, so it changes nothing: `man nvcc-wrapper` lists the ones it reads, and the config file's keys set the rest";
    let guessed = || {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_CONFIG", &sb.config).env("NVCC_WRAPPER_NVCC", "/usr/bin/nvcc");
        cmd
    };
    let out = guessed().args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("  warning: {guess}\n")), "{}", stdout(&out));
    let out = guessed().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains(&format!("problem: {guess}")), "{}", stdout(&out));
    // The suite's own variables and every one the wrapper reads are known: no warning.
    let mut known = sb.nvcc();
    let out =
        known.env("NVCC_WRAPPER_CACHE", "/c").env("NVCC_WRAPPER_LOG", "warn").args(["-c", "k.cu"]).output().unwrap();
    assert!(warnings(&out).is_empty(), "{}", stderr(&out));
}

/// `compat show RELEASE` (issue 60, row 18: no command answered "which GCC does 12.4 take"): the host compilers and
/// the GPU capabilities the tables give one release; a release they do not know is a usage error with the range.
#[test]
fn compat_show_says_what_one_release_accepts() {
    let sb = Sandbox::new();
    let out = sb.wrapper_cli().args(["compat", "show", "12.4"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("nvcc 12.4\n  host compilers:   GCC up to 13 and Clang up to 17 ("), "{text}");
    assert!(text.contains("\n  GPU capabilities: 5.0 ") && text.contains(" 9.0a"), "{text}");
    assert!(!text.contains(" 10.0"), "12.4 compiles nothing for Blackwell:\n{text}");
    for wrong in ["12.99", "12", "twelve", "99.0"] {
        let out = sb.wrapper_cli().args(["compat", "show", wrong]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{wrong}: {}", stderr(&out));
        assert!(stderr(&out).contains("is not an NVCC release the tables know"), "{wrong}: {}", stderr(&out));
    }
}

/// `compat nix-answers` prints the file the Nix side reads, byte for byte (issue 58: one source of truth; the Nix
/// package's `passthru.tests.answers` compares the file it is packaged with against its binary the same way). A config
/// naming other tables changes nothing: the file is of the built-in ones, which the binary Nix packages holds.
#[test]
fn compat_nix_answers_prints_the_file_nix_reads() {
    let sb = Sandbox::new();
    let file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/nix/nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper/answers.json"
    ))
    .unwrap();
    let out = sb.wrapper_cli().args(["compat", "nix-answers"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == file, "compat nix-answers differs from makeNvccWrapper's answers.json:\n{}", stdout(&out));
    let dumped = sb.dir.path().join("tables");
    assert!(sb.wrapper_cli().args(["compat", "dump"]).arg(&dumped).output().unwrap().status.success());
    let table = dumped.join("host-compilers.toml");
    let built_in = std::fs::read_to_string(&table).unwrap();
    let edited = built_in.replacen("accepts = { gcc = 9,", "accepts = { gcc = 8,", 1);
    assert_ne!(edited, built_in, "the dumped table's first row moved");
    std::fs::write(&table, edited).unwrap();
    let config = sb.dir.path().join("other-tables.toml");
    std::fs::write(&config, format!("compat-data = {:?}\n", dumped.display().to_string())).unwrap();
    let out = sb.wrapper_cli().args(["compat", "nix-answers"]).env("NVCC_WRAPPER_CONFIG", &config).output().unwrap();
    assert!(out.status.success() && out.stdout == file, "with compat-data: {}", stderr(&out));
}
