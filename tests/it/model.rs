//! The rules that judge what a container gets at run time read the one
//! container model that `gpulint inspect` prints. This test checks it from
//! the outside: across every fixture, two containers that inspect prints
//! alike get the same findings from those rules. A rule that read a fact
//! the model leaves out (a setting's spelling, a key it does not carry)
//! would give two alike containers different findings.

use crate::common;

use common::{Fixture, fixtures_in_folder, required_shared, root};
use gpulint::engine::config::Config;
use gpulint::engine::{inspect_text, lint_text_unsuppressed};
use gpulint::model::container::ContainerRuntime;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// The rules whose findings on a container are decided by its model, each
/// in its family: rules that report one fact and hand it to each other
/// count as one (SHM009 reports the default /dev/shm of a service that
/// sets only `build.shm_size`, where SHM001 stays quiet; K8S013 reports
/// the default /dev/shm of a container whose pod has an unmounted shm
/// volume, where K8S004 stays quiet).
const MODEL_RULES: &[(&str, &str)] = &[
    ("SHM001", "default /dev/shm"),
    ("SHM009", "default /dev/shm"),
    ("K8S004", "default /dev/shm"),
    ("K8S013", "default /dev/shm"),
    ("SHM002", "small /dev/shm"),
    ("SHM006", "no /dev/shm"),
    ("SHM011", "invalid ipc"),
    ("K8S009", "host IPC"),
    ("ULIM001", "memlock"),
    ("ULIM003", "stack"),
    ("NCCL001", "NCCL_SHM_DISABLE"),
    ("NCCL002", "NCCL_P2P_DISABLE"),
    ("NCCL003", "NCCL debugging"),
    ("GPU004", "parallel size"),
];

/// What the model rules report about one container (or the containers of
/// one pod, which share its volumes): each family, counted.
type Findings = BTreeMap<&'static str, usize>;

/// The containers as inspect prints them, without their names: names are
/// in the messages, never in the decisions.
fn key(containers: &[ContainerRuntime]) -> String {
    let anonymous: Vec<ContainerRuntime> = containers
        .iter()
        .map(|c| ContainerRuntime {
            id: String::new(),
            name: String::new(),
            ..c.clone()
        })
        .collect();
    serde_json::to_string(&anonymous).unwrap()
}

/// Each container model of a fixture (one per scope: a service, a pod, a
/// `docker run`) with what the model rules report about it.
///
/// A service that several files of a compose project define (an override,
/// an `extends` chain) is one container, and its findings are placed once,
/// by the file that asks for the GPUs; the other files print it (from their
/// side of the merge) and stay quiet. Which file speaks is placement, not
/// judgement, so such services are left out; a service one file defines is
/// compared like any other. So is a service that `extends` another, and
/// the base it extends, in one file too: a finding about the service sits
/// at the base's setting when that decides (its fix overrides it in the
/// service), inside the base's span.
fn judged_models(fixture: &Fixture, config: &Config) -> Vec<(String, Findings)> {
    let mut models = Vec::new();
    let mut by_model: BTreeMap<String, Findings> = BTreeMap::new();
    let mut inspected = Vec::new();
    let mut defined_in: HashMap<String, usize> = HashMap::new();
    // A compose service several files define, or one that `extends`
    // another, is one container whose findings may sit in any of its
    // files: such services are left out (see above).
    let mut spread: HashMap<String, usize> = HashMap::new();
    for file in &fixture.files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(yaml) = gpulint::syntax::yaml::Yaml::parse(&text) else {
            continue;
        };
        for doc in &yaml.documents {
            let Some(services) = doc.root.and_then(|r| yaml.get(r, "services")) else {
                continue;
            };
            for e in yaml.entries(services.value) {
                let name = yaml.str(e.key).unwrap_or_default().to_string();
                let extends = yaml.get(e.value, "extends");
                // `extends: base` or `extends: {service: base}`, both ends.
                if let Some(base) = extends.and_then(|x| {
                    yaml.str(x.value)
                        .or_else(|| yaml.get(x.value, "service").and_then(|s| yaml.str(s.value)))
                }) {
                    *spread.entry(base.to_string()).or_default() += 2;
                }
                *spread.entry(name).or_default() += if extends.is_some() { 2 } else { 1 };
            }
        }
    }
    for file in &fixture.files {
        let text = std::fs::read_to_string(file).unwrap();
        let (Ok(inspection), Ok(diagnostics)) = (
            inspect_text(&text, file, config),
            lint_text_unsuppressed(&text, file, config),
        ) else {
            continue;
        };
        // The containers named in this file (a compose project's others
        // are judged through their own files).
        let containers: Vec<ContainerRuntime> = inspection
            .containers
            .iter()
            .filter(|c| {
                gpulint::vfs::normalize(&inspection.files[c.file as usize].path)
                    == gpulint::vfs::normalize(file)
            })
            .cloned()
            .collect();
        for container in &containers {
            *defined_in.entry(container.id.clone()).or_default() += 1;
        }
        inspected.push((containers, diagnostics));
    }
    for (containers, diagnostics) in inspected {
        let containers = containers.into_iter().filter(|c| {
            (fixture.files.len() == 1 || defined_in[&c.id] == 1)
                && spread.get(&c.id).is_none_or(|&n| n <= 1)
        });
        // Containers that share a scope (a pod's) are judged together.
        let mut scopes: BTreeMap<(u32, u32), Vec<ContainerRuntime>> = BTreeMap::new();
        for container in containers {
            scopes
                .entry((container.scope.start, container.scope.end))
                .or_default()
                .push(container);
        }
        for ((start, end), group) in scopes {
            let mut findings = Findings::new();
            for d in &diagnostics {
                let family = MODEL_RULES
                    .iter()
                    .find(|(code, _)| *code == d.code.as_str())
                    .map(|(_, family)| *family);
                if let Some(family) = family
                    && d.range.start >= start
                    && d.range.end <= end
                {
                    *findings.entry(family).or_default() += 1;
                }
            }
            // In a project, a service and the base it `extends` print
            // alike, and the base alone reports what they share: alike
            // models count as one, with the most findings any reports.
            if fixture.files.len() == 1 {
                models.push((key(&group), findings));
                continue;
            }
            let merged = by_model.entry(key(&group)).or_default();
            for (family, count) in findings {
                let most = merged.entry(family).or_default();
                *most = (*most).max(count);
            }
        }
    }
    models.extend(by_model);
    models
}

