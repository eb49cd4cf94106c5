//! The real Docker Engine and Compose v2 as the judge of gpulint's container
//! model: for every compose fixture, every corpus compose file Compose can
//! load and hundreds of generated cases, what `gpulint inspect` says each
//! service gets is compared with what `docker compose create` and `docker
//! inspect` show, and with `df` on `/dev/shm` inside the running container.
//!
//! These tests need a Docker Engine with the Compose v2 plugin and the
//! workload image: `eval "$(bash .ci/engine start)"` installs and starts
//! them (`.ci/run` does, and runs these tests with `--include-ignored`).
//! Without an engine they are listed as ignored, never as passed.

use crate::common;
mod generate;
mod oracle;
mod projects;
mod schema;

use common::{copy_dir, fixtures, root};
use oracle::{Case, Engine, Tally};
use std::path::PathBuf;
use std::process::Command;

const NEEDS_ENGINE: &str =
    "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\"";

/// Every compose fixture, as a project of its own.
fn fixture_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for rule in gpulint::rules::RULES {
        for fixture in fixtures(rule.code) {
            let temp = tempfile::tempdir().unwrap();
            let dir = temp.path().join(fixture.name());
            if fixture.path.is_dir() {
                copy_dir(&fixture.path, &dir);
            } else {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::copy(&fixture.path, dir.join(fixture.name())).unwrap();
            }
            let label = fixture
                .path
                .strip_prefix(root())
                .unwrap()
                .display()
                .to_string();
            cases.extend(Case::from_dir(&label, &dir, temp.path()));
            std::mem::forget(temp); // removed with the case's directory below
        }
    }
    cases
}

/// The multi-file project fixtures (`fixtures/_projects/*/`): `extends`,
/// `.env`, overlays, overrides with `!reset` and `!override`, each a small
/// repository judged as Compose loads it.
pub fn project_fixture_cases() -> Vec<Case> {
    let dir = root().join("fixtures/_projects");
    let mut projects: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    let mut cases = Vec::new();
    for project in projects {
        let temp = tempfile::tempdir().unwrap();
        let name = project.file_name().unwrap().to_string_lossy().to_string();
        let copy = temp.path().join(&name);
        copy_dir(&project, &copy);
        cases.extend(Case::from_dir(
            &format!("fixtures/_projects/{name}"),
            &copy,
            temp.path(),
        ));
        std::mem::forget(temp);
    }
    cases
}

/// The corpus's compose files, each alone in a directory (their siblings
/// are not in the corpus).
fn corpus_cases() -> Vec<Case> {
    let corpus = common::required_shared("corpus/compose");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let temp = tempfile::tempdir().unwrap();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let dir = temp.path().join("project");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&file, dir.join(&name)).unwrap();
        let mut found = Case::from_dir(&format!("corpus/compose/{name}"), &dir, temp.path());
        for case in &mut found {
            case.alone = true;
        }
        cases.extend(found);
        std::mem::forget(temp);
    }
    cases
}

