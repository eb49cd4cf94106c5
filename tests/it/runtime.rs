//! Proves the fixes at run time, with the real container engine as the
//! judge: each broken fixture and its `--fix` output (and every flagged
//! corpus file and its fixed copy) is run for real, and the outcome is what
//! the engine gave the container, not what `gpulint inspect` says.
//!
//! - Compose: the project (the fixture's directory or file, before and
//!   after the fix) is brought up with `docker compose`, every service given
//!   the workload image and entrypoint in one more file; everything else the
//!   user wrote (environment, ipc, shm_size, tmpfs, volumes, ulimits,
//!   cap_add) is kept, GPU requests are removed.
//! - `docker run` lines of scripts: rebuilt from the library's model of the
//!   line with every flag but the GPU ones, the workload image and command,
//!   and run with `docker run --rm`.
//! - Kubernetes: there is no kubelet here. The container is started with the
//!   tmpfs kubelet mounts for a memory emptyDir at /dev/shm (sized by
//!   sizeLimit, else by the memory limit, as `gpulint inspect` reads them)
//!   and the container's environment: this part stays an emulation.
//!
//! The workload (`tests/runtime/workload.py`, in the workload image) is a
//! DataLoader-and-NCCL step sized like an 8-GPU job; its ranks, GPUs and
//! RDMA come from `gpulint inspect`, since they size the job, not the
//! container. It reports `/dev/shm` as `df` sees it from inside.
//!
//! The sandbox has no GPU and no CAP_SYS_RESOURCE: GPU requests are removed,
//! and a memlock ulimit above the host's hard limit is lowered to it with
//! `cap_add: IPC_LOCK` added (mlock then ignores RLIMIT_MEMLOCK, exactly as
//! an unlimited memlock lets it), which the tests print.
//!
//! These tests need a Docker Engine, Compose v2 and the workload image:
//! `eval "$(bash .ci/engine start)"`, then `cargo test --test it --
//! --ignored runtime:: --skip gpu_mode`. Without them they are listed as ignored.
//! GPU mode (`gpu_mode_table`): the same pairs on a machine with an NVIDIA
//! GPU and an engine, GPU requests kept, `tests/runtime/gpu_workload.py` in
//! an image with PyTorch (`GPULINT_GPU_IMAGE`).

use crate::common;

use crate::common::docker::{self, DEFAULT_FILES, DEFAULT_OVERRIDES, docker, run, text};
use common::{copy_dir, fixtures, gpulint, root, stdout};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Rules whose fixes exist to make the job run: their pairs must show a
/// container that fails before the fix and runs after it.
const RUNTIME_RULES: &[&str] = &[
    "SHM001", "SHM002", "SHM009", "K8S004", "K8S008", "K8S013", "ULIM001",
];

/// Why a Quadlet unit's container is not run here.
const QUADLET: &str = "a Quadlet unit (judged by Podman in tests/it/podman.rs; Podman starts no container in this sandbox)";

/// GPUs an `all` reservation gets on the reference node.
const NODE_GPUS: u64 = 8;

/// Workloads running at once: a passing 8-rank step holds over 5 GiB in
/// /dev/shm, and the machine has 2 cores.
const WORKLOADS_AT_ONCE: usize = 2;
/// Pairs judged at once: the engine works (create, start, remove) while a
/// thread waits on it.
const THREADS: usize = 3;

static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();
static PROJECTS: AtomicUsize = AtomicUsize::new(0);

/// A place among the workloads allowed to run at once, held while one runs.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= WORKLOADS_AT_ONCE {
            running = FREED.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        FREED.notify_one();
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Passed,
    /// The workload failed: the failure kind (`bus-error`, `nccl-shm`, ...) and its message.
    Failed(String, String),
    /// The engine (or, for Kubernetes, the API server's rule) would not
    /// load, create or start the container: its message.
    Refused(String),
    /// Not reproducible here (an unknown value, a setting in another file).
    NotRunnable(String),
}

impl Outcome {
    fn runs(&self) -> bool {
        *self == Outcome::Passed
    }

    fn fails(&self) -> bool {
        matches!(self, Outcome::Failed(..) | Outcome::Refused(_))
    }

    fn short(&self) -> String {
        match self {
            Outcome::Passed => "passed".into(),
            Outcome::Failed(kind, _) => format!("FAILED ({kind})"),
            Outcome::Refused(_) => "refused".into(),
            Outcome::NotRunnable(_) => "not runnable".into(),
        }
    }
}

/// What one container did under the engine.
#[derive(Debug, Clone)]
struct Ran {
    outcome: Outcome,
    /// /dev/shm as the workload saw it from inside: `Some(None)` when it
    /// had none; `None` when nothing ran.
    shm: Option<Option<u64>>,
    /// How it was run: `compose`, `docker run`, `k8s (emulated)`.
    by: &'static str,
    /// What was changed for the sandbox, said aloud.
    notes: Vec<String>,
    /// The files of a Compose project refused as a whole (it does not
    /// load, or its containers are not created): an error gpulint reports
    /// anywhere in them flags it, as in tests/it/engine.rs.
    project_files: Vec<String>,
}

impl Ran {
    fn without_run(by: &'static str, outcome: Outcome) -> Ran {
        Ran {
            outcome,
            shm: None,
            by,
            notes: Vec::new(),
            project_files: Vec::new(),
        }
    }
}

/// Outcomes by the exact container that was run (the `docker run` line,
/// or the service as Compose resolved it): the same container gives the
/// same outcome, so each is run once.
static RAN: Mutex<BTreeMap<String, Ran>> = Mutex::new(BTreeMap::new());
static REUSED: AtomicUsize = AtomicUsize::new(0);

/// The outcome of the container `key` names, run by `start` only if it has
/// not run yet.
fn once(key: String, start: impl FnOnce() -> Ran) -> Ran {
    if let Some(ran) = RAN.lock().unwrap().get(&key) {
        REUSED.fetch_add(1, Ordering::Relaxed);
        return ran.clone();
    }
    let ran = start();
    RAN.lock().unwrap().insert(key, ran.clone());
    ran
}

/// The engine, the image and what the sandbox cannot give.
struct Engine {
    image: String,
    /// The workload script inside the container.
    script: &'static str,
    /// GPU mode: GPU requests are kept, and the workloads are mounted into
    /// the (PyTorch) image at /workload.
    gpu: bool,
    /// The host's hard RLIMIT_MEMLOCK (-1 unlimited): without
    /// CAP_SYS_RESOURCE runc cannot give a container more.
    memlock_hard: i64,
}

