//! The configuration places (issue 33, item 2) on the real file system: the machine's `/etc/nvcc-wrapper/config.toml`
//! (as root, a tmpfs over `/etc` in a mount namespace of its own, so the machine's own `/etc` is never touched),
//! the user's file before it, and a real nvcc 13.0 found through the file that applies. The twin of
//! tests/wrapper/config_places.rs.

use std::process::Command;

use crate::support::*;

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_33_the_machines_file_in_etc_applies_when_no_nearer_one_is_there() {
    let Some(root) = real_toolkit("13.0") else { return };
    if real_program("unshare").is_none() || !as_root("mounting over /etc") {
        return;
    }
    let sb = RealSandbox::new(&root);
    // The real nvcc is off PATH: only the machine's file can name it.
    let nvcc = root.join("bin/nvcc");
    sb.write("machine.toml", &format!("nvcc = \"{}\"\n[gpu]\ncapabilities = [\"8.9\"]\n", nvcc.display()));
    sb.write(
        "home/.config/nvcc-wrapper/user.toml",
        &format!("nvcc = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", nvcc.display()),
    );
    std::fs::create_dir_all(sb.file("empty")).unwrap();
    let explain = |with_user_file: bool| {
        let user = sb.file("home/.config/nvcc-wrapper/config.toml");
        if with_user_file {
            std::fs::copy(sb.file("home/.config/nvcc-wrapper/user.toml"), &user).unwrap();
        } else {
            let _ = std::fs::remove_file(&user);
        }
        let script = format!(
            "mount -t tmpfs tmpfs /etc && mkdir /etc/nvcc-wrapper && cp machine.toml /etc/nvcc-wrapper/config.toml && \
             exec {} explain -- -c k.cu",
            shlex::try_quote(WRAPPER).unwrap()
        );
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", sb.file("empty").display()))
            .env("HOME", sb.file("home"))
            .current_dir(sb.file(""))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    let text = explain(false);
    assert!(text.starts_with("config file: /etc/nvcc-wrapper/config.toml (the machine's)\n"), "{text}");
    assert!(
        text.contains(&format!(
            "  looked at: {} (the user's): none there",
            sb.file("home/.config/nvcc-wrapper/config.toml").display()
        )),
        "{text}"
    );
    assert!(text.contains(&format!("real nvcc:   {}", nvcc.display())), "{text}");
    assert!(text.contains("-gencode=arch=compute_89,code=sm_89"), "{text}");
    // The user's file comes first, and the machine's is said to be ignored whole (issue 39).
    let text = explain(true);
    assert!(text.contains("(the user's)\n"), "{text}");
    assert!(text.contains("-gencode=arch=compute_86,code=sm_86"), "{text}");
    let ignored = "  ignored: /etc/nvcc-wrapper/config.toml (the machine's): the user's comes first, and files are never merged\n";
    assert!(text.contains(ignored), "{text}");
    // And the machine's own /etc was never touched.
    assert!(!std::path::Path::new("/etc/nvcc-wrapper").exists());
}