fn judge(label: &str, cases: Vec<Case>, minimum: usize) -> Tally {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let tally = engine.judge_all(&cases, 2, |_| Vec::new());
    eprintln!("{label}:\n{}", tally.report());
    assert!(
        tally.services >= minimum,
        "{label}: only {} services were judged (at least {minimum} expected)",
        tally.services
    );
    assert!(
        tally.disagreements.is_empty(),
        "{label}: {} unexplained disagreements between gpulint inspect and the engine:\n{}",
        tally.disagreements.len(),
        tally.disagreements.join("\n")
    );
    tally
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_the_compose_fixtures() {
    let _ = NEEDS_ENGINE;
    judge("compose fixtures", fixture_cases(), 30);
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_the_project_fixtures() {
    let cases = project_fixture_cases();
    assert!(cases.len() >= 40, "{} project cases", cases.len());
    judge("project fixtures", cases, 50);
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_the_corpus() {
    judge("corpus compose files", corpus_cases(), 20);
}

#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_generated_cases() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let temp = tempfile::tempdir().unwrap();
    let generated = generate::cases();
    assert!(
        generated.len() >= 500,
        "{} generated cases",
        generated.len()
    );
    let cases = generate::projects(temp.path(), &generated, 40);
    // One refused spelling refuses the whole file: a refused project is
    // judged again in halves.
    let tally = engine.judge_all(&cases, 3, |batch| {
        generate::halves(temp.path(), &generated, batch)
    });
    eprintln!("generated cases ({}):\n{}", generated.len(), tally.report());
    assert!(
        tally.services >= 450,
        "only {} services were compared",
        tally.services
    );
    assert!(
        tally.ran >= 400,
        "only {} generated containers ran",
        tally.ran
    );
    assert!(
        tally.disagreements.is_empty(),
        "{} unexplained disagreements between gpulint inspect and the engine:\n{}\nthe cases:\n{}",
        tally.disagreements.len(),
        tally.disagreements.join("\n"),
        generate::explain(&generated, &tally.disagreements.join("\n"))
    );
}

/// Generated multi-file projects (tests/it/engine/projects.rs): which files
/// make the project, merges across files, IPC donors across files,
/// `include:`, refusals (judged both ways) and overlays; the figures are
/// given for each class.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_generated_projects() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let temp = tempfile::tempdir().unwrap();
    let generated = projects::cases();
    let counts = projects::counts(&generated);
    assert!(
        generated.len() >= 1000,
        "{} generated project cases",
        generated.len()
    );
    let started = std::time::Instant::now();
    let (classes, cases): (Vec<projects::Class>, Vec<oracle::Case>) =
        projects::projects(temp.path(), &generated, 40)
            .into_iter()
            .unzip();
    let tallies = engine.judge_each(&cases, 3, |batch| {
        projects::halves(temp.path(), &generated, batch)
    });
    let mut by_class: std::collections::BTreeMap<projects::Class, Tally> = Default::default();
    for (class, tally) in classes.into_iter().zip(tallies) {
        by_class.entry(class).or_default().merge(tally);
    }
    let mut figures = String::new();
    let mut total = Tally::default();
    for (class, tally) in by_class {
        figures.push_str(&format!(
            "  {}: {} cases, {} projects, {} services compared, {} containers run, {} refused by both, {} disagreements\n",
            class.name(),
            counts.get(&class).copied().unwrap_or(0),
            tally.projects,
            tally.services,
            tally.ran,
            tally.refused.len(),
            tally.disagreements.len(),
        ));
        total.merge(tally);
    }
    total.disagreements.sort();
    eprintln!(
        "generated projects ({} cases, {:.0} s):\n{figures}{}",
        generated.len(),
        started.elapsed().as_secs_f64(),
        total.report()
    );
    for class in projects::Class::ALL {
        assert!(
            counts.get(&class).copied().unwrap_or(0) >= 50,
            "class {} has fewer than 50 cases",
            class.name()
        );
    }
    assert!(
        total.services >= 2500,
        "only {} services were compared",
        total.services
    );
    assert!(total.ran >= 800, "only {} containers ran", total.ran);
    assert!(
        total.refused.len() >= 100,
        "only {} refusals were judged",
        total.refused.len()
    );
    assert!(
        total.disagreements.is_empty(),
        "{} unexplained disagreements between gpulint and Compose on generated projects:\n{}\nthe cases:\n{}",
        total.disagreements.len(),
        total.disagreements.join("\n"),
        projects::explain(&generated, &total.disagreements.join("\n"))
    );
}

/// `--shm-size` spellings on a `docker run` line, as go-units v0.5 (the
/// Docker CLI's) reads them or refuses them.
const RUN_SHM_SIZES: &[&str] = &[
    "1g", "1G", "1gb", "1GB", "1GiB", "1gib", "1.5g", "2 GB", "1 g", "512m", "64k", "100b", "1024",
    "0", "1t", "3MiB", "+1g", ".5g", "1.g", "1e3", "1E3", "1_000", "1_0g", "0x1p20", "1.5e3m",
    "2gigs", "10%", "-1", "-1g", "1  g", " 1g", "1g ", "0x10", "1.5.5g", "1kibb", "g", "1e", "_1g",
    "1__0g",
];

/// What `gpulint inspect` says of a script with one `docker run ... img
/// true` line per value, its option written by `option`: one claim each,
/// in order.
fn claims_on_docker_run_lines(
    values: &[&str],
    option: impl Fn(&str) -> String,
) -> Vec<serde_json::Value> {
    let temp = tempfile::tempdir().unwrap();
    let script = temp.path().join("run.sh");
    let mut text = String::from("#!/bin/sh\n");
    for value in values {
        text.push_str(&format!("docker run {} img true\n", option(value)));
    }
    std::fs::write(&script, text).unwrap();
    let claims = oracle::gpulint_containers(std::slice::from_ref(&script), "docker-run");
    assert_eq!(claims.len(), values.len(), "one container per line");
    claims
}

/// The Docker CLI and the daemon judge `docker run --shm-size`: each
/// spelling is given to `docker create`, and the HostConfig's ShmSize it
/// creates (or its refusal) must be what `gpulint inspect` says of the same
/// option on a script's `docker run` line.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_docker_run_shm_sizes() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let claims = claims_on_docker_run_lines(RUN_SHM_SIZES, |size| format!("--shm-size='{size}'"));
    let (mut disagreements, mut created_count) = (Vec::new(), 0);
    for (size, claim) in RUN_SHM_SIZES.iter().zip(claims) {
        let gpulint = (claim["shm"]["kind"] != "refused")
            .then(|| claim["shm"]["bytes"].as_u64())
            .flatten();
        let created = Command::new("docker")
            .args([
                "create",
                &format!("--shm-size={size}"),
                engine.image(),
                "true",
            ])
            .output()
            .unwrap();
        created_count += usize::from(created.status.success());
        let engine_gives = created.status.success().then(|| {
            let id = String::from_utf8_lossy(&created.stdout).trim().to_string();
            let shown = Command::new("docker")
                .args(["inspect", "--format", "{{.HostConfig.ShmSize}}", &id])
                .output()
                .unwrap();
            let _ = Command::new("docker").args(["rm", &id]).output();
            String::from_utf8_lossy(&shown.stdout)
                .trim()
                .parse::<u64>()
                .unwrap()
        });
        if gpulint != engine_gives {
            disagreements.push(format!(
                "--shm-size={size:?}: gpulint {gpulint:?} ({}), engine {engine_gives:?} ({})",
                claim["shm"]["from"],
                String::from_utf8_lossy(&created.stderr).trim()
            ));
        }
    }
    eprintln!(
        "docker run --shm-size: {} spellings, {} created, {} disagreements",
        RUN_SHM_SIZES.len(),
        created_count,
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the Docker CLI/daemon disagree:\n{}",
        disagreements.join("\n")
    );
}