/// The last line that says something: an engine's error is there.
fn last_line(text: &str) -> String {
    text.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

impl Engine {
    /// The engine, or a panic that says what is missing (the tests that
    /// call it are ignored unless asked for).
    fn connect(gpu: bool) -> Engine {
        let info = Command::new("docker")
            .args(["info", "--format", "{{.ServerVersion}}"])
            .output();
        assert!(
            info.as_ref().is_ok_and(|o| o.status.success()),
            "no Docker Engine answers `docker info`: run `eval \"$(bash .ci/engine start)\"`"
        );
        let compose = run(docker::compose().args(["version", "--short"]));
        assert!(
            compose.status.success(),
            "`docker compose` (v2) is missing: {}",
            text(&compose)
        );
        let variable = if gpu {
            "GPULINT_GPU_IMAGE"
        } else {
            "GPULINT_ENGINE_IMAGE"
        };
        let image = std::env::var(variable).unwrap_or_else(|_| {
            panic!(
                "{variable} is not set: {}",
                if gpu {
                    "name an image with PyTorch and CUDA"
                } else {
                    "run `eval \"$(bash .ci/engine start)\"`"
                }
            )
        });
        assert!(
            docker(&["image", "inspect", &image]).status.success(),
            "the image {image} is missing"
        );
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let label = "Max locked memory";
        let line = limits.lines().find(|l| l.starts_with(label)).unwrap();
        let hard = line[label.len()..].split_whitespace().nth(1).unwrap();
        let memlock_hard = if hard == "unlimited" {
            -1
        } else {
            hard.parse().unwrap()
        };
        eprintln!(
            "engine {}, compose {}, image {image}; host memlock hard limit {hard}",
            String::from_utf8_lossy(&info.unwrap().stdout).trim(),
            String::from_utf8_lossy(&compose.stdout).trim()
        );
        Engine {
            image,
            script: if gpu {
                "/workload/gpu_workload.py"
            } else {
                "/workload/workload.py"
            },
            gpu,
            memlock_hard,
        }
    }

    /// A memlock limit (bytes, -1 unlimited) the sandbox cannot give.
    fn memlock_over(&self, limit: i64) -> bool {
        self.memlock_hard != -1 && (limit == -1 || limit > self.memlock_hard)
    }

    /// `docker run` options that put the workloads where the script expects them.
    fn workload_mount(&self) -> Vec<String> {
        if self.gpu {
            vec![
                "-v".into(),
                format!("{}:/workload:ro", root().join("tests/runtime").display()),
            ]
        } else {
            Vec::new()
        }
    }

    /// The workload's command line for a container gpulint inspected.
    fn workload(&self, container: &Value) -> Vec<String> {
        let gpus = match &container["gpus"] {
            Value::Number(n) => n.to_string(),
            _ => "all".to_string(),
        };
        let mut args: Vec<String> = vec![
            "python3".into(),
            self.script.into(),
            "--ranks".into(),
            ranks(container).to_string(),
            "--gpus".into(),
            gpus,
        ];
        if !self.gpu {
            args.extend(serving_share(container));
        }
        if container["rdma"] == true {
            args.push("--rdma".into());
        }
        args
    }
}

/// A serving engine whose /dev/shm need SHM002 derives from its parts
/// (NCCL's segments between its ranks and the engine's own shared memory,
/// `model::shm_need`) above the `min-size` floor is run as those parts: no
/// DataLoader, and the engine's memory held as one prefetched batch per
/// rank. Anything else, training and a server whose need is the floor
/// alone, runs the reference training job, which stands in for what
/// gpulint cannot see.
fn serving_share(container: &Value) -> Vec<String> {
    use gpulint::model::shm_need::{NCCL_SEGMENT_BYTES, TRITON_PYTHON_BYTES, VLLM_RING_BYTES};
    const IMAGE: u64 = 3 * 224 * 224 * 4;
    let ranks = ranks(container);
    let engine = match container["workload"]["kind"].as_str() {
        Some("vllm") if ranks >= 2 => VLLM_RING_BYTES,
        Some("triton") => TRITON_PYTHON_BYTES,
        Some("tgi" | "sglang" | "vllm") => 0,
        _ => return Vec::new(),
    };
    let floor = gpulint::engine::config::Config::default()
        .rule_settings
        .min_shm;
    if engine + ranks * (ranks - 1) * NCCL_SEGMENT_BYTES <= floor {
        return Vec::new();
    }
    if engine == 0 {
        return vec!["--workers".into(), "0".into()];
    }
    // An even batch: the workload checks the byte at half the batch, and
    // writes one byte a page (an image is 147 pages).
    let batch = engine.div_ceil(ranks * IMAGE).next_multiple_of(2);
    ["--workers", "1", "--prefetch", "1", "--batch"]
        .into_iter()
        .map(str::to_string)
        .chain([batch.to_string()])
        .collect()
}

/// Ranks in the container: its launcher's, else one per GPU (`all` is a full node).
fn ranks(container: &Value) -> u64 {
    if let Some(n) = container["ranks"].as_u64() {
        return n.max(1);
    }
    match &container["gpus"] {
        Value::String(s) if s == "all" => NODE_GPUS,
        Value::Number(n) => n.as_u64().unwrap().max(1),
        _ => 1,
    }
}

/// The workload's `RESULT` line in a container's output: the outcome and
/// /dev/shm as seen from inside.
fn read_result(output: &str) -> Option<(Outcome, Option<u64>)> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))?;
    let result: Value = serde_json::from_str(line).ok()?;
    let outcome = if result["passed"] == true {
        Outcome::Passed
    } else {
        Outcome::Failed(
            result["failure"].as_str().unwrap_or("?").into(),
            result["message"].as_str().unwrap_or("").into(),
        )
    };
    Some((outcome, result["shm_size"].as_u64()))
}

/// A finished `docker run`: its result, or the engine's refusal (Docker's
/// own errors exit 125, 126 or 127 before the workload starts).
fn finished(output: &Output, by: &'static str, notes: Vec<String>) -> Ran {
    let all = text(output);
    match read_result(&String::from_utf8_lossy(&output.stdout)) {
        Some((outcome, shm)) => Ran {
            outcome,
            shm: Some(shm),
            by,
            notes,
            project_files: Vec::new(),
        },
        None if matches!(output.status.code(), Some(125..=127)) => Ran {
            outcome: Outcome::Refused(last_line(&all)),
            shm: None,
            by,
            notes,
            project_files: Vec::new(),
        },
        None => Ran {
            outcome: Outcome::Failed("no-result".into(), all),
            shm: None,
            by,
            notes,
            project_files: Vec::new(),
        },
    }
}

/// A reported path (relative to the checkout, where gpulint runs) as a key
/// that is the same before and after the fix: relative to the linted
/// directory, or the linted file's name.
fn within(linted: &Path, reported: &str) -> String {
    let file = root().join(reported);
    file.strip_prefix(base_of(linted))
        .unwrap_or(&file)
        .display()
        .to_string()
}

fn base_of(linted: &Path) -> &Path {
    if linted.is_dir() {
        linted
    } else {
        linted.parent().unwrap()
    }
}

/// Every container `gpulint inspect` finds under `path`, by file and id.
fn inspect(path: &Path) -> BTreeMap<(String, String), Value> {
    let output = gpulint(
        &root(),
        &["inspect", "--format", "json", path.to_str().unwrap()],
    );
    let json: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("inspect {}: {e}: {}", path.display(), stdout(&output)));
    json["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let file = within(path, c["path"].as_str().unwrap());
            let mut c = c.clone();
            if let Some(decided) = c["shm_decided_at"]["path"].as_str() {
                c["shm_decided_at"]["path"] = within(path, decided).into();
            }
            ((file, c["id"].as_str().unwrap().to_string()), c)
        })
        .collect()
}

/// A finding: its code, where it is, whether it is an error, and where its
/// fix edits the file.
struct Finding {
    code: String,
    offset: u64,
    error: bool,
    fix_offsets: Vec<u64>,
}

/// The findings in each file under `path` (default config, every rule).
fn findings(path: &Path) -> BTreeMap<String, Vec<Finding>> {
    let output = gpulint(
        &root(),
        &[
            "check",
            "--output-format",
            "json",
            "--select",
            "ALL",
            path.to_str().unwrap(),
        ],
    );
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let mut out: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for d in json["diagnostics"].as_array().unwrap() {
        let fix_offsets = d["fix"]["edits"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|edit| edit["start"]["offset"].as_u64().unwrap())
            .collect();
        out.entry(within(path, d["path"].as_str().unwrap()))
            .or_default()
            .push(Finding {
                code: d["code"].as_str().unwrap().to_string(),
                offset: d["start"]["offset"].as_u64().unwrap(),
                error: d["severity"] == "error",
                fix_offsets,
            });
    }
    out
}

