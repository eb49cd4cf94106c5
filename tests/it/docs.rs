//! Meta-tests: every rule has a doc, fixtures and executable examples; every
//! doc and fixture folder has a rule; `rules/README.md` is current; the
//! README's example output is what gpulint prints.

use crate::common;

use common::root;
use gpulint::engine::{check_text, config::Config};
use gpulint::rules::{RULES, Target, all_meta};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[test]
fn every_rule_has_a_doc_and_every_doc_a_rule() {
    let registered: BTreeSet<String> = RULES.iter().map(|r| r.code.to_string()).collect();
    let docs: BTreeSet<String> = std::fs::read_dir(root().join("rules"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            name.strip_suffix(".md")
                .filter(|n| *n != "README")
                .map(str::to_string)
        })
        .collect();
    assert_eq!(
        registered, docs,
        "rules/*.md and the registry in crates/gpulint-rules/src/lib.rs differ"
    );
    for (rule, meta) in RULES.iter().zip(all_meta()) {
        // The targets are what the check runs on; only the engine's own
        // rules (suppressions) run on none.
        if !meta.applies_to(Target::Suppression) {
            assert_eq!(meta.targets, rule.check.targets(), "{}", rule.code);
        }
        assert_eq!(meta.code, rule.code);
        // The doc is titled by the declared name and the code.
        let title = format!("# {} ({})\n", meta.name, rule.code);
        assert!(
            meta.body.starts_with(&title),
            "rules/{}.md must start with `{}`",
            rule.code,
            title.trim_end()
        );
        assert!(
            meta.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{}: name must be kebab-case",
            rule.code
        );
        for section in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Use instead",
            "## Fix safety",
        ] {
            assert!(
                meta.body.contains(section),
                "rules/{}.md lacks `{section}`",
                rule.code
            );
        }
    }
}

#[test]
fn every_rule_has_fixtures_and_every_fixture_folder_a_rule() {
    for rule in RULES {
        let dir = root().join("fixtures").join(rule.code.as_str());
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|_| panic!("fixtures/{} is missing", rule.code))
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("invalid") && !n.ends_with(".snap")),
            "fixtures/{} has no invalid case",
            rule.code
        );
        assert!(
            names.iter().any(|n| n.starts_with("valid")),
            "fixtures/{} has no valid case",
            rule.code
        );
    }
    for entry in std::fs::read_dir(root().join("fixtures")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if !name.starts_with('_') {
            assert!(
                RULES.iter().any(|r| r.code.as_str() == name),
                "fixtures/{name} belongs to no rule"
            );
        }
    }
}

/// A rule module is declared with a plain `mod` line (so rustfmt reaches
/// it) and registered in `for_each_rule!`; a module left out of the registry
/// would compile and never run.
#[test]
fn every_rule_module_is_registered() {
    let mut modules = 0;
    for target in std::fs::read_dir(root().join("crates/gpulint-rules/src")).unwrap() {
        let target = target.unwrap().path();
        // A family is a folder with its `mod.rs`; a folder beside a file of
        // its name (`container_context/`) holds that module's parts.
        if !target.is_dir() || !target.join("mod.rs").exists() {
            continue;
        }
        for file in std::fs::read_dir(&target).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().to_string();
            let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "mod") else {
                continue;
            };
            modules += 1;
            let code = module.split('_').next().unwrap().to_ascii_uppercase();
            assert!(
                RULES.iter().any(|r| r.code.as_str() == code),
                "{}/{name} is not registered in for_each_rule! (crates/gpulint-base/src/codes.rs)",
                target.display()
            );
            // A rule lives in its code's family: `SHM` in `shm/`, `DF` in
            // `dockerfile/` (scripts/new_rule.py's FAMILIES).
            let family = target.file_name().unwrap().to_string_lossy().to_string();
            let prefix = code.trim_end_matches(|c: char| c.is_ascii_digit());
            let expected = match prefix {
                "DF" => "dockerfile",
                "SUP" => "suppression",
                "DEV" => "devcontainer",
                other => &other.to_ascii_lowercase(),
            };
            assert_eq!(
                family, expected,
                "{name} belongs in crates/gpulint-rules/src/{expected}/"
            );
        }
    }
    assert_eq!(modules, RULES.len(), "one module per registered rule");
}