/// `--gpus` on a `docker run` line, as written in a script (the shell
/// removes the outer quotes; the Docker CLI reads the rest as one CSV
/// record): every form Docker's documentation shows, the ones people get
/// wrong, and the ones the CLI refuses.
const RUN_GPUS: &[&str] = &[
    "--gpus all",
    "--gpus=all",
    "--gpus 2",
    "--gpus=2",
    "--gpus 0",
    "--gpus -1",
    "--gpus -2",
    "--gpus +2",
    "--gpus device=1",
    "--gpus '\"device=0,1\"'",
    "--gpus \"\\\"device=0,1\\\"\"",
    "--gpus='\"device=0,1\"'",
    "--gpus '\"device=0,0\"'",
    "--gpus device=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a",
    "--gpus '\"device=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a,GPU-0c1f9d41-54d1-4b5e-9a6e-1b7c2bd3e1f0\"'",
    "--gpus device=0,1",
    "--gpus=device=0,1",
    "--gpus '\"device=0,1\",count=2'",
    "--gpus count=2",
    "--gpus count=all",
    "--gpus 'count=2,capabilities=compute'",
    "--gpus 'capabilities=compute,count=2'",
    "--gpus '\"capabilities=compute,utility\",count=2'",
    "--gpus 'count=2,\"capabilities=compute,utility\"'",
    "--gpus capabilities=compute,utility,count=2",
    "--gpus 'all,capabilities=utility'",
    "--gpus driver=nvidia,count=all",
    "--gpus 'driver=nvidia,\"device=0,1\"'",
    "--gpus options=x=y",
    "--gpus driver=amd,count=1",
    "--gpus capabilities=tpu",
    "--gpus all --gpus 2",
    "--gpus 1 --gpus 2",
    "--gpus count=1.5",
    "--gpus count=2,count=3",
    "--gpus 2,count=3",
    "--gpus ''",
    "--gpus 'count=2,'",
    "--gpus devices=0",
    "--gpus '\"device=0,1'",
    "--gpus 'device=\"0\"'",
];

/// The Docker CLI and the daemon judge `docker run --gpus`: each spelling
/// is given to `docker create` through the shell, which records the
/// HostConfig's DeviceRequests without starting anything (this engine has
/// no NVIDIA runtime), and what gpulint inspect says of the same line must
/// match: the CLI's refusal, the request the daemon refuses when the
/// container starts (both a count and device ids), or the GPUs it gives.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_docker_run_gpus() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let claims = claims_on_docker_run_lines(RUN_GPUS, str::to_string);
    let (mut disagreements, mut created_count) = (Vec::new(), 0);
    for (option, claim) in RUN_GPUS.iter().zip(claims) {
        let created = Command::new("sh")
            .arg("-c")
            .arg(format!("docker create {option} {} true", engine.image()))
            .output()
            .unwrap();
        let refused = claim["refused"].as_str().unwrap_or("");
        let said = format!(
            "gpulint: gpus {}, refused {:?}",
            oracle::claimed_gpus(&claim),
            refused
        );
        if !created.status.success() {
            if !refused.starts_with("the Docker CLI refuses") {
                disagreements.push(format!(
                    "{option}: the CLI refuses it ({}), {said}",
                    String::from_utf8_lossy(&created.stderr).trim()
                ));
            }
            continue;
        }
        created_count += 1;
        let id = String::from_utf8_lossy(&created.stdout).trim().to_string();
        let shown = Command::new("docker")
            .args(["inspect", &id])
            .output()
            .unwrap();
        let _ = Command::new("docker").args(["rm", &id]).output();
        let container: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
        let container = &container[0];
        let requests = &container["HostConfig"]["DeviceRequests"];
        // moby `getRequestedDevicesIDs`: refused when the container starts.
        let conflict = requests.as_array().into_iter().flatten().any(|r| {
            r["Count"].as_i64().unwrap_or(0) != 0
                && r["DeviceIDs"].as_array().is_some_and(|ids| !ids.is_empty())
        });
        let agrees = if conflict {
            refused.contains("cannot set both Count and DeviceIDs")
        } else {
            // A request for another driver gives no NVIDIA GPU: gpulint
            // says it cannot tell.
            let given = oracle::engine_gpus(container);
            let claimed = oracle::claimed_gpus(&claim);
            refused.is_empty() && (claimed == given || (claimed == "unknown" && given == "none"))
        };
        if !agrees {
            disagreements.push(format!(
                "{option}: DeviceRequests {requests} (gives {}), {said}",
                oracle::engine_gpus(container)
            ));
        }
    }
    eprintln!(
        "docker run --gpus: {} spellings, {} created, {} disagreements",
        RUN_GPUS.len(),
        created_count,
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the Docker CLI/daemon disagree:\n{}",
        disagreements.join("\n")
    );
}

/// `--tmpfs /dev/shm:OPTIONS` on a `docker run` line: Docker hands the
/// options to mount(2), so the kernel reads the size (whole numbers, one
/// unit letter, a `%` of the memory, 0 for no limit) or refuses it.
const RUN_TMPFS_OPTIONS: &[&str] = &[
    "size=1g",
    "size=512M",
    "size=1073741824",
    "size=0x40000000",
    "size=010",
    "size=64k",
    "size=50%",
    "size=5%",
    "size=0",
    "mode=1777",
    "size=1g,mode=1777",
    "size=1gb",
    "size=1GiB",
    "size=1.5g",
    "size=+1g",
    "size=%",
    "size=g",
    "size=1k%",
    "size=50%%",
    "size=",
    "size=0x",
    "size=08",
    "size=-1",
];

