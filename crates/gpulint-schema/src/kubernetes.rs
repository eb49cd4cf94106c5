//! The Kubernetes API's schema for the kinds gpulint reads pods from,
//! applied as `kubectl apply` applies it by default (`--validate=strict`):
//! a field the API does not define, a value of the wrong type or a missing
//! required field refuses the whole manifest.
//!
//! The schema is kubernetes-validate's `local-strict` one, reduced to
//! these kinds (`schemas/README.md`). A manifest is read as kubectl reads
//! it: YAML 1.1 scalars (`instance::to_json_yaml_1_1`), no variables.

use crate::instance;
use crate::message::{location, steps};
use crate::quick::Checker;
use crate::syntax::tree::{Node, Src};
use crate::syntax::yaml::{NodeId, Yaml};
use boon::{Compiler, ErrorKind, SchemaIndex, Schemas, Type, ValidationError};
use serde_json::Value;
use std::sync::OnceLock;

const SCHEMA: &str = include_str!("../schemas/kubernetes-strict.json");

/// The custom resources gpulint reads pods from, each as the schema of its
/// project's CustomResourceDefinition (`scripts/vendor_crd_schemas.py`),
/// one document per API group, each read only when a resource of its
/// group is checked; their `metadata` is the API's ObjectMeta, copied
/// from [`SCHEMA`].
const CRD_SCHEMAS: &[(&str, &str)] = &[
    (
        "batch.volcano.sh",
        include_str!("../schemas/crd-batch.volcano.sh.json"),
    ),
    (
        "jobset.x-k8s.io",
        include_str!("../schemas/crd-jobset.x-k8s.io.json"),
    ),
    (
        "kubeflow.org",
        include_str!("../schemas/crd-kubeflow.org.json"),
    ),
    (
        "leaderworkerset.x-k8s.io",
        include_str!("../schemas/crd-leaderworkerset.x-k8s.io.json"),
    ),
    ("ray.io", include_str!("../schemas/crd-ray.io.json")),
    (
        "serving.kserve.io",
        include_str!("../schemas/crd-serving.kserve.io.json"),
    ),
    (
        "trainer.kubeflow.org",
        include_str!("../schemas/crd-trainer.kubeflow.org.json"),
    ),
];

/// The Kubernetes version whose API the vendored schema describes.
pub const KUBERNETES_VERSION: &str = "1.37";

/// Where boon finds the schema; see `compose::FAST_LOCATION` for why a
/// `json-schema.org` address (its metaschema check is skipped).
const FAST_LOCATION: &str = "https://json-schema.org/gpulint-vendored/kubernetes-strict.json";
const CRD_FAST_LOCATION: &str = "https://json-schema.org/gpulint-vendored/crd.json";

/// The most nodes a manifest may expand to for the schema to be asked.
const MAX_NODES: usize = 200_000;

/// What the API refuses in one manifest, at the node that wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// What is wrong, in kubectl's terms (`unknown field
    /// "spec.containers[0].shm_size"`).
    pub message: String,
    /// The value, or for an unknown field its key.
    pub at: Src,
    /// Where in the object (`["spec", "containers", "0", "shm_size"]`).
    pub path: Vec<String>,
    pub kind: Refusal,
}

/// What kind of thing the schema refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// A field the API does not define (`path` ends with its name).
    UnknownField,
    /// A required field is missing from the mapping at `path`.
    MissingField,
    /// A value of the wrong type or not among the allowed ones.
    Value,
}

/// One vendored document: its JSON, its kinds, and what is built from it
/// on first use.
struct Vendored {
    json: Value,
    /// `apiVersion/kind` and the schema's reference for it.
    kinds: Vec<(String, String)>,
    /// For a custom resource's kind: the project and release whose
    /// CustomResourceDefinition gave its schema.
    origins: Vec<(String, String)>,
    /// Where boon finds it.
    location: &'static str,
    quick: OnceLock<Option<(Checker, Vec<usize>)>>,
    compiled: OnceLock<(Schemas, Vec<SchemaIndex>)>,
}

impl Vendored {
    fn read(text: &str, location: &'static str) -> Vendored {
        let json: Value = serde_json::from_str(text).expect("a vendored Kubernetes schema is JSON");
        let pairs = |value: &Value| -> Vec<(String, String)> {
            value
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        };
        let kinds = pairs(&json["kinds"]);
        let origins = pairs(&json["origins"]);
        Vendored {
            json,
            kinds,
            origins,
            location,
            quick: OnceLock::new(),
            compiled: OnceLock::new(),
        }
    }

