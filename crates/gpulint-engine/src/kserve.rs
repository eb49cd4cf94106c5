//! The KServe runtimes and InferenceService predictors a manifest is merged
//! with (`model::kserve`): those of the file itself, and, when it holds a
//! KServe object, those of the other YAML files of its directory and of the
//! files its directory's kustomization lists. Files are read through the
//! session's `System` (open editor buffers win); [`sibling_files`] is the
//! one place that decides which files are looked at.

use super::kustomize::KUSTOMIZATION_NAMES;
use super::session::Session;
use crate::model::k8s::Manifest;
use crate::model::kserve::{KServe, Origin, Selection};
use crate::syntax::yaml::{Value, Yaml};
use std::path::{Path, PathBuf};

/// Sibling files read at most for one file, a bound for directories of
/// thousands of manifests.
const MAX_SIBLINGS: usize = 64;

/// The KServe objects of `yaml` (`text`, the file at `path`) and of its
/// siblings; nothing is read for a file that names no KServe API group.
pub fn scope(session: &Session, yaml: &Yaml, text: &str, path: &Path) -> KServe {
    let mut kserve = KServe::default();
    if !text.contains("serving.kserve.io") {
        return kserve;
    }
    for (index, document) in yaml.documents.iter().enumerate() {
        if let Some(root) = document.root
            && let Some(manifest) = Manifest::from_document(yaml, root)
        {
            kserve.add(&manifest, Origin::Document(index));
        }
    }
    // What the other files could add: the runtime of a predictor that has
    // none here, and the predictors of a runtime that serves none here,
    // found by name or format. Files that mention neither are not parsed,
    // and a file whose runtimes and predictors meet here reads none.
    let mut wanted: Vec<String> = Vec::new();
    for predictor in &kserve.predictors {
        if !matches!(kserve.select(&predictor.model), Selection::Found(_)) {
            // A runtime named is found by its name, one picked by format
            // by the format.
            match &predictor.model.runtime {
                Some(name) => wanted.push(name.clone()),
                None => wanted.extend(predictor.model.format.as_ref().map(|(f, _)| f.clone())),
            }
        }
    }
    // A runtime's predictors elsewhere are found by its name (how OpenShift
    // AI links them); one that picks it by format alone is not looked for,
    // since every file of a directory of runtimes names the format.
    for runtime in &kserve.runtimes {
        if kserve.predictors_of(runtime).next().is_none() {
            wanted.push(runtime.name.clone());
        }
    }
    wanted.retain(|w| !w.is_empty());
    if wanted.is_empty() {
        return kserve;
    }
    let mut siblings = sibling_files(session, path);
    // Files named after what is wanted first (`my-model-runtime.yaml` for
    // runtime `my-model`), then the rest, in name order.
    siblings.sort_by_key(|f| {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        !wanted.iter().any(|w| name.contains(w.as_str()))
    });
    siblings.truncate(MAX_SIBLINGS);
    for sibling in siblings {
        // Read and parsed once per session, however many files ask.
        let Ok(read) = session.workspace().files.read(&sibling) else {
            continue;
        };
        let text = &read.source.text;
        if !text.contains("serving.kserve.io") || !wanted.iter().any(|w| mentions(text, w)) {
            continue;
        }
        let parsed = session.workspace().yaml(&read.source);
        let Ok(other) = parsed.as_ref() else {
            continue;
        };
        for document in &other.documents {
            if let Some(root) = document.root
                && let Some(manifest) = Manifest::from_document(other, root)
            {
                kserve.add(&manifest, Origin::File(sibling.clone()));
            }
        }
        if !still_wanted(&kserve) {
            break;
        }
    }
    kserve
}

/// Whether a predictor of this file still has no runtime, or a runtime of
/// this file no predictor: what the siblings are read for.
fn still_wanted(kserve: &KServe) -> bool {
    let here = |origin: &Origin| matches!(origin, Origin::Document(_));
    kserve
        .predictors
        .iter()
        .filter(|p| here(&p.origin))
        .any(|p| !matches!(kserve.select(&p.model), Selection::Found(_)))
        || kserve
            .runtimes
            .iter()
            .filter(|r| here(&r.origin))
            .any(|r| kserve.predictors_of(r).next().is_none())
}

/// Whether `text` holds `word` as a whole name (`r1`, not inside `r10`).
fn mentions(text: &str, word: &str) -> bool {
    let part_of_name =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    text.match_indices(word).any(|(at, _)| {
        !part_of_name(text[..at].chars().next_back())
            && !part_of_name(text[at + word.len()..].chars().next())
    })
}