/// The kernel judges `docker run --tmpfs /dev/shm:size=...`: each option
/// mounts (or fails to mount) a real tmpfs in a running container, whose
/// `df -B1 /dev/shm` must be what `gpulint inspect` says of the same
/// `docker run` line, and whose refusal must be one gpulint foresaw.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_docker_run_tmpfs_sizes() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let claims = claims_on_docker_run_lines(RUN_TMPFS_OPTIONS, |options| {
        format!("--tmpfs '/dev/shm:{options}'")
    });
    let (mut disagreements, mut started) = (Vec::new(), 0);
    for (options, claim) in RUN_TMPFS_OPTIONS.iter().zip(claims) {
        let ran = Command::new("docker")
            .args(["run", "--rm", "--tmpfs", &format!("/dev/shm:{options}")])
            .args([
                engine.image(),
                "df",
                "-B1",
                "--output=fstype,size",
                "/dev/shm",
            ])
            .output()
            .unwrap();
        let refused_by_gpulint = claim["shm"]["kind"] == "refused";
        let said = format!("gpulint: {}", claim["shm"]["from"]);
        if !ran.status.success() {
            if !refused_by_gpulint {
                disagreements.push(format!(
                    "--tmpfs /dev/shm:{options}: the container does not start ({}), {said}",
                    String::from_utf8_lossy(&ran.stderr).trim()
                ));
            }
            continue;
        }
        started += 1;
        let shown = String::from_utf8_lossy(&ran.stdout);
        let mut words = shown.lines().nth(1).unwrap_or("").split_whitespace();
        let fstype = words.next().unwrap_or("absent");
        let size = words.next().and_then(|w| w.parse().ok());
        let Some(claimed) = (!refused_by_gpulint)
            .then(|| oracle::claimed_shm(&claim))
            .flatten()
        else {
            disagreements.push(format!(
                "--tmpfs /dev/shm:{options}: the container has /dev/shm {fstype} {size:?}, {said}"
            ));
            continue;
        };
        let (seen, expected) = (
            engine.seen_in_container(fstype, size, claimed),
            engine.expected_in_container(claimed),
        );
        if seen != expected {
            disagreements.push(format!(
                "--tmpfs /dev/shm:{options}: df shows {seen}, gpulint says {expected} ({said})"
            ));
        }
    }
    eprintln!(
        "docker run --tmpfs: {} option lists, {} started, {} disagreements",
        RUN_TMPFS_OPTIONS.len(),
        started,
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the kernel's tmpfs disagree:\n{}",
        disagreements.join("\n")
    );
}

/// `--ipc` modes on a `docker run` line: the ones the engine takes and
/// ones it refuses when the container starts.
const RUN_IPC: &[&str] = &[
    "",
    "--ipc=host",
    "--ipc host",
    "--ipc=private",
    "--ipc=shareable",
    "--ipc=none",
    "--ipc=",
    "--ipc=hosts",
    "--ipc=HOST",
    "--ipc=service:x",
    "--ipc=container:",
];

/// What else decides /dev/shm: a size, and every kind of mount there.
const RUN_SHM_SOURCES: &[&str] = &[
    "",
    "--shm-size=1g",
    "--tmpfs /dev/shm:size=512m",
    "--tmpfs /dev/shm",
    "--mount type=tmpfs,target=/dev/shm,tmpfs-size=300m",
    "-v gpulint-judge-shm:/dev/shm",
    "-v /dev/shm:/dev/shm",
    "--mount type=volume,src=gpulint-judge-shm,dst=/dev/shm",
    "--mount source=gpulint-judge-shm,target=/dev/shm",
    "--mount type=bind,src=/dev/shm,dst=/dev/shm",
    "--mount type=bind,source=/tmp,target=/dev/shm",
];

/// Words before the options: unset variables the shell drops, a short
/// flag written with `=` (pflag drops it), a switch.
const RUN_LEADING_WORDS: &[&str] = &[
    "$UNSET_EXTRA",
    "${UNSET_EXTRA:-}",
    "$UNSET_EXTRA $UNSET_MORE",
    "-e=NCCL_DEBUG=INFO",
    "-i",
    "--rm",
];

/// Every IPC mode with every /dev/shm source, and each leading word
/// before a few of them.
fn run_ipc_cases() -> Vec<String> {
    let mut cases = Vec::new();
    for ipc in RUN_IPC {
        for source in RUN_SHM_SOURCES {
            cases.push(format!("{ipc} {source}").trim().to_string());
        }
    }
    for word in RUN_LEADING_WORDS {
        for rest in RUN_SHM_SOURCES
            .iter()
            .chain(&["--ipc=host", "--ipc=none -v gpulint-judge-shm:/dev/shm"])
        {
            cases.push(format!("{word} {rest}").trim().to_string());
        }
    }
    cases
}