/// The doc's examples tagged `tag` (`bad`, `good`), each with the file
/// name it is linted as (`yaml` blocks as YAML, `dockerfile` blocks as a
/// Dockerfile, `bash` blocks as a shell script, `jsonc` blocks as a
/// `.devcontainer.json`).
fn code_blocks(body: &str, tag: &str) -> Vec<(&'static str, String)> {
    let mut blocks = Vec::new();
    for (language, file) in [
        ("yaml", "example.yaml"),
        ("dockerfile", "Dockerfile"),
        ("bash", "script.sh"),
        ("jsonc", ".devcontainer.json"),
    ] {
        let fence = format!("```{language} {tag}\n");
        blocks.extend(body.match_indices(&fence).map(|(i, _)| {
            let rest = &body[i + fence.len()..];
            (
                file,
                rest[..rest.find("```").expect("closed block")].to_string(),
            )
        }));
    }
    blocks
}

#[test]
fn doc_examples_are_true() {
    for (rule, meta) in RULES.iter().zip(all_meta()) {
        let mut config = Config::default();
        // `ALL` and the rule itself, which may be opt-in.
        config.set_selection(&["ALL".to_string(), rule.code.to_string()], &[]);
        let run = |(file, text): (&str, String)| check_text(PathBuf::from(file), text, &config);
        let bad = code_blocks(meta.body, "bad");
        let good = code_blocks(meta.body, "good");
        assert!(
            !bad.is_empty() && !good.is_empty(),
            "rules/{}.md needs `bad` and `good` examples (`yaml bad`, `dockerfile good`, ...)",
            rule.code
        );
        for example in bad {
            let report = run(example);
            assert!(
                report.error.is_none(),
                "{}: bad example does not parse",
                rule.code
            );
            assert!(
                report.diagnostics.iter().any(|d| d.code == rule.code),
                "rules/{}.md: the bad example does not trigger the rule",
                rule.code
            );
        }
        for example in good {
            let report = run(example);
            assert!(
                report.error.is_none(),
                "{}: good example does not parse",
                rule.code
            );
            let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
            assert!(
                codes.is_empty(),
                "rules/{}.md: the good example has findings {codes:?}",
                rule.code
            );
        }
    }
}

/// The rule index, generated from the rules' declarations.
fn rules_index() -> String {
    let mut out = String::from(
        "# Rules\n\nGenerated from each rule's declaration (`declare_rule!`) by `UPDATE_SNAPSHOTS=1 cargo test --test it docs::`; do not edit by hand.\n`gpulint rule CODE` prints a rule's doc.\n\n| Code | Name | Checks | Severity | Fix | Summary |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for meta in all_meta() {
        let fix = meta.fix.as_str();
        let targets: Vec<String> = meta
            .targets
            .iter()
            .map(|t| format!("{t:?}").to_lowercase())
            .collect();
        let opt_in = if meta.opt_in { " (opt-in)" } else { "" };
        out.push_str(&format!(
            "| [{code}]({code}.md) | {} | {} | {}{opt_in} | {fix} | {} |\n",
            meta.name,
            targets.join(", "),
            meta.severity,
            meta.summary,
            code = meta.code
        ));
    }
    out
}

#[test]
fn rules_readme_is_current() {
    let path = root().join("rules").join("README.md");
    common::assert_snapshot(&path, &rules_index()).unwrap();
}

/// The README's quick start is two commands: the first builds gpulint and
/// runs it on an example, the second is the test suite, and CI (`.ci/run`)
/// runs that same test command, so a newcomer's green run is CI's.
#[test]
fn readme_quick_start_is_what_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Quick start")
        .nth(1)
        .expect("README.md has a `## Quick start` section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the quick start has a ```sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(|line| line.split(" #").next().unwrap().trim())
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "the quick start has two commands: {commands:?}"
    );
    assert!(
        commands[0].starts_with("cargo run") && commands[0].contains(" check "),
        "the first command builds gpulint and checks an example: {}",
        commands[0]
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line.trim() == commands[1]),
        ".ci/run does not run the quick start's test command `{}`",
        commands[1]
    );
}

