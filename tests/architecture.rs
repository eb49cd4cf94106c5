//! The module map CONTRIBUTING.md draws, checked on the source: layers
//! depend one way (`syntax` ← `model` ← `rules` ← `engine` ← `output`,
//! `cli`, `lsp`), and the modules of `src/model` form no cycle, so each
//! one can be read (and tested) with only what it builds on.

mod common;

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

#[test]
fn layers_depend_one_way() {
    // Each layer and the layers it must not name. The base (`text`, `vfs`,
    // `fix`, `diagnostic`) is under all of them; `vfs` only knows `text`.
    let forbidden: &[(&str, &[&str])] = &[
        (
            "vfs",
            &[
                "syntax", "model", "project", "rules", "engine", "output", "cli", "lsp",
            ],
        ),
        (
            "syntax",
            &[
                "vfs", "model", "project", "rules", "engine", "output", "cli", "lsp",
            ],
        ),
        (
            "model",
            &["vfs", "project", "rules", "engine", "output", "cli", "lsp"],
        ),
        ("project", &["rules", "engine", "output", "cli", "lsp"]),
        ("rules", &["engine", "output", "cli", "lsp"]),
        ("engine", &["output", "cli", "lsp"]),
    ];
    let mut violations = Vec::new();
    for (layer, above) in forbidden {
        let mut files = Vec::new();
        rust_files(&root().join("src").join(layer), &mut files);
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
    let dir = root().join("src/model");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|m| m != "mod")
        .collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = file.file_stem().unwrap().to_string_lossy().to_string();
        if module == "mod" {
            continue;
        }
        let text = source_without_tests(file);
        let names = segments_after(&text, "super::")
            .into_iter()
            .chain(segments_after(&text, "crate::model::"));
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
            panic!("src/model has an import cycle: {}", cycle.join(" → "));
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