/// The engine judges how `--ipc` and the /dev/shm options combine on a
/// `docker run` line: each case runs through the shell (unset variables
/// vanish as they do in a script) with `df` at /dev/shm, and what the
/// container sees (or the refusal, exit 125) must be what gpulint inspect
/// says of the same line. A mount at /dev/shm wins over every IPC mode.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_docker_run_ipc_and_shm_sources() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let cases = run_ipc_cases();
    let claims = claims_on_docker_run_lines(
        &cases.iter().map(String::as_str).collect::<Vec<_>>(),
        str::to_string,
    );
    let (mut disagreements, mut started) = (Vec::new(), 0);
    for (case, claim) in cases.iter().zip(claims) {
        let ran = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "docker run --rm {case} {} sh -c 'df -B1 --output=fstype,size /dev/shm; echo \"NCCL_DEBUG=${{NCCL_DEBUG-}}\"'",
                engine.image()
            ))
            .env_remove("UNSET_EXTRA")
            .env_remove("UNSET_MORE")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let refused_by_gpulint = claim["shm"]["kind"] == "refused" || claim["refused"].is_string();
        let said = format!(
            "gpulint: {} ({})",
            claim["shm"]["kind"], claim["shm"]["from"]
        );
        // 125: the CLI or the daemon refused the container.
        if ran.status.code() == Some(125) {
            if !refused_by_gpulint {
                disagreements.push(format!(
                    "`{case}`: refused ({}), {said}",
                    String::from_utf8_lossy(&ran.stderr).trim()
                ));
            }
            continue;
        }
        started += 1;
        let shown = String::from_utf8_lossy(&ran.stdout);
        compare_shown(
            &engine,
            &format!("`{case}`"),
            &shown,
            &claim,
            refused_by_gpulint,
            &said,
            &mut disagreements,
        );
    }
    let _ = Command::new("docker")
        .args(["volume", "rm", "-f", "gpulint-judge-shm"])
        .output();
    eprintln!(
        "docker run --ipc and /dev/shm: {} cases, {} started, {} disagreements",
        cases.len(),
        started,
        disagreements.len()
    );
    assert!(cases.len() >= 190, "{} cases", cases.len());
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the engine disagree:\n{}",
        disagreements.join("\n")
    );
}

/// Parts of a workflow container's `options:`: sizes, IPC modes and mounts
/// written with the quoting people use (the runner hands the string to
/// .NET, where `'` is a character and only `"` groups), and `-e` forms.
const WORKFLOW_SHM_PARTS: &[&str] = &[
    "",
    "--shm-size 1g",
    "--shm-size=2g",
    "--shm-size \"1g\"",
    "--shm-size '1g'",
    "\"--shm-size=512m\"",
    "--tmpfs /dev/shm:size=512m",
    "--tmpfs \"/dev/shm:size=512m,mode=1777\"",
    "--mount type=tmpfs,target=/dev/shm,tmpfs-size=300m",
    "-v gpulint-judge-wf-shm:/dev/shm",
];
const WORKFLOW_OTHER_PARTS: &[&str] = &[
    "",
    "--ipc host",
    "--ipc=host",
    "--ipc 'host'",
    "--ipc=none",
    "-e NCCL_DEBUG=INFO",
    "-e=NCCL_DEBUG=INFO",
    "-e \"NCCL_DEBUG=INFO\"",
];

/// Every size or mount with every other part, on one line and on two
/// (`options: |`, where the newline is no separator), the two alone, and
/// options with a stray word that Docker takes as the image.
fn workflow_options_cases() -> Vec<String> {
    let mut cases = Vec::new();
    for shm in WORKFLOW_SHM_PARTS {
        for other in WORKFLOW_OTHER_PARTS {
            let line = format!("{shm} {other}").trim().to_string();
            if !cases.contains(&line) {
                cases.push(line);
            }
        }
    }
    for (shm, other) in [
        ("--shm-size 1g", "--ipc host"),
        ("--shm-size=1g", "-e NCCL_DEBUG=INFO"),
        ("--tmpfs /dev/shm:size=512m", "--ipc=none"),
    ] {
        cases.push(format!("{shm}\n{other}"));
        cases.push(format!("{shm}\n{other}\n"));
    }
    // A word that is neither an option nor an option's value: Docker
    // takes it as the image, and the real image becomes the command.
    for stray in [
        "--shm-size 1g ulimit memlock=-1",
        "--ipc=host --shm-size=2g host",
        "-e NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1",
    ] {
        cases.push(stray.to_string());
    }
    cases
}

