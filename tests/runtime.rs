//! Proves the fixes at run time: each broken fixture and its `--fix` output
//! (and every flagged corpus file and its fixed copy) is read with `gpulint
//! inspect`, and each GPU container's settings are reproduced around a real
//! workload, the way the container engine would give them: a private mount
//! namespace with a tmpfs of exactly the effective `/dev/shm` size, the
//! ulimits, the GPU environment, and no CAP_IPC_LOCK unless `cap_add` says so.
//!
//! CPU mode (always): `tests/runtime/workload.py`, a DataLoader-and-NCCL
//! step sized like an 8-GPU job, with torch's shared-memory traffic.
//! GPU mode (`cargo test --test runtime -- --ignored --nocapture`, on a
//! machine with an NVIDIA GPU): `tests/runtime/gpu_workload.py` with
//! PyTorch, and a table of the outcomes.
//!
//! Needs root and `unshare` (CI has both); elsewhere the tests say they
//! were skipped, and under CI they fail instead.

mod common;

use common::{copy_dir, fixtures, gpulint, root, stdout};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Rules whose fixes exist to make the job run: their pairs must show a
/// container that fails before the fix and runs after it.
const RUNTIME_RULES: &[&str] = &[
    "SHM001", "SHM002", "SHM009", "K8S004", "K8S008", "K8S013", "ULIM001",
];

/// What a container gets when its config sets no memlock ulimit: Docker
/// passes on the daemon's, which is 8 MiB under systemd 253 and later
/// (64 KiB before).
const ENGINE_DEFAULT_MEMLOCK: i64 = 8 * 1024 * 1024;

/// GPUs an `all` reservation gets on the reference node.
const NODE_GPUS: u64 = 8;

/// One run at a time: a passing 8-rank step holds over 5 GiB in /dev/shm.
static SANDBOX: Mutex<()> = Mutex::new(());

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Passed,
    /// The workload failed: the failure kind (`bus-error`, `nccl-shm`, ...) and its message.
    Failed(String, String),
    /// The engine or API server would not start the container.
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

/// Whether this machine can build the sandbox; `false` (and a message)
/// when it cannot, which CI does not accept.
fn sandbox_available() -> bool {
    let ok = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs -o size=1m tmpfs /dev/shm && command -v python3 >/dev/null && command -v setpriv >/dev/null")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must be able to run `unshare --mount` as root with python3 and setpriv"
        );
        eprintln!(
            "SKIPPED: the run-time harness needs root, `unshare --mount`, python3 and setpriv"
        );
    }
    ok
}

/// A reported path (relative to the checkout, where gpulint runs) as a key
/// that is the same before and after the fix: relative to the linted
/// directory, or the linted file's name.
fn within(linted: &Path, reported: &str) -> String {
    let base = if linted.is_dir() {
        linted
    } else {
        linted.parent().unwrap()
    };
    let file = root().join(reported);
    file.strip_prefix(base)
        .unwrap_or(&file)
        .display()
        .to_string()
}

/// The GPU containers `gpulint inspect` finds under `path`, by file and id.
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
        .filter(|c| c["gpu_workload"] == true)
        .map(|c| {
            let file = within(path, c["path"].as_str().unwrap());
            ((file, c["id"].as_str().unwrap().to_string()), c.clone())
        })
        .collect()
}

/// Byte offsets of the findings in each file under `path` (default config, every rule).
fn findings(path: &Path) -> BTreeMap<String, Vec<(String, u64)>> {
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
    let mut out: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for d in json["diagnostics"].as_array().unwrap() {
        out.entry(within(path, d["path"].as_str().unwrap()))
            .or_default()
            .push((
                d["code"].as_str().unwrap().to_string(),
                d["start"]["offset"].as_u64().unwrap(),
            ));
    }
    out
}

