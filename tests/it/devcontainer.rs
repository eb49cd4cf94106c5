//! Dev containers (`devcontainer.json`): read as the `docker run` the Dev
//! Container CLI makes of them, checked by the `docker run` rules, fixed in
//! JSON with comments, suppressed with `//` comments, inspected.

use crate::common;

use common::{gpulint, stdout, write};
use gpulint::engine::check_text;
use gpulint::engine::config::Config;
use gpulint::rules::RuleCode;
use serde_json::Value;
use std::path::PathBuf;

fn check(text: &str) -> gpulint::engine::FileReport {
    check_text(
        PathBuf::from(".devcontainer/devcontainer.json"),
        text.to_string(),
        &Config::default(),
    )
}

fn codes(text: &str) -> Vec<RuleCode> {
    let report = check(text);
    assert!(report.error.is_none(), "{:?}", report.error);
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn healthy_gpu_dev_containers_stay_quiet() {
    for run_args in [
        r#"["--gpus", "all", "--ipc=host"]"#,
        r#"["--gpus=all", "--ipc", "host"]"#,
        r#"["--gpus=all", "--shm-size=8g"]"#,
        r#"["--gpus", "all", "--shm-size", "16gb"]"#,
        r#"["--gpus=all", "--mount", "type=tmpfs,destination=/dev/shm,tmpfs-size=8g"]"#,
        // Only known when the dev container starts.
        r#"["--gpus=all", "--shm-size=${localEnv:SHM_SIZE}"]"#,
        // One argument: the Docker CLI refuses it, gpulint does not guess.
        r#"["--gpus=all", "--shm-size 8g"]"#,
    ] {
        let text = format!(
            "{{\n  \"image\": \"nvcr.io/nvidia/pytorch:24.01-py3\",\n  \"runArgs\": {run_args}\n}}\n"
        );
        assert_eq!(codes(&text), [], "{run_args}");
    }
    // `hostRequirements.gpu` with /dev/shm in `runArgs`.
    let text =
        r#"{"image": "x", "hostRequirements": {"gpu": "optional"}, "runArgs": ["--ipc=host"]}"#;
    assert_eq!(codes(text), []);
}

#[test]
fn gpus_without_shm_fire_from_run_args_and_host_requirements() {
    assert_eq!(
        codes(r#"{"image": "x", "runArgs": ["--gpus", "all"]}"#),
        [RuleCode::SHM001]
    );
    assert_eq!(
        codes(r#"{"image": "x", "hostRequirements": {"gpu": true}}"#),
        [RuleCode::SHM001]
    );
    // A `#` is no JSON comment: the line is not read as a suppression and
    // the file does not parse.
    let report =
        check("{\"image\": \"x\", # gpulint: ignore[SHM001] no\n\"runArgs\": [\"--gpus=all\"]}");
    assert!(report.error.is_some());
}

#[test]
fn slash_comments_suppress_findings() {
    let text = "{\n  \"image\": \"x\",\n  // gpulint: ignore[SHM001] one GPU, notebooks only\n  \"runArgs\": [\"--gpus\", \"all\"]\n}\n";
    assert_eq!(codes(text), []);
    let text = "{\n  \"image\": \"x\",\n  \"runArgs\": [\"--gpus\", \"all\"] // gpulint: ignore[SHM001] one GPU\n}\n";
    assert_eq!(codes(text), []);
    // A suppression that suppresses nothing is reported where it is.
    let text = "{\n  // gpulint: ignore[SHM001] stale\n  \"image\": \"x\"\n}\n";
    assert_eq!(codes(text), [RuleCode::SUP001]);
    // `//` inside a string is not a comment.
    let text = "{\n  \"name\": \"a // gpulint: ignore[SHM001] no\",\n  \"runArgs\": [\"--gpus\", \"all\"]\n}\n";
    assert_eq!(codes(text), [RuleCode::SHM001]);
}

#[test]
fn text_that_is_not_jsonc_is_a_located_error() {
    for (text, line) in [
        ("{\n  \"image\": \"x\"\n  \"runArgs\": []\n}\n", 3),
        ("{\n  \"runArgs\": [\"--gpus\" \"all\"]\n}\n", 2),
        ("[\"a\"]\n", 1),
    ] {
        let report = check(text);
        let error = report.error.as_ref().expect("an error");
        let offset = error.offset.expect("a location");
        assert_eq!(
            text[..offset].matches('\n').count() + 1,
            line,
            "{text:?}: {}",
            error.message
        );
    }
    let deep = format!("{{\"a\": {}", "[".repeat(50_000));
    let report = check(&deep);
    assert!(report.error.unwrap().message.contains("nested deeper"));
}

#[test]
fn inspect_prints_the_dev_containers_container() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".devcontainer/devcontainer.json",
        "{\n  // training\n  \"image\": \"nvcr.io/nvidia/pytorch:24.01-py3\",\n  \"hostRequirements\": {\"gpu\": \"optional\"},\n  \"containerEnv\": {\"NCCL_DEBUG\": \"INFO\"},\n  \"runArgs\": [\"--ulimit\", \"memlock=-1\",],\n}\n",
    );
    write(
        dir.path(),
        ".devcontainer/host/devcontainer.json",
        "{\"image\": \"x\", \"runArgs\": [\"--gpus=2\", \"--ipc=host\"]}",
    );
    let output = gpulint(
        dir.path(),
        &["inspect", "--format", "json", ".devcontainer"],
    );
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let containers = doc["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2, "{doc:#}");
    let gpu = &containers[0];
    assert_eq!(gpu["platform"], "devcontainer", "{gpu:#}");
    assert_eq!(gpu["gpus"], "all");
    assert_eq!(gpu["shm"]["kind"], "default");
    assert_eq!(gpu["shm"]["bytes"], 64 * 1024 * 1024);
    assert_eq!(gpu["env"]["NCCL_DEBUG"], "INFO");
    assert_eq!(gpu["ulimits"]["memlock"]["soft"], -1);
    let host = &containers[1];
    assert_eq!(host["gpus"], 2);
    assert_eq!(host["shm"]["kind"], "host");
}

#[test]
fn inspect_prints_the_compose_project_of_a_compose_backed_dev_container() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
    );
    // The second file of the list sets the size: the project is both.
    write(
        dir.path(),
        ".devcontainer/compose.extend.yml",
        "services:\n  trainer:\n    shm_size: 8gb\n",
    );
    write(
        dir.path(),
        ".devcontainer/devcontainer.json",
        "{\n  // Compose-backed\n  \"dockerComposeFile\": [\"../compose.yaml\", \"compose.extend.yml\"],\n  \"service\": \"trainer\",\n  \"runArgs\": [\"--gpus\", \"all\"],\n}\n",
    );
    let output = gpulint(
        dir.path(),
        &[
            "inspect",
            "--format",
            "json",
            ".devcontainer/devcontainer.json",
        ],
    );
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let containers = doc["containers"].as_array().unwrap();
    // `runArgs` is not read: no `docker run` of its own.
    assert_eq!(containers.len(), 1, "{doc:#}");
    assert_eq!(containers[0]["platform"], "compose");
    assert_eq!(containers[0]["name"], "trainer");
    assert_eq!(containers[0]["gpus"], "all");
    assert_eq!(containers[0]["shm"]["bytes"], 8_u64 << 30);
}

/// The Dev Container CLI gives Compose an override of its own last, which
/// reserves every GPU for `service` when `hostRequirements.gpu` asks for
/// them (devcontainers/cli `generateFeaturesComposeOverrideContent`): the
/// service gets all GPUs, the project's other services none.
#[test]
fn host_requirements_gpu_gives_a_compose_backed_service_every_gpu() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".devcontainer/docker-compose.yml",
        "services:\n  app:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: sleep infinity\n  db:\n    image: postgres:16\n",
    );
    for (gpu, given) in [
        ("true", Value::from("all")),
        ("\"optional\"", Value::from("all")),
        ("{\"cores\": 1}", Value::from("all")),
        ("false", Value::Null),
    ] {
        write(
            dir.path(),
            ".devcontainer/devcontainer.json",
            format!(
                "{{\n  \"dockerComposeFile\": \"docker-compose.yml\",\n  \"service\": \"app\",\n  \"hostRequirements\": {{\"gpu\": {gpu}}},\n}}\n"
            ),
        );
        let output = gpulint(
            dir.path(),
            &[
                "inspect",
                "--format",
                "json",
                ".devcontainer/devcontainer.json",
            ],
        );
        let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let containers = doc["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 2, "{doc:#}");
        assert_eq!(containers[0]["name"], "app");
        assert_eq!(containers[0]["gpus"], given, "{gpu}: {doc:#}");
        assert_eq!(containers[0]["gpu_workload"], !given.is_null(), "{gpu}");
        assert_eq!(containers[1]["gpus"], Value::Null, "{gpu}");
    }
    // The compose file alone (as `docker compose up` starts it) has none.
    let output = gpulint(
        dir.path(),
        &[
            "inspect",
            "--format",
            "json",
            ".devcontainer/docker-compose.yml",
        ],
    );
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(doc["containers"][0]["gpus"], Value::Null, "{doc:#}");
}

/// The findings of the service a Compose-backed dev container starts are
/// reported on its `devcontainer.json`, at `service`, with the compose
/// file's place beside them: only the services the Dev Container CLI
/// starts (`runServices`), as it starts them (`hostRequirements.gpu`
/// gives `service` every GPU). A run that also checks the compose file
/// does not repeat what that file reports itself.
#[test]
fn a_compose_backed_dev_container_reports_the_service_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let torchrun = "    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node 8 train.py\n    gpus: all\n";
    write(
        dir.path(),
        "compose.yaml",
        format!(
            "services:\n  trainer:\n{torchrun}  tools:\n{torchrun}  web:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node 2 train.py\n"
        ),
    );
    let dev = |service: &str, extra: &str| {
        format!(
            "{{\n  \"dockerComposeFile\": \"../compose.yaml\",\n  \"service\": \"{service}\",\n  \"runServices\": [\"{service}\"]{extra}\n}}\n"
        )
    };
    write(
        dir.path(),
        ".devcontainer/devcontainer.json",
        dev("trainer", ""),
    );
    let concise = |args: &[&str]| {
        let mut all = vec!["check", "--output-format", "concise", "--select", "SHM001"];
        all.extend(args);
        stdout(&gpulint(dir.path(), &all))
    };
    // Alone, as an editor opens it: the started service's finding, at
    // `service` (line 3), with where the compose file decides it.
    let alone = concise(&[".devcontainer/devcontainer.json"]);
    let lines: Vec<&str> = alone.lines().filter(|l| l.contains("SHM001")).collect();
    assert_eq!(lines.len(), 1, "{alone}");
    assert!(
        lines[0].starts_with(
            ".devcontainer/devcontainer.json:3:14: error[SHM001] GPU service `trainer`"
        ),
        "{alone}"
    );
    assert!(
        lines[0].contains("in compose.yaml, which this dev container starts"),
        "{alone}"
    );
    let full = stdout(&gpulint(
        dir.path(),
        &[
            "check",
            "--select",
            "SHM001",
            ".devcontainer/devcontainer.json",
        ],
    ));
    assert!(full.contains("--> compose.yaml:2:3"), "{full}");
    // `tools` is never started by `devcontainer up`: not on the dev container.
    assert!(!alone.contains("`tools`"), "{alone}");
    // With the compose file in the run, its own findings are not repeated.
    let both = concise(&["."]);
    assert!(!both.contains("devcontainer.json"), "{both}");
    assert_eq!(both.matches("compose.yaml:").count(), 3, "{both}");
    // What the dev container changes is said on it: `hostRequirements.gpu`
    // gives `web` every GPU, where the compose file alone gives it none
    // (a warning there, an error in the dev container).
    write(
        dir.path(),
        ".devcontainer/devcontainer.json",
        dev("web", ",\n  \"hostRequirements\": {\"gpu\": true}"),
    );
    let both = concise(&["."]);
    assert!(
        both.contains("devcontainer.json:3:14: error[SHM001] GPU service `web`"),
        "{both}"
    );
    assert!(both.contains("warning[SHM001] GPU service `web`"), "{both}");
}

