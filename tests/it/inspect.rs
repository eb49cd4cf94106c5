//! `gpulint inspect`: the run-time settings gpulint derives, checked like
//! the rules that reason over them.

use crate::common;

use common::{gpulint, root, stdout, write};
use serde_json::{Value, json};

fn inspect(args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["inspect", "--format", "json"];
    all.extend(args);
    let output = gpulint(&root(), &all);
    let json = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", stdout(&output)));
    (json, output.status.code())
}

fn container<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no container {id} in {doc:#}"))
}

#[test]
fn compose_shm_comes_from_the_setting_that_decides_it() {
    let (doc, code) = inspect(&[
        "fixtures/SHM001/invalid.yaml",
        "fixtures/SHM007/invalid.yaml",
        "fixtures/ULIM001/invalid.yaml.fixed",
    ]);
    assert_eq!(code, Some(0));
    let trainer = container(&doc, "trainer");
    assert_eq!(
        trainer["shm"],
        json!({"kind": "default", "bytes": 67108864, "from": "Docker's default"})
    );
    assert_eq!(trainer["gpus"], "all");
    assert_eq!(trainer["ranks"], 8);
    assert_eq!(trainer["gpu_workload"], true);
    assert_eq!(trainer["start"]["line"], 3);
    // The runtime's default is decided nowhere in the file.
    assert_eq!(trainer["shm_decided_at"], Value::Null);
    let zero = container(&doc, "zero");
    assert_eq!(zero["shm"]["from"], "shm_size 0: Docker's default");
    // `shm_size: 0` is written: its value is where the default comes from.
    assert_eq!(zero["shm_decided_at"]["start"]["line"], 20, "{zero}");
    assert_eq!(
        zero["shm_decided_at"]["path"],
        "fixtures/SHM001/invalid.yaml"
    );
    assert_eq!(container(&doc, "launcher-only")["gpus"], Value::Null);
    assert_eq!(container(&doc, "launcher-only")["ranks"], 4);
    // A donor that does not share its IPC namespace: the engine refuses.
    assert_eq!(container(&doc, "client")["shm"]["kind"], "refused");
    assert_eq!(container(&doc, "client")["ipc"], "service:server");
    assert_eq!(container(&doc, "dangling")["shm"]["kind"], "unknown");
    let rdma = container(&doc, "rdma");
    assert_eq!(
        rdma["ulimits"],
        json!({"memlock": {"soft": -1, "hard": -1}})
    );
    assert_eq!(rdma["rdma"], true);
    assert_eq!(rdma["env"], json!({"NCCL_IB_HCA": "mlx5_0"}));
}

/// A service merged from two files is shown in one; the size that decides
/// its /dev/shm is named with the file it is written in.
#[test]
fn the_setting_that_decides_shm_names_its_file() {
    let dir = "fixtures/SHM002/invalid_base_size_override_gpus";
    let (doc, code) = inspect(&[dir]);
    assert_eq!(code, Some(0));
    let trainer = container(&doc, "trainer");
    assert_eq!(
        trainer["path"],
        format!("{dir}/docker-compose.override.yml"),
        "{trainer}"
    );
    let decided = &trainer["shm_decided_at"];
    assert_eq!(decided["path"], format!("{dir}/docker-compose.yml"));
    // `shm_size: "1gb"`: line 5 of the base file, the value's column.
    assert_eq!(decided["start"]["line"], 5, "{decided}");
    assert_eq!(decided["start"]["column"], 15, "{decided}");
}

#[test]
fn compose_mounts_donors_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  donor:\n    ipc: shareable\n    shm_size: 2gb\n  worker:\n    gpus: all\n    ipc: service:donor\n    shm_size: 64m\n  bound:\n    gpus: all\n    tmpfs: /dev/shm\n  sized:\n    gpus: [{driver: nvidia, count: 2}]\n    tmpfs: [\"/dev/shm:size=4g\"]\n  host:\n    gpus: all\n    volumes: [/dev/shm:/dev/shm]\n  both:\n    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, device_ids: [\"0\"], capabilities: [gpu]}]}}}\n",
    );
    write(
        dir.path(),
        "compose.override.yaml",
        "services:\n  donor:\n    shm_size: 4gb\n",
    );
    let (doc, _) = inspect(&[dir.path().to_str().unwrap()]);
    let worker = container(&doc, "worker");
    assert_eq!(worker["shm"]["kind"], "sized");
    assert_eq!(
        worker["shm"]["bytes"],
        4u64 << 30,
        "the donor's size, as the override sets it: {worker:#}"
    );
    assert!(
        worker["shm"]["from"]
            .as_str()
            .unwrap()
            .starts_with("`donor`'s /dev/shm")
    );
    assert_eq!(container(&doc, "bound")["shm"]["kind"], "unbounded");
    assert_eq!(container(&doc, "sized")["shm"]["bytes"], 4u64 << 30);
    assert_eq!(container(&doc, "host")["shm"]["kind"], "host");
    assert!(
        container(&doc, "both")["refused"]
            .as_str()
            .unwrap()
            .contains("count and device_ids")
    );
}

