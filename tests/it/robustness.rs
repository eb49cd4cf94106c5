//! Bad input never panics: random YAML-ish text, mutated fixtures, deep
//! nesting and alias bombs all end in findings or a located error.

use crate::common;

use gpulint::engine::config::Config;
use gpulint::engine::lint_text;
use gpulint::rules::RuleCode;
use proptest::prelude::*;
use std::path::Path;

fn fixtures() -> Vec<String> {
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(common::root().join("fixtures")).unwrap() {
        let dir = entry.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                texts.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    texts.sort();
    texts
}

fn dockerfile_fixtures() -> Vec<String> {
    let mut texts: Vec<String> = std::fs::read_dir(common::root().join("fixtures"))
        .unwrap()
        .flat_map(|dir| common::fixtures_in_folder(&dir.unwrap().file_name().to_string_lossy()))
        .flat_map(|f| f.files)
        .filter(|p| {
            gpulint::engine::discover::is_dockerfile_name(&p.file_name().unwrap().to_string_lossy())
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.sort();
    texts
}

/// One of `texts` with `len` bytes at `at` replaced by `insert`; `None`
/// when that cuts a character in two.
fn mutate(texts: &[String], pick: usize, at: usize, len: usize, insert: &str) -> Option<String> {
    let mut bytes = texts[pick % texts.len()].as_bytes().to_vec();
    let start = at % (bytes.len() + 1);
    let end = (start + len).min(bytes.len());
    bytes.splice(start..end, insert.bytes());
    String::from_utf8(bytes).ok()
}

fn lint(text: &str) {
    // `lint_text` (not `check_text`) so that a panic fails the test.
    let _ = lint_text(text, Path::new("docker-compose.yml"), &Config::default());
}

/// Lints as a Dockerfile and checks every span lies inside the text, on
/// character boundaries.
fn lint_dockerfile(text: &str) {
    let diagnostics = lint_text(text, Path::new("Dockerfile"), &Config::default()).unwrap();
    for d in &diagnostics {
        for range in std::iter::once(d.range).chain(d.related.iter().map(|l| l.range)) {
            assert!(
                range.start <= range.end && (range.end as usize) <= text.len(),
                "{d:?}"
            );
            assert!(
                text.is_char_boundary(range.start as usize)
                    && text.is_char_boundary(range.end as usize)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::property_cases()))]

    #[test]
    fn random_yamlish_text_never_panics(text in "[a-z0-9_ :{}\\[\\],&*<!|>#'\"\\-\\n\\t\\r$.=/]{0,300}") {
        lint(&text);
    }

    #[test]
    fn mutated_fixtures_never_panic(
        pick in 0usize..1000,
        at in 0usize..4000,
        len in 0usize..40,
        insert in "[ :{}\\[\\]\\-#&*!'\"\\n\\t]{0,6}",
    ) {
        if let Some(mutated) = mutate(&fixtures(), pick, at, len, &insert) {
            lint(&mutated);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::property_cases()))]

    #[test]
    fn random_dockerfile_text_never_panics(text in "(FROM|RUN|ENV|ARG|COPY|#|<<|EOF|\\\\|`|\\[|\\]|\"|'|=|\\$\\{|\\}|:-| |\\t|\\r|\\n|é|a|nvidia/cuda|--x=1|AS|-){0,80}") {
        lint_dockerfile(&text);
    }

    #[test]
    fn mutated_dockerfile_fixtures_never_panic(
        pick in 0usize..1000,
        at in 0usize..4000,
        len in 0usize..40,
        insert in "[ \\\\`<>=\\$\\{\\}\\[\\]\"'#\\n\\t-]{0,6}",
    ) {
        if let Some(mutated) = mutate(&dockerfile_fixtures(), pick, at, len, &insert) {
            lint_dockerfile(&mutated);
        }
    }
}

#[test]
fn deep_nesting_is_a_located_error() {
    let text = format!("services: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let error = lint_text(&text, Path::new("compose.yaml"), &Config::default()).unwrap_err();
    assert!(error.offset.is_some(), "{error:?}");
}

#[test]
fn alias_bomb_is_linted_quickly() {
    alias_bomb("[\"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\"]");
}

/// The same bomb with `!reset` and `!override` at its leaves: the tags
/// Compose records by path are reached by 9^30 paths.
#[test]
fn alias_bomb_of_reset_tags_is_linted_quickly() {
    alias_bomb(
        "[!reset \"1g\", !override \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\", \"1g\"]",
    );
}

fn alias_bomb(leaf: &str) {
    let mut text = format!("x-a: &a {leaf}\n");
    for i in 0..30 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("b{}", i - 1)
        };
        text.push_str(&format!(
            "x-b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 9].join(", ")
        ));
    }
    text.push_str("services:\n  t:\n    gpus: all\n    environment: *b29\n    volumes: *b29\n    tmpfs: *b29\n");
    let diagnostics = lint_text(&text, Path::new("compose.yaml"), &Config::default()).unwrap();
    assert!(diagnostics.iter().any(|d| d.code == RuleCode::SHM001));
}

#[test]
fn alias_bomb_in_a_manifest_is_linted_quickly() {
    // Ten levels of nine aliases each: a billion nodes if expanded. The pod
    // finder's visit budget keeps the walk small; the real pod is still found.
    let mut text = String::from(
        "apiVersion: example.com/v1\nkind: Bomb\nmetadata:\n  name: b\n  labels: &a {x: \"1\"}\nspec:\n",
    );
    for i in 0..10 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("b{}", i - 1)
        };
        text.push_str(&format!(
            "  b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 9].join(", ")
        ));
    }
    text.push_str("  run:\n    template:\n      spec:\n        volumes: *b9\n        containers:\n        - name: t\n          env: *b9\n          resources: {limits: {nvidia.com/gpu: 1}}\n");
    let diagnostics = lint_text(&text, Path::new("bomb.yaml"), &Config::default()).unwrap();
    assert!(
        diagnostics.iter().any(|d| d.code == RuleCode::K8S004),
        "{diagnostics:?}"
    );
}

