//! What a Kubernetes rule sees (one document's objects and their pod specs)
//! and how it builds fixes.

use super::RuleSettings;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::container::{ContainerRuntime, Containers, ShmSetting};
use crate::model::k8s::{Container, Manifest, Object, PodSpec};
use crate::model::kserve::KServe;
use crate::model::workload::EnvVar;
use crate::syntax::yaml::{NodeId, Yaml};
use crate::syntax::yaml_edit::{KeyOrder, NewNode, YamlEditor};
use crate::text::TextRange;

pub struct KubeContext<'a> {
    pub manifest: &'a Manifest<'a>,
    pub text: &'a str,
    pub settings: &'a RuleSettings,
    pub edit: &'a YamlEditor<'a>,
    /// The document's index in the stream (fixes must not touch the others).
    pub document: usize,
    /// What each container gets at run time: the model `gpulint inspect`
    /// prints, which the rules judge.
    pub containers: Containers,
    /// The KServe runtimes and predictors of the file and its directory.
    pub kserve: &'a KServe,
}

/// A pod spec with the object it belongs to.
#[derive(Clone, Copy)]
pub struct Pod<'a> {
    pub object: &'a Object,
    pub spec: &'a PodSpec,
}

impl<'a> Pod<'a> {
    /// "Deployment `triton`", "PyTorchJob `resnet` (Worker)".
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.describe_into(&mut out);
        out
    }

    fn describe_into(&self, out: &mut String) {
        out.push_str(&self.object.kind);
        if let Some(name) = &self.object.name {
            out.extend([" `", name, "`"]);
        }
        if let Some(role) = &self.spec.role {
            out.extend([" (", role, ")"]);
        }
    }

    /// "container `vllm` of Deployment `triton`". Asked for every container
    /// of every pod (it names the owner of each variable): built in one
    /// string, not formatted piece by piece.
    pub(crate) fn describe_container(&self, container: &Container) -> String {
        let mut out = String::with_capacity(64);
        if container.name.is_empty() {
            out.push_str("unnamed container");
        } else {
            out.extend(["container `", &container.name, "`"]);
        }
        out.push_str(" of ");
        self.describe_into(&mut out);
        out
    }

    /// The pod spec's path in the document.
    pub fn path(&self) -> ModelPath {
        ModelPath(self.spec.path.clone())
    }

    /// The path of the pod's `index`th volume.
    pub(crate) fn volume_path(&self, index: usize) -> ModelPath {
        self.path().child("volumes").child(index.to_string())
    }
}

/// A container's path in the document.
pub fn container_path(container: &Container) -> ModelPath {
    ModelPath(container.path.clone())
}

/// One change of a fix: the edit and the document path it changes.
pub struct Change {
    pub edit: Edit,
    pub path: ModelPath,
}