/// The codes of the findings inside a container's service or pod spec.
fn codes_in(
    findings: &BTreeMap<String, Vec<(String, u64)>>,
    file: &str,
    container: &Value,
) -> Vec<String> {
    let start = container["scope"]["start"]["offset"].as_u64().unwrap();
    let end = container["scope"]["end"]["offset"].as_u64().unwrap();
    findings
        .get(file)
        .into_iter()
        .flatten()
        .filter(|(_, at)| (start..=end).contains(at))
        .map(|(code, _)| code.clone())
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

fn limit_arg(limit: &Value) -> Option<String> {
    let soft = limit["soft"].as_i64()?;
    let hard = limit["hard"].as_i64().unwrap_or(soft);
    Some(format!("={soft}:{hard}"))
}

/// Runs `script` inside the container's reproduced settings.
fn run_in_sandbox(container: &Value, script: &str, extra: &[String]) -> Outcome {
    if let Some(why) = container["refused"].as_str() {
        return Outcome::Refused(why.to_string());
    }
    let shm = &container["shm"];
    let from = shm["from"].as_str().unwrap_or("").to_string();
    let mount = match shm["kind"].as_str().unwrap() {
        // Huge pages halve the time a run takes in a VM; sizes far from
        // the boundary do not notice the 2 MiB rounding (the boundary test
        // below uses 4 KiB pages).
        "default" | "sized" => format!(
            "mount -t tmpfs -o size={},mode=1777,huge=always tmpfs /dev/shm",
            shm["bytes"].as_u64().unwrap()
        ),
        // The host's /dev/shm, or a tmpfs with no size: the kernel's
        // default, half the memory, as Docker's host gets.
        "host" | "unbounded" => "mount -t tmpfs -o mode=1777,huge=always tmpfs /dev/shm".into(),
        "disk" => "mount --bind \"$(mktemp -d)\" /dev/shm".into(),
        "missing" => "mount -t tmpfs -o ro,size=4k tmpfs /dev/shm".into(),
        "refused" => return Outcome::Refused(from),
        other => return Outcome::NotRunnable(format!("{other}: {from}")),
    };
    let gpus = match &container["gpus"] {
        Value::Number(n) => n.to_string(),
        _ => "all".to_string(),
    };
    let mut args: Vec<String> = vec![
        "--ranks".into(),
        ranks(container).to_string(),
        "--gpus".into(),
        gpus,
    ];
    if container["rdma"] == true {
        args.push("--rdma".into());
    }
    // CAP_IPC_LOCK lets mlock ignore RLIMIT_MEMLOCK: it is how an unlimited
    // memlock is reproduced (raising the hard limit needs CAP_SYS_RESOURCE,
    // which the sandbox may lack). Docker's default capabilities leave it out.
    let memlock = container["ulimits"].get("memlock");
    let unlimited_memlock = memlock.is_some_and(|l| l["soft"] == -1);
    let keeps_ipc_lock = unlimited_memlock
        || container["cap_add"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| matches!(c.as_str(), Some("IPC_LOCK" | "CAP_IPC_LOCK" | "ALL")));
    if !unlimited_memlock {
        let limit = memlock
            .and_then(limit_arg)
            .unwrap_or_else(|| format!("={ENGINE_DEFAULT_MEMLOCK}:{ENGINE_DEFAULT_MEMLOCK}"));
        args.push(format!("--memlock{limit}"));
    }
    if let Some(stack) = container["ulimits"].get("stack").and_then(limit_arg) {
        args.push(format!("--stack{stack}"));
    }
    args.extend(extra.iter().cloned());
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!("{mount} && exec \"$@\""))
        .arg("sh");
    if !keeps_ipc_lock {
        command.args([
            "setpriv",
            "--inh-caps=-ipc_lock",
            "--bounding-set=-ipc_lock",
        ]);
    }
    command.args(["env", "-i"]);
    command.arg(format!(
        "PATH={}",
        std::env::var("PATH").unwrap_or_default()
    ));
    for (name, value) in container["env"].as_object().unwrap() {
        if let Some(value) = value.as_str() {
            command.arg(format!("{name}={value}"));
        }
    }
    command.args(["python3", script]).args(&args);
    let _one_at_a_time = SANDBOX.lock().unwrap_or_else(|e| e.into_inner());
    let output = command.output().expect("unshare");
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(result) = text.lines().rev().find_map(|l| l.strip_prefix("RESULT ")) else {
        return Outcome::Failed(
            "no-result".into(),
            format!("{text}{}", String::from_utf8_lossy(&output.stderr)),
        );
    };
    let result: Value = serde_json::from_str(result).unwrap();
    if result["passed"] == true {
        Outcome::Passed
    } else {
        Outcome::Failed(
            result["failure"].as_str().unwrap_or("?").into(),
            result["message"].as_str().unwrap_or("").into(),
        )
    }
}

