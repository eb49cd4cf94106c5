//! Podman Quadlet `.container` units: read as the `podman run` the Quadlet
//! generator writes, checked by the `docker run` rules, fixed with lines.

use crate::common;

use common::{gpulint, stdout, write};
use gpulint::engine::check_text;
use gpulint::engine::config::Config;
use gpulint::rules::RuleCode;
use serde_json::Value;
use std::path::PathBuf;

fn codes(text: &str) -> Vec<RuleCode> {
    let report = check_text(
        PathBuf::from("vllm.container"),
        text.to_string(),
        &Config::default(),
    );
    assert!(report.error.is_none(), "{:?}", report.error);
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn gpu_units_without_shm_fire_and_healthy_ones_stay_quiet() {
    let unit =
        |extra: &str| format!("[Container]\nImage=docker.io/vllm/vllm-openai:latest\n{extra}");
    for gpu in [
        "AddDevice=nvidia.com/gpu=all\n",
        "AddDevice=nvidia.com/gpu=0 nvidia.com/gpu=1\n",
        "PodmanArgs=--gpus all\n",
        "AddDevice=/dev/nvidia0\n",
    ] {
        assert_eq!(codes(&unit(gpu)), [RuleCode::SHM001], "{gpu}");
    }
    for healthy in [
        "AddDevice=nvidia.com/gpu=all\nShmSize=16g\n",
        "AddDevice=nvidia.com/gpu=all\nPodmanArgs=--ipc=host\n",
        "AddDevice=nvidia.com/gpu=all\nTmpfs=/dev/shm:size=8g\n",
        "AddDevice=nvidia.com/gpu=all\nMount=type=tmpfs,destination=/dev/shm,tmpfs-size=8g\n",
        // A systemd specifier is only known when the unit runs.
        "AddDevice=nvidia.com/gpu=all\nShmSize=%i\n",
        // No GPU.
        "AddDevice=/dev/dri\n",
        // Settings of another section are not the container's.
        "[Service]\nAddDevice=nvidia.com/gpu=all\n",
    ] {
        assert_eq!(codes(&unit(healthy)), [], "{healthy}");
    }
    // No `Image=`: no container (the generator refuses the unit).
    assert_eq!(codes("[Container]\nAddDevice=nvidia.com/gpu=all\n"), []);
}

#[test]
fn hash_comments_suppress_findings() {
    let text = "[Container]\n# gpulint: ignore[SHM001] single-process server\nImage=x\nAddDevice=nvidia.com/gpu=all\n";
    assert_eq!(codes(text), []);
}

#[test]
fn inspect_prints_the_units_container() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "vllm.container",
        "[Container]\nImage=docker.io/vllm/vllm-openai:latest\nAddDevice=nvidia.com/gpu=0\nAddDevice=nvidia.com/gpu=1\nUlimit=memlock=-1\nShmSize=2g\nEnvironment=NCCL_DEBUG=INFO\n",
    );
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let unit = &doc["containers"][0];
    assert_eq!(unit["platform"], "quadlet", "{doc:#}");
    assert_eq!(unit["gpus"], 2);
    assert_eq!(unit["shm"]["bytes"], 2_u64 << 30);
    assert_eq!(unit["ulimits"]["memlock"]["soft"], -1);
    assert_eq!(unit["env"]["NCCL_DEBUG"], "INFO");
}
