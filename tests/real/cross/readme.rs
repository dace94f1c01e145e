//! The README's Jetson recipe, built as written (issue 33).

use super::*;

/// The README, whose Jetson recipe `issue_33_readme_jetson_recipe_builds_as_written` builds as written.
const README: &str = include_str!("../../../README.md");

/// One TOML block of the README's "Cross-compiling for Jetson" paragraph, and the cross targets of
/// scripts/fetch-toolkits.sh (`jetson-12.4`, `sbsa-13.2`, ...) that the prose since the block before names: the
/// toolkits the README says it works with.
struct Recipe {
    toml: String,
    targets: Vec<String>,
}

/// The README's Jetson recipes: every fenced ```toml block from the paragraph's bold title to the next bold title or
/// heading, each with the targets its prose names.
fn readme_jetson_recipes(readme: &str) -> Vec<Recipe> {
    const TITLE: &str = "**Cross-compiling for Jetson.**";
    let lines: Vec<&str> = readme.lines().collect();
    let start = lines.iter().position(|l| l.starts_with(TITLE)).expect("README.md has no Jetson paragraph");
    let mut recipes = Vec::new();
    let mut prose = String::new();
    let mut block: Option<String> = None;
    for line in &lines[start..] {
        match block.as_mut() {
            Some(text) if line.starts_with("```") => {
                let toml = std::mem::take(text);
                recipes.push(Recipe { toml, targets: fetch_targets(&prose) });
                prose.clear();
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None if *line == "```toml" => block = Some(String::new()),
            None if (line.starts_with("**") && !line.starts_with(TITLE)) || line.starts_with('#') => break,
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    assert!(block.is_none(), "the README's Jetson paragraph has an unclosed ```toml block");
    recipes
}

/// The cross target names in the code spans of `prose`: `scripts/fetch-toolkits.sh sbsa-13.2` and `sbsa-13.5` both
/// count.
fn fetch_targets(prose: &str) -> Vec<String> {
    let spans = prose.split('`').skip(1).step_by(2);
    let is_release = |r: &str| r.split_once('.').is_some_and(|(a, b)| [a, b].iter().all(|p| p.parse::<u32>().is_ok()));
    let words = spans.flat_map(str::split_whitespace);
    let targets = words.filter(|w| {
        w.split_once('-').is_some_and(|(kind, release)| matches!(kind, "jetson" | "sbsa") && is_release(release))
    });
    targets.map(String::from).collect()
}

/// `sm_87` for `8.7`: the machine code a capability of the recipe's `[gpu]` list must put into the object.
fn recipe_cubins(toml_text: &str) -> BTreeSet<String> {
    let table: toml::Table =
        toml::from_str(toml_text).unwrap_or_else(|e| panic!("the README's TOML: {e}\n{toml_text}"));
    let caps = table.get("gpu").and_then(|g| g.get("capabilities")).and_then(|c| c.as_array());
    let caps = caps.unwrap_or_else(|| panic!("the README's TOML has no [gpu] capabilities:\n{toml_text}"));
    caps.iter().map(|c| format!("sm_{}", c.as_str().expect("a capability is a string").replace('.', ""))).collect()
}

/// Issue 33, item 4: the README's Jetson recipe failed as written with the README's own default release (13.0: exit
/// 65), and said neither which releases it needs nor how to fetch the target files. Each TOML block of the paragraph,
/// taken from README.md itself, is written to a file as it stands and used exactly as the README says: the wrapper
/// installed as `nvcc` before the `bin` of the toolkit the prose names (`scripts/fetch-toolkits.sh NAME`), the file
/// named by `NVCC_WRAPPER_CONFIG`. `explain` must show the cross build, and a compile must give an aarch64 object
/// holding exactly the block's machine code. 13.0 and 13.1, which the README says build nothing for Orin, must
/// refuse every block (exit 65) before nvcc makes anything.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_33_readme_jetson_recipe_builds_as_written() {
    let recipes = readme_jetson_recipes(README);
    assert!(!recipes.is_empty(), "the README's Jetson paragraph has no ```toml block");
    let (Some(cuobjdump), Some(_), Some(_)) =
        (real_tool("cuobjdump"), real_program("file"), real_program("aarch64-linux-gnu-g++"))
    else {
        return;
    };
    let config_call = |sb: &RealSandbox, cmd: &mut assert_cmd::Command, toml: &str| {
        sb.prepare(cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", sb.write("jetson.toml", toml));
    };
    for recipe in &recipes {
        assert!(
            !recipe.targets.is_empty(),
            "the README names no `scripts/fetch-toolkits.sh` target before this block:\n{}",
            recipe.toml
        );
        let cubins = recipe_cubins(&recipe.toml);
        for name in &recipe.targets {
            let Some(root) = real_cross_target(name) else { continue };
            let sb = RealSandbox::new(&root);
            sb.write("k.cu", KERNEL_CU);

            let mut explain = assert_cmd::Command::new(WRAPPER);
            config_call(&sb, &mut explain, &recipe.toml);
            let out = explain.args(["explain", "--", "-c", "k.cu", "-o", "k.o"]).output().unwrap();
            let text = stdout(&out);
            assert!(out.status.success(), "{name}: explain failed ({:?}):\n{}{}", out.status, text, stderr(&out));
            let target = format!("target:      {} (cross-compiled)", cross_target_dir(name));
            assert!(text.contains(&target), "{name}: no `{target}`:\n{text}");
            assert!(text.contains(&format!("{}/bin/nvcc", root.display())), "{name}: another nvcc:\n{text}");
            for sm in &cubins {
                let arch = sm.replace("sm_", "compute_");
                assert!(text.contains(&format!("-gencode=arch={arch},code={sm}")), "{name}: no {sm}:\n{text}");
            }

            let mut nvcc = sb.nvcc();
            config_call(&sb, &mut nvcc, &recipe.toml);
            let out = nvcc.args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
            assert!(out.status.success(), "{name}: nvcc failed ({:?}): {}", out.status, stderr(&out));
            let object = sb.file("k.o");
            let file = stdout(&std::process::Command::new("file").arg("-b").arg(&object).output().unwrap());
            assert!(file.starts_with("ELF 64-bit") && file.contains(AARCH64.file), "{name}: {file}");
            assert!(file.contains("relocatable"), "{name}: {file}");
            assert_eq!(embedded(&cuobjdump, &object), cubins, "{name}");
        }
    }

    // The README: "13.0 and 13.1 ... build nothing for Orin: the wrapper refuses both files (exit 65)".
    for release in ["13.0", "13.1"] {
        let Some(root) = real_toolkit(release) else { continue };
        for recipe in &recipes {
            let sb = RealSandbox::new(&root);
            sb.write("k.cu", KERNEL_CU);
            let mut nvcc = sb.nvcc();
            config_call(&sb, &mut nvcc, &recipe.toml);
            let out = nvcc.args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(65), "{release}:\n{}{err}", recipe.toml);
            assert!(err.contains("nvcc-wrapper: error:") && err.contains(release), "{release}: {err}");
            assert!(!sb.file("k.o").exists(), "{release}: nvcc ran although the wrapper refused: {err}");
        }
    }
}
