//! Kubernetes fixes end to end: every fixed manifest re-lints clean with all
//! default rules, and the fixed manifests (fixtures and the public corpus) of
//! built-in kinds still validate against the Kubernetes schema
//! (`kubernetes-validate --strict`).

use crate::common;

use common::root;
use gpulint::engine::check_text;
use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The public manifests in `../shared/corpus/k8s`.
fn corpus_manifests() -> Vec<PathBuf> {
    let dir = common::required_shared("corpus/k8s");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

/// Every invalid Kubernetes fixture (a manifest, not a compose file).
fn k8s_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root().join("fixtures")).unwrap() {
        let dir = dir.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if name.starts_with("invalid")
                && (name.ends_with(".yaml") || name.ends_with(".yml"))
                && text.contains("apiVersion")
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn workload_fixtures_fix_to_manifests_that_lint_clean() {
    let config = Config::default();
    let mode = FixMode { unsafe_fixes: true };
    let mut failures = Vec::new();
    let mut fixed = 0;
    for path in k8s_fixtures()
        .iter()
        .filter(|p| p.parent().unwrap().ends_with("K8S004"))
    {
        let text = std::fs::read_to_string(path).unwrap();
        let outcome = fix_text(&text, path, &config, mode).unwrap();
        // Fixtures named `*no_fix*` show findings that come without a fix.
        if path.to_string_lossy().contains("no_fix") {
            if outcome.changed(&text) || outcome.remaining.iter().any(|d| d.fix.is_some()) {
                failures.push(format!("{}: expected no fix", path.display()));
            }
            continue;
        }
        let relinted = check_text(path.clone(), outcome.fixed_text.clone(), &config);
        if !relinted.diagnostics.is_empty() {
            let codes: Vec<_> = relinted.diagnostics.iter().map(|d| d.code).collect();
            failures.push(format!("{}: still {codes:?} after --fix", path.display()));
        }
        let again = fix_text(&outcome.fixed_text, path, &config, mode).unwrap();
        if again.changed(&outcome.fixed_text) {
            failures.push(format!("{}: a second --fix changed it", path.display()));
        }
        fixed += usize::from(outcome.changed(&text));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(fixed >= 18, "only {fixed} workload fixtures were fixed");
}

/// Validates files with `--strict`; returns (passed objects, objects of
/// kinds without a bundled schema, error lines).
fn validate(tool: &Path, files: &[PathBuf]) -> (usize, usize, Vec<String>) {
    let out = Command::new(tool)
        .arg("--strict")
        .args(files)
        .output()
        .expect("run kubernetes-validate");
    let stdout =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let passed = stdout.lines().filter(|l| l.contains(" passed ")).count();
    let unknown = stdout
        .lines()
        .filter(|l| l.contains("Couldn't find schema"))
        .count();
    let errors = stdout
        .lines()
        .filter(|l| l.starts_with("ERROR") || l.contains("did not validate"))
        .map(str::to_string)
        .collect();
    (passed, unknown, errors)
}

#[test]
#[ignore = "needs kubernetes-validate and ../shared/corpus: installed by .ci/run"]
fn fixed_manifests_validate_against_the_kubernetes_schema() {
    let tool = common::required_tool(
        "GPULINT_KUBERNETES_VALIDATE",
        "kubernetes-validate",
        "pip install kubernetes-validate",
    );
    let scratch = tempfile::tempdir().unwrap();
    let config = Config::default();
    let mode = FixMode { unsafe_fixes: true };
    let (mut originals, mut fixed) = (Vec::new(), Vec::new());
    let manifests = k8s_fixtures().into_iter().chain(corpus_manifests());
    for (i, path) in manifests.enumerate() {
        let text = std::fs::read_to_string(&path).unwrap();
        // Helm templates are skipped, not fixed.
        let Ok(outcome) = fix_text(&text, &path, &config, mode) else {
            continue;
        };
        if !outcome.changed(&text) {
            continue;
        }
        let name = format!("{i:03}-{}", path.file_name().unwrap().to_string_lossy());
        let original = scratch.path().join(format!("original-{name}"));
        let after = scratch.path().join(format!("fixed-{name}"));
        std::fs::write(&original, &text).unwrap();
        std::fs::write(&after, &outcome.fixed_text).unwrap();
        originals.push(original);
        fixed.push(after);
    }
    // The originals that validate must still validate once fixed (a unit
    // fix such as `16g` -> `16Gi` may even make one valid).
    let (passed_before, _, _) = validate(&tool, &originals);
    let (passed, unknown, errors) = validate(&tool, &fixed);
    println!(
        "kubernetes-validate --strict on {} fixed manifests: {passed} objects passed, {unknown} of CRD kinds without a bundled schema, {} errors (originals: {passed_before} passed)",
        fixed.len(),
        errors.len()
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(passed >= passed_before);
    assert!(passed >= 20, "only {passed} fixed objects were validated");

    // The validator is not a rubber stamp: a mount in the wrong place fails.
    let misplaced = scratch.path().join("misplaced.yaml");
    std::fs::write(
        &misplaced,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: a, image: x}]\n  volumeMounts: [{name: d, mountPath: /dev/shm}]\n",
    )
    .unwrap();
    assert_eq!(validate(&tool, &[misplaced]).2.len(), 1);
}
