//! `docker run` lines and SLURM batch scripts end to end: the seeds' own
//! examples, discovery of scripts, Makefiles, workflows and (opted in)
//! Markdown, and fixed commands that the real Docker CLI still accepts.

use crate::common;

use common::write;
use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text};
use gpulint::engine::{check_text, lint_text};
use gpulint::model::slurm::BatchScript;
use gpulint::rules::RuleCode;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A page of `../shared/seeds`: the tests that read one are ignored unless
/// asked for, and fail when it is missing.
fn seed(name: &str) -> String {
    let path = common::required_shared(&format!("seeds/{name}"));
    std::fs::read_to_string(path).unwrap()
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (line, column)
}

/// Runs a command line through the Docker CLI with no daemon to reach: the
/// CLI parses every flag first, and only a command it accepts gets as far as
/// looking for a terminal or the daemon. The tests that call it are ignored
/// unless asked for, and fail without a `docker` binary.
fn docker_cli_accepts(words: &[String]) -> Result<(), String> {
    assert!(
        Command::new("docker").arg("--version").output().is_ok(),
        "the Docker CLI is missing"
    );
    let output = Command::new("docker")
        .args(&words[1..])
        .env("DOCKER_HOST", "unix:///nonexistent/gpulint-test.sock")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let parsed = stderr.contains("Cannot connect to the Docker daemon")
        || stderr.contains("failed to connect to the docker API")
        || stderr.contains("is not a TTY");
    if parsed { Ok(()) } else { Err(stderr) }
}

/// The words of each `docker run` in shell text, as the shell would pass them.
fn docker_runs(text: &str) -> Vec<Vec<String>> {
    use gpulint::syntax::shell::{Snippet, commands};
    commands(&Snippet::verbatim(text, 0))
        .into_iter()
        .filter(|c| c.words.first().is_some_and(|w| w.text == "docker"))
        .map(|c| c.words.into_iter().map(|w| w.text).collect())
        .collect()
}

#[test]
#[ignore = "needs ../shared/seeds and the Docker CLI: run by .ci/run"]
fn seed_000_flags_the_first_docker_run_and_its_fix_is_a_runnable_command() {
    let text = seed("000_e6b87e4ce063c114.txt");
    // The seed is an article whose commands sit in fenced `bash` blocks.
    let path = PathBuf::from("seed-000.md");
    let config = Config::default();
    let findings = lint_text(&text, &path, &config).unwrap();
    let first = text.find("docker run --gpus all -it --rm nvcr").unwrap();
    let second = text
        .find("docker run --gpus all -it --rm --shm-size=8g")
        .unwrap();
    let codes: Vec<_> = findings
        .iter()
        .map(|d| (d.code, d.range.start as usize))
        .collect();
    assert_eq!(
        codes,
        [(RuleCode::SHM001, first)],
        "only the first docker run is flagged"
    );
    assert_eq!(&text[findings[0].range.as_range()], "docker run");
    assert_eq!(line_col(&text, first), (21, 1));
    assert!(text[second..].starts_with("docker run"));

    let outcome = fix_text(
        &text,
        &path,
        &config,
        FixMode {
            unsafe_fixes: false,
        },
    )
    .unwrap();
    assert!(outcome.remaining.is_empty(), "{:?}", outcome.remaining);
    let fixed = &outcome.fixed_text;
    let line = fixed.lines().nth(20).unwrap();
    assert_eq!(
        line,
        "docker run --shm-size=8gb --gpus all -it --rm nvcr.io/nvidia/pytorch:21.03-py3  python -c \"import torch; print(torch.cuda.device_count())\""
    );
    // Nothing else in the article changed, and fixing again changes nothing.
    assert_eq!(fixed.replace(" --shm-size=8gb", ""), text);
    let again = fix_text(fixed, &path, &config, FixMode { unsafe_fixes: true }).unwrap();
    assert_eq!(&again.fixed_text, fixed);
    // Both commands, fixed and untouched, are ones the Docker CLI accepts.
    for words in docker_runs(line)
        .into_iter()
        .chain(docker_runs(&text[second..]))
        .take(2)
    {
        docker_cli_accepts(&words).unwrap_or_else(|e| panic!("docker rejected {words:?}: {e}"));
    }
}