/// The codes of the findings about a container: inside its service or pod
/// spec, at the setting that decides its /dev/shm (which may be in another
/// file of a Compose project, or in the service it `extends`), or whose fix
/// edits its spec (a limit it takes from the service it `extends` is
/// reported where the base sets it, and fixed in the container's own
/// service); and `refused` when `inspect` says the container cannot be
/// created (a file Compose would not pick by itself, refused alone, is left
/// to `inspect`: `check` takes it for a fragment).
fn codes_in(
    findings: &BTreeMap<String, Vec<Finding>>,
    file: &str,
    container: &Value,
) -> Vec<String> {
    let offset = |span: &Value, end: &str| span[end]["offset"].as_u64().unwrap();
    let within_span = |file: &str, span: &Value| -> Vec<String> {
        let (start, end) = (offset(span, "start"), offset(span, "end"));
        let inside = |at: &u64| (start..=end).contains(at);
        findings
            .get(file)
            .into_iter()
            .flatten()
            .filter(|f| inside(&f.offset) || f.fix_offsets.iter().any(inside))
            .map(|f| f.code.clone())
            .collect()
    };
    let scope = &container["scope"];
    let mut codes = within_span(file, scope);
    let decided = &container["shm_decided_at"];
    if let Some(decided_file) = decided["path"].as_str()
        && (decided_file != file
            || offset(decided, "start") < offset(scope, "start")
            || offset(decided, "end") > offset(scope, "end"))
    {
        codes.extend(within_span(decided_file, decided));
    }
    if container["refused"].is_string() {
        codes.push("refused (inspect)".to_string());
    }
    codes
}

/// The files Compose discovers in `dir`: its first default file and first override.
fn discovered_files(dir: &Path) -> Vec<String> {
    let first = |names: &[&str]| {
        names
            .iter()
            .find(|n| dir.join(n).is_file())
            .map(|n| n.to_string())
    };
    match first(&DEFAULT_FILES) {
        Some(base) => std::iter::once(base)
            .chain(first(&DEFAULT_OVERRIDES))
            .collect(),
        None => Vec::new(),
    }
}

/// A Compose project of one side of a pair: a directory (relative to the
/// side's base) and the files given with `-f`.
type ProjectKey = (PathBuf, Vec<String>);

/// Runs every GPU container of one side of a pair (a fixture as it is, or
/// fixed) under the engine.
fn run_side(
    engine: &Engine,
    side: &Path,
    containers: &BTreeMap<(String, String), Value>,
) -> BTreeMap<(String, String), Ran> {
    let base = base_of(side);
    let mut projects: BTreeMap<ProjectKey, Vec<(String, String)>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (key, container) in containers {
        if container["gpu_workload"] != true {
            continue;
        }
        let file = base.join(&key.0);
        match container["platform"].as_str().unwrap() {
            "compose" => {
                let dir = file.parent().unwrap();
                let name = file.file_name().unwrap().to_string_lossy().to_string();
                let discovered = if side.is_dir() {
                    discovered_files(dir)
                } else {
                    Vec::new()
                };
                let files = if discovered.contains(&name) {
                    discovered
                } else {
                    vec![name]
                };
                let relative = dir.strip_prefix(base).unwrap().to_path_buf();
                projects
                    .entry((relative, files))
                    .or_default()
                    .push(key.clone());
            }
            // A dev container is the `docker run` the Dev Container CLI
            // makes of it: run as that.
            "docker-run" | "devcontainer" => {
                out.insert(key.clone(), run_docker_run(engine, &file, container));
            }
            // The generator's `podman run` holds Podman-only options, and
            // Podman cannot start a container in this sandbox: the model of
            // a unit is judged by Podman's `create` in tests/it/podman.rs.
            "quadlet" => {
                out.insert(
                    key.clone(),
                    Ran::without_run("podman run", Outcome::NotRunnable(QUADLET.into())),
                );
            }
            "kubernetes" => {
                out.insert(key.clone(), run_kubernetes(engine, container));
            }
            other => {
                out.insert(
                    key.clone(),
                    Ran::without_run("-", Outcome::NotRunnable(format!("platform {other}"))),
                );
            }
        }
    }
    for ((dir, files), keys) in projects {
        // The project is copied: Compose runs where its files are, and the
        // override files are written beside them.
        let temp = tempfile::tempdir().unwrap();
        let copy = temp.path().join("project");
        if side.is_dir() {
            copy_dir(side, &copy);
        } else {
            std::fs::create_dir_all(&copy).unwrap();
            for f in &files {
                std::fs::copy(base.join(&dir).join(f), copy.join(f)).unwrap();
            }
        }
        let project_dir = if side.is_dir() { copy.join(&dir) } else { copy };
        // Every service of these files, for the image override: Compose
        // refuses a service with no image (fixtures often name none).
        let in_files: Vec<&Value> = containers
            .iter()
            .filter(|((file, _), c)| {
                c["platform"] == "compose"
                    && files
                        .iter()
                        .any(|f| Path::new(file) == dir.join(f).as_path())
            })
            .map(|(_, c)| c)
            .collect();
        let gpu: Vec<(&(String, String), &Value)> =
            keys.iter().map(|k| (k, &containers[k])).collect();
        let project_files: Vec<String> = files
            .iter()
            .map(|f| dir.join(f).display().to_string())
            .collect();
        for (key, ran) in run_compose(
            engine,
            &project_dir,
            &files,
            &project_files,
            &in_files,
            &gpu,
        ) {
            out.insert(key, ran);
        }
    }
    out
}

fn compose(dir: &Path, project: &str, files: &[String], args: &[&str]) -> Output {
    let mut command = docker::compose();
    command
        .current_dir(dir)
        .args(["-p", project, "--profile", "*"]);
    for f in files {
        command.args(["-f", f]);
    }
    command.args(args);
    // The project's own .env is Compose's business; the caller's
    // environment must not leak into interpolation.
    command
        .env_remove("COMPOSE_FILE")
        .env_remove("COMPOSE_PROFILES");
    run(&mut command)
}

/// `(soft, hard)` of a ulimit as Compose's JSON writes it.
fn compose_limit(value: &Value) -> (i64, i64) {
    match value {
        Value::Number(n) => (n.as_i64().unwrap_or(0), n.as_i64().unwrap_or(0)),
        v => (
            v["soft"].as_i64().unwrap_or(0),
            v["hard"].as_i64().unwrap_or(0),
        ),
    }
}

/// A refusal that is about what is not on this machine, not about the
/// config: a file the project names that the corpus did not store with it,
/// a runtime other than runc and nvidia, or a variable the file expects
/// from its caller's environment.
fn missing_here(why: &str) -> Option<&'static str> {
    if why.contains("no such file or directory") {
        return Some("a file the project names is not here (the corpus stores each file alone)");
    }
    if why.contains("Unknown runtime specified") {
        return Some("a runtime this engine does not have (it has runc, and nvidia as runc)");
    }
    if why.contains("empty section between colons") {
        return Some("a variable the file expects from its environment has no value here");
    }
    None
}