    fn entry(&self, api_version: &str, kind: &str) -> Option<usize> {
        self.kinds.iter().position(|(name, _)| {
            name.strip_prefix(api_version)
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(kind)
        })
    }

    fn quick(&self) -> Option<&(Checker, Vec<usize>)> {
        self.quick
            .get_or_init(|| {
                let entries: Vec<&str> = self.kinds.iter().map(|(_, r)| r.as_str()).collect();
                Checker::with_entries(&self.json, &entries)
            })
            .as_ref()
    }

    /// boon's compile of each kind, on first use (only for a manifest the
    /// quick checker does not accept).
    fn compiled(&self) -> &(Schemas, Vec<SchemaIndex>) {
        self.compiled.get_or_init(|| {
            self.compile(self.location)
                .expect("a vendored Kubernetes schema compiles")
        })
    }

    fn compile(
        &self,
        location: &str,
    ) -> Result<(Schemas, Vec<SchemaIndex>), Box<boon::CompileError>> {
        let mut compiler = Compiler::new();
        compiler.add_resource(location, self.json.clone())?;
        let mut schemas = Schemas::new();
        let mut indexes = Vec::new();
        for (_, reference) in &self.kinds {
            indexes.push(compiler.compile(&format!("{location}{reference}"), &mut schemas)?);
        }
        Ok((schemas, indexes))
    }
}

/// The API's own kinds.
fn vendored() -> &'static Vendored {
    static VENDORED: OnceLock<Vendored> = OnceLock::new();
    VENDORED.get_or_init(|| Vendored::read(SCHEMA, FAST_LOCATION))
}

/// The custom resources' document of an API group (`ray.io`), read the
/// first time a resource of the group is checked, so that checking a
/// Deployment, or a PyTorchJob, costs no other group's schema.
fn custom(group: &str) -> Option<&'static Vendored> {
    static CUSTOM: [OnceLock<Vendored>; CRD_SCHEMAS.len()] =
        [const { OnceLock::new() }; CRD_SCHEMAS.len()];
    let at = CRD_SCHEMAS.iter().position(|(name, _)| *name == group)?;
    Some(CUSTOM[at].get_or_init(|| Vendored::read(CRD_SCHEMAS[at].1, CRD_FAST_LOCATION)))
}

/// Every custom resources' document.
fn all_custom() -> impl Iterator<Item = &'static Vendored> {
    CRD_SCHEMAS.iter().filter_map(|(group, _)| custom(group))
}

/// The document that has the kind, and its entry there.
fn find(api_version: &str, kind: &str) -> Option<(&'static Vendored, usize)> {
    if let Some(entry) = vendored().entry(api_version, kind) {
        return Some((vendored(), entry));
    }
    let group = api_version.split_once('/').map_or("", |(group, _)| group);
    let custom = custom(group)?;
    custom.entry(api_version, kind).map(|entry| (custom, entry))
}

/// For a custom resource's kind gpulint has the schema of: the project
/// and release whose CustomResourceDefinition it is (`kserve/kserve
/// v0.20.0-rc0+`); `None` for the API's own kinds.
pub fn crd_origin(api_version: &str, kind: &str) -> Option<&'static str> {
    let (document, _) = find(api_version, kind)?;
    let name = format!("{api_version}/{kind}");
    document
        .origins
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, origin)| origin.as_str())
}

/// The kinds the vendored schemas have, as `apiVersion/kind`: the API's
/// own and the custom resources' ([`crd_kinds`]).
pub fn kinds() -> impl Iterator<Item = &'static str> {
    vendored()
        .kinds
        .iter()
        .chain(all_custom().flat_map(|document| &document.kinds))
        .map(|(kind, _)| kind.as_str())
}

/// The custom resources' kinds, as `apiVersion/kind`, whose schema is
/// their CustomResourceDefinition's.
pub fn crd_kinds() -> impl Iterator<Item = &'static str> {
    all_custom()
        .flat_map(|document| &document.kinds)
        .map(|(kind, _)| kind.as_str())
}

/// Whether the vendored schemas have the kind (`apiVersion` `apps/v1`,
/// kind `Deployment`).
pub fn knows(api_version: &str, kind: &str) -> bool {
    find(api_version, kind).is_some()
}

