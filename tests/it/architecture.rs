//! The module map CONTRIBUTING.md draws: the workspace's crates depend
//! one way (`cargo metadata` shows it; Cargo refuses the rest), so do the
//! layers inside the top crate (`output` ← `lsp` ← `cli`), and the files
//! of a crate form no import cycle, so each one can be read (and tested)
//! with only what it builds on.

use crate::common;

use common::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The code of a file: without its unit tests (whose `super::` is the
/// file's own module) and comments (which may name any module).
fn source_without_tests(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first path segment after each `prefix` in `text`: `compose` for
/// `super::compose::Service`, and every item of `super::{compose::X, k8s}`.
fn segments_after(text: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        // `super::super::x` is not a sibling of this module.
        if text[..at].ends_with("super::") {
            continue;
        }
        let rest = &text[at + prefix.len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in list.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && depth == 0 => {
                        out.push(ident(&list[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty() && s != "self" && s != "super");
    out
}

/// The workspace's crates, lowest first: each may depend only on crates
/// before it, so Cargo itself refuses an import against the layers.
const CRATE_LAYERS: &[&str] = &[
    "gpulint-base",
    "gpulint-vfs",
    "gpulint-syntax",
    "gpulint-schema",
    "gpulint-model",
    "gpulint-project",
    "gpulint-rules",
    "gpulint-engine",
    "gpulint",
];

/// `cargo metadata`'s packages of this workspace and the workspace
/// packages each depends on (normal dependencies; dev-dependencies are
/// the integration tests' and may reach any layer).
fn workspace_dependencies() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|package| {
            let dependencies = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null() && names.contains(d["name"].as_str().unwrap()))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            (package["name"].as_str().unwrap().to_string(), dependencies)
        })
        .collect()
}

#[test]
fn crates_depend_one_way() {
    let graph = workspace_dependencies();
    let members: Vec<&str> = graph.keys().map(String::as_str).collect();
    let mut expected = CRATE_LAYERS.to_vec();
    expected.sort_unstable();
    assert_eq!(
        members, expected,
        "a crate added to the workspace needs its place in CRATE_LAYERS"
    );
    let mut violations = Vec::new();
    for (package, dependencies) in &graph {
        let layer = CRATE_LAYERS.iter().position(|c| c == package).unwrap();
        for dependency in dependencies {
            let below = CRATE_LAYERS.iter().position(|c| c == dependency).unwrap();
            if below >= layer {
                violations.push(format!(
                    "{package} depends on {dependency}, a layer at or above it"
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    // The engine is the only way in from the top: gpulint builds on it.
    assert!(graph["gpulint"].contains(&"gpulint-engine".to_string()));
}

/// Inside the top crate: `output` ← `lsp` ← `cli`.
#[test]
fn the_top_crate_layers_depend_one_way() {
    let forbidden: &[(&str, &[&str])] = &[("output", &["lsp", "cli"]), ("lsp", &["cli"])];
    let mut violations = Vec::new();
    for (layer, above) in forbidden {
        let mut files = Vec::new();
        rust_files(&root().join("src").join(layer), &mut files);
        assert!(!files.is_empty(), "no src/{layer}");
        for file in files {
            let text = source_without_tests(&file);
            for name in segments_after(&text, "crate::") {
                if above.contains(&name.as_str()) {
                    violations.push(format!(
                        "{} uses crate::{name}",
                        file.strip_prefix(root()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_model_modules_form_no_cycle() {
    let dir = root().join("crates/gpulint-model/src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|m| m != "mod" && m != "lib")
        .collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = file.file_stem().unwrap().to_string_lossy().to_string();
        if module == "mod" || module == "lib" {
            continue;
        }
        let text = source_without_tests(file);
        let names = segments_after(&text, "super::")
            .into_iter()
            .chain(segments_after(&text, "crate::"));
        let edges = uses.entry(module.clone()).or_default();
        edges.extend(names.filter(|n| *n != module && modules.contains(n)));
    }
    // Depth-first search; a module met again on the current path closes a cycle.
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_string());
        for next in uses.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for module in &modules {
        if let Some(cycle) = visit(module, &uses, &mut Vec::new(), &mut done) {
            panic!("gpulint-model has an import cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn the_cycle_check_sees_both_kinds_of_path() {
    assert_eq!(
        segments_after("use super::{compose::X, k8s, size::{A, B}};", "super::"),
        ["compose", "k8s", "size"]
    );
    assert_eq!(
        segments_after(
            "let x = super::super::size::GIB; crate::model::runtime::f()",
            "super::"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        segments_after("crate::model::runtime::f()", "crate::model::"),
        ["runtime"]
    );
}

/// Every source file of the crate whose sources are `src` as a module
/// path (`session` for `session.rs`, `shm` for `shm/mod.rs`, and the
/// empty path for `lib.rs`).
fn module_files(src: &Path) -> BTreeMap<String, std::path::PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter(|f| !f.ends_with("main.rs"))
        .map(|f| {
            let relative = f.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            (parts.join("::"), f)
        })
        .collect()
}

/// The modules a file names: each `crate::a::b::...` and `super::x`
/// resolved to the longest module path that is a file.
fn file_edges(module: &str, path: &Path, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let text = source_without_tests(path);
    let is_dir_module = path.ends_with("mod.rs") || path.ends_with("lib.rs");
    let parent: Vec<&str> = {
        let mut p: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        if !is_dir_module {
            p.pop();
        }
        p
    };
    let mut out = BTreeSet::new();
    let longest = |segments: &[String]| -> Option<String> {
        (1..=segments.len())
            .rev()
            .map(|n| segments[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    // Paths after `crate::` and `super::`, with their following segments.
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
        for (at, _) in text.match_indices(prefix) {
            if prefix == "super::" && text[..at].ends_with("super::") {
                continue;
            }
            let rest: String = text[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
                .collect();
            let mut segments: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            let mut heads: Vec<Vec<String>> = Vec::new();
            let plain = rest.split('{').next().unwrap_or("");
            segments.extend(
                plain
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            heads.push(segments.clone());
            // `use crate::a::{b, c::D}`: each item of the list.
            if rest.contains('{') {
                let start = at + prefix.len() + plain.len() + 1;
                let list: String = text[start..].chars().take_while(|c| *c != '}').collect();
                for item in list.split(',') {
                    let mut more = segments.clone();
                    more.extend(
                        item.trim()
                            .split("::")
                            .filter(|s| !s.is_empty() && *s != "self")
                            .map(|s| {
                                s.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
                                    .to_string()
                            }),
                    );
                    heads.push(more);
                }
            }
            for head in heads {
                if let Some(m) = longest(&head)
                    && m != module
                    && !module.starts_with(&format!("{m}::"))
                {
                    out.insert(m);
                }
            }
        }
    }
    // A module's own children, named bare (`meta::FixKind` in `mod.rs`).
    let mut own = module
        .split("::")
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>();
    if !is_dir_module {
        own.clear();
    }
    if is_dir_module {
        for (at, _) in text.match_indices("::") {
            let before = &text[..at];
            let ident: String = before
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let preceded = before[..before.len() - ident.len()].ends_with("::");
            if ident.is_empty() || preceded {
                continue;
            }
            let mut child: Vec<&str> = own.clone();
            child.push(&ident);
            let child = child.join("::");
            if modules.contains(&child) && child != module {
                out.insert(child);
            }
        }
    }
    out
}

/// No two files import each other, however far round: each file can be
/// read knowing only the files under it.
#[test]
fn no_file_imports_form_a_cycle() {
    // Within each crate: Cargo refuses cycles between crates.
    let mut sources = vec![root().join("src")];
    for crate_name in CRATE_LAYERS.iter().filter(|c| **c != "gpulint") {
        sources.push(root().join("crates").join(crate_name).join("src"));
    }
    for src in sources {
        assert!(src.is_dir(), "{}", src.display());
        no_cycle_among_files_of(&src);
    }
}

fn no_cycle_among_files_of(src: &Path) {
    let files = module_files(src);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let uses: BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .map(|(m, path)| (m.clone(), file_edges(m, path, &modules)))
        .collect();
    let mut cycles = Vec::new();
    let mut done = BTreeSet::new();
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        cycles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            cycles.push(cycle.join(" → "));
            return;
        }
        if done.contains(module) {
            return;
        }
        path.push(module.to_string());
        for next in uses.get(module).into_iter().flatten() {
            visit(next, uses, path, done, cycles);
        }
        path.pop();
        done.insert(module.to_string());
    }
    for module in &modules {
        visit(module, &uses, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(
        cycles.is_empty(),
        "import cycles between files of {}:\n{}",
        src.display(),
        cycles.join("\n")
    );
}