/// Brings one Compose project up, a GPU service at a time, each with the
/// workload as its entrypoint, and reads each one's RESULT from its logs.
fn run_compose(
    engine: &Engine,
    dir: &Path,
    files: &[String],
    project_files: &[String],
    in_files: &[&Value],
    gpu: &[(&(String, String), &Value)],
) -> Vec<((String, String), Ran)> {
    const BY: &str = "compose";
    let project = format!(
        "glrt{}-{}",
        std::process::id(),
        PROJECTS.fetch_add(1, Ordering::Relaxed)
    );
    // A corpus file is stored alone: the `env_file` beside it is not here.
    // An empty one stands in for it, and the table says so.
    let mut project_notes = Vec::new();
    let mut first = compose(dir, &project, files, &["config", "--format", "json"]);
    while !first.status.success() {
        let why = text(&first);
        let Some(path) = why
            .split("env file ")
            .nth(1)
            .and_then(|rest| rest.split(" not found").next())
            .map(PathBuf::from)
            .filter(|p| p.starts_with(dir) && !p.exists())
        else {
            break;
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "").unwrap();
        project_notes.push(format!(
            "an empty {} stands in for the env_file beside it, which is not here",
            path.strip_prefix(dir).unwrap().display()
        ));
        first = compose(dir, &project, files, &["config", "--format", "json"]);
    }
    let refuse_all = |why: &str| -> Vec<((String, String), Ran)> {
        gpu.iter()
            .map(|(k, _)| {
                let outcome = match missing_here(why) {
                    Some(what) => Outcome::NotRunnable(format!("{what}: {}", last_line(why))),
                    None => Outcome::Refused(last_line(why)),
                };
                let mut ran = Ran::without_run(BY, outcome);
                ran.project_files = project_files.to_vec();
                ran.notes = project_notes.clone();
                ((*k).clone(), ran)
            })
            .collect()
    };
    // The services, as Compose reads them; a project whose services name
    // no image is read again with the workload image given.
    let names: Vec<String> = if first.status.success() {
        let config: Value = serde_json::from_slice(&first.stdout).unwrap();
        config["services"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    } else {
        in_files
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    let image_file = ".glrt-image.yaml".to_string();
    let mut yaml = String::from("services:\n");
    for name in &names {
        yaml.push_str(&format!(
            "  {}: {{image: {}, container_name: !reset null}}\n",
            serde_json::to_string(name).unwrap(),
            engine.image
        ));
    }
    std::fs::write(dir.join(&image_file), yaml).unwrap();
    let mut with_image: Vec<String> = files.to_vec();
    with_image.push(image_file);
    let config = compose(dir, &project, &with_image, &["config", "--format", "json"]);
    if !config.status.success() {
        let why = if first.status.success() {
            text(&config)
        } else {
            text(&first)
        };
        return refuse_all(&why);
    }
    let config: Value = serde_json::from_slice(&config.stdout).unwrap();
    // The run override: the workload as the GPU services' entrypoint, a
    // sleep for the others (IPC donors must stay up), no GPU requests.
    let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut yaml = String::from("services:\n");
    for (name, service) in config["services"].as_object().unwrap() {
        let claim = gpu.iter().find(|(k, _)| k.1 == *name).map(|(_, c)| *c);
        let entrypoint = match claim {
            Some(c) => engine.workload(c),
            None => vec!["sleep".into(), "infinity".into()],
        };
        yaml.push_str(&format!(
            "  {}:\n    entrypoint: {}\n    command: !reset []\n    user: root\n    healthcheck: {{disable: true}}\n    restart: \"no\"\n    ports: !reset []\n",
            serde_json::to_string(name).unwrap(),
            serde_json::to_string(&entrypoint).unwrap()
        ));
        if engine.gpu {
            yaml.push_str(&format!(
                "    volumes: [{}]\n",
                serde_json::to_string(&format!(
                    "{}:/workload:ro",
                    root().join("tests/runtime").display()
                ))
                .unwrap()
            ));
        } else {
            // No GPU or device driver here: the engine refuses the requests.
            yaml.push_str("    devices: !reset []\n    gpus: !reset []\n");
            yaml.push_str("    deploy: {resources: {reservations: {devices: !reset []}}}\n");
        }
        if let Some(memlock) = service["ulimits"].get("memlock") {
            let (soft, hard) = compose_limit(memlock);
            if engine.memlock_over(soft) || engine.memlock_over(hard) {
                let max = engine.memlock_hard;
                yaml.push_str(&format!(
                    "    ulimits: {{memlock: {{soft: {max}, hard: {max}}}}}\n    cap_add: [IPC_LOCK]\n"
                ));
                notes.entry(name.clone()).or_default().push(format!(
                    "memlock {soft}:{hard} lowered to the host's hard limit {max} with cap_add IPC_LOCK (mlock then ignores RLIMIT_MEMLOCK, as unlimited would; no CAP_SYS_RESOURCE here)"
                ));
            }
        }
    }
    let run_file = ".glrt-run.yaml".to_string();
    std::fs::write(dir.join(&run_file), yaml).unwrap();
    let mut all_files = with_image;
    all_files.push(run_file);
    let mut out = Vec::new();
    let created = compose(
        dir,
        &project,
        &all_files,
        &["create", "--pull", "never", "--no-build"],
    );
    if !created.status.success() {
        out = refuse_all(&text(&created));
    } else {
        for (key, claim) in gpu {
            let service = key.1.as_str();
            let notes = notes.remove(service).unwrap_or_default();
            // A service that joins no other container is the same container
            // wherever it was written: its resolved config and workload name it.
            let spec = &config["services"][service];
            let alone = !spec["ipc"]
                .as_str()
                .is_some_and(|i| i.starts_with("service:") || i.starts_with("container:"))
                && spec["volumes_from"].is_null()
                && !spec["network_mode"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("service:"));
            let start = || {
                let _slot = Slot::take();
                let up = compose(
                    dir,
                    &project,
                    &all_files,
                    &[
                        "up",
                        "-d",
                        "--no-build",
                        "--pull",
                        "never",
                        "--no-recreate",
                        service,
                    ],
                );
                let ids = compose(dir, &project, &all_files, &["ps", "-aq", service]);
                let id = String::from_utf8_lossy(&ids.stdout).trim().to_string();
                if !up.status.success() || id.is_empty() {
                    return Ran::without_run(BY, Outcome::Refused(last_line(&text(&up))));
                }
                let _ = docker(&["wait", &id]);
                let logs = docker(&["logs", &id]);
                match read_result(&String::from_utf8_lossy(&logs.stdout)) {
                    Some((outcome, shm)) => Ran {
                        outcome,
                        shm: Some(shm),
                        by: BY,
                        notes: Vec::new(),
                        project_files: Vec::new(),
                    },
                    None => Ran::without_run(BY, Outcome::Failed("no-result".into(), text(&logs))),
                }
            };
            let mut ran = if alone {
                let mut spec = spec.clone();
                if let Some(spec) = spec.as_object_mut() {
                    spec.remove("container_name");
                    spec.remove("labels");
                }
                once(
                    format!("compose {spec}\u{1f}{}", engine.workload(claim).join(" ")),
                    start,
                )
            } else {
                start()
            };
            ran.notes = notes;
            ran.notes.extend(project_notes.iter().cloned());
            out.push(((*key).clone(), ran));
        }
    }
    let _ = compose(
        dir,
        &project,
        &all_files,
        &["down", "-v", "-t", "0", "--remove-orphans"],
    );
    out
}

/// The `docker run` behind a container `gpulint inspect` reported in a
/// script (`docker run #N` is the N-th run of the file), rebuilt with every
/// flag but the GPU ones, the workload image and the workload command.
fn run_docker_run(engine: &Engine, file: &Path, container: &Value) -> Ran {
    use gpulint::model::script::{Script, ScriptKind};
    const BY: &str = "docker run";
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let kind =
        gpulint::engine::discover::script_kind(file).unwrap_or(if name.contains("akefile") {
            ScriptKind::Makefile
        } else {
            ScriptKind::Shell
        });
    let yaml =
        (kind == ScriptKind::Workflow).then(|| gpulint::syntax::yaml::Yaml::parse(&text).unwrap());
    let script = Script::read(&text, kind, yaml.as_ref());
    let id = container["id"].as_str().unwrap();
    let n: usize = id.rsplit_once('#').unwrap().1.parse().unwrap();
    let Some(site) = script.runs.get(n - 1) else {
        return Ran::without_run(BY, Outcome::NotRunnable(format!("{id} not found")));
    };
    let workdir = tempfile::tempdir().unwrap();
    let mut notes = Vec::new();
    let mut argv: Vec<String> = vec!["run".into(), "--rm".into()];
    for option in &site.run.options {
        let name = option.name.as_str();
        let mut value = option.value.clone();
        // Run here, attached, with no terminal, no name or port to clash.
        if matches!(
            name,
            "--rm"
                | "--detach"
                | "--interactive"
                | "--tty"
                | "--name"
                | "--publish"
                | "--publish-all"
                | "--entrypoint"
                | "--attach"
                | "--sig-proxy"
        ) {
            continue;
        }
        if let Some(short) = name.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            let rest: String = short.chars().filter(|c| !"dit".contains(*c)).collect();
            if !rest.is_empty() {
                argv.push(format!("-{rest}"));
            }
            continue;
        }
        // No GPU here.
        if !engine.gpu
            && (name == "--gpus"
                || (name == "--device" && value.as_deref().is_some_and(|v| v.contains("nvidia"))))
        {
            continue;
        }
        // A host device this machine lacks (an InfiniBand port) would make
        // the engine refuse the container for a reason that is not the config's.
        if name == "--device" {
            let host = value
                .as_deref()
                .unwrap_or("")
                .split(':')
                .next()
                .unwrap_or("");
            if !Path::new(host).exists() {
                notes.push(format!("--device {host} left out: not on this machine"));
                continue;
            }
        }
        if option.dynamic {
            let v = value.clone().unwrap_or_default();
            let expanded = v
                .replace("${PWD}", &workdir.path().display().to_string())
                .replace("$PWD", &workdir.path().display().to_string());
            if expanded.contains('$') {
                notes.push(format!("{name} {v} left out: only known at run time"));
                continue;
            }
            value = Some(expanded);
        }
        if name == "--ulimit"
            && let Some(values) = value.as_deref().and_then(|v| v.strip_prefix("memlock="))
        {
            let (soft, hard) = values.split_once(':').unwrap_or((values, values));
            let over = |v: &str| v.parse().is_ok_and(|v: i64| engine.memlock_over(v));
            if over(soft) || over(hard) {
                let max = engine.memlock_hard;
                argv.push(format!("--ulimit=memlock={max}:{max}"));
                argv.push("--cap-add=IPC_LOCK".into());
                notes.push(format!(
                    "memlock {values} lowered to the host's hard limit {max} with --cap-add IPC_LOCK (mlock then ignores RLIMIT_MEMLOCK, as unlimited would; no CAP_SYS_RESOURCE here)"
                ));
                continue;
            }
        }
        match value {
            Some(v) => argv.push(format!("{name}={v}")),
            None => argv.push(name.to_string()),
        }
    }
    argv.extend(engine.workload_mount());
    argv.push(engine.image.clone());
    argv.extend(engine.workload(container));
    let mut ran = once(format!("docker {}", argv.join("\u{1f}")), || {
        let _slot = Slot::take();
        let output = run(Command::new("docker")
            .args(&argv)
            .current_dir(workdir.path())
            .stdin(std::process::Stdio::null()));
        finished(&output, BY, Vec::new())
    });
    ran.notes = notes;
    ran
}

/// A Kubernetes container, emulated: kubelet is not here. The engine runs
/// it with what kubelet would give it: a memory emptyDir at /dev/shm is a
/// tmpfs sized by its sizeLimit, else by the memory limit (as `gpulint
/// inspect` reads them); hostIPC is the host's IPC namespace; the
/// container's environment and added capabilities.
fn run_kubernetes(engine: &Engine, container: &Value) -> Ran {
    const BY: &str = "k8s (emulated)";
    if let Some(why) = container["refused"].as_str() {
        // The API server's validation, as gpulint models it: no API server
        // here either, so this is part of the emulation.
        return Ran::without_run(
            BY,
            Outcome::Refused(format!(
                "the API server's validation as gpulint models it (emulated): {why}"
            )),
        );
    }
    let shm = &container["shm"];
    let from = shm["from"].as_str().unwrap_or("").to_string();
    let mut argv: Vec<String> = vec!["run".into(), "--rm".into()];
    match (shm["kind"].as_str().unwrap(), shm["bytes"].as_u64()) {
        // No emptyDir: the container runtime's own /dev/shm (64 MiB).
        ("default", _) => {}
        ("sized", Some(bytes)) => argv.push(format!(
            "--mount=type=tmpfs,destination=/dev/shm,tmpfs-size={bytes}"
        )),
        // A memory emptyDir with no limit at all: node memory bounds it.
        ("unbounded", _) => argv.push("--mount=type=tmpfs,destination=/dev/shm".into()),
        ("host", _) if from.contains("hostPath") => argv.push("-v=/dev/shm:/dev/shm".into()),
        ("host", _) => argv.push("--ipc=host".into()),
        ("disk", _) => argv.push("--mount=type=volume,destination=/dev/shm".into()),
        ("missing", _) => argv.push("--ipc=none".into()),
        ("refused", _) => return Ran::without_run(BY, Outcome::Refused(from)),
        (other, _) => {
            return Ran::without_run(BY, Outcome::NotRunnable(format!("{other}: {from}")));
        }
    }
    if container["ipc"] == "host" && !argv.iter().any(|a| a == "--ipc=host") {
        argv.push("--ipc=host".into());
    }
    for cap in container["cap_add"].as_array().into_iter().flatten() {
        if let Some(cap) = cap.as_str() {
            argv.push(format!("--cap-add={cap}"));
        }
    }
    for (name, value) in container["env"].as_object().into_iter().flatten() {
        if let Some(value) = value.as_str() {
            argv.push(format!("--env={name}={value}"));
        }
    }
    if engine.gpu {
        argv.push("--gpus=all".into());
    }
    argv.extend(engine.workload_mount());
    argv.push(engine.image.clone());
    argv.extend(engine.workload(container));
    once(format!("k8s {}", argv.join("\u{1f}")), || {
        let _slot = Slot::take();
        let output = run(Command::new("docker")
            .args(&argv)
            .stdin(std::process::Stdio::null()));
        finished(&output, BY, Vec::new())
    })
}

/// A broken config and its fixed copy.
struct Pair {
    label: String,
    /// The rule whose fixture it is, if any.
    rule: Option<String>,
    before: PathBuf,
    after: PathBuf,
    _dir: tempfile::TempDir,
}

/// Every compose, Kubernetes and script fixture with `.fixed` snapshots: the
/// fixture as it is, and a copy with the fixed files put in.
fn fixture_pairs() -> Vec<Pair> {
    // Compose files, manifests and scripts start containers; Dockerfiles
    // run nothing by themselves.
    let starts_containers = |p: &Path| {
        !gpulint::engine::discover::is_dockerfile_name(&p.file_name().unwrap().to_string_lossy())
    };
    let mut pairs = Vec::new();
    for rule in gpulint::rules::RULES {
        for fixture in fixtures(rule.code) {
            let fixed: Vec<(&PathBuf, PathBuf)> = fixture
                .files
                .iter()
                .map(|file| (file, fixture.snapshot(file, ".fixed")))
                .filter(|(_, fixed)| fixed.is_file())
                .collect();
            if !fixed.iter().any(|(file, _)| starts_containers(file)) {
                continue;
            }
            let temp = tempfile::tempdir().unwrap();
            let after = temp.path().join(fixture.name());
            if fixture.path.is_dir() {
                copy_dir(&fixture.path, &after);
            }
            for (file, fixed) in &fixed {
                let inside = file.strip_prefix(&fixture.path).unwrap();
                let target = if inside.as_os_str().is_empty() {
                    after.clone()
                } else {
                    after.join(inside)
                };
                std::fs::copy(fixed, target).unwrap();
            }
            pairs.push(Pair {
                label: fixture
                    .path
                    .strip_prefix(root())
                    .unwrap()
                    .display()
                    .to_string(),
                rule: Some(rule.code.to_string()),
                before: fixture.path.clone(),
                after,
                _dir: temp,
            });
        }
    }
    pairs
}

/// The flagged compose and Kubernetes corpus files, each with a copy fixed
/// by `gpulint check --fix --unsafe-fixes`.
fn corpus_pairs() -> Option<Vec<Pair>> {
    let corpus = common::required_shared("corpus");
    let mut pairs = Vec::new();
    for kind in ["compose", "k8s"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus.join(kind))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let temp = tempfile::tempdir().unwrap();
            let after = temp.path().join(file.file_name().unwrap());
            std::fs::copy(&file, &after).unwrap();
            let fixed = gpulint(
                temp.path(),
                &[
                    "check",
                    "--fix",
                    "--unsafe-fixes",
                    "--quiet",
                    after.to_str().unwrap(),
                ],
            );
            if fixed.status.code() == Some(2) {
                continue; // a template or a file gpulint skips
            }
            if std::fs::read(&file).unwrap() == std::fs::read(&after).unwrap() {
                continue; // nothing fixed
            }
            pairs.push(Pair {
                label: format!(
                    "corpus/{kind}/{}",
                    file.file_name().unwrap().to_string_lossy()
                ),
                rule: None,
                before: file,
                after,
                _dir: temp,
            });
        }
    }
    Some(pairs)
}

