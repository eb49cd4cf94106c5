//! The benchmark tooling works and measures what it says: the tree generator
//! is reproducible and its files are linted as intended, and the comparison
//! script runs end to end (peers are left out here: they take minutes and
//! need the registries; `python3 benches/compare.py` runs them).

use std::path::Path;
use std::process::Command;

fn generate(out: &Path, services: usize, seed: u32) {
    let status = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tree.py"))
        .arg(out)
        .args([
            "--services",
            &services.to_string(),
            "--seed",
            &seed.to_string(),
        ])
        .status()
        .expect("python3 runs benches/tree.py");
    assert!(status.success());
}

fn read_tree(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for service in std::fs::read_dir(root).unwrap() {
        let service = service.unwrap().path();
        for file in std::fs::read_dir(&service).unwrap() {
            let file = file.unwrap().path();
            let name = file.strip_prefix(root).unwrap().display().to_string();
            files.push((name, std::fs::read_to_string(&file).unwrap()));
        }
    }
    files.sort();
    files
}

#[test]
fn the_tree_is_reproducible_and_grows_without_changing_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    generate(&dir.path().join("a"), 30, 7);
    generate(&dir.path().join("b"), 30, 7);
    generate(&dir.path().join("big"), 60, 7);
    generate(&dir.path().join("other"), 30, 8);
    let a = read_tree(&dir.path().join("a"));
    assert_eq!(
        a.len(),
        90,
        "a compose file, a Dockerfile and a manifest per service"
    );
    assert_eq!(a, read_tree(&dir.path().join("b")));
    let big = read_tree(&dir.path().join("big"));
    assert_eq!(
        &big[..90],
        &a[..],
        "a bigger tree starts with the smaller one"
    );
    assert_ne!(a, read_tree(&dir.path().join("other")), "the seed matters");
}

#[test]
fn the_tree_has_the_variety_it_promises_and_lints_with_findings_and_no_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    generate(&root, 60, 1);
    let texts: String = read_tree(&root).into_iter().map(|(_, t)| t).collect();
    for feature in [
        "<<: *gpu",                         // YAML anchors and merge keys
        "\n---\n",                          // multi-document manifests
        "FROM nvidia/cuda:${CUDA_VERSION}", // ARG-based FROMs
        "kind: StatefulSet",
        "kind: Job",
        "medium: Memory",
        "ipc: host",
    ] {
        assert!(texts.contains(feature), "no `{feature}` in the tree");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "--output-format", "json"])
        .arg(&root)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let summary = &report["summary"];
    assert_eq!(summary["files"], 180);
    assert_eq!(summary["failed_files"], 0, "{report:#}");
    let findings = summary["findings"].as_u64().unwrap();
    assert!(
        findings > 60,
        "the lint does real work: {findings} findings"
    );
    // Healthy services too: not every file has a finding.
    let files_with_findings: std::collections::BTreeSet<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        files_with_findings.len() < 150,
        "{}",
        files_with_findings.len()
    );
}

#[test]
fn the_comparison_script_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/compare.py"))
        .args([
            "--services",
            "20",
            "--scales",
            "1,2",
            "--rounds",
            "2",
            "--inner",
            "1",
            "--skip-peers",
        ])
        .arg("--gpulint")
        .arg(env!("CARGO_BIN_EXE_gpulint"))
        .arg("--work")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    let pool = &results["pool-vs-one-thread"];
    assert_eq!(pool["files"], 60);
    for side in ["a", "b"] {
        for clock in ["wall", "cpu"] {
            let figure = &pool[side][clock];
            assert_eq!(figure["runs"], 2, "{side} {clock}");
            assert!(
                figure["lowest"].as_f64().unwrap() <= figure["median"].as_f64().unwrap()
                    && figure["median"].as_f64().unwrap() <= figure["highest"].as_f64().unwrap(),
                "{side} {clock}: {figure}"
            );
        }
    }
    assert!(pool["a"]["wall"]["median"].as_f64().unwrap() > 0.0);
    assert!(pool["ratio"]["wall"]["median"].as_f64().unwrap() > 0.0);
    assert!(pool["a_peak_rss_mib"].as_f64().unwrap() > 0.0);
    assert_eq!(results["gpulint/tree-x2"]["files"], 120);
    for key in ["gpulint/one-compose-file", "gpulint/tree-x1"] {
        assert!(
            results[key]["wall"]["median"].as_f64().unwrap() > 0.0,
            "{key}"
        );
        assert!(
            results[key]["peak_rss_mib"].as_f64().unwrap() > 0.0,
            "{key}"
        );
    }
}

/// The memory benchmark writes each kind of large file at each scale,
/// measures each, and its `--max-ratio` bound fails the run when a peak
/// is above it.
#[test]
fn the_memory_benchmark_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let run = |max_ratio: &str| {
        Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/memory.py"))
            .args([
                "--scales",
                "1,2",
                "--base",
                "0.02",
                "--max-ratio",
                max_ratio,
            ])
            .arg("--gpulint")
            .arg(env!("CARGO_BIN_EXE_gpulint"))
            .arg("--work")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let output = run("1000000");
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("memory.json")).unwrap())
            .unwrap();
    for kind in ["compose", "manifests", "script"] {
        assert!(results["floor_mib"][kind].as_f64().unwrap() > 0.0, "{kind}");
        let rows = results["kinds"][kind].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{kind}");
        assert_eq!(
            rows[1]["units"].as_u64().unwrap(),
            2 * rows[0]["units"].as_u64().unwrap(),
            "{kind}"
        );
        assert!(rows[1]["size_mib"].as_f64() > rows[0]["size_mib"].as_f64());
        assert!(rows[0]["peak_rss_mib"].as_f64().unwrap() > 0.0, "{kind}");
    }
    // A file of a few KB peaks at hundreds of times its size (the floor).
    let refused = run("2");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("peak above 2.0x"));
}