/// The engine judges workflow job containers: each case's `options:` is
/// written in a workflow (a literal block scalar, so the value is the case
/// exactly), and the argument string the runner builds from it
/// (actions/runner `DockerCommandManager.DockerCreate`: options, `-e`,
/// image and command joined by spaces) is split as .NET splits it
/// (gpulint's `dotnet_words`, held to .NET's rules by its own tests) and
/// given to the real `docker create`; the container then runs `df` at
/// /dev/shm. What it sees, its NCCL_DEBUG, or the refusal must be what
/// gpulint inspect says of the workflow's container.
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_workflow_job_containers() {
    use gpulint::syntax::argv::dotnet_words;
    use gpulint::syntax::shell::Snippet;
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let cases = workflow_options_cases();
    let temp = tempfile::tempdir().unwrap();
    let workflows = temp.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    let mut targets = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let mut options = String::new();
        for line in case.strip_suffix('\n').unwrap_or(case).split('\n') {
            options.push_str(&format!("        {line}\n"));
        }
        let chomp = if case.ends_with('\n') { "|" } else { "|-" };
        let text = format!(
            "on: [push]\njobs:\n  test:\n    runs-on: [self-hosted, gpu]\n    container:\n      image: nvcr.io/nvidia/pytorch:24.01-py3\n      options: {chomp}\n{options}    steps:\n      - run: pytest\n"
        );
        let path = workflows.join(format!("case{n:03}.yml"));
        std::fs::write(&path, text).unwrap();
        targets.push(path);
    }
    let claims = oracle::gpulint_containers(&targets, "docker-run");
    assert_eq!(claims.len(), cases.len(), "one container per workflow");
    let (mut disagreements, mut started) = (Vec::new(), 0);
    for (case, claim) in cases.iter().zip(claims) {
        let joined = format!(
            "{case} -e GITHUB_ACTIONS=true -e CI=true {} sh -c \"df -B1 --output=fstype,size /dev/shm; echo NCCL_DEBUG=$NCCL_DEBUG\"",
            engine.image()
        );
        let words: Vec<String> = dotnet_words(&Snippet::verbatim(&joined, 0))
            .into_iter()
            .map(|w| w.text)
            .collect();
        let created = Command::new("docker")
            .arg("create")
            .args(&words)
            .output()
            .unwrap();
        let refused_by_gpulint = claim["shm"]["kind"] == "refused" || claim["refused"].is_string();
        let said = format!(
            "gpulint: {} ({}), refused {}",
            claim["shm"]["kind"], claim["shm"]["from"], claim["refused"]
        );
        let id = String::from_utf8_lossy(&created.stdout).trim().to_string();
        let ran = created.status.success().then(|| {
            let ran = Command::new("docker")
                .args(["start", "-a", &id])
                .output()
                .unwrap();
            let _ = Command::new("docker").args(["rm", "-f", &id]).output();
            ran
        });
        let Some(ran) = ran.filter(|r| {
            // Refused at start by the daemon (`Invalid IPC mode`), not a
            // failing `df` inside.
            r.status.success() || !String::from_utf8_lossy(&r.stderr).contains("Error response")
        }) else {
            if !refused_by_gpulint {
                disagreements.push(format!(
                    "{case:?}: refused ({}), {said}",
                    String::from_utf8_lossy(&created.stderr).trim()
                ));
            }
            continue;
        };
        started += 1;
        let shown = String::from_utf8_lossy(&ran.stdout);
        compare_shown(
            &engine,
            &format!("{case:?}"),
            &shown,
            &claim,
            refused_by_gpulint,
            &said,
            &mut disagreements,
        );
    }
    let _ = Command::new("docker")
        .args(["volume", "rm", "-f", "gpulint-judge-wf-shm"])
        .output();
    eprintln!(
        "workflow job containers: {} cases, {} started, {} disagreements",
        cases.len(),
        started,
        disagreements.len()
    );
    assert!(cases.len() >= 60, "{} cases", cases.len());
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the engine disagree:\n{}",
        disagreements.join("\n")
    );
}