#[test]
#[ignore = "needs the Docker CLI (no daemon): run by .ci/run"]
fn the_docker_cli_check_can_fail() {
    let words: Vec<String> = ["docker", "run", "--shm-size=8gbx", "img"]
        .map(String::from)
        .to_vec();
    assert!(
        docker_cli_accepts(&words).is_err(),
        "a bad size must be rejected"
    );
}

#[test]
#[ignore = "needs ../shared/seeds: run by .ci/run"]
fn seed_004_example_3_is_a_healthy_job() {
    let text = seed("004_4f6487ace61b6e16.txt");
    let start = text.find("```bash\n#!/bin/bash").unwrap() + "```bash\n".len();
    let script = &text[start..start + text[start..].find("```").unwrap()];
    let batch = BatchScript::parse(script).unwrap();
    assert_eq!(batch.count("--ntasks"), Some(4));
    assert_eq!(batch.get("--gpus").unwrap().value.as_deref(), Some("4"));
    assert_eq!(batch.get("--export").unwrap().value.as_deref(), Some("ALL"));
    assert!(batch.requests_gpus());
    // Four tasks on four GPUs, on however many nodes: nothing to report.
    let report = check_text(
        PathBuf::from("example-3.sbatch"),
        script.to_string(),
        &Config::default(),
    );
    assert!(report.error.is_none());
    assert_eq!(report.diagnostics.len(), 0, "{:?}", report.diagnostics);
}

/// `(file, code)` of each finding `gpulint check --output-format json` reports.
fn findings(dir: &Path) -> Vec<(String, String)> {
    let output = common::gpulint(dir, &["check", "--output-format", "json", "."]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut found: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_string(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn scripts_makefiles_and_workflows_are_discovered_and_markdown_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let run =
        "docker run --gpus all --ulimit memlock=-1 img torchrun --nproc_per_node=8 train.py\n";
    write(dir.path(), "scripts/train.sh", format!("#!/bin/sh\n{run}"));
    write(
        dir.path(),
        "jobs/train.sbatch",
        "#!/bin/bash\n#SBATCH --nodes=$N\nsrun python t.py\n",
    );
    write(dir.path(), "Makefile", format!("train:\n\t{run}"));
    write(
        dir.path(),
        ".github/workflows/gpu.yml",
        format!("jobs:\n  a:\n    steps:\n      - run: {run}"),
    );
    write(dir.path(), "README.md", format!("```bash\n{run}```\n"));
    // An extension-less script is linted when named, not when walked.
    write(dir.path(), "bin/train", format!("#!/bin/bash\n{run}"));
    // Not a workflow: YAML elsewhere is only read for Kubernetes objects.
    write(
        dir.path(),
        "ci/steps.yml",
        format!("steps:\n  - run: {run}"),
    );
    let expected = |markdown: bool| {
        let mut v = vec![
            (".github/workflows/gpu.yml", "SHM001"),
            ("Makefile", "SHM001"),
            ("jobs/train.sbatch", "SLURM001"),
            ("scripts/train.sh", "SHM001"),
        ];
        if markdown {
            v.push(("README.md", "SHM001"));
        }
        v.sort();
        v.into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(findings(dir.path()), expected(false));
    write(dir.path(), "gpulint.toml", "[scripts]\nmarkdown = true\n");
    assert_eq!(findings(dir.path()), expected(true));

    let named = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "--output-format", "concise", "bin/train"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&named.stdout);
    assert!(stdout.contains("bin/train:2:1: error[SHM001]"), "{stdout}");
}

#[test]
fn fix_on_disk_keeps_a_makefile_runnable_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let makefile = "train:\n\tdocker run --gpus all --rm \\\n\t  img python t.py\n";
    write(dir.path(), "Makefile", makefile);
    let fix = || {
        Command::new(env!("CARGO_BIN_EXE_gpulint"))
            .args(["check", "--fix", "Makefile"])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    fix();
    let fixed = std::fs::read_to_string(dir.path().join("Makefile")).unwrap();
    assert_eq!(
        fixed,
        "train:\n\tdocker run --shm-size=8gb --gpus all --rm \\\n\t  img python t.py\n"
    );
    let second = fix();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("Makefile")).unwrap(),
        fixed
    );
}