/// `--add-noqa` writes each syntax's own comment: `//` in a
/// `devcontainer.json` (it wrote `#`, which JSON with comments is not).
#[test]
fn add_noqa_writes_slash_comments() {
    let dir = tempfile::tempdir().unwrap();
    let text = "{\n  \"image\": \"nvcr.io/nvidia/pytorch:24.01-py3\",\n  \"runArgs\": [\"--gpus\", \"all\"]\n}\n";
    write(dir.path(), ".devcontainer/devcontainer.json", text);
    let out = gpulint(dir.path(), &["check", "--add-noqa", "."]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{}{err}", stdout(&out));
    let added =
        std::fs::read_to_string(dir.path().join(".devcontainer/devcontainer.json")).unwrap();
    assert!(
        added.contains("\n  // gpulint: ignore[SHM001] ") && !added.contains('#'),
        "{added}"
    );
    assert_eq!(codes(&added), []);
    let again = gpulint(dir.path(), &["check", "."]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

/// Every `devcontainer.json` under `dir` (the names the CLI looks for).
fn devcontainer_files(dir: &std::path::Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() && !entry.file_type().is_ok_and(|t| t.is_symlink()) {
            devcontainer_files(&path, into);
        } else if name == ".devcontainer.json"
            || (name == "devcontainer.json"
                && path
                    .ancestors()
                    .skip(1)
                    .take(2)
                    .any(|a| a.file_name().is_some_and(|n| n == ".devcontainer")))
        {
            into.push(path);
        }
    }
}

/// DEV001's verdict on each setting is Python jsonschema's, applied to the
/// same definitions by the policy DEV001 documents (no required properties,
/// a number or boolean as text; `tests/judges/devcontainer_schema_judge.py`),
/// on every setting × value of every JSON shape, and on the dev containers
/// of the fixtures, the corpus and the ecosystem; and a file the whole
/// schema accepts has no DEV001 finding.
#[test]
#[ignore = "needs Python jsonschema (GPULINT_JSONSCHEMA_PYTHON) and ../shared: installed by .ci/run"]
fn schema_verdicts_agree_with_python_jsonschema() {
    use gpulint::schema::devcontainer;
    use std::collections::{BTreeMap, BTreeSet};
    let python = common::required_tool(
        "GPULINT_JSONSCHEMA_PYTHON",
        "python3",
        "a Python with `pip install jsonschema`",
    );
    let settings = devcontainer::settings();
    let scratch = tempfile::tempdir().unwrap();
    let pool: Vec<Value> = [
        r#""x""#,
        "8",
        "0",
        "1.5",
        "true",
        "null",
        "[]",
        r#"["a"]"#,
        "[1]",
        r#"[["a"]]"#,
        "{}",
        r#"{"a": 1}"#,
        r#"{"a": "b"}"#,
        r#"{"a": ["b"]}"#,
        r#""optional""#,
        r#""64gb""#,
        r#""none""#,
        r#""stopCompose""#,
        r#"{"gpu": true}"#,
        r#"{"gpus": true}"#,
        r#"{"gpu": {"cores": 2, "storage": "1gb"}}"#,
        r#"{"gpu": "yes", "memory": "8GB"}"#,
        r#"[{"type": "bind", "source": "a", "target": "/b"}]"#,
        r#"[{"source": "a"}]"#,
        r#"[{"type": "tmpfs", "target": "/t", "readonly": true}]"#,
        r#"{"dockerfile": "D"}"#,
        r#"{"dockerfile": "D", "args": ["A=1"]}"#,
        r#"{"context": ".."}"#,
        r#"{"onAutoForward": "notify"}"#,
    ]
    .iter()
    .map(|text| serde_json::from_str(text).unwrap())
    .collect();
    let mut files = Vec::new();
    for (name, _) in &settings {
        for (n, value) in pool.iter().enumerate() {
            let mut config = serde_json::json!({"image": "nvcr.io/nvidia/pytorch:24.01-py3"});
            config[name.as_str()] = value.clone();
            let path = scratch
                .path()
                .join(format!("{name}-{n}/.devcontainer.json"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
            files.push(path);
        }
    }
    let generated = files.len();
    devcontainer_files(&common::root().join("fixtures"), &mut files);
    devcontainer_files(&common::required_shared("corpus"), &mut files);
    devcontainer_files(&common::required_shared("ecosystem/repos"), &mut files);
    let pointers: BTreeMap<&str, &Vec<String>> = settings
        .iter()
        .map(|(name, p)| (name.as_str(), p))
        .collect();
    let mut theirs: BTreeMap<String, Value> = BTreeMap::new();
    for chunk in files.chunks(500) {
        let out = std::process::Command::new(&python)
            .arg(common::root().join("tests/judges/devcontainer_schema_judge.py"))
            .arg(common::root().join("crates/gpulint-schema/schemas/devContainer.base.schema.json"))
            .arg(serde_json::to_string(&pointers).unwrap())
            .args(chunk)
            .output()
            .expect("run the dev container schema judge");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let verdict: Value = serde_json::from_str(line).unwrap();
            theirs.insert(verdict["file"].as_str().unwrap().to_string(), verdict);
        }
    }
    let (mut judged, mut refused, mut whole_valid) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap();
        let verdict = &theirs[&file.display().to_string()];
        let Ok(json) = gpulint::syntax::jsonc::parse(&text) else {
            continue;
        };
        if verdict.get("unreadable").is_some() {
            continue;
        }
        judged += 1;
        let ours: BTreeSet<String> = devcontainer::validate(&json.root)
            .into_iter()
            .map(|e| e.path[0].clone())
            .collect();
        let expected: BTreeSet<String> = verdict["refused"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        if ours != expected {
            disagreements.push(format!(
                "{}: gpulint {ours:?}, jsonschema {expected:?}",
                file.display()
            ));
        }
        if verdict["whole"] == true {
            whole_valid += 1;
            // The rule end to end: quiet on a file the whole schema accepts.
            let report = check_text(file.clone(), text, &Config::default());
            if report
                .diagnostics
                .iter()
                .any(|d| d.code == RuleCode::DEV001)
            {
                disagreements.push(format!("{}: DEV001 on a valid file", file.display()));
            }
        }
        if i < generated {
            refused += usize::from(!expected.is_empty());
        }
    }
    println!(
        "{judged} dev containers judged ({generated} generated, {refused} of them refused; {whole_valid} valid as a whole), {} disagreements",
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements, the first: {}",
        disagreements.len(),
        disagreements[..disagreements.len().min(60)].join("\n")
    );
    assert!(
        generated > 1000 && refused > 300 && generated - refused > 300,
        "{refused} of {generated}"
    );
    assert!(
        judged > generated + 150,
        "the real dev containers were read: {judged}"
    );
}