/// The other `*.yaml`/`*.yml` files of `path`'s directory, and the files
/// the directory's kustomization lists as `resources` (a directory listed
/// there is not followed), in name order.
pub fn sibling_files(session: &Session, path: &Path) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let is_yaml = |p: &Path| {
        matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
            && !KUSTOMIZATION_NAMES
                .iter()
                .any(|k| p.file_name().is_some_and(|n| n == *k))
    };
    let files_read = &session.workspace().files;
    let this = files_read.canonicalize(path);
    let mut files: Vec<PathBuf> = files_read
        .list_files(&dir)
        .into_iter()
        .map(|name| dir.join(name))
        .filter(|p| is_yaml(p))
        .collect();
    files.sort();
    if let Some(kustomization) = KUSTOMIZATION_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| files_read.is_file(p))
        && let Ok(read) = files_read.read(&kustomization)
        && let Ok(yaml) = Yaml::parse(&read.source.text)
        && let Some(root) = yaml.documents.first().and_then(|d| d.root)
        && let Some(entry) = yaml.get(root, "resources")
    {
        for &item in yaml.items(entry.value) {
            if let Value::Scalar { text, .. } = yaml.value(item) {
                let file = dir.join(text);
                if is_yaml(&file) && files_read.is_file(&file) && !files.contains(&file) {
                    files.push(file);
                }
            }
        }
    }
    // The file itself: by name in the listing, canonically for a
    // kustomization resource spelled another way (one `realpath` each).
    files.retain(|f| {
        if f.parent() == Some(dir.as_path()) {
            f.file_name() != path.file_name()
        } else {
            this.is_none() || files_read.canonicalize(f) != this
        }
    });
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kserve::Selection;

    const RUNTIME: &str = "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: m1}\nspec:\n  supportedModelFormats: [{name: vLLM, autoSelect: true}]\n  containers: [{name: kserve-container, image: x}]\n";
    const SERVICE: &str = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m1}\nspec:\n  predictor:\n    model:\n      modelFormat: {name: vLLM}\n      runtime: m1\n      resources: {limits: {nvidia.com/gpu: 1}}\n";

    fn scope_of(path: &Path) -> KServe {
        let session = Session::on_disk();
        let text = std::fs::read_to_string(path).unwrap();
        let yaml = Yaml::parse(&text).unwrap();
        scope(&session, &yaml, &text, path)
    }

    #[test]
    fn a_runtime_is_found_beside_the_service_or_through_the_kustomization() {
        let dir = tempfile::tempdir().unwrap();
        let service = dir.path().join("m1-service.yaml");
        std::fs::write(&service, SERVICE).unwrap();
        // Not here yet: the service's runtime is said to be elsewhere.
        let alone = scope_of(&service);
        assert!(matches!(
            alone.select(&alone.predictors[0].model),
            Selection::NotHere(_)
        ));
        std::fs::create_dir(dir.path().join("base")).unwrap();
        std::fs::write(dir.path().join("base/runtime.yaml"), RUNTIME).unwrap();
        std::fs::write(
            dir.path().join("kustomization.yaml"),
            "resources: [m1-service.yaml, base/runtime.yaml]\n",
        )
        .unwrap();
        let through = scope_of(&service);
        assert!(matches!(
            through.select(&through.predictors[0].model),
            Selection::Found(r) if r.origin == Origin::File(dir.path().join("base/runtime.yaml"))
        ));
        // From base/, the runtime's siblings are base/'s files: the service
        // is not among them; and no file is its own sibling.
        let runtime = dir.path().join("base/runtime.yaml");
        assert!(scope_of(&runtime).predictors.is_empty());
        let files = sibling_files(&Session::on_disk(), &service);
        assert!(!files.contains(&service), "{files:?}");
    }

    #[test]
    fn files_that_name_nothing_wanted_are_not_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let service = dir.path().join("a.yaml");
        std::fs::write(&service, SERVICE).unwrap();
        // A runtime named m10 does not serve a service that names m1.
        std::fs::write(dir.path().join("b.yaml"), RUNTIME.replace("m1}", "m10}")).unwrap();
        let scope = scope_of(&service);
        assert!(scope.runtimes.is_empty());
        assert!(mentions("runtime: m1\n", "m1"));
        assert!(!mentions("runtime: m10\n", "m1"));
        assert!(!mentions("name: my-m1", "m1"));
    }
}