#[test]
#[ignore = "needs the Docker CLI (no daemon): run by .ci/run"]
fn the_fixed_makefile_recipe_is_a_command_the_docker_cli_accepts() {
    let makefile = "train:\n\tdocker run --gpus all --rm \\\n\t  img python t.py\n";
    let outcome = fix_text(
        makefile,
        Path::new("Makefile"),
        &Config::default(),
        FixMode {
            unsafe_fixes: false,
        },
    )
    .unwrap();
    let recipe = outcome.fixed_text.replace("\\\n\t", "\\\n");
    let runs = docker_runs(recipe.trim_start_matches("train:\n\t"));
    assert_eq!(runs.len(), 1, "{recipe}");
    for words in runs {
        assert!(words.contains(&"--shm-size=8gb".to_string()), "{words:?}");
        docker_cli_accepts(&words).unwrap_or_else(|e| panic!("docker rejected {words:?}: {e}"));
    }
}

#[test]
fn command_substitutions_and_quoted_workflow_steps_are_scanned() {
    // `$(…)` and backticks run commands too; a double-quoted `run:` maps
    // back through its escapes; each finding points at its `docker run`.
    let dir = tempfile::tempdir().unwrap();
    let script =
        "#!/bin/sh\nCID=$(docker run -d --gpus all img)\nOTHER=`docker run --gpus all img`\n";
    write(dir.path(), "train.sh", script);
    let workflow =
        "jobs:\n  a:\n    steps:\n      - run: \"echo \\\"go\\\"; docker run --gpus all img\"\n";
    write(dir.path(), ".github/workflows/gpu.yml", workflow);
    let output = common::gpulint(dir.path(), &["check", "--output-format", "json", "."]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut found: Vec<(String, u64, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "SHM001")
        .map(|d| {
            (
                d["path"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_string(),
                d["start"]["offset"].as_u64().unwrap(),
                d["end"]["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    found.sort();
    let at = |text: &str, from: usize| text[from..].find("docker run").unwrap() + from;
    let first = at(script, 0);
    let second = at(script, first + 1);
    let step = at(workflow, 0);
    let starts: Vec<(&str, u64)> = found.iter().map(|(p, s, _)| (p.as_str(), *s)).collect();
    assert_eq!(
        starts,
        [
            (".github/workflows/gpu.yml", step as u64),
            ("train.sh", first as u64),
            ("train.sh", second as u64)
        ],
        "{report:#}"
    );

    // Their fixes apply where the command is written.
    let fixed = common::gpulint(dir.path(), &["check", "--fix", "."]);
    assert!(
        fixed.status.success(),
        "{}{}",
        String::from_utf8_lossy(&fixed.stdout),
        String::from_utf8_lossy(&fixed.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("train.sh")).unwrap(),
        "#!/bin/sh\nCID=$(docker run --shm-size=8gb -d --gpus all img)\nOTHER=`docker run --shm-size=8gb --gpus all img`\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".github/workflows/gpu.yml")).unwrap(),
        "jobs:\n  a:\n    steps:\n      - run: \"echo \\\"go\\\"; docker run --shm-size=8gb --gpus all img\"\n"
    );
}