#[test]
fn kubernetes_emptydir_size_is_capped_by_memory_limits() {
    let (doc, _) = inspect(&[
        "fixtures/K8S006/invalid_no_size_limit_but_memory_limit.yaml",
        "fixtures/K8S008/invalid_docker_spellings.yaml",
        "fixtures/K8S008/invalid_milli_size_limit.yaml",
        "fixtures/K8S005/invalid_disk_emptydir.yaml",
        "fixtures/K8S004/invalid_pytorchjob.yaml",
        "fixtures/K8S004/valid_host_ipc.yaml",
    ]);
    let by_path = |path: &str| -> Vec<&Value> {
        doc["containers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["path"].as_str().unwrap().ends_with(path))
            .collect()
    };
    let capped = by_path("invalid_no_size_limit_but_memory_limit.yaml")[0];
    assert_eq!(capped["shm"]["bytes"], 512u64 << 30);
    assert_eq!(capped["gpus"], 8);
    assert!(
        by_path("invalid_docker_spellings.yaml")[0]["refused"]
            .as_str()
            .unwrap()
            .contains("not a quantity")
    );
    // `512m` is half a byte: the tmpfs gets a single page.
    assert_eq!(
        by_path("invalid_milli_size_limit.yaml")[0]["shm"]["bytes"],
        1
    );
    assert_eq!(
        by_path("invalid_disk_emptydir.yaml")[0]["shm"]["kind"],
        "disk"
    );
    let job = by_path("invalid_pytorchjob.yaml");
    assert_eq!(job.len(), 2, "master and worker");
    assert!(
        job.iter()
            .all(|c| c["shm"]["bytes"] == 64u64 << 20 && c["platform"] == "kubernetes")
    );
    assert!(job[0]["id"].as_str().unwrap().starts_with("PyTorchJob/"));
    let host = by_path("valid_host_ipc.yaml")[0];
    assert_eq!(
        (host["ipc"].as_str(), host["shm"]["kind"].as_str()),
        (Some("host"), Some("host"))
    );
}

#[test]
fn text_table_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "docker-compose.yml",
        "services:\n  t:\n    gpus: all\n    shm_size: 8gb\n",
    );
    write(dir.path(), "broken/docker-compose.yml", "services: [\n");
    let output = gpulint(dir.path(), &["inspect"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "a broken file is an error");
    assert!(text.starts_with("LOCATION"), "{text}");
    assert!(
        text.contains("docker-compose.yml:2:3")
            && text.contains("8 GiB")
            && text.contains("shm_size 8 GiB"),
        "{text}"
    );
    assert!(
        text.contains("broken/docker-compose.yml: invalid YAML"),
        "{text}"
    );
}

#[test]
fn an_anonymous_volume_at_dev_shm_is_disk() {
    // `volumes: ["/dev/shm"]` (and its long form without a source) puts an
    // anonymous, disk-backed volume at /dev/shm, like a named one.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  short:\n    gpus: all\n    volumes: [\"/dev/shm\"]\n  long:\n    gpus: all\n    volumes:\n      - type: volume\n        target: /dev/shm\n",
    );
    write(
        dir.path(),
        "run.sh",
        "docker run --gpus all -v /dev/shm img\n",
    );
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    for id in ["short", "long"] {
        assert_eq!(
            container(&doc, id)["shm"],
            json!({"kind": "disk", "bytes": null, "from": "a volume mounted at /dev/shm"}),
            "{id}"
        );
    }
    let run = doc["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["start"]["line"] == 1 && c["path"].as_str().unwrap().ends_with("run.sh"))
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(run["shm"]["kind"], "disk", "{run:#}");
}