#[test]
fn non_ascii_run_line_on_a_cuda_base_is_linted() {
    // DF003 scanned the RUN text byte by byte and sliced it at each byte.
    let text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN echo \"→ done\" && pip install torch --index-url https://download.pytorch.org/whl/cpu\n";
    lint_dockerfile(text);
    let diagnostics = lint_text(text, Path::new("Dockerfile"), &Config::default()).unwrap();
    assert!(
        diagnostics.iter().any(|d| d.code == RuleCode::DF003),
        "{diagnostics:?}"
    );
}

#[test]
fn merge_key_chain_is_linted_in_linear_time() {
    // Each level merges the one before twice (`<<: [*m, *m]`): expanding
    // merges naively costs 2^60 here and never ends.
    // `ipc: host` at the bottom of the chain gives the service the host's
    // /dev/shm, so SHM001 stays quiet only if all 60 levels are resolved.
    let mut text = String::from("x-m0: &m0 {ipc: host}\n");
    for i in 1..60 {
        text.push_str(&format!(
            "x-m{i}: &m{i}\n  <<: [*m{p}, *m{p}]\n  labels: {{l{i}: v}}\n",
            p = i - 1
        ));
    }
    text.push_str("services:\n  t:\n    <<: *m59\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    gpus: all\n");
    let diagnostics = lint_text(&text, Path::new("compose.yaml"), &Config::default()).unwrap();
    assert!(
        !diagnostics.iter().any(|d| d.code == RuleCode::SHM001),
        "{diagnostics:?}"
    );
    let without_host = text.replace("{ipc: host}", "{ipc: private}");
    let diagnostics =
        lint_text(&without_host, Path::new("compose.yaml"), &Config::default()).unwrap();
    assert!(
        diagnostics.iter().any(|d| d.code == RuleCode::SHM001),
        "{diagnostics:?}"
    );
}

#[test]
fn a_huge_devcontainer_is_judged_in_linear_time() {
    // 50,000 numbers where strings belong, 20,000 unknown properties and
    // 20,000 repeated keys: each was a scan per item (quadratic) once.
    let numbers = vec!["8"; 50_000].join(", ");
    let unknown: Vec<String> = (0..20_000).map(|i| format!("\"p{i}\": {i}")).collect();
    let repeated = vec!["\"name\": \"x\""; 20_000].join(",\n");
    let text = format!(
        "{{\n{repeated},\n\"image\": \"i\",\n\"runArgs\": [{numbers}],\n\"hostRequirements\": {{{}}},\n\"shutdownAction\": 7\n}}\n",
        unknown.join(", ")
    );
    let diagnostics =
        lint_text(&text, Path::new(".devcontainer.json"), &Config::default()).unwrap();
    let dev001 = diagnostics
        .iter()
        .filter(|d| d.code == RuleCode::DEV001)
        .count();
    // Every unknown property, and the action that is no choice; the
    // numbers are the text JavaScript writes.
    assert_eq!(dev001, 20_001, "{:?}", diagnostics.first());
}