/// One container of a pair, before and after the fix.
struct Row {
    pair: String,
    container: String,
    by: &'static str,
    shm_before: String,
    shm_after: String,
    before: Outcome,
    after: Outcome,
    flagged_before: Vec<String>,
    flagged_after: Vec<String>,
    notes: Vec<String>,
}

/// /dev/shm as the workload saw it from inside the container.
fn shm_cell(ran: &Ran) -> String {
    match ran.shm {
        None => "-".into(),
        Some(None) => "none".into(),
        Some(Some(b)) => gpulint::model::size::HumanBytes(b).to_string(),
    }
}

/// Runs every GPU container of a pair before and after its fix.
fn run_pair(engine: &Engine, pair: &Pair) -> Vec<Row> {
    let before = inspect(&pair.before);
    let after = inspect(&pair.after);
    let found_before = findings(&pair.before);
    let found_after = findings(&pair.after);
    let ran_before = run_side(engine, &pair.before, &before);
    let ran_after = run_side(engine, &pair.after, &after);
    let gpu = |side: &BTreeMap<(String, String), Value>| -> BTreeSet<(String, String)> {
        side.iter()
            .filter(|(_, c)| c["gpu_workload"] == true)
            .map(|(k, _)| k.clone())
            .collect()
    };
    let keys: BTreeSet<_> = gpu(&before).union(&gpu(&after)).cloned().collect();
    // A compose service merged from several files of a project is reported
    // once, in the file gpulint picks: its flags count for every copy.
    // A project Compose refuses as a whole is flagged by an error anywhere in its files.
    let project_flags = |found: &BTreeMap<String, Vec<Finding>>,
                         side: &BTreeMap<(String, String), Value>,
                         key: &(String, String),
                         ran: &Ran|
     -> Vec<String> {
        let mut codes: Vec<String> = side
            .iter()
            .filter(|(k, c)| *k == key || (k.1 == key.1 && c["platform"] == "compose"))
            .flat_map(|((file, _), c)| codes_in(found, file, c))
            .collect();
        for file in &ran.project_files {
            codes.extend(
                found
                    .get(file)
                    .into_iter()
                    .flatten()
                    .filter(|f| f.error)
                    .map(|f| f.code.clone()),
            );
        }
        codes
    };
    let mut rows = Vec::new();
    for key in keys {
        let absent =
            || Ran::without_run("-", Outcome::NotRunnable("not a GPU container here".into()));
        let b = ran_before.get(&key).cloned().unwrap_or_else(absent);
        let a = ran_after.get(&key).cloned().unwrap_or_else(absent);
        let mut notes: Vec<String> = b.notes.iter().map(|n| format!("before: {n}")).collect();
        notes.extend(a.notes.iter().map(|n| format!("after: {n}")));
        rows.push(Row {
            pair: pair.label.clone(),
            container: format!("{}:{}", key.0, key.1),
            by: if b.by == "-" { a.by } else { b.by },
            shm_before: shm_cell(&b),
            shm_after: shm_cell(&a),
            flagged_before: if before.contains_key(&key) {
                project_flags(&found_before, &before, &key, &b)
            } else {
                Vec::new()
            },
            flagged_after: if after.contains_key(&key) {
                project_flags(&found_after, &after, &key, &a)
            } else {
                Vec::new()
            },
            before: b.outcome,
            after: a.outcome,
            notes,
        });
    }
    rows
}

