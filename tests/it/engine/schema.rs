//! Compose's schema as the judge of gpulint's: for every setting gpulint
//! models, values of every wrong type and shape (and right ones), each in a
//! one-service project; `docker compose config` decides whether Compose
//! refuses it, and gpulint must refuse exactly the same ones (a PROJ001
//! finding, or `inspect` saying the container is refused).
//!
//! Only the Compose CLI is needed (no engine): `config` loads and
//! validates without creating anything.

use crate::common;
use rayon::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The settings gpulint models, as a YAML path under the service (or
/// `top:` for a top-level key), and the values each is tried with.
fn slots() -> Vec<(&'static str, Vec<&'static str>)> {
    let scalars = vec![
        "1", "-1", "1.5", "true", "null", "\"\"", "abc", "\"8g\"", "all", "[]", "[1]", "[a]", "{}",
        "{a: 1}", "[{}]",
    ];
    let with = |extra: &[&'static str]| {
        let mut values = scalars.clone();
        values.extend_from_slice(extra);
        values
    };
    // Lists whose items compose-go tells apart before the schema sees
    // them (its `EnforceUnicity`): items of every shape.
    let items = |extra: &[&'static str]| {
        let mut values = vec![
            "1", "abc", "{a: 1}", "[1]", "[1.5]", "[true]", "[~]", "[[a]]", "[{a: 1}]", "[a, a]",
            "[a, 1]", "[\"1\"]",
        ];
        values.extend_from_slice(extra);
        values
    };
    vec![
        ("shm_size", with(&["8gb", "1073741824", "[8g]"])),
        (
            "ports",
            items(&[
                "[8080]",
                "[\"8080:80\"]",
                "[{target: 80}]",
                "[{published: 1}]",
                "[{target: 80, published: \"8080\"}]",
                "[\"a:80\"]",
                "[\"70000\"]",
                "[70000]",
                "[-1]",
                "[\"80/tcpx\"]",
                "[\"80/UDP\"]",
                "[\"127.0.0.1:8080:80\"]",
                "[\"abc:8080:80\"]",
                "[\"[::1]:8080:80\"]",
                "[\"8000-8001:9000-9005\"]",
                "[\"9000-9005:80\"]",
                "[\"8080:\"]",
                "[\"${PORT:-8080}:80\"]",
            ]),
        ),
        (
            "expose",
            items(&["[80]", "[80, 80]", "[1e6]", "[{b: [x, ~], a: 1}]"]),
        ),
        (
            "env_file",
            items(&["[{path: a.env, required: false}]", "[{required: false}]"]),
        ),
        ("secrets", items(&["[{source: s}]", "[{target: /x}]"])),
        ("configs", items(&[])),
        ("labels", items(&["[a=b, a=c]"])),
        ("annotations", items(&[])),
        ("dns", items(&["[1.1.1.1]"])),
        ("dns_search", items(&[])),
        ("dns_opt", items(&[])),
        ("cap_drop", items(&["[ALL]"])),
        ("profiles", items(&["[gpu]"])),
        (
            "links",
            items(&[
                "[other]",
                "[other:alias]",
                "[missing]",
                "[missing:alias]",
                "[\"other:a:b\"]",
            ]),
        ),
        (
            "volumes_from",
            items(&[
                "[other]",
                "[\"other:ro\"]",
                "[\"missing:ro\"]",
                "[\"container:x\"]",
            ]),
        ),
        (
            "pid",
            with(&["host", "\"service:other\"", "\"service:missing\""]),
        ),
        ("uts", with(&["host", "\"service:missing\""])),
        ("sysctls", items(&["[net.core.somaxconn=1024]"])),
        ("build.args", items(&["[A=1]"])),
        ("build.tags", items(&[])),
        ("build.labels", items(&[])),
        ("networks.default.aliases", items(&[])),
        ("deploy.labels", items(&[])),
        ("devices", items(&["[{source: /dev/null}]"])),
        (
            "top:networks",
            items(&[
                "{n: {labels: [1]}}",
                "{n: {labels: [a=b]}}",
                "{n: {ipam: {options: [1]}}}",
            ]),
        ),
        (
            "ipc",
            with(&["host", "private", "shareable", "\"service:other\"", "none"]),
        ),
        (
            "gpus",
            with(&[
                "[{count: 1}]",
                "[{driver: nvidia, count: all}]",
                "[{count: all, capabilities: [gpu]}]",
                "[{device_ids: ['0']}]",
                "[{bogus: 1}]",
                "\"1\"",
            ]),
        ),
        (
            "deploy",
            with(&[
                "{resources: {}}",
                "{resources: []}",
                "{replicas: 2}",
                "{bogus: 1}",
            ]),
        ),
        (
            "deploy.resources",
            with(&[
                "{reservations: {}}",
                "{limits: {memory: 1g}}",
                "{reservations: []}",
                "{nvidia.com/gpu: 1}",
            ]),
        ),
        (
            "deploy.resources.reservations",
            with(&[
                "{devices: []}",
                "{memory: 1g}",
                "{cpus: 2}",
                "{devices: {}}",
                "{bogus: 1}",
            ]),
        ),
        (
            "deploy.resources.reservations.devices",
            with(&[
                "[{capabilities: [gpu]}]",
                "[{driver: nvidia, count: all, capabilities: [gpu]}]",
                "[{driver: nvidia, count: 2, capabilities: [gpu]}]",
                "[{driver: nvidia, count: \"2\", capabilities: [gpu]}]",
                "[{driver: nvidia, count: all}]",
                "[{capabilities: gpu}]",
                "[{capabilities: [gpu], device_ids: [0, 1]}]",
                "[{capabilities: [gpu], device_ids: '0'}]",
                "[{capabilities: [gpu], driver: 1}]",
                "[{capabilities: [gpu], options: {a: b}}]",
                "[{capabilities: [gpu], options: [a=b]}]",
                "[{capabilities: [gpu], bogus: 1}]",
                "[{capabilities: [gpu], x-note: 1}]",
            ]),
        ),
        (
            "ulimits",
            with(&[
                "{memlock: -1}",
                "{memlock: {soft: -1, hard: -1}}",
                "{memlock: {soft: -1}}",
                "{memlock: {soft: 1, hard: 2, bogus: 3}}",
                "{memlock: \"-1\"}",
                "{memlock: unlimited}",
                "{MEMLOCK: 1}",
                "{memlock: [1]}",
                "{stack: 67108864}",
            ]),
        ),
        (
            "ulimits.memlock",
            with(&["{soft: -1, hard: -1}", "{soft: 1}"]),
        ),
        ("ulimits.nofile", with(&[])),
        (
            "depends_on",
            with(&[
                "[other]",
                "{other: {condition: service_started}}",
                "{other: {condition: bogus}}",
                "[missing]",
            ]),
        ),
        ("deploy.resources.limits", with(&["{memory: 1g}"])),
        (
            "tmpfs",
            with(&["/dev/shm", "[/dev/shm]", "[\"/dev/shm:size=1g\"]", "[1]"]),
        ),
        (
            "volumes",
            with(&[
                "[/tmp:/tmp]",
                "[{type: tmpfs, target: /dev/shm}]",
                "[{type: tmpfs, target: /dev/shm, tmpfs: {size: 1g}}]",
                "[{type: bind}]",
                "[{type: bogus, target: /x}]",
                "[{target: /x, bogus: 1}]",
                "[/a:/x, /b:/x]",
                "[/a:/x, /a:/x]",
            ]),
        ),
        (
            "cap_add",
            with(&["[IPC_LOCK]", "IPC_LOCK", "[IPC_LOCK, IPC_LOCK]", "[1]"]),
        ),
        ("runtime", with(&["nvidia", "runc", "\"\""])),
        (
            "devices",
            with(&[
                "[/dev/null]",
                "[\"/dev/null:/dev/null\"]",
                "[{source: /dev/null, target: /dev/null}]",
                "/dev/null",
            ]),
        ),
        (
            "environment",
            with(&[
                "{NCCL_DEBUG: INFO}",
                "[NCCL_DEBUG=INFO]",
                "{A: [1]}",
                "{A: {b: 1}}",
                "[{A: 1}]",
                "{A: 1}",
                "{A: null}",
                "[A, A]",
            ]),
        ),
        ("privileged", with(&["\"yes\"", "\"maybe\"", "on"])),
        (
            "extends",
            with(&[
                "{service: other}",
                "other",
                "{file: missing.yaml, service: other}",
                "{service: 1}",
                "{bogus: 1}",
            ]),
        ),
        (
            "command",
            with(&["[torchrun, train.py]", "\"torchrun train.py\""]),
        ),
        ("shm_sise", vec!["1g"]),
        (
            "network_mode",
            with(&["host", "\"service:other\"", "\"service:missing\""]),
        ),
        (
            "top:include",
            with(&[
                "[other.yaml]",
                "[{path: other.yaml}]",
                "[{path: [other.yaml]}]",
                "[{bogus: 1}]",
                "other.yaml",
            ]),
        ),
        (
            "top:volumes",
            with(&[
                "{data: {}}",
                "{data: null}",
                "{data: {driver: local, driver_opts: {type: tmpfs, device: tmpfs, o: size=512m}}}",
                "{data: {bogus: 1}}",
            ]),
        ),
        ("top:x-anchors", with(&[])),
        ("top:version", with(&["\"3.8\""])),
    ]
}

/// A service `t` with `value` at `path` (a dotted path under the service,
/// or `top:key`), beside a service `other` and an `other.yaml` to include.
fn case_text(path: &str, value: &str) -> String {
    let mut text = String::new();
    let top = path.strip_prefix("top:");
    if let Some(key) = top {
        text.push_str(&format!("{key}: {value}\n"));
    }
    text.push_str("services:\n  other:\n    image: busybox\n  t:\n    image: busybox\n");
    if top.is_none() {
        let parts: Vec<&str> = path.split('.').collect();
        for (depth, part) in parts.iter().enumerate() {
            let indent = "  ".repeat(depth + 2);
            if depth + 1 == parts.len() {
                text.push_str(&format!("{indent}{part}: {value}\n"));
            } else {
                text.push_str(&format!("{indent}{part}:\n"));
            }
        }
    }
    text
}

fn compose_refuses(dir: &Path) -> (bool, String) {
    let out = Command::new("docker")
        .args(["compose", "-f", "compose.yaml", "config", "-q"])
        .current_dir(dir)
        .env_remove("COMPOSE_FILE")
        .env_remove("COMPOSE_PROFILES")
        .output()
        .expect("docker compose runs");
    let said = String::from_utf8_lossy(&out.stderr)
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.contains("level=warning"))
        .unwrap_or("")
        .to_string();
    (!out.status.success(), said)
}