fn cpu_workload() -> String {
    root()
        .join("tests/runtime/workload.py")
        .display()
        .to_string()
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
    let corpus = common::shared("corpus")?;
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
    shm_before: String,
    shm_after: String,
    before: Outcome,
    after: Outcome,
    flagged_before: Vec<String>,
    flagged_after: Vec<String>,
}

fn shm_cell(container: Option<&Value>) -> String {
    match container {
        None => "-".into(),
        Some(c) => match c["shm"]["bytes"].as_u64() {
            Some(b) => gpulint::model::size::HumanBytes(b).to_string(),
            None => c["shm"]["kind"].as_str().unwrap().to_string(),
        },
    }
}

/// Runs every GPU container of a pair before and after its fix.
fn run_pair(pair: &Pair, script: &str, extra: &[String]) -> Vec<Row> {
    let before = inspect(&pair.before);
    let after = inspect(&pair.after);
    let found_before = findings(&pair.before);
    let found_after = findings(&pair.after);
    let mut rows = Vec::new();
    let keys: std::collections::BTreeSet<_> = before.keys().chain(after.keys()).cloned().collect();
    // A compose service merged from several files of a project is reported
    // once, in the file gpulint picks: its flags count for every copy.
    let project_flags = |found: &BTreeMap<String, Vec<(String, u64)>>,
                         side: &BTreeMap<(String, String), Value>,
                         key: &(String, String)|
     -> Vec<String> {
        side.iter()
            .filter(|(k, c)| *k == key || (k.1 == key.1 && c["platform"] == "compose"))
            .flat_map(|((file, _), c)| codes_in(found, file, c))
            .collect()
    };
    for key in keys {
        let (b, a) = (before.get(&key), after.get(&key));
        let run = |c: Option<&Value>| match c {
            Some(c) => run_in_sandbox(c, script, extra),
            None => Outcome::NotRunnable("not a GPU container here".into()),
        };
        rows.push(Row {
            pair: pair.label.clone(),
            container: format!("{}:{}", key.0, key.1),
            shm_before: shm_cell(b),
            shm_after: shm_cell(a),
            before: run(b),
            after: run(a),
            flagged_before: b
                .map(|_| project_flags(&found_before, &before, &key))
                .unwrap_or_default(),
            flagged_after: a
                .map(|_| project_flags(&found_after, &after, &key))
                .unwrap_or_default(),
        });
    }
    rows
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
        "{:<70} {:<34} {:>9} {:>9}  {:<24} {}\n",
        "config", "container", "shm", "fixed", "before", "after"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<70} {:<34} {:>9} {:>9}  {:<24} {}\n",
            r.pair,
            r.container,
            r.shm_before,
            r.shm_after,
            r.before.short(),
            r.after.short()
        ));
    }
    out
}