/// Whether `actual` is `expected`, where a line `...` in `expected` stands
/// for any run of lines (none included).
fn matches_with_ellipsis(expected: &str, actual: &str) -> bool {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let pieces: Vec<&[&str]> = expected.split(|l| *l == "...").collect();
    let mut at = 0;
    for (i, piece) in pieces.iter().enumerate() {
        let (first, last) = (i == 0, i == pieces.len() - 1);
        let found = if first {
            actual.starts_with(piece).then_some(0)
        } else if last {
            (actual.len() >= at + piece.len() && actual.ends_with(piece))
                .then(|| actual.len() - piece.len())
        } else {
            (at..=actual.len().saturating_sub(piece.len()))
                .find(|&start| actual[start..].starts_with(piece))
        };
        let Some(start) = found.filter(|&start| start >= at) else {
            return false;
        };
        at = start + piece.len();
    }
    !pieces.is_empty() && (pieces.len() > 1 || at == actual.len())
}

#[test]
fn the_ellipsis_stands_for_any_lines() {
    assert!(matches_with_ellipsis("a\nb", "a\nb\n"));
    assert!(!matches_with_ellipsis("a\nb", "a\nb\nc"));
    assert!(matches_with_ellipsis("a\n...\nz", "a\nb\nc\nz"));
    assert!(matches_with_ellipsis("a\n...\nz", "a\nz"));
    assert!(!matches_with_ellipsis("a\n...\nz", "a\nb\nz\ny"));
    assert!(matches_with_ellipsis("a\n...\nc\n...\nz", "a\nb\nc\nd\nz"));
    assert!(!matches_with_ellipsis("a\n...\nd\n...\nz", "a\nb\nc\nz"));
}

/// Runs the gpulint built with the tests as the README's commands run it,
/// from the repository root, without colour.
fn gpulint(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// The quick start's first command prints what the README shows after it
/// (the `= fix:` line included, which an earlier README left out).
#[test]
fn readme_quick_start_output_is_what_gpulint_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme.split("## Quick start").nth(1).unwrap();
    let command = section
        .split("```sh\n")
        .nth(1)
        .and_then(|block| block.lines().next())
        .map(|line| line.split(" #").next().unwrap().trim().to_string())
        .unwrap();
    let args: Vec<&str> = command
        .split_once(" -- ")
        .expect("`cargo run ... -- ARGS`")
        .1
        .split_whitespace()
        .collect();
    let shown = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the quick start shows the output in a ```text block");
    let out = gpulint(&args);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches_with_ellipsis(shown, &printed),
        "README.md's quick start shows\n{shown}\nbut `gpulint {}` prints\n{printed}",
        args.join(" ")
    );
}

/// The pages `top` names at the root, then every page of `docs/`.
fn documentation_pages(top: &[&str]) -> Vec<std::path::PathBuf> {
    let mut pages: Vec<_> = top.iter().map(|name| root().join(name)).collect();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

/// Every transcript in the README and in `docs/` (a ```text block of
/// `$ gpulint ...` lines, each followed by what it prints) is what gpulint
/// prints: stdout, or stderr when stdout is redirected (`> file`).
#[test]
fn documented_transcripts_are_what_gpulint_prints() {
    let pages = documentation_pages(&["README.md"]);
    let mut checked = 0;
    let mut inspected = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for block in text.split("```text\n").skip(1) {
            let block = block.split("```").next().unwrap();
            if !block.starts_with("$ gpulint ") {
                continue;
            }
            let mut runs: Vec<(String, Vec<&str>)> = Vec::new();
            for line in block.lines() {
                match line.strip_prefix("$ ") {
                    Some(command) => runs.push((command.to_string(), Vec::new())),
                    None => runs.last_mut().unwrap().1.push(line),
                }
            }
            for (command, shown) in runs {
                let (command, redirected) = match command.split_once(" > ") {
                    Some((command, _file)) => (command.to_string(), true),
                    None => (command, false),
                };
                let words: Vec<&str> = command.split_whitespace().skip(1).collect();
                assert!(
                    words.iter().all(|w| *w != "--fix"),
                    "a transcript in {name} must not change the repository: `{command}`"
                );
                let out = gpulint(&words);
                let printed = if redirected { &out.stderr } else { &out.stdout };
                let printed = String::from_utf8_lossy(printed);
                let shown = shown.join("\n");
                assert!(
                    matches_with_ellipsis(&shown, &printed),
                    "{name} shows `{command}` printing\n{shown}\nbut it prints\n{printed}"
                );
                checked += 1;
                inspected += usize::from(words.first() == Some(&"inspect"));
            }
        }
    }
    assert!(checked >= 3, "only {checked} transcripts found");
    // The `inspect` example once showed two rows where gpulint prints one.
    assert!(
        inspected >= 1,
        "the README's `inspect` example is not checked"
    );
}