#[cfg(test)]
fn entry(api_version: &str, kind: &str) -> Option<usize> {
    vendored().entry(api_version, kind)
}

#[cfg(test)]
fn quick() -> Option<&'static (Checker, Vec<usize>)> {
    vendored().quick()
}

#[cfg(test)]
fn compiled() -> &'static (Schemas, Vec<SchemaIndex>) {
    vendored().compiled()
}

#[cfg(test)]
pub(crate) fn compile(
    location: &str,
) -> Result<(Schemas, Vec<SchemaIndex>), Box<boon::CompileError>> {
    vendored().compile(location)
}

/// Whether the API accepts the object at `node` of `yaml` as written, as
/// far as the quick checker can tell without building its tree: `false`
/// is "not known to be accepted", and [`validate`] then decides.
pub fn accepts(yaml: &Yaml, node: NodeId, api_version: &str, kind: &str) -> bool {
    let Some((document, entry)) = find(api_version, kind) else {
        return true;
    };
    document.quick().is_some_and(|(checker, starts)| {
        checker.accepts_at(starts[entry], instance::Yaml11::new(yaml, node)) == Some(true)
    })
}

/// What the API refuses in `object` (a document whose `apiVersion` and
/// `kind` the schema [`knows`]); empty when it accepts it or does not
/// know the kind.
pub fn validate(object: &Node, api_version: &str, kind: &str) -> Vec<ManifestError> {
    let Some((document, entry)) = find(api_version, kind) else {
        return Vec::new();
    };
    if object.size(MAX_NODES) > MAX_NODES {
        return Vec::new();
    }
    let json = instance::to_json_yaml_1_1(object);
    if let Some((checker, starts)) = document.quick()
        && checker.accepts_at(starts[entry], &json) == Some(true)
    {
        return Vec::new();
    }
    let (schemas, indexes) = document.compiled();
    let Err(error) = schemas.validate(&json, indexes[entry]) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect(&error, object, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup();
    out
}

/// One error per end of the tree of causes; a `oneOf` (a quantity, an
/// int-or-string) is one error however its options fail.
fn collect(error: &ValidationError, object: &Node, out: &mut Vec<ManifestError>) {
    if !error.causes.is_empty() && !matches!(error.kind, ErrorKind::OneOf(_)) {
        for cause in &error.causes {
            collect(cause, object, out);
        }
        return;
    }
    let path = location(error);
    let steps = steps(error);
    let (node, key) = instance::node_at(object, &steps).unwrap_or((object, None));
    if let ErrorKind::AdditionalProperties { got } = &error.kind {
        for name in got {
            let mut field = path.clone();
            field.push(name.to_string());
            out.push(ManifestError {
                message: format!("unknown field \"{}\"", field_path(&field)),
                at: node.entry(name).map_or(node.src, |e| e.key_src),
                path: field,
                kind: Refusal::UnknownField,
            });
        }
        return;
    }
    let at = match (&error.kind, key) {
        // A missing field is missing from the mapping its key names.
        (ErrorKind::Required { .. }, Some(key)) => key,
        (_, Some(key)) if node.is_null() => key,
        _ => node.src,
    };
    let kind = match error.kind {
        ErrorKind::Required { .. } => Refusal::MissingField,
        _ => Refusal::Value,
    };
    out.push(ManifestError {
        message: words(error, &path),
        at,
        path,
        kind,
    });
}

/// A path as kubectl prints a field: `spec.containers[0].image`.
pub fn field_path(path: &[String]) -> String {
    let mut out = String::new();
    for part in path {
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(part);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

fn words(error: &ValidationError, path: &[String]) -> String {
    let field = if path.is_empty() {
        "the object".to_string()
    } else {
        format!("\"{}\"", field_path(path))
    };
    match &error.kind {
        ErrorKind::Type { got, want } => {
            format!(
                "{field} must be {}, not {}",
                wanted(want.iter()),
                a_type(*got)
            )
        }
        ErrorKind::OneOf(_) => {
            let options: Vec<Type> = error
                .causes
                .iter()
                .filter_map(|cause| match &cause.kind {
                    ErrorKind::Type { want, .. } => Some(want.iter()),
                    _ => None,
                })
                .flatten()
                .filter(|t| *t != Type::Null)
                .collect();
            if options.is_empty() {
                format!("{field} is not a valid value")
            } else {
                format!("{field} must be {}", wanted(options.into_iter()))
            }
        }
        ErrorKind::Enum { want } => {
            let all: Vec<String> = want
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| v.to_string())
                .collect();
            format!("{field} must be {}", all.join(" or "))
        }
        ErrorKind::Required { want } => {
            let names: Vec<String> = want.iter().map(|n| format!("\"{n}\"")).collect();
            let under = if path.is_empty() {
                String::new()
            } else {
                format!(" in {field}")
            };
            if names.len() == 1 {
                format!("missing required field {}{under}", names[0])
            } else {
                format!("missing required fields {}{under}", names.join(", "))
            }
        }
        ErrorKind::FalseSchema => format!("{field} is not allowed"),
        _ => format!("{field} is not valid: {}", error.kind),
    }
}

fn wanted(types: impl Iterator<Item = Type>) -> String {
    let mut names: Vec<&str> = types.filter(|t| *t != Type::Null).map(a_type).collect();
    names.dedup();
    match names.split_last() {
        None => "a value".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn a_type(kind: Type) -> &'static str {
    match kind {
        Type::Null => "null",
        Type::Boolean => "a boolean",
        Type::Number => "a number",
        Type::Integer => "an integer",
        Type::String => "a string",
        Type::Array => "a list",
        Type::Object => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::{compile, field_path, knows, validate};
    use crate::syntax::tree::{Budget, Builder, Interpolated, Node};
    use crate::syntax::yaml::Yaml;
    use std::sync::Arc;

    fn tree(text: &str) -> Arc<Node> {
        let yaml = Yaml::parse(text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let keep = |t: &str| Interpolated::Text(t.to_string());
        Builder::new(&yaml, 0, Budget::default(), &keep)
            .build(root)
            .unwrap()
    }

    fn refused(text: &str) -> Vec<String> {
        let root = tree(text);
        let api = root.get("apiVersion").and_then(|n| n.str()).unwrap_or("");
        let kind = root.get("kind").and_then(|n| n.str()).unwrap_or("");
        validate(&root, api, kind)
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    fn pod(container: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: t\n    image: busybox\n{container}"
        )
    }

    /// What `FAST_LOCATION` skips at run time: compiled where boon checks
    /// the vendored schema against draft 07's metaschema, it is valid.
    #[test]
    fn the_vendored_schema_is_valid_draft_07() {
        if let Err(error) = compile("kubernetes-strict.json") {
            panic!("the vendored schema fails its metaschema: {error:#}");
        }
        for (group, _) in super::CRD_SCHEMAS {
            let document = super::custom(group).unwrap();
            if let Err(error) = document.compile(&format!("crd-{group}.json")) {
                panic!("the vendored CRD schema of {group} fails its metaschema: {error:#}");
            }
        }
    }

    #[test]
    fn the_kinds_gpulint_reads_pods_from() {
        for (api, kind) in [
            ("v1", "Pod"),
            ("apps/v1", "Deployment"),
            ("apps/v1", "StatefulSet"),
            ("batch/v1", "Job"),
            ("batch/v1", "CronJob"),
        ] {
            assert!(knows(api, kind), "{api} {kind}");
        }
        assert!(!knows("apps/v1beta1", "Deployment"));
        assert!(!knows("v1", "Deployment"));
        // Custom resources, by their CRDs' served versions only.
        assert!(knows("kubeflow.org/v1", "PyTorchJob"));
        assert!(knows("ray.io/v1alpha1", "RayCluster"));
        assert!(!knows("kubeflow.org/v2beta1", "PyTorchJob"));
        assert!(!knows("kubeflow.org/v1alpha1", "MPIJob"));
        assert_eq!(
            super::crd_origin("kubeflow.org/v1", "PyTorchJob"),
            Some("kubeflow/training-operator v1.9.0")
        );
        // One group, two projects: each kind's version names its own.
        assert_eq!(
            super::crd_origin("kubeflow.org/v2beta1", "MPIJob"),
            Some("kubeflow/mpi-operator master (caa3c47f)")
        );
        assert_eq!(super::crd_origin("v1", "Pod"), None);
    }

    /// A custom resource's `metadata` is the API's ObjectMeta, and its
    /// pod templates are the API's pod spec as its CRD inlines it.
    #[test]
    fn custom_resources_are_judged_by_their_crds() {
        let job = |spec: &str| {
            format!("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: j\n{spec}")
        };
        assert_eq!(
            refused(&job("spec:\n  pytorchReplicaSpecs: {}\n")),
            Vec::<String>::new()
        );
        assert_eq!(
            refused(&job(
                "  lables: {a: b}\nspec:\n  pytorchReplicaSpecs: {}\n  runPolicy: {backoffLimit: three}\n"
            )),
            [
                "unknown field \"metadata.lables\"",
                "\"spec.runPolicy.backoffLimit\" must be an integer, not a string"
            ]
        );
        // `status` is the server's, not judged.
        assert_eq!(
            refused(&job("status:\n  anything: 1\n")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn kubectls_strict_validation() {
        assert_eq!(refused(&pod("")), Vec::<String>::new());
        assert_eq!(
            refused(&pod("    shm_size: 8g\n")),
            ["unknown field \"spec.containers[0].shm_size\""]
        );
        assert_eq!(
            refused(&pod("    ports:\n    - containerPort: \"80\"\n")),
            ["\"spec.containers[0].ports[0].containerPort\" must be an integer, not a string"]
        );
        assert_eq!(
            refused(&pod(
                "    resources:\n      limits:\n        nvidia.com/gpu: [1]\n"
            )),
            ["\"spec.containers[0].resources.limits.nvidia.com/gpu\" must be a string or a number"]
        );
        // YAML 1.1, as kubectl reads it: `yes` is a boolean.
        assert_eq!(
            refused(&pod("    env:\n    - name: A\n      value: yes\n")),
            ["\"spec.containers[0].env[0].value\" must be a string, not a boolean"]
        );
        assert_eq!(
            refused(&pod("    env:\n    - name: A\n      value: \"yes\"\n")),
            Vec::<String>::new()
        );
        assert_eq!(
            refused(&pod("    volumeMounts:\n    - mountPath: /dev/shm\n")),
            ["missing required field \"name\" in \"spec.containers[0].volumeMounts[0]\""]
        );
        assert_eq!(
            refused("apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n  hostIPC: \"true\"\n"),
            ["\"spec.hostIPC\" must be a boolean, not a string"]
        );
        // Quantities take numbers and strings.
        assert_eq!(
            refused(&pod(
                "    resources:\n      limits:\n        nvidia.com/gpu: 8\n        memory: 8Gi\n"
            )),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_unknown_field_is_reported_at_its_key() {
        let text = pod("    shm_size: 8g\n");
        let root = tree(&text);
        let error = &validate(&root, "v1", "Pod")[0];
        let container = &root.get_path(&["spec", "containers"]).unwrap().items()[0];
        assert_eq!(error.at, container.entry("shm_size").unwrap().key_src);
        assert_eq!(error.path, ["spec", "containers", "0", "shm_size"]);
    }

    /// The quick checker answers for every kind, and never says "valid"
    /// where boon says otherwise, on a pod and one-value mutations of it.
    #[test]
    fn the_quick_checker_agrees_with_boon() {
        let (checker, starts) = super::quick().expect("a quick checker for the kubernetes schema");
        let (schemas, indexes) = super::compiled();
        let entry = super::entry("v1", "Pod").unwrap();
        let base: serde_json::Value = serde_json::from_str(
            r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "labels": {"a": "b"}},
                "spec": {"hostIPC": true, "containers": [{"name": "t", "image": "i",
                  "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}],
                  "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "8Gi"}},
                  "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
                  "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]}}"#,
        )
        .unwrap();
        let pool = [
            serde_json::json!(null),
            serde_json::json!(true),
            serde_json::json!(1),
            serde_json::json!(1.5),
            serde_json::json!("x"),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!({"unknown": 1}),
        ];
        let mut instances = vec![base.clone()];
        fn pointers(value: &serde_json::Value, at: String, out: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => map.iter().for_each(|(k, v)| {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(here.clone());
                    pointers(v, here, out);
                }),
                serde_json::Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| {
                    let here = format!("{at}/{i}");
                    out.push(here.clone());
                    pointers(v, here, out);
                }),
                _ => {}
            }
        }
        let mut all = Vec::new();
        pointers(&base, String::new(), &mut all);
        for pointer in &all {
            for value in &pool {
                let mut instance = base.clone();
                *instance.pointer_mut(pointer).unwrap() = value.clone();
                instances.push(instance);
            }
        }
        let mut refused = 0;
        for instance in &instances {
            let quick = checker.accepts_at(starts[entry], instance);
            let boon = schemas.validate(instance, indexes[entry]).is_ok();
            assert!(
                quick.is_some(),
                "the quick checker has no answer for {instance}"
            );
            assert_eq!(quick, Some(boon), "{instance}");
            refused += usize::from(!boon);
        }
        assert!(
            refused > instances.len() / 2,
            "{refused} of {}",
            instances.len()
        );
    }

    #[test]
    fn field_paths_as_kubectl_prints_them() {
        let path: Vec<String> = ["spec", "containers", "0", "image"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(field_path(&path), "spec.containers[0].image");
    }

    /// Reading a manifest in place gives the quick checker's verdict on
    /// its JSON value (or "cannot tell"), on a Deployment and every
    /// mutation of one value (YAML 1.1 words, tags, octal forms, aliases,
    /// collections) or one added field.
    #[test]
    fn reading_in_place_agrees_with_the_json_value() {
        use crate::quick::Instance;
        let (checker, starts) = super::quick().expect("a quick checker");
        let entry = starts[super::entry("apps/v1", "Deployment").unwrap()];
        let base = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: t\n  labels:\n    app: t\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: t\n  template:\n    metadata:\n      labels:\n        app: t\n    spec:\n      hostIPC: true\n      containers:\n      - name: t\n        image: i\n        args: [a, b]\n        env:\n        - name: A\n          value: \"1\"\n        ports:\n        - containerPort: 80\n        resources:\n          limits:\n            nvidia.com/gpu: 8\n            memory: 8Gi\n";
        let pool = [
            "yes",
            "on",
            "y",
            "No",
            "\"yes\"",
            "8001",
            "\"8001\"",
            "0o17",
            "017",
            "0x1F",
            "1.5",
            "1e3",
            "~",
            "null",
            "''",
            "!!str 80",
            "!!int \"80\"",
            "[a, b]",
            "[1]",
            "{a: 1}",
            "{}",
            ".inf",
            "-1",
            "1_000",
            "true",
            "True",
            "'true'",
            "&x 1",
            "*x",
            "!custom v",
            "2Gi",
        ];
        let lines: Vec<&str> = base.lines().collect();
        let mut cases = vec![base.to_string()];
        for (i, line) in lines.iter().enumerate() {
            let Some((key, _)) = line.split_once(": ") else {
                continue;
            };
            for value in pool {
                let mut changed = lines.clone();
                let replaced = format!("{key}: {value}");
                changed[i] = &replaced;
                cases.push(changed.join("\n") + "\n");
            }
            let indent = &key[..key.len() - key.trim_start_matches([' ', '-']).len()];
            let indent = indent.replace('-', " ");
            let mut added = lines.clone();
            let extra = format!("{indent}unknownField: 1");
            added.insert(i + 1, &extra);
            cases.push(added.join("\n") + "\n");
        }
        cases.push(format!("{base}x: &a {{k: 1}}\n"));
        cases.push(
            base.replace("  labels:\n    app: t\n", "  labels: &l\n    app: t\n")
                .replace("matchLabels:\n      app: t", "matchLabels: *l"),
        );
        cases.push(base.replace(
            "      labels:\n        app: t\n",
            "      labels:\n        <<: {app: t}\n",
        ));
        let (mut told, mut accepted) = (0, 0);
        for case in &cases {
            let Ok(yaml) = Yaml::parse(case) else {
                continue;
            };
            let root = yaml.documents[0].root.unwrap();
            let keep = |t: &str| Interpolated::Text(t.to_string());
            let Ok(tree) = Builder::new(&yaml, 0, Budget::default(), &keep).build(root) else {
                continue;
            };
            let json = crate::instance::to_json_yaml_1_1(&tree);
            let view = crate::instance::Yaml11::new(&yaml, root);
            let in_place = checker.accepts_at(entry, view);
            let whole = checker.accepts_at(entry, &json);
            if let Some(verdict) = in_place {
                assert_eq!(Some(verdict), whole, "{case}");
                told += 1;
                accepted += usize::from(verdict);
            } else {
                assert!(
                    case.contains('*') || case.contains("<<"),
                    "cannot tell: {case}"
                );
            }
            if let Some(value) = view.to_value() {
                assert_eq!(value, json, "{case}");
            }
        }
        assert!(
            told > 400 && accepted > 100 && told - accepted > 100,
            "{told} told, {accepted} accepted of {}",
            cases.len()
        );
    }
}