impl<'a> KubeContext<'a> {
    pub fn new(
        manifest: &'a Manifest<'a>,
        text: &'a str,
        settings: &'a RuleSettings,
        edit: &'a YamlEditor<'a>,
        document: usize,
        kserve: &'a KServe,
    ) -> KubeContext<'a> {
        KubeContext {
            manifest,
            text,
            settings,
            edit,
            document,
            containers: Containers::new(crate::model::adapters::kubernetes_runtimes(
                manifest, document, kserve,
            )),
            kserve,
        }
    }

    /// What `container` gets at run time (`None` for an init container,
    /// which the model leaves out).
    pub fn container(&self, container: &Container) -> Option<&ContainerRuntime> {
        self.containers.named_at(self.range(container.map))
    }

    pub fn yaml(&self) -> &'a Yaml {
        self.manifest.yaml
    }

    /// The pod's GPU containers that the container model leaves on the
    /// runtime's default `/dev/shm` (nothing mounted there, no `hostIPC`,
    /// no operator that mounts one).
    pub(crate) fn gpu_containers_on_default_shm(&self, pod: &Pod<'a>) -> Vec<&'a Container> {
        pod.spec
            .app_containers()
            .filter(|c| {
                self.container(c).is_some_and(|model| {
                    model.gpu_workload && model.shm.decided_by == ShmSetting::Default
                })
            })
            .collect()
    }

    /// The InferenceService that gives a KServe runtime's model container
    /// its GPUs: its name, and its GPU limit's span when it is in this
    /// file.
    pub(crate) fn gpu_predictor(
        &self,
        pod: &Pod<'a>,
        container: &Container,
    ) -> Option<(String, Option<TextRange>)> {
        use crate::model::kserve::Origin;
        let runtime = self
            .kserve
            .runtime_in(self.document, pod.object.name.as_deref()?)?;
        if container.name != crate::model::kserve::MODEL_CONTAINER {
            return None;
        }
        let predictor = self
            .kserve
            .predictors_of(runtime)
            .find(|p| p.container.gpu().is_some())?;
        let limit = match &predictor.origin {
            Origin::Document(_) => predictor
                .container
                .gpu()
                .map(|g| self.entry_range(g.resource.key, g.resource.value)),
            Origin::File(_) => None,
        };
        let service = match &predictor.origin {
            Origin::File(path) => format!(
                "{} (in {})",
                predictor.service,
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
            Origin::Document(_) => predictor.service.clone(),
        };
        Some((service, limit))
    }

    pub fn pods(&self) -> impl Iterator<Item = Pod<'a>> {
        let objects: &'a [Object] = &self.manifest.objects;
        objects
            .iter()
            .flat_map(|object| object.pods.iter().map(move |spec| Pod { object, spec }))
    }

    /// Every container (init containers too) with its pod.
    pub fn containers(&self) -> impl Iterator<Item = (Pod<'a>, &'a Container)> {
        self.pods()
            .flat_map(|pod| pod.spec.containers.iter().map(move |c| (pod, c)))
    }

    pub fn range(&self, node: NodeId) -> TextRange {
        self.yaml().range(node)
    }

    pub fn source(&self, node: NodeId) -> &'a str {
        &self.text[self.range(node).as_range()]
    }

    /// The span of `key: value`.
    pub(crate) fn entry_range(&self, key: NodeId, value: NodeId) -> TextRange {
        self.range(key).cover(self.range(value))
    }

    /// Fixes are offered only for documents without aliases: an edit inside
    /// an anchor would change every place that shares it, which a pod-level
    /// fix cannot account for.
    fn editable(&self) -> bool {
        !self.manifest.has_aliases
    }

    /// Creates `relative` (and missing parents) under `map`, whose document
    /// path is `map_path`, ending in `leaf`.
    pub fn insert(
        &self,
        map: NodeId,
        map_path: &ModelPath,
        relative: &[&str],
        leaf: NewNode,
    ) -> Option<Change> {
        let plan = self
            .edit
            .insert_path(map, relative, leaf, KeyOrder::Append)
            .ok()?;
        Some(Change {
            edit: plan.edit,
            path: below(map_path, relative),
        })
    }

    /// Appends `item` to the sequence at `relative` under `map`, or creates
    /// the sequence with it.
    pub fn append(
        &self,
        map: NodeId,
        map_path: &ModelPath,
        relative: &[&str],
        item: NewNode,
    ) -> Option<Change> {
        match self.edit.locate(map, relative) {
            Some(found) if !self.yaml().is_null(found.node) => {
                let count = self.yaml().items(found.node).len();
                let edit = self.edit.append_item(found.node, &item).ok()?;
                let path = below(map_path, relative).child(count.to_string());
                Some(Change { edit, path })
            }
            _ => self.insert(map, map_path, relative, NewNode::Seq(vec![item])),
        }
    }

    /// Replaces a scalar, keeping its quoting.
    pub fn replace(&self, node: NodeId, path: ModelPath, value: &str) -> Change {
        Change {
            edit: self.edit.replace(node, self.edit.scalar_like(node, value)),
            path,
        }
    }

    /// A fix from its changes, in this document; `None` when a change could
    /// not be built or the document uses anchors.
    pub fn fix(
        &self,
        title: impl Into<String>,
        applicability: Applicability,
        changes: impl IntoIterator<Item = Option<Change>>,
    ) -> Option<Fix> {
        if !self.editable() {
            return None;
        }
        let changes: Vec<Change> = changes.into_iter().collect::<Option<_>>()?;
        let (edits, paths): (Vec<Edit>, Vec<ModelPath>) =
            changes.into_iter().map(|c| (c.edit, c.path)).unzip();
        Some(Fix::new(title, applicability, edits, paths).in_document(self.document))
    }

    /// A fix that removes an environment variable from a container (the
    /// whole `env` key when it is the only one).
    pub fn remove_env_fix(&self, container: &Container, var: &EnvVar) -> Option<Fix> {
        let env = self.yaml().get(container.map, "env")?;
        let env_path = container_path(container).child("env");
        let edit = match self.edit.remove_item(env.value, var.node) {
            Ok(edit) => edit,
            Err(_) => self.edit.remove_entry(container.map, env.key).ok()?,
        };
        self.fix(
            format!("Remove `{}`", var.name),
            Applicability::Unsafe,
            [Some(Change {
                edit,
                path: env_path,
            })],
        )
    }
}

fn below(path: &ModelPath, relative: &[&str]) -> ModelPath {
    relative
        .iter()
        .fold(path.clone(), |p, segment| p.child(*segment))
}

/// `{name: NAME, mountPath: /dev/shm}`.
pub(crate) fn shm_mount(volume: &str) -> NewNode {
    NewNode::map([
        ("name", NewNode::scalar(volume)),
        ("mountPath", NewNode::scalar("/dev/shm")),
    ])
}