/// `runArgs`, `mounts` and `containerEnv` of the image-based dev
/// containers the Dev Container CLI judges, every combination.
const DEV_RUN_ARGS: &[&str] = &[
    "[]",
    r#"["--shm-size=1g"]"#,
    r#"["--ipc=host"]"#,
    r#"["--ipc", "none"]"#,
    r#"["--shm-size", "2g", "--ipc=private"]"#,
    r#"["-e=NCCL_DEBUG=WARN"]"#,
];
const DEV_MOUNTS: &[&str] = &[
    "[]",
    r#"["type=tmpfs,target=/dev/shm,tmpfs-size=536870912"]"#,
    r#"[{"type": "volume", "source": "gpulint-judge-dc", "target": "/dev/shm"}]"#,
    r#"["source=/dev/shm,target=/dev/shm,type=bind"]"#,
    r#"[{"type": "tmpfs", "target": "/dev/shm"}]"#,
];
const DEV_ENV: &[&str] = &["{}", r#"{"NCCL_DEBUG": "INFO"}"#];

/// `runArgs` go before the image the CLI adds (GPU013): a word that is
/// neither an option nor an option's value becomes the image, which the
/// engine does not have; options' values and flags that take none do not.
/// Each alone, without `mounts` or `containerEnv`.
const DEV_STRAY_RUN_ARGS: &[&str] = &[
    r#"["--shm-size=1g", "stray"]"#,
    r#"["stray", "--ipc=host"]"#,
    r#"["--label", "gpulint=judge", "--shm-size=1g"]"#,
    r#"["--init", "--shm-size", "2g"]"#,
];

/// Compose-backed dev containers: the `service` the CLI starts, with its
/// own /dev/shm settings, and a `runServices` that leaves another out.
const DEV_COMPOSE_SERVICES: &[&str] = &[
    "",
    "    shm_size: 1gb\n",
    "    ipc: host\n",
    "    shm_size: 2gb\n    environment:\n      NCCL_DEBUG: INFO\n",
    "    tmpfs:\n      - /dev/shm:size=536870912\n",
    "    volumes:\n      - type: tmpfs\n        target: /dev/shm\n        tmpfs:\n          size: 300m\n",
];

/// The Dev Container CLI (`@devcontainers/cli`, `devcontainer up` on the
/// local engine) judges the dev container model: each generated
/// `devcontainer.json` (image-based: every `runArgs` × `mounts` ×
/// `containerEnv`; compose-backed: the service's own settings, with a
/// `runServices` that leaves another service out) is brought up, and `df`
/// and the environment inside its container must be what gpulint inspect
/// says of it. A configuration the CLI cannot bring up must be one
/// gpulint says is refused.
#[test]
#[ignore = "needs a Docker Engine, the workload image and the Dev Container CLI: eval \"$(bash .ci/engine start)\"; npm install @devcontainers/cli (.ci/run does both)"]
fn dev_container_cli_agrees_with_inspect() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let cli = common::required_tool(
        "GPULINT_DEVCONTAINER_CLI",
        "devcontainer",
        "npm install @devcontainers/cli",
    );
    let temp = tempfile::tempdir().unwrap();
    // (folder, the service gpulint's claim is found under, a description)
    let mut cases: Vec<(PathBuf, Option<&str>, String)> = Vec::new();
    // An image-based dev container in a folder of its own: the image, and
    // the settings after it (`"runArgs": [...]`, ...).
    let mut image_case = |folder: String, settings: String| {
        let dir = temp.path().join(folder);
        std::fs::create_dir_all(dir.join(".devcontainer")).unwrap();
        let json = format!("{{\"image\": \"{}\", {settings}}}\n", engine.image());
        std::fs::write(dir.join(".devcontainer/devcontainer.json"), &json).unwrap();
        cases.push((dir, None, json));
    };
    for (a, run_args) in DEV_RUN_ARGS.iter().enumerate() {
        for (m, mounts) in DEV_MOUNTS.iter().enumerate() {
            for (e, env) in DEV_ENV.iter().enumerate() {
                image_case(
                    format!("image-{a}-{m}-{e}"),
                    format!(
                        "\"runArgs\": {run_args}, \"mounts\": {mounts}, \"containerEnv\": {env}"
                    ),
                );
            }
        }
    }
    for (a, run_args) in DEV_STRAY_RUN_ARGS.iter().enumerate() {
        image_case(format!("stray-{a}"), format!("\"runArgs\": {run_args}"));
    }
    for (n, settings) in DEV_COMPOSE_SERVICES.iter().enumerate() {
        let dir = temp.path().join(format!("compose-{n}"));
        std::fs::create_dir_all(dir.join(".devcontainer")).unwrap();
        let compose = format!(
            "services:\n  app:\n    image: {image}\n    command: sleep infinity\n{settings}  other:\n    image: {image}\n    command: sleep infinity\n    shm_size: 3gb\n",
            image = engine.image()
        );
        std::fs::write(dir.join(".devcontainer/compose.yaml"), &compose).unwrap();
        let json = "{\"dockerComposeFile\": \"compose.yaml\", \"service\": \"app\", \"runServices\": [\"app\"], \"workspaceFolder\": \"/workspace\"}\n";
        std::fs::write(dir.join(".devcontainer/devcontainer.json"), json).unwrap();
        cases.push((dir, Some("app"), format!("{json}{compose}")));
    }
    let (mut disagreements, mut started) = (Vec::new(), 0);
    for (dir, service, written) in &cases {
        // The dev container's own view: its configuration file, which
        // for a compose-backed one lists the services the CLI starts.
        let config = [dir.join(".devcontainer/devcontainer.json")];
        let claims = oracle::gpulint_containers(&config, "devcontainer")
            .into_iter()
            .chain(oracle::gpulint_containers(&config, "compose"))
            .collect::<Vec<_>>();
        let claim = match service {
            None => claims.iter().find(|c| c["platform"] == "devcontainer"),
            Some(name) => claims.iter().find(|c| c["name"] == *name),
        };
        let Some(claim) = claim.cloned() else {
            disagreements.push(format!("{written}: gpulint inspect lists no container"));
            continue;
        };
        // What gpulint says of the service the CLI leaves out.
        if service.is_some() && claims.iter().any(|c| c["name"] == "other") {
            disagreements.push(format!(
                "{written}: gpulint lists `other`, which `runServices` leaves out"
            ));
        }
        let label = format!(
            "gpulint-judge-dc={}",
            dir.file_name().unwrap().to_string_lossy()
        );
        let up = Command::new(&cli)
            .args(["up", "--workspace-folder"])
            .arg(dir)
            .args(["--id-label", &label])
            .output()
            .unwrap();
        let refused_by_gpulint = claim["shm"]["kind"] == "refused" || claim["refused"].is_string();
        let said = format!(
            "gpulint: {} ({})",
            claim["shm"]["kind"], claim["shm"]["from"]
        );
        let id = serde_json::from_slice::<serde_json::Value>(&up.stdout)
            .ok()
            .and_then(|v| v["containerId"].as_str().map(str::to_string));
        let Some(id) = id.filter(|_| up.status.success()) else {
            if !refused_by_gpulint {
                disagreements.push(format!(
                    "{written}: `devcontainer up` fails ({}), {said}",
                    String::from_utf8_lossy(&up.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                ));
            }
            continue;
        };
        started += 1;
        let shown = Command::new("docker")
            .args(["exec", &id, "sh", "-c"])
            .arg("df -B1 --output=fstype,size /dev/shm; echo NCCL_DEBUG=$NCCL_DEBUG")
            .output()
            .unwrap();
        // Compose-backed: the CLI's compose project, all of it.
        let project = Command::new("docker")
            .args([
                "inspect",
                "--format",
                "{{index .Config.Labels \"com.docker.compose.project\"}}",
                &id,
            ])
            .output()
            .unwrap();
        let project = String::from_utf8_lossy(&project.stdout).trim().to_string();
        let others = Command::new("docker")
            .args(["ps", "-aq", "--filter"])
            .arg(format!("label=com.docker.compose.project={project}"))
            .output()
            .unwrap();
        let mut remove = vec![id.clone()];
        if !project.is_empty() {
            remove.extend(
                String::from_utf8_lossy(&others.stdout)
                    .split_whitespace()
                    .map(str::to_string),
            );
            if service.is_some() && remove.len() > 2 {
                disagreements.push(format!(
                    "{written}: the CLI started more than `runServices`"
                ));
            }
        }
        let _ = Command::new("docker")
            .args(["rm", "-f"])
            .args(&remove)
            .output();
        let shown = String::from_utf8_lossy(&shown.stdout);
        compare_shown(
            &engine,
            written,
            &shown,
            &claim,
            refused_by_gpulint,
            &said,
            &mut disagreements,
        );
    }
    let _ = Command::new("docker")
        .args(["volume", "rm", "-f", "gpulint-judge-dc"])
        .output();
    eprintln!(
        "dev containers: {} cases, {} started, {} disagreements",
        cases.len(),
        started,
        disagreements.len()
    );
    assert!(cases.len() >= 60, "{} cases", cases.len());
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the Dev Container CLI disagree:\n{}",
        disagreements.join("\n")
    );
}

