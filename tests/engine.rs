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

mod common;
#[path = "engine/generate.rs"]
mod generate;
#[path = "engine/oracle.rs"]
mod oracle;

use common::{copy_dir, fixtures, root};
use oracle::{Case, Engine, Tally};
use std::path::PathBuf;

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