#[test]
fn fixture_fixes_make_the_workload_run() {
    if !sandbox_available() {
        return;
    }
    let script = cpu_workload();
    let mut failures = Vec::new();
    let mut all_rows = Vec::new();
    let mut proven = Vec::new();
    for pair in fixture_pairs() {
        let rows = run_pair(&pair, &script, &[]);
        for row in &rows {
            check_row(row, &mut failures);
        }
        let rule = pair.rule.as_deref().unwrap();
        if RUNTIME_RULES.contains(&rule) {
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
    eprintln!("{}", table(&all_rows));
    proven.sort();
    proven.dedup();
    assert_eq!(
        proven,
        RUNTIME_RULES
            .iter()
            .map(|s| s.to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        "rules proven at run time"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flagged_corpus_files_run_once_fixed() {
    if !sandbox_available() {
        return;
    }
    let Some(pairs) = corpus_pairs() else { return };
    let script = cpu_workload();
    let mut failures = Vec::new();
    let mut all_rows = Vec::new();
    let mut fixed = 0;
    for pair in &pairs {
        let rows = run_pair(pair, &script, &[]);
        for row in &rows {
            check_row(row, &mut failures);
            // A container flagged for its /dev/shm fails as it is and runs fixed.
            let shm_finding = row
                .flagged_before
                .iter()
                .any(|c| c.starts_with("SHM") || matches!(c.as_str(), "K8S004" | "K8S013"));
            if shm_finding {
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
    eprintln!("{}", table(&all_rows));
    assert!(
        fixed >= 5,
        "only {fixed} flagged corpus containers were run"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The reference job's footprint in /dev/shm (workload.py computes the same).
fn shm_needed(ranks: u64, workers: u64, prefetch: u64, batch: u64) -> u64 {
    const IMAGE: u64 = 3 * 224 * 224 * 4;
    const NCCL_SEGMENT: u64 = 9_637_888;
    ranks * workers * prefetch * batch * IMAGE + ranks * (ranks - 1) * NCCL_SEGMENT
}

/// The largest per-GPU batch an 8-GPU job (8 workers, prefetch 2) fits in
/// the default `[shm] fix-size`: the batch that fits runs, one more image
/// per batch fails, measured with 4 KiB pages.
#[test]
fn default_fix_size_carries_the_reference_job() {
    if !sandbox_available() {
        return;
    }
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
    let run = |batch: u64| {
        let _one_at_a_time = SANDBOX.lock().unwrap_or_else(|e| e.into_inner());
        let output = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount -t tmpfs -o size={bytes},mode=1777 tmpfs /dev/shm && exec \"$@\""
            ))
            .args([
                "sh",
                "python3",
                &cpu_workload(),
                "--ranks",
                "8",
                "--batch",
                &batch.to_string(),
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        (output.status.success(), text)
    };
    let (fits, text) = run(largest);
    assert!(fits, "batch {largest} should fit {bytes} bytes: {text}");
    let (over, text) = run(largest + 1);
    assert!(
        !over,
        "batch {} should not fit {bytes} bytes: {text}",
        largest + 1
    );
    eprintln!(
        "default fix-size {}: 8 ranks x 8 workers x 2 prefetch x {largest} images (3x224x224 fp32) run ({} needed), {} images do not; the reference 32-image job needs {}",
        gpulint::model::size::HumanBytes(bytes),
        gpulint::model::size::HumanBytes(shm_needed(8, 8, 2, largest)),
        largest + 1,
        gpulint::model::size::HumanBytes(shm_needed(8, 8, 2, 32)),
    );
}

/// GPU mode: the same pairs with PyTorch on real GPUs. Run it with
/// `cargo test --test runtime -- --ignored --nocapture` on a machine with
/// an NVIDIA GPU and PyTorch; elsewhere it fails saying why it was skipped,
/// so it never counts as passed without a GPU.
#[test]
#[ignore = "needs an NVIDIA GPU and PyTorch: cargo test --test runtime -- --ignored --nocapture"]
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
    let torch = Command::new("python3")
        .args([
            "-c",
            "import torch; print(torch.__version__, torch.cuda.is_available())",
        ])
        .output()
        .unwrap();
    assert!(
        torch.status.success(),
        "SKIPPED, not passed: PyTorch is not installed for python3"
    );
    assert!(sandbox_available(), "the GPU mode needs root and unshare");
    eprintln!(
        "GPUs:\n{gpus}torch: {}",
        String::from_utf8_lossy(&torch.stdout)
    );
    let script = root()
        .join("tests/runtime/gpu_workload.py")
        .display()
        .to_string();
    let mut rows = Vec::new();
    for pair in fixture_pairs() {
        if pair
            .rule
            .as_deref()
            .is_some_and(|r| RUNTIME_RULES.contains(&r))
        {
            rows.extend(run_pair(&pair, &script, &[]));
        }
    }
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
