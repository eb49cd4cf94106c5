//! GitHub Actions job and service containers: the runner creates each with
//! `docker create`, its `options:` string and its image, which gpulint reads
//! as the `docker run` model.

use crate::common;

use common::{gpulint, stdout, write};
use gpulint::engine::check_text;
use gpulint::engine::config::Config;
use gpulint::rules::RuleCode;
use serde_json::Value;
use std::path::PathBuf;

fn codes(text: &str) -> Vec<RuleCode> {
    let report = check_text(
        PathBuf::from(".github/workflows/gpu.yml"),
        text.to_string(),
        &Config::default(),
    );
    assert!(report.error.is_none(), "{:?}", report.error);
    report.diagnostics.iter().map(|d| d.code).collect()
}

fn job(container: &str) -> String {
    format!(
        "on: [push]\njobs:\n  test:\n    runs-on: [self-hosted, gpu]\n{container}    steps:\n      - run: pytest\n"
    )
}

#[test]
fn gpu_options_without_shm_fire_for_jobs_and_services() {
    let container = "    container:\n      image: nvcr.io/nvidia/pytorch:24.01-py3\n      options: --gpus all\n";
    assert_eq!(codes(&job(container)), [RuleCode::SHM001]);
    let service = "    services:\n      vllm:\n        image: vllm/vllm-openai:latest\n        options: '--gpus=all'\n";
    assert_eq!(codes(&job(service)), [RuleCode::SHM001]);
}

#[test]
fn healthy_and_unknown_containers_stay_quiet() {
    for container in [
        "    container:\n      image: x\n      options: --gpus all --ipc=host\n",
        "    container:\n      image: x\n      options: --gpus all --shm-size \"16gb\"\n",
        // Only known when the workflow runs.
        "    container:\n      image: x\n      options: --gpus all --shm-size ${{ inputs.shm }}\n",
        "    container:\n      image: x\n      options: ${{ matrix.options }}\n",
        // No GPU asked for.
        "    container: python:3.12\n",
        "    container:\n      image: python:3.12\n      options: --cpus 2\n",
    ] {
        assert_eq!(codes(&job(container)), [], "{container}");
    }
}

#[test]
fn inspect_prints_job_and_service_containers() {
    let dir = tempfile::tempdir().unwrap();
    let text = job(
        "    container:\n      image: nvcr.io/nvidia/pytorch:24.01-py3\n      options: --gpus 2 --shm-size=4g\n    services:\n      redis:\n        image: redis\n",
    );
    write(dir.path(), ".github/workflows/gpu.yml", &text);
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let containers = doc["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2, "{doc:#}");
    assert_eq!(containers[0]["gpus"], 2);
    assert_eq!(containers[0]["shm"]["bytes"], 4_u64 << 30);
    assert_eq!(containers[0]["name"], "nvcr.io/nvidia/pytorch:24.01-py3");
    assert_eq!(containers[1]["gpus"], Value::Null);
    assert_eq!(containers[1]["name"], "redis");
}

/// `env:` is passed as `-e` after `options:` (actions/runner
/// `DockerCommandManager.DockerCreate`), so its value wins over an
/// `options:` `-e` of the same name; `${{ }}` is only known when the
/// workflow runs.
#[test]
fn env_is_read_after_options() {
    let dir = tempfile::tempdir().unwrap();
    let text = job(
        "    container:\n      image: nvcr.io/nvidia/pytorch:24.01-py3\n      options: --gpus 2 --ipc=host -e NCCL_P2P_DISABLE=0\n      env:\n        NCCL_P2P_DISABLE: 1\n        NCCL_DEBUG: ${{ inputs.debug }}\n        NCCL_SOCKET_IFNAME: eth0\n",
    );
    write(dir.path(), ".github/workflows/gpu.yml", &text);
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let env = &doc["containers"][0]["env"];
    assert_eq!(env["NCCL_P2P_DISABLE"], "1", "{doc:#}");
    assert_eq!(env["NCCL_DEBUG"], Value::Null, "{doc:#}");
    assert_eq!(env["NCCL_SOCKET_IFNAME"], "eth0", "{doc:#}");
    assert_eq!(codes(&text), [RuleCode::NCCL002]);
}

/// What `gpulint inspect` says of the job container with `options:`
/// written as `options` (the YAML after the key).
fn job_container_claim(options: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let text = job(&format!(
        "    container:\n      image: nvcr.io/nvidia/pytorch:24.01-py3\n      options: {options}\n"
    ));
    write(dir.path(), ".github/workflows/gpu.yml", &text);
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    doc["containers"][0].clone()
}

/// The runner hands `options:` to .NET, not a shell (actions/runner
/// `DockerCommandManager.DockerCreate`; judged by the real `docker
/// create` in tests/it/engine.rs): `'` is an ordinary character, only `"`
/// groups, and a line break is part of a word.
#[test]
fn options_are_split_as_the_runner_splits_them() {
    // The Docker CLI gets `'1g'` and `'host'`.
    let claim = job_container_claim("--shm-size '1g'");
    assert_eq!(claim["shm"]["kind"], "refused", "{claim:#}");
    let claim = job_container_claim("--ipc 'host'");
    assert_eq!(claim["shm"]["kind"], "refused", "{claim:#}");
    // `"` groups and is removed.
    let claim = job_container_claim("--shm-size \"1g\"");
    assert_eq!(claim["shm"]["bytes"], 1_u64 << 30, "{claim:#}");
    // One flag per line: `--shm-size` gets `1g\n--ipc`.
    let claim = job_container_claim("|\n        --shm-size 1g\n        --ipc host");
    assert_eq!(claim["shm"]["kind"], "refused", "{claim:#}");
    // Folded lines are one line with spaces.
    let claim = job_container_claim(">-\n        --shm-size 1g\n        --ipc host");
    assert_eq!(claim["shm"]["kind"], "host", "{claim:#}");
    // An expression is substituted first: its options are unknown.
    let claim = job_container_claim("${{ matrix.opts }}");
    assert_eq!(claim["shm"]["kind"], "unknown", "{claim:#}");
    assert!(
        claim["shm"]["from"]
            .as_str()
            .unwrap()
            .contains("only known when the workflow runs"),
        "{claim:#}"
    );
    let claim = job_container_claim("--shm-size ${{ inputs.shm }} --ipc=private");
    assert_eq!(claim["shm"]["kind"], "unknown", "{claim:#}");
}