/// `--env-file` contents and the options beside them, as docker/cli
/// `opts.ParseEnvFile` reads them: leading blanks dropped, values as they
/// are (quotes and trailing blanks too), a name alone taken from the
/// caller's environment, `-e` winning over the file, later files over
/// earlier ones.
const RUN_ENV_FILES: &[(&str, &str)] = &[
    ("NCCL_DEBUG=INFO\n", "--env-file a.env"),
    ("NCCL_DEBUG=\"INFO\"\n", "--env-file a.env"),
    (
        "  NCCL_DEBUG=TRACE  \n# NCCL_DEBUG=WARN\n",
        "--env-file a.env",
    ),
    ("NCCL_DEBUG=INFO\n", "--env-file a.env -e NCCL_DEBUG=WARN"),
    ("NCCL_DEBUG=INFO\n", "-e NCCL_DEBUG=WARN --env-file a.env"),
    ("NCCL_DEBUG=INFO\n", "--env-file a.env --env-file b.env"),
    ("NCCL_DEBUG\n", "--env-file a.env"),
    ("\u{feff}NCCL_DEBUG=VERSION\r\n", "--env-file=a.env"),
    ("OTHER=1\nNCCL_DEBUG=\n", "--env-file a.env"),
];

/// The engine judges `--env-file`: each case's file is written beside a
/// script with its `docker run` line (and `b.env` setting `NCCL_DEBUG=WARN`),
/// the line runs there through the shell, and the container's
/// `NCCL_DEBUG` must be what gpulint inspect says (unset when it says the
/// caller's environment decides: the judge's sets none).
#[test]
#[ignore = "needs a Docker Engine, Compose v2 and the workload image: eval \"$(bash .ci/engine start)\""]
fn engine_agrees_with_inspect_on_docker_run_env_files() {
    let engine = Engine::connect().unwrap_or_else(|why| panic!("{why}"));
    let mut disagreements = Vec::new();
    for (file, options) in RUN_ENV_FILES {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("a.env"), file).unwrap();
        std::fs::write(temp.path().join("b.env"), "NCCL_DEBUG=WARN\n").unwrap();
        let script = temp.path().join("run.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ndocker run {options} img true\n"),
        )
        .unwrap();
        let claims = oracle::gpulint_containers(std::slice::from_ref(&script), "docker-run");
        let claimed = claims
            .first()
            .and_then(|c| c["env"]["NCCL_DEBUG"].as_str())
            .map(str::to_string);
        let ran = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "docker run --rm {options} {} sh -c 'printf \"%s|\" \"${{NCCL_DEBUG-(unset)}}\"'",
                engine.image()
            ))
            .current_dir(temp.path())
            .env_remove("NCCL_DEBUG")
            .output()
            .unwrap();
        assert!(
            ran.status.success(),
            "{options}: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let shown = String::from_utf8_lossy(&ran.stdout);
        let inside = shown.strip_suffix('|').unwrap_or(&shown);
        let inside = (inside != "(unset)").then(|| inside.to_string());
        if inside != claimed {
            disagreements.push(format!(
                "{file:?} with `{options}`: NCCL_DEBUG is {inside:?} inside, gpulint says {claimed:?}"
            ));
        }
    }
    eprintln!(
        "docker run --env-file: {} cases, {} disagreements",
        RUN_ENV_FILES.len(),
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "gpulint inspect and the Docker CLI disagree:\n{}",
        disagreements.join("\n")
    );
}

/// Compares what a started container printed (`df -B1
/// --output=fstype,size /dev/shm`, then `NCCL_DEBUG=...`) with gpulint's
/// claim of it; each difference is a disagreement about `label`.
fn compare_shown(
    engine: &Engine,
    label: &str,
    shown: &str,
    claim: &serde_json::Value,
    refused_by_gpulint: bool,
    said: &str,
    disagreements: &mut Vec<String>,
) {
    let mut words = shown
        .lines()
        .find(|l| !l.starts_with("Type") && !l.starts_with("NCCL_DEBUG="))
        .unwrap_or("absent")
        .split_whitespace();
    let fstype = words.next().unwrap_or("absent");
    let size = words.next().and_then(|w| w.parse().ok());
    let Some(claimed) = (!refused_by_gpulint)
        .then(|| oracle::claimed_shm(claim))
        .flatten()
    else {
        disagreements.push(format!(
            "{label}: the container has /dev/shm {fstype} {size:?}, {said}"
        ));
        return;
    };
    let (seen, expected) = (
        engine.seen_in_container(fstype, size, claimed),
        engine.expected_in_container(claimed),
    );
    if seen != expected {
        disagreements.push(format!("{label}: df shows {seen:?}, {said}"));
    }
    let env = shown
        .lines()
        .find_map(|l| l.strip_prefix("NCCL_DEBUG="))
        .unwrap_or("");
    let claimed_env = claim["env"]["NCCL_DEBUG"].as_str().unwrap_or("");
    if env != claimed_env {
        disagreements.push(format!(
            "{label}: NCCL_DEBUG is {env:?} inside, gpulint says {claimed_env:?}"
        ));
    }
}