/// `scripts/new_rule.py` scaffolds a rule for each kind of check that
/// compiles, passes clippy and is registered: run on a copy of the crate,
/// which is then checked. It needs python3 and builds the copy's
/// dependencies in a target directory of its own (a few minutes the first
/// time).
#[test]
#[ignore = "builds a copy of the crate with python3: run by .ci/run's tools tier"]
fn new_rule_scaffolds_a_rule_that_builds() {
    let copy = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .args([
            "-r",
            "Cargo.toml",
            "Cargo.lock",
            "src",
            "crates",
            "rules",
            "fixtures",
            "benches",
            "tests",
        ])
        .arg(copy.path())
        .current_dir(root())
        .status()
        .unwrap();
    assert!(status.success());
    let cases = [
        ("compose", "SHM099"),
        ("kubernetes", "K8S099"),
        ("dockerfile", "DF099"),
        ("commands", "GPU099"),
        ("slurm", "SLURM099"),
        ("env", "NCCL099"),
        ("containers", "ULIM099"),
    ];
    for (target, code) in cases {
        let output = std::process::Command::new("python3")
            .arg(root().join("scripts/new_rule.py"))
            .args([code, &format!("scaffolded-{target}"), "--target", target])
            .arg("--root")
            .arg(copy.path())
            .output()
            .expect("python3 runs scripts/new_rule.py");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let family = match target {
            "compose" => "shm",
            "kubernetes" => "k8s",
            "dockerfile" => "dockerfile",
            "commands" => "gpu",
            "slurm" => "slurm",
            "containers" => "ulim",
            _ => "nccl",
        };
        let module = format!("{}_scaffolded_{target}", code.to_lowercase());
        let mod_rs = std::fs::read_to_string(
            copy.path()
                .join(format!("crates/gpulint-rules/src/{family}/mod.rs")),
        )
        .unwrap();
        assert!(
            mod_rs.contains(&format!("pub(crate) mod {module};")),
            "{mod_rs}"
        );
        let codes =
            std::fs::read_to_string(copy.path().join("crates/gpulint-base/src/codes.rs")).unwrap();
        assert!(codes.contains(&format!("{code} => {module},")), "{codes}");
        assert!(copy.path().join(format!("rules/{code}.md")).is_file());
        assert!(copy.path().join(format!("fixtures/{code}")).is_dir());
    }
    // A second run refuses: nothing is written twice.
    let again = std::process::Command::new("python3")
        .arg(root().join("scripts/new_rule.py"))
        .args([
            "SHM099",
            "scaffolded-compose",
            "--target",
            "compose",
            "--root",
        ])
        .arg(copy.path())
        .output()
        .unwrap();
    assert!(!again.status.success());
    // The copy builds, warning-free, with the seven new rules in `RULES`
    // (its docs and fixture tests would then ask for their real examples).
    let target_dir = root().join("target").join("scaffold-check");
    let clippy = std::process::Command::new(env!("CARGO"))
        .args([
            "clippy",
            "--locked",
            "--workspace",
            "--lib",
            "--",
            "-D",
            "warnings",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(
        clippy.status.success(),
        "{}",
        String::from_utf8_lossy(&clippy.stderr)
    );
}

/// Every relative link of the README, CONTRIBUTING.md and `docs/` names a
/// file of the checkout (and, with `#anchor`, a heading of it): the
/// evidence moved out of the README into `docs/`, and a stale link is
/// what a reader meets first.
#[test]
fn documentation_links_name_files_that_exist() {
    let pages = documentation_pages(&["README.md", "CONTRIBUTING.md"]);
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = page.parent().unwrap().join(file);
            assert!(
                path.exists(),
                "{} links {target}, which does not exist",
                page.display()
            );
            if !anchor.is_empty() {
                let linked = std::fs::read_to_string(&path).unwrap();
                let slugs: Vec<String> = linked
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|h| {
                        h.trim_start_matches('#')
                            .trim()
                            .to_lowercase()
                            .chars()
                            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-')
                            .map(|c| if c == ' ' { '-' } else { c })
                            .collect()
                    })
                    .collect();
                assert!(
                    slugs.iter().any(|s| s == anchor),
                    "{} links {target}: no such heading",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} links found");
}