/// Judges every fixture given: alike container models must get alike
/// findings. Returns the distinct models and how many met a twin.
fn assert_findings_follow_the_model(fixtures: &[Fixture]) -> (usize, usize) {
    let config = Config::default();
    let mut seen: HashMap<String, (Findings, String)> = HashMap::new();
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for fixture in fixtures {
        for (key, findings) in judged_models(fixture, &config) {
            let here = fixture
                .path
                .strip_prefix(root())
                .unwrap_or(&fixture.path)
                .display()
                .to_string();
            match seen.get(&key) {
                Some((earlier, there)) => {
                    compared += 1;
                    if *earlier != findings {
                        disagreements.push(format!(
                            "{here}: {findings:?}\n  {there}: {earlier:?}\n  model: {key}"
                        ));
                    }
                }
                None => {
                    seen.insert(key, (findings, here));
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "containers inspect prints alike got different findings:\n{}",
        disagreements.join("\n")
    );
    (seen.len(), compared)
}

/// Every fixture of every rule and project.
fn all_fixtures() -> Vec<Fixture> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
        .iter()
        .flat_map(|folder| fixtures_in_folder(&folder.file_name().unwrap().to_string_lossy()))
        .collect()
}

#[test]
fn container_findings_are_a_function_of_the_inspected_model() {
    let (models, compared) = assert_findings_follow_the_model(&all_fixtures());
    // The check means something only where alike containers meet.
    assert!(
        compared >= 50,
        "only {compared} container models had a twin among the fixtures"
    );
    eprintln!("{models} distinct container models; {compared} compared with a twin");
}

/// The same judgement with the real configs of the shared corpus among
/// the fixtures: their containers meet the fixtures' twins too.
#[test]
#[ignore = "needs ../shared/corpus: run by .ci/run"]
fn container_findings_follow_the_model_on_the_corpus_too() {
    let mut fixtures = all_fixtures();
    for kind in ["compose", "k8s", "slurm"] {
        let dir = required_shared(&format!("corpus/{kind}"));
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        fixtures.extend(files.into_iter().map(|path| Fixture {
            files: vec![path.clone()],
            path,
        }));
    }
    let (models, compared) = assert_findings_follow_the_model(&fixtures);
    eprintln!("{models} distinct container models; {compared} compared with a twin");
}