/// Runs every pair on a few threads; the rows in the pairs' order.
fn run_pairs(engine: &Engine, pairs: &[Pair]) -> Vec<Vec<Row>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<BTreeMap<usize, Vec<Row>>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(pair) = pairs.get(i) else { break };
                    let rows = run_pair(engine, pair);
                    for r in &rows {
                        eprintln!(
                            "ran {} {}: {} / {}",
                            r.pair,
                            r.container,
                            r.before.short(),
                            r.after.short()
                        );
                    }
                    results.lock().unwrap().insert(i, rows);
                }
            });
        }
    });
    results.into_inner().unwrap().into_values().collect()
}

/// The checks every row must pass, whatever the pair.
fn check_row(row: &Row, failures: &mut Vec<String>) {
    let at = format!("{} {}", row.pair, row.container);
    // A fix never breaks a container that ran.
    if row.before.runs() && !row.after.runs() {
        failures.push(format!("{at}: ran before the fix, {:?} after", row.after));
    }
    // gpulint quiet means the job runs: a failing container is flagged.
    for (outcome, flagged, when) in [
        (&row.before, &row.flagged_before, "before"),
        (&row.after, &row.flagged_after, "after"),
    ] {
        if outcome.fails() && flagged.is_empty() {
            failures.push(format!(
                "{at}: {:?} {when} the fix, but gpulint reports nothing",
                outcome
            ));
        }
    }
}

fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<62} {:<30} {:<14} {:>9} {:>9}  {:<22} {}\n",
        "config", "container", "run by", "shm", "fixed", "before", "after"
    );
    let mut notes = Vec::new();
    for r in rows {
        out.push_str(&format!(
            "{:<62} {:<30} {:<14} {:>9} {:>9}  {:<22} {}\n",
            r.pair,
            r.container,
            r.by,
            r.shm_before,
            r.shm_after,
            r.before.short(),
            r.after.short()
        ));
        for n in &r.notes {
            notes.push(format!("  {} {}: {n}", r.pair, r.container));
        }
        for (when, outcome) in [("before", &r.before), ("after", &r.after)] {
            match outcome {
                Outcome::Refused(why) => notes.push(format!(
                    "  {} {}: refused {when} the fix: {why}",
                    r.pair, r.container
                )),
                Outcome::NotRunnable(why) => notes.push(format!(
                    "  {} {}: not runnable here {when} the fix: {why}",
                    r.pair, r.container
                )),
                _ => {}
            }
        }
    }
    out.push_str(
        "shm and fixed: /dev/shm as `df` sees it inside the container the engine started (- where none started).\n\
         k8s (emulated): no kubelet here; the engine runs the container with the tmpfs kubelet mounts for a memory emptyDir at /dev/shm.\n",
    );
    if !notes.is_empty() {
        out.push_str("changed for this sandbox, or refused:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn fixture_fixes_make_the_workload_run() {
    let engine = Engine::connect(false);
    let started = std::time::Instant::now();
    let reused = REUSED.load(Ordering::Relaxed);
    let pairs = fixture_pairs();
    let mut failures = Vec::new();
    let mut all_rows = Vec::new();
    let mut proven = Vec::new();
    for (pair, rows) in pairs.iter().zip(run_pairs(&engine, &pairs)) {
        for row in &rows {
            check_row(row, &mut failures);
        }
        let rule = pair.rule.as_deref().unwrap();
        let only_units = !rows.is_empty()
            && rows
                .iter()
                .all(|r| matches!(&r.before, Outcome::NotRunnable(why) if why == QUADLET));
        if only_units {
            eprintln!("{}: not run here: {QUADLET}", pair.label);
        }
        if RUNTIME_RULES.contains(&rule) && !only_units {
            let fixed: Vec<&Row> = rows
                .iter()
                .filter(|r| r.before.fails() && r.after.runs())
                .collect();
            if fixed.is_empty() {
                failures.push(format!(
                    "{}: no GPU container fails before the {rule} fix and runs after it",
                    pair.label
                ));
            } else {
                proven.push(rule.to_string());
            }
            // Whatever still fails after the fix is still reported.
            for r in rows.iter().filter(|r| r.after.fails()) {
                if r.flagged_after.is_empty() {
                    failures.push(format!(
                        "{} {}: still fails after the fix, unreported",
                        r.pair, r.container
                    ));
                }
            }
        }
        all_rows.extend(rows);
    }
    eprintln!(
        "{}{} pairs in {:.0?} ({} runs of a container already run were reused)",
        table(&all_rows),
        pairs.len(),
        started.elapsed(),
        REUSED.load(Ordering::Relaxed) - reused
    );
    proven.sort();
    proven.dedup();
    assert_eq!(
        proven,
        RUNTIME_RULES
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        "rules proven at run time"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn flagged_corpus_files_run_once_fixed() {
    let engine = Engine::connect(false);
    let started = std::time::Instant::now();
    let reused = REUSED.load(Ordering::Relaxed);
    let Some(pairs) = corpus_pairs() else { return };
    let mut failures = Vec::new();
    let mut all_rows = Vec::new();
    let mut fixed = 0;
    for rows in run_pairs(&engine, &pairs) {
        for row in &rows {
            check_row(row, &mut failures);
            // A container flagged for its /dev/shm fails as it is and runs fixed.
            let shm_finding = row
                .flagged_before
                .iter()
                .any(|c| c.starts_with("SHM") || matches!(c.as_str(), "K8S004" | "K8S013"));
            // One that cannot run here (a sibling file the corpus lacks) proves nothing.
            let runnable = |o: &Outcome| !matches!(o, Outcome::NotRunnable(_));
            if shm_finding && runnable(&row.before) && runnable(&row.after) {
                if !row.before.fails() {
                    failures.push(format!(
                        "{} {}: flagged {:?} but runs as it is",
                        row.pair, row.container, row.flagged_before
                    ));
                }
                if !row.after.runs() {
                    failures.push(format!(
                        "{} {}: {:?} after --fix",
                        row.pair, row.container, row.after
                    ));
                }
                fixed += 1;
            }
        }
        all_rows.extend(rows);
    }
    eprintln!(
        "{}{} corpus files in {:.0?} ({} runs of a container already run were reused)",
        table(&all_rows),
        pairs.len(),
        started.elapsed(),
        REUSED.load(Ordering::Relaxed) - reused
    );
    assert!(
        fixed >= 5,
        "only {fixed} flagged corpus containers were run"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the reference job (the workload script with `args`) in a container
/// the engine gives `bytes` of /dev/shm, once a workload slot is free.
fn run_reference_job(engine: &Engine, bytes: u64, args: &[&str]) -> Output {
    let _slot = Slot::take();
    run(Command::new("docker")
        .args(["run", "--rm", &format!("--shm-size={bytes}")])
        .args([engine.image.as_str(), "python3", engine.script])
        .args(args))
}

/// The reference job's footprint in /dev/shm (workload.py computes the same).
fn shm_needed(ranks: u64, workers: u64, prefetch: u64, batch: u64) -> u64 {
    const IMAGE: u64 = 3 * 224 * 224 * 4;
    const NCCL_SEGMENT: u64 = 9_637_888;
    ranks * workers * prefetch * batch * IMAGE + ranks * (ranks - 1) * NCCL_SEGMENT
}

/// The largest per-GPU batch an 8-GPU job (8 workers, prefetch 2) fits in
/// the default `[shm] fix-size`: the batch that fits runs, one more image
/// per batch fails, in a container the engine gives `--shm-size` of the
/// fix size (4 KiB pages).
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn default_fix_size_carries_the_reference_job() {
    let engine = Engine::connect(false);
    let fix_size = gpulint::model::size::parse_compose_size(
        &gpulint::engine::config::Config::default()
            .rule_settings
            .fix_shm_size,
    );
    let gpulint::model::size::SizeValue::Bytes { bytes, .. } = fix_size else {
        panic!("fix-size {fix_size:?}");
    };
    let largest = (1..1024)
        .take_while(|&b| shm_needed(8, 8, 2, b) <= bytes)
        .last()
        .unwrap();
    assert!(
        largest >= 32,
        "the reference batch of 32 images does not fit {bytes} bytes"
    );
    let run_batch = |batch: u64| {
        let output = run_reference_job(
            &engine,
            bytes,
            &["--ranks", "8", "--batch", &batch.to_string()],
        );
        let ran = finished(&output, "docker run", Vec::new());
        (ran, text(&output))
    };
    // The two runs side by side: each holds at most the fix size.
    let (fits, over) = std::thread::scope(|scope| {
        let fits = scope.spawn(|| run_batch(largest));
        let over = scope.spawn(|| run_batch(largest + 1));
        (fits.join().unwrap(), over.join().unwrap())
    });
    assert!(
        fits.0.outcome.runs(),
        "batch {largest} should fit {bytes} bytes: {}",
        fits.1
    );
    assert!(
        matches!(fits.0.shm, Some(Some(b)) if b == bytes.div_ceil(4096) * 4096),
        "the engine gave /dev/shm {:?}, not {bytes} bytes",
        fits.0.shm
    );
    assert!(
        matches!(over.0.outcome, Outcome::Failed(..)),
        "batch {} should not fit {bytes} bytes: {}",
        largest + 1,
        over.1
    );
    eprintln!(
        "default fix-size {} (--shm-size, /dev/shm {} inside): 8 ranks x 8 workers x 2 prefetch x {largest} images (3x224x224 fp32) run ({} needed), {} images do not ({}); the reference 32-image job needs {}",
        gpulint::model::size::HumanBytes(bytes),
        shm_cell(&fits.0),
        gpulint::model::size::HumanBytes(shm_needed(8, 8, 2, largest)),
        largest + 1,
        over.0.outcome.short(),
        gpulint::model::size::HumanBytes(shm_needed(8, 8, 2, 32)),
    );
}

/// SHM002's thresholds (`gpulint::model::shm_need`) against the reference
/// job on the engine: at the size gpulint asks for, the job runs; at the
/// sizes issue 23 found passing although the job fails there, gpulint asks
/// for more and the job fails. Serving is run as its NCCL share alone (no
/// DataLoader workers); the engines' own shared memory is not modelled here.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn shm002_thresholds_carry_the_reference_job() {
    use gpulint::model::shm_need::shm_need;
    use gpulint::model::size::{HumanBytes, MIB};
    let engine = Engine::connect(false);
    let policy = gpulint::engine::config::Config::default()
        .rule_settings
        .shm_policy();
    // (the run's GPUs and command, ranks and DataLoader workers the job
    // runs, sizes that must fail). What gpulint cannot classify, and
    // training whose rank count nothing tells, is sized as the heaviest
    // workload measured on its GPUs: all of them is a full node of 8.
    let cases: &[(&str, u64, u64, &[u64])] = &[
        ("1 torchrun --nproc_per_node=1 train.py", 1, 8, &[]),
        ("2 torchrun --nproc_per_node=2 train.py", 2, 8, &[512 * MIB]),
        (
            "4 torchrun --nproc_per_node=4 train.py",
            4,
            8,
            &[1024 * MIB],
        ),
        (
            "8 torchrun --nproc_per_node=8 train.py",
            8,
            8,
            &[2048 * MIB, 2800 * MIB],
        ),
        (
            "8 torchrun --nproc_per_node=8 train.py --num_workers 2",
            8,
            2,
            &[1024 * MIB],
        ),
        (
            "8 torchrun --nproc_per_node=8 train.py --num_workers 4",
            8,
            4,
            &[1536 * MIB],
        ),
        (
            "all torchrun --nproc_per_node=gpu train.py",
            8,
            8,
            &[2048 * MIB, 2800 * MIB],
        ),
        ("all python app.py", 8, 8, &[2048 * MIB, 2800 * MIB]),
        ("6 python app.py", 6, 8, &[1792 * MIB]),
        ("2 python app.py", 2, 8, &[512 * MIB]),
        ("4 vllm serve m --tensor-parallel-size 4", 4, 0, &[]),
        (
            "8 vllm serve m --tensor-parallel-size 8",
            8,
            0,
            &[512 * MIB],
        ),
    ];
    let run_at = |ranks: u64, workers: u64, bytes: u64| {
        let output = run_reference_job(
            &engine,
            bytes,
            &[
                "--ranks",
                &ranks.to_string(),
                "--workers",
                &workers.to_string(),
            ],
        );
        (
            finished(&output, "docker run", Vec::new()).outcome,
            text(&output),
        )
    };
    let mut failures = Vec::new();
    std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(command, ranks, workers, too_small)| {
                // The container gpulint models for the command on `ranks` GPUs.
                let (gpus, command) = command.split_once(' ').unwrap();
                let line = format!("docker run --gpus {gpus} --shm-size=1g img {command}\n");
                let containers = gpulint::engine::inspect_text(
                    &line,
                    Path::new("run.sh"),
                    &gpulint::engine::config::Config::default(),
                )
                .expect("a docker run line");
                let need = shm_need(&containers.containers[0], &policy);
                let run_at = &run_at;
                scope.spawn(move || {
                    let at_need = run_at(ranks, workers, need.bytes);
                    let below: Vec<_> = too_small
                        .iter()
                        .map(|&b| (b, run_at(ranks, workers, b)))
                        .collect();
                    (command, need, at_need, below)
                })
            })
            .collect();
        for handle in runs {
            let (command, need, (outcome, output), below) = handle.join().unwrap();
            eprintln!(
                "{command}: gpulint asks for {} ({}); the job {} there",
                HumanBytes(need.bytes),
                need.reason,
                outcome.short()
            );
            if !outcome.runs() {
                failures.push(format!(
                    "{command}: fails at the {} gpulint asks for: {output}",
                    HumanBytes(need.bytes)
                ));
            }
            for (bytes, (outcome, output)) in below {
                if bytes >= need.bytes {
                    failures.push(format!(
                        "{command}: {} passes SHM002 (needs {})",
                        HumanBytes(bytes),
                        HumanBytes(need.bytes)
                    ));
                }
                if !matches!(outcome, Outcome::Failed(..)) {
                    failures.push(format!(
                        "{command}: expected to fail at {}: {output}",
                        HumanBytes(bytes)
                    ));
                }
            }
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// GPU mode: the same pairs with PyTorch on real GPUs, under the engine
/// with the GPU requests kept. Run it with `GPULINT_GPU_IMAGE=<an image
/// with PyTorch> cargo test --test it runtime::gpu_mode -- --ignored
/// --nocapture` on a machine with an NVIDIA GPU, the NVIDIA Container
/// Toolkit and an engine; elsewhere it fails saying why it was skipped, so
/// it never counts as passed without a GPU. CI has no GPU and skips it.
#[test]
#[ignore = "needs an NVIDIA GPU, a Docker Engine with the NVIDIA runtime and GPULINT_GPU_IMAGE (PyTorch): cargo test --test it runtime::gpu_mode -- --ignored --nocapture"]
fn gpu_mode_table() {
    let smi = Command::new("nvidia-smi").arg("-L").output();
    let gpus = match smi {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {
            String::from_utf8_lossy(&o.stdout).to_string()
        }
        Ok(o) => panic!(
            "SKIPPED, not passed: nvidia-smi finds no GPU: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("SKIPPED, not passed: no NVIDIA GPU here (nvidia-smi: {e})"),
    };
    let engine = Engine::connect(true);
    let torch = docker(&[
        "run",
        "--rm",
        "--gpus=all",
        &engine.image,
        "python3",
        "-c",
        "import torch; print(torch.__version__, torch.cuda.is_available())",
    ]);
    assert!(
        torch.status.success(),
        "SKIPPED, not passed: PyTorch with CUDA does not run in {}: {}",
        engine.image,
        text(&torch)
    );
    eprintln!(
        "GPUs:\n{gpus}torch: {}",
        String::from_utf8_lossy(&torch.stdout)
    );
    let pairs: Vec<Pair> = fixture_pairs()
        .into_iter()
        .filter(|p| {
            p.rule
                .as_deref()
                .is_some_and(|r| RUNTIME_RULES.contains(&r))
        })
        .collect();
    let rows: Vec<Row> = run_pairs(&engine, &pairs).into_iter().flatten().collect();
    println!("{}", table(&rows));
    let fixed = rows
        .iter()
        .filter(|r| r.before.fails() && r.after.runs())
        .count();
    let broken_after = rows
        .iter()
        .filter(|r| r.after.fails() && r.flagged_after.is_empty())
        .count();
    println!(
        "{fixed} containers fail before their fix and run after it; {broken_after} fail after it unreported"
    );
    assert!(fixed > 0 && broken_after == 0);
}