fn gpulint_refuses(dir: &Path) -> (bool, String) {
    let check = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args([
            "check",
            "--output-format",
            "json",
            "--select",
            "PROJ001",
            "compose.yaml",
        ])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&check.stdout).unwrap_or(Value::Null);
    let refusals: Vec<String> = json["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect();
    let inspect = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["inspect", "--format", "json", "compose.yaml"])
        .current_dir(dir)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&inspect.stdout).unwrap_or(Value::Null);
    let refused_container = json["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| !c["refused"].is_null());
    let why = refusals.first().cloned().or_else(|| {
        refused_container.map(|c| c["refused"].as_str().unwrap_or("refused").to_string())
    });
    (why.is_some(), why.unwrap_or_default())
}

#[test]
#[ignore = "needs Compose v2 (`docker compose`): eval \"$(bash .ci/engine start)\""]
fn compose_and_gpulint_refuse_the_same_generated_schema_cases() {
    common::required_tool("GPULINT_DOCKER", "docker", "the Docker CLI with Compose v2");
    let cases: Vec<(String, String)> = slots()
        .into_iter()
        .flat_map(|(path, values)| {
            values
                .into_iter()
                .map(move |value| (path.to_string(), value.to_string()))
        })
        .collect();
    let results: Vec<(String, bool, String, bool, String)> = cases
        .par_iter()
        .map(|(path, value)| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("compose.yaml"), case_text(path, value)).unwrap();
            std::fs::write(
                dir.path().join("other.yaml"),
                "services:\n  included:\n    image: busybox\n",
            )
            .unwrap();
            let (compose, compose_said) = compose_refuses(dir.path());
            let (gpulint, gpulint_said) = gpulint_refuses(dir.path());
            (
                format!("{path}: {value}"),
                compose,
                compose_said,
                gpulint,
                gpulint_said,
            )
        })
        .collect();
    let refused = results.iter().filter(|r| r.1).count();
    // `config` only loads the project: what the engine refuses when it
    // creates the container (a negative size, an IPC mode it does not
    // know), gpulint reports too, and the engine tier judges with
    // `create`.
    let by_the_engine = |said: &str| said.contains("the engine refuses");
    let at_create = results
        .iter()
        .filter(|(_, compose, _, gpulint, said)| !compose && *gpulint && by_the_engine(said))
        .count();
    let disagreements: Vec<String> = results
        .iter()
        .filter(|(_, compose, _, gpulint, said)| {
            compose != gpulint && !(*gpulint && by_the_engine(said))
        })
        .map(|(label, compose, compose_said, _, gpulint_said)| {
            if *compose {
                format!("{label}: Compose refuses ({compose_said}), gpulint does not")
            } else {
                format!("{label}: Compose accepts it, gpulint refuses ({gpulint_said})")
            }
        })
        .collect();
    // Where both refuse, gpulint's message carries Compose's words (less
    // the file Compose names, which gpulint shows as the location).
    let in_other_words: Vec<String> = results
        .iter()
        .filter(|(_, compose, _, gpulint, _)| *compose && *gpulint)
        .filter_map(|(label, _, compose_said, _, gpulint_said)| {
            let words = compose_said
                .split_once(": ")
                .filter(|(head, _)| head.starts_with("validating "))
                .map_or(compose_said.as_str(), |(_, rest)| rest);
            (!gpulint_said.contains(words))
                .then(|| format!("{label}: Compose: {words}\n    gpulint: {gpulint_said}"))
        })
        .collect();
    eprintln!(
        "schema cases: {} generated, {refused} refused by Compose, {} accepted ({at_create} of them refused by the engine at create, and by gpulint), {} disagreements, {} refusals in other words",
        results.len(),
        results.len() - refused,
        disagreements.len(),
        in_other_words.len()
    );
    eprintln!("{}", in_other_words.join("\n"));
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        results.len(),
        disagreements.join("\n")
    );
    assert!(results.len() >= 500, "only {} cases", results.len());
}
