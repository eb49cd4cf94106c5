//! Kubernetes manifests: the objects of a YAML stream, the pod specs inside
//! them (in every workload kind and CRD), their containers, volumes and the
//! `/dev/shm` each container ends up with.
//!
//! Pod specs are found structurally (a mapping with a `containers` list of
//! mappings), so Deployments, Jobs, Kubeflow and Volcano jobs, JobSets,
//! LeaderWorkerSets and CRDs gpulint has never heard of are all checked. A
//! table of known kinds adds what the structure cannot say: whether the
//! workload is distributed, and whether an operator mounts `/dev/shm` itself.

use super::quantity::QuantityValue;
use super::workload::EnvVar;
use crate::syntax::yaml::{NodeId, Value, Yaml};

/// The objects of one YAML document (a `List` contributes its items).
#[derive(Debug)]
pub struct Manifest<'y> {
    pub yaml: &'y Yaml,
    pub root: NodeId,
    pub objects: Vec<Object>,
    /// The document uses YAML aliases (so an edit may change several places).
    pub has_aliases: bool,
}

/// One Kubernetes object.
#[derive(Debug, Clone)]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub name: Option<String>,
    /// The object's mapping, and its path from the document root (`[]`, or
    /// `["items", "3"]` inside a `List`).
    pub map: NodeId,
    pub path: Vec<String>,
    pub pods: Vec<PodSpec>,
}

/// What the kind says about the pods it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Workload {
    /// Ranks on several pods talk over NCCL/MPI (Kubeflow jobs, JobSet, LWS, Ray, Volcano).
    pub distributed: bool,
    /// An operator mounts a memory-backed `/dev/shm` into these pods itself.
    pub shm_managed_by: Option<&'static str>,
}

/// A pod spec somewhere in an object.
#[derive(Debug, Clone)]
pub struct PodSpec {
    pub map: NodeId,
    /// From the document root: `spec.template.spec`, `spec.pytorchReplicaSpecs.Worker.template.spec`.
    pub path: Vec<String>,
    /// The replica or group this pod template is for (`Worker`, `leaderTemplate`, a group name).
    pub role: Option<String>,
    /// `hostIPC: true` (its key), which gives the pod the host's `/dev/shm`.
    pub host_ipc: Option<NodeId>,
    pub volumes: Vec<Volume>,
    pub containers: Vec<Container>,
    pub shm_managed_by: Option<&'static str>,
    /// A template this pod spec is merged into, which gpulint does not
    /// read and which decides `/dev/shm` unless the pod mounts its own
    /// (a Seldon `Server`'s `podSpec` over the ServerConfig it names).
    pub merged_into: Option<String>,
    pub distributed: bool,
}

#[derive(Debug, Clone)]
pub struct Container {
    pub name: String,
    pub map: NodeId,
    /// From the document root: `spec.containers.0`, `spec.predictor.pytorch`.
    pub path: Vec<String>,
    /// Init containers run before the others and are not checked for /dev/shm.
    pub init: bool,
    pub image: Option<String>,
    /// Where requests and limits live: `resources`, or a TrainJob's `resourcesPerNode`.
    pub resources_field: &'static str,
    pub requests: Vec<Resource>,
    pub limits: Vec<Resource>,
    pub mounts: Vec<VolumeMount>,
    pub env: Vec<EnvVar>,
    /// `command` and `args` joined, to find launchers such as `torchrun`.
    pub command_line: String,
}

/// One `resources.requests` or `resources.limits` entry.
#[derive(Debug, Clone)]
pub struct Resource {
    pub name: String,
    pub key: NodeId,
    pub value: NodeId,
    pub quantity: QuantityValue,
}

#[derive(Debug, Clone)]
pub struct VolumeMount {
    pub node: NodeId,
    pub name: Option<String>,
    /// Normalised: no trailing `/`.
    pub mount_path: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Volume {
    pub node: NodeId,
    pub name: Option<String>,
    pub source: VolumeSource,
}

#[derive(Debug, Clone)]
pub enum VolumeSource {
    EmptyDir {
        /// The `emptyDir` mapping (or null).
        node: NodeId,
        key: NodeId,
        memory: bool,
        /// `sizeLimit`: its key, value and reading.
        size_limit: Option<(NodeId, NodeId, QuantityValue)>,
    },
    HostPath {
        path: Option<String>,
    },
    Other(String),
}

/// How a pod provides a container's `/dev/shm`: what the container
/// model's adapter (`runtime`) reads to build its `Shm`.
#[derive(Debug, Clone, Copy)]
pub enum ShmSource<'p> {
    /// A volume mounted at `/dev/shm` (`None` when no volume has the mount's name).
    Mounted {
        mount: &'p VolumeMount,
        volume: Option<&'p Volume>,
    },
    /// `hostIPC: true`: the host's `/dev/shm`.
    HostIpc,
    /// The runtime's 64 MiB default.
    Default,
}

/// GPU resources: NVIDIA (whole GPUs, MIG slices, shared GPUs), AMD, Intel, Habana.
pub fn is_gpu_resource(name: &str) -> bool {
    name == "nvidia.com/gpu"
        || name.starts_with("nvidia.com/gpu.")
        || name.starts_with("nvidia.com/mig-")
        || name == "amd.com/gpu"
        || name.starts_with("gpu.intel.com/")
        || name == "habana.ai/gaudi"
}

/// A container's GPU ask.
#[derive(Debug, Clone)]
pub struct GpuAsk<'c> {
    pub resource: &'c Resource,
    /// Whole GPUs, when known (a placeholder or fraction is not).
    pub count: Option<i64>,
}

impl Container {
    /// The GPU resource that allocates GPUs: the limit, else the request.
    /// `None` when the container asks for none, or for zero.
    pub fn gpu(&self) -> Option<GpuAsk<'_>> {
        let resource = self
            .limits
            .iter()
            .find(|r| is_gpu_resource(&r.name))
            .or_else(|| self.requests.iter().find(|r| is_gpu_resource(&r.name)))?;
        match &resource.quantity {
            QuantityValue::Parsed(q) if !q.is_positive() => None,
            QuantityValue::Parsed(q) => Some(GpuAsk {
                resource,
                count: q.whole(),
            }),
            _ => Some(GpuAsk {
                resource,
                count: None,
            }),
        }
    }

    pub fn env(&self, name: &str) -> Option<&EnvVar> {
        self.env.iter().rev().find(|v| v.name == name)
    }

    pub fn memory_limit(&self) -> Option<&Resource> {
        self.limits.iter().find(|r| r.name == "memory")
    }

    pub(crate) fn mount_at(&self, path: &str) -> Option<&VolumeMount> {
        self.mounts
            .iter()
            .find(|m| m.mount_path.as_deref() == Some(path))
    }
}

impl PodSpec {
    pub fn volume(&self, name: &str) -> Option<&Volume> {
        self.volumes
            .iter()
            .find(|v| v.name.as_deref() == Some(name))
    }

    /// Where the container's `/dev/shm` comes from: a mount there wins over
    /// `hostIPC` (containerd skips its own when the CRI mounts include it).
    pub fn shm_of<'p>(&'p self, container: &'p Container) -> ShmSource<'p> {
        if let Some(mount) = container.mount_at("/dev/shm") {
            let volume = mount.name.as_deref().and_then(|n| self.volume(n));
            return ShmSource::Mounted { mount, volume };
        }
        if self.host_ipc.is_some() {
            ShmSource::HostIpc
        } else {
            ShmSource::Default
        }
    }

    /// A memory-backed emptyDir that looks meant for `/dev/shm` but that
    /// `container` does not mount: another container mounts it at
    /// `/dev/shm`, or no container mounts it at all.
    pub fn unmounted_shm_volume(&self, container: &Container) -> Option<(usize, &Volume)> {
        self.volumes.iter().enumerate().find(|(_, volume)| {
            let VolumeSource::EmptyDir { memory: true, .. } = volume.source else {
                return false;
            };
            let Some(name) = volume.name.as_deref() else {
                return false;
            };
            let mounted_by =
                |c: &Container| c.mounts.iter().any(|m| m.name.as_deref() == Some(name));
            let at_shm_by = |c: &Container| {
                c.mounts.iter().any(|m| {
                    m.name.as_deref() == Some(name) && m.mount_path.as_deref() == Some("/dev/shm")
                })
            };
            if mounted_by(container) {
                return false;
            }
            !self.containers.iter().any(mounted_by) || self.containers.iter().any(at_shm_by)
        })
    }

    /// A volume or mount name not used in this pod: `dshm`, else `dshm-2`, ...
    pub fn unused_volume_name(&self, base: &str) -> String {
        let taken = |name: &str| {
            self.volumes.iter().any(|v| v.name.as_deref() == Some(name))
                || self
                    .containers
                    .iter()
                    .flat_map(|c| &c.mounts)
                    .any(|m| m.name.as_deref() == Some(name))
        };
        (1..)
            .map(|i| {
                if i == 1 {
                    base.to_string()
                } else {
                    format!("{base}-{i}")
                }
            })
            .find(|n| !taken(n))
            .expect("an unused name")
    }

    /// The workload containers that mount `volume` at `/dev/shm`.
    pub fn shm_mounters<'p>(&'p self, volume: &'p Volume) -> impl Iterator<Item = &'p Container> {
        self.app_containers().filter(move |c| {
            c.mount_at("/dev/shm")
                .is_some_and(|m| m.name.is_some() && m.name == volume.name)
        })
    }

    /// The containers that run the workload (not init containers).
    pub fn app_containers(&self) -> impl Iterator<Item = &Container> {
        self.containers.iter().filter(|c| !c.init)
    }
}

/// Kinds whose pods need more than their structure tells.
const KNOWN_WORKLOADS: &[(&str, &str, Workload)] = {
    const DISTRIBUTED: Workload = Workload {
        distributed: true,
        shm_managed_by: None,
    };
    const RAY: Workload = Workload {
        distributed: true,
        shm_managed_by: Some("KubeRay"),
    };
    &[
        ("kubeflow.org", "PyTorchJob", DISTRIBUTED),
        ("kubeflow.org", "TFJob", DISTRIBUTED),
        ("kubeflow.org", "MPIJob", DISTRIBUTED),
        ("kubeflow.org", "XGBoostJob", DISTRIBUTED),
        ("kubeflow.org", "PaddleJob", DISTRIBUTED),
        ("kubeflow.org", "JAXJob", DISTRIBUTED),
        ("trainer.kubeflow.org", "TrainJob", DISTRIBUTED),
        ("trainer.kubeflow.org", "TrainingRuntime", DISTRIBUTED),
        (
            "trainer.kubeflow.org",
            "ClusterTrainingRuntime",
            DISTRIBUTED,
        ),
        ("jobset.x-k8s.io", "JobSet", DISTRIBUTED),
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet", DISTRIBUTED),
        ("batch.volcano.sh", "Job", DISTRIBUTED),
        ("ray.io", "RayCluster", RAY),
        ("ray.io", "RayJob", RAY),
        ("ray.io", "RayService", RAY),
    ]
};

/// An operator that mounts a memory-backed `/dev/shm` into the pods it
/// creates from a pod template, recognised by the shape of the spec that
/// holds the template (any kind: a RayCluster wrapped in an AppWrapper or
/// another custom resource is still KubeRay's).
pub(crate) struct ShmOperator {
    pub name: &'static str,
    /// Keys between the object and the pod template that only its specs have.
    pub spec_keys: &'static [&'static str],
}

/// Operators known to inject `/dev/shm`, each with where its source does.
pub(crate) const SHM_OPERATORS: &[ShmOperator] = &[
    // ray-project/kuberay ray-operator/controllers/ray/common/pod.go:
    // addEmptyDir(..., SharedMemoryVolumeName "shared-mem",
    // SharedMemoryVolumeMountPath "/dev/shm", corev1.StorageMediumMemory) on
    // the Ray container of every head and worker pod.
    ShmOperator {
        name: "KubeRay",
        spec_keys: &["headGroupSpec", "workerGroupSpecs"],
    },
];

/// The operator that gives a pod template at `path` its `/dev/shm`, if any.
pub(crate) fn shm_operator(path: &[String]) -> Option<&'static ShmOperator> {
    SHM_OPERATORS.iter().find(|op| {
        path.iter()
            .any(|segment| op.spec_keys.contains(&segment.as_str()))
    })
}

/// KServe framework shorthands: each is a container spec inside a component.
const KSERVE_FRAMEWORKS: &[&str] = &[
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
];

/// Deeper than any real manifest; guards recursion on hostile input.
const MAX_DEPTH: usize = 48;
/// Nodes visited per object at most (alias bombs expand exponentially).
const MAX_VISITS: usize = 100_000;

/// The API group of an `apiVersion` (`""` for the core group's `v1`).
pub(crate) fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

impl<'y> Manifest<'y> {
    /// Reads one document. `None` when it is not a Kubernetes object (no
    /// string `apiVersion` and `kind`).
    pub fn from_document(yaml: &'y Yaml, root: NodeId) -> Option<Manifest<'y>> {
        if !is_object(yaml, root) {
            return None;
        }
        let mut objects = Vec::new();
        read_object(yaml, root, Vec::new(), &mut objects, 0);
        let document = yaml.range(root);
        let has_aliases = yaml.has_alias_in(document);
        Some(Manifest {
            yaml,
            root,
            objects,
            has_aliases,
        })
    }
}

/// A mapping with string `apiVersion` and `kind`.
pub fn is_object(yaml: &Yaml, node: NodeId) -> bool {
    yaml.is_mapping(node)
        && ["apiVersion", "kind"].iter().all(|k| {
            yaml.get(node, k)
                .is_some_and(|e| yaml.str(e.value).is_some())
        })
}

fn string_at(yaml: &Yaml, map: NodeId, path: &[&str]) -> Option<String> {
    yaml.get_path(map, path)
        .and_then(|e| yaml.str(e.value))
        .map(str::to_string)
}

fn read_object(yaml: &Yaml, map: NodeId, path: Vec<String>, out: &mut Vec<Object>, depth: usize) {
    let map = yaml.resolve(map);
    let api_version = string_at(yaml, map, &["apiVersion"]).unwrap_or_default();
    let kind = string_at(yaml, map, &["kind"]).unwrap_or_default();
    if kind.ends_with("List")
        && let Some(items) = yaml.get(map, "items")
        && depth < 4
    {
        for (i, &item) in yaml.items(items.value).iter().enumerate() {
            if is_object(yaml, item) {
                let mut item_path = path.clone();
                item_path.extend(["items".to_string(), i.to_string()]);
                read_object(yaml, item, item_path, out, depth + 1);
            }
        }
        return;
    }
    let group = api_group(&api_version);
    let workload = KNOWN_WORKLOADS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|&(_, _, w)| w)
        .unwrap_or_default();
    let mut pods = Vec::new();
    if group == "serving.kserve.io" {
        read_kserve(yaml, map, &path, &mut pods);
    }
    if group == "trainer.kubeflow.org" && kind == "TrainJob" {
        read_trainjob(yaml, map, &path, &mut pods);
    }
    // Pods read by kind-specific code above are not found again.
    let visited = pods.iter().map(|p| p.map).collect();
    let mut finder = PodFinder {
        yaml,
        pods: &mut pods,
        visited,
        budget: MAX_VISITS,
    };
    for entry in yaml.entries(map) {
        let Some(key) = yaml.str(entry.key) else {
            continue;
        };
        // Pod specs live under `spec` (or `template` for PodTemplate), never
        // in metadata or status.
        if matches!(key, "metadata" | "status" | "apiVersion" | "kind") {
            continue;
        }
        let mut child = path.clone();
        child.push(key.to_string());
        finder.walk(entry.value, child, None, 0);
    }
    // Seldon Core 2 merges a `Server`'s `podSpec` into the ServerConfig it
    // names, container by container (its volumes, a /dev/shm among them).
    let server_config = (group == "mlops.seldon.io" && kind == "Server")
        .then(|| string_at(yaml, map, &["spec", "serverConfig"]))
        .flatten();
    for pod in &mut pods {
        if let Some(config) = &server_config {
            pod.merged_into = Some(format!("the Seldon ServerConfig `{config}`"));
        }
        pod.distributed |= workload.distributed;
        pod.shm_managed_by = pod.shm_managed_by.or(workload.shm_managed_by);
        if let Some(operator) = shm_operator(&pod.path) {
            pod.shm_managed_by = pod.shm_managed_by.or(Some(operator.name));
            pod.distributed = true;
        }
    }
    out.push(Object {
        api_version,
        kind,
        name: string_at(yaml, map, &["metadata", "name"]),
        map,
        path,
        pods,
    });
}

struct PodFinder<'a, 'y> {
    yaml: &'y Yaml,
    pods: &'a mut Vec<PodSpec>,
    /// Collections already walked: an alias leads to a node once, however
    /// many times it is referenced (alias bombs stay linear).
    visited: foldhash::HashSet<NodeId>,
    /// Nodes left to visit, a backstop for hostile input.
    budget: usize,
}

impl PodFinder<'_, '_> {
    fn walk(&mut self, node: NodeId, path: Vec<String>, role: Option<String>, depth: usize) {
        if depth > MAX_DEPTH || self.budget == 0 {
            return;
        }
        self.budget -= 1;
        let yaml = self.yaml;
        let node = yaml.resolve(node);
        if !self.visited.insert(node) {
            return;
        }
        match yaml.value(node) {
            Value::Mapping(_) => {
                if is_pod_spec(yaml, node) {
                    self.pods.push(read_pod(yaml, node, path, role));
                    return;
                }
                for entry in yaml.entries(node) {
                    let Some(key) = yaml.str(entry.key) else {
                        continue;
                    };
                    if key == "metadata" {
                        continue;
                    }
                    let mut child = path.clone();
                    child.push(key.to_string());
                    let role = if is_role_key(key) {
                        role.clone()
                    } else {
                        Some(key.to_string())
                    };
                    self.walk(entry.value, child, role, depth + 1);
                }
            }
            Value::Sequence(items) => {
                for (i, &item) in items.iter().enumerate() {
                    let mut child = path.clone();
                    child.push(i.to_string());
                    // List items name their group: `groupName`, `name`.
                    let named = ["groupName", "name"]
                        .iter()
                        .find_map(|k| string_at(yaml, yaml.resolve(item), &[k]));
                    let role = named.or_else(|| role.clone());
                    self.walk(item, child, role, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// Keys that wrap a pod template without naming a role.
fn is_role_key(key: &str) -> bool {
    matches!(
        key,
        "spec"
            | "template"
            | "jobTemplate"
            | "trialTemplate"
            | "trialSpec"
            | "replicatedJobs"
            | "tasks"
            | "workerGroupSpecs"
            | "rayClusterSpec"
            | "pytorchReplicaSpecs"
            | "tfReplicaSpecs"
            | "mpiReplicaSpecs"
            | "xgbReplicaSpecs"
            | "paddleReplicaSpecs"
            | "jaxReplicaSpecs"
            | "leaderWorkerTemplate"
    )
}

fn is_pod_spec(yaml: &Yaml, map: NodeId) -> bool {
    yaml.get(map, "containers").is_some_and(|e| {
        let items = yaml.items(e.value);
        !items.is_empty() && items.iter().all(|&i| yaml.is_mapping(i))
    })
}

fn read_pod(yaml: &Yaml, map: NodeId, path: Vec<String>, role: Option<String>) -> PodSpec {
    let host_ipc = yaml
        .get(map, "hostIPC")
        .filter(|e| yaml.is_plain(e.value) && yaml.str(e.value) == Some("true"))
        .map(|e| e.key);
    let volumes_entry = yaml.get(map, "volumes");
    let volumes = volumes_entry
        .map(|e| {
            yaml.items(e.value)
                .iter()
                .map(|&v| read_volume(yaml, v))
                .collect()
        })
        .unwrap_or_default();
    let mut containers = Vec::new();
    for (list, init) in [("containers", false), ("initContainers", true)] {
        if let Some(entry) = yaml.get(map, list) {
            for (i, &item) in yaml.items(entry.value).iter().enumerate() {
                if yaml.is_mapping(item) {
                    let mut container_path = path.clone();
                    container_path.extend([list.to_string(), i.to_string()]);
                    containers.push(read_container(yaml, item, container_path, init));
                }
            }
        }
    }
    PodSpec {
        map,
        path,
        role,
        host_ipc,
        volumes,
        containers,
        shm_managed_by: None,
        merged_into: None,
        distributed: false,
    }
}

fn read_volume(yaml: &Yaml, node: NodeId) -> Volume {
    let node = yaml.resolve(node);
    let name = string_at(yaml, node, &["name"]);
    let source = if let Some(e) = yaml.get(node, "emptyDir") {
        let value = yaml.resolve(e.value);
        let memory = string_at(yaml, value, &["medium"]).as_deref() == Some("Memory");
        let size_limit = yaml.get(value, "sizeLimit").map(|s| {
            let quantity = QuantityValue::read(yaml.str(s.value).unwrap_or(""));
            (s.key, s.value, quantity)
        });
        VolumeSource::EmptyDir {
            node: value,
            key: e.key,
            memory,
            size_limit,
        }
    } else if let Some(e) = yaml.get(node, "hostPath") {
        VolumeSource::HostPath {
            path: string_at(yaml, yaml.resolve(e.value), &["path"]).map(|p| normalise_path(&p)),
        }
    } else {
        let kind = yaml
            .entries(node)
            .iter()
            .filter_map(|e| yaml.str(e.key))
            .find(|k| *k != "name")
            .unwrap_or("")
            .to_string();
        VolumeSource::Other(kind)
    };
    Volume { node, name, source }
}

fn normalise_path(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() { path } else { trimmed }.to_string()
}

fn read_container(yaml: &Yaml, map: NodeId, path: Vec<String>, init: bool) -> Container {
    let map = yaml.resolve(map);
    let resources = |which: &str| {
        yaml.get_path(map, &["resources", which])
            .map(|e| read_resources(yaml, e.value))
            .unwrap_or_default()
    };
    let mounts = yaml
        .get(map, "volumeMounts")
        .map(|e| {
            yaml.items(e.value)
                .iter()
                .map(|&m| {
                    let m = yaml.resolve(m);
                    VolumeMount {
                        node: m,
                        name: string_at(yaml, m, &["name"]),
                        mount_path: string_at(yaml, m, &["mountPath"]).map(|p| normalise_path(&p)),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Container {
        name: string_at(yaml, map, &["name"]).unwrap_or_default(),
        map,
        path,
        init,
        image: string_at(yaml, map, &["image"]),
        resources_field: "resources",
        requests: resources("requests"),
        limits: resources("limits"),
        mounts,
        env: read_env(yaml, map),
        command_line: command_line(yaml, map),
    }
}

/// `requests`/`limits` (or TrainJob's `resourcesPerNode`) entries.
fn read_resources(yaml: &Yaml, map: NodeId) -> Vec<Resource> {
    yaml.entries(map)
        .into_iter()
        .filter_map(|e| {
            let name = yaml.str(e.key)?.to_string();
            let quantity = QuantityValue::read(yaml.str(e.value).unwrap_or(""));
            Some(Resource {
                name,
                key: e.key,
                value: e.value,
                quantity,
            })
        })
        .collect()
}

/// `env: [{name, value}]`; `valueFrom` leaves the value unknown.
fn read_env(yaml: &Yaml, map: NodeId) -> Vec<EnvVar> {
    let Some(env) = yaml.get(map, "env") else {
        return Vec::new();
    };
    yaml.items(env.value)
        .iter()
        .filter_map(|&item| {
            let resolved = yaml.resolve(item);
            let name = string_at(yaml, resolved, &["name"])?;
            Some(EnvVar {
                name,
                value: string_at(yaml, resolved, &["value"]),
                node: item,
                range: yaml.range(item),
            })
        })
        .collect()
}

fn command_line(yaml: &Yaml, map: NodeId) -> String {
    let mut words = Vec::new();
    for key in ["command", "args"] {
        if let Some(e) = yaml.get(map, key) {
            match yaml.value(e.value) {
                Value::Sequence(items) => words.extend(
                    items
                        .iter()
                        .filter_map(|&i| yaml.str(i))
                        .map(str::to_string),
                ),
                Value::Scalar { text, .. } => words.push(text.clone()),
                _ => {}
            }
        }
    }
    words.join(" ")
}

/// KServe components (`predictor`, `transformer`, `explainer`) inline a pod
/// spec and may give the container as a framework block (`pytorch: {...}`)
/// instead of a `containers` list.
fn read_kserve(yaml: &Yaml, map: NodeId, path: &[String], pods: &mut Vec<PodSpec>) {
    for component in ["predictor", "transformer", "explainer"] {
        let Some(entry) = yaml.get_path(map, &["spec", component]) else {
            continue;
        };
        let node = yaml.resolve(entry.value);
        let frameworks: Vec<(String, NodeId)> = yaml
            .entries(node)
            .into_iter()
            .filter_map(|e| {
                let key = yaml.str(e.key)?;
                (KSERVE_FRAMEWORKS.contains(&key) && yaml.is_mapping(e.value))
                    .then(|| (key.to_string(), e.value))
            })
            .collect();
        if frameworks.is_empty() {
            continue;
        }
        let mut pod_path = path.to_vec();
        pod_path.extend(["spec".to_string(), component.to_string()]);
        let mut pod = read_pod(yaml, node, pod_path.clone(), Some(component.to_string()));
        for (key, value) in frameworks {
            let mut container_path = pod_path.clone();
            container_path.push(key.clone());
            let mut container = read_container(yaml, value, container_path, false);
            if container.name.is_empty() {
                // The name KServe gives the model server container.
                container.name = "kserve-container".into();
            }
            pod.containers.push(container);
        }
        pods.push(pod);
    }
}

/// A TrainJob's `trainer` is a container spec (`image`, `command`, `env`,
/// `resourcesPerNode`); its pods, volumes included, come from the training
/// runtime it references.
fn read_trainjob(yaml: &Yaml, map: NodeId, path: &[String], pods: &mut Vec<PodSpec>) {
    let Some(entry) = yaml.get_path(map, &["spec", "trainer"]) else {
        return;
    };
    let node = yaml.resolve(entry.value);
    if !yaml.is_mapping(node) {
        return;
    }
    let mut trainer_path = path.to_vec();
    trainer_path.extend(["spec".to_string(), "trainer".to_string()]);
    let mut container = read_container(yaml, node, trainer_path.clone(), false);
    if container.name.is_empty() {
        container.name = "trainer".into();
    }
    container.resources_field = "resourcesPerNode";
    if let Some(e) = yaml.get(node, "resourcesPerNode") {
        for (which, out) in [
            ("limits", &mut container.limits),
            ("requests", &mut container.requests),
        ] {
            if let Some(r) = yaml.get(e.value, which) {
                *out = read_resources(yaml, r.value);
            }
        }
    }
    pods.push(PodSpec {
        map: node,
        path: trainer_path,
        role: None,
        host_ipc: None,
        volumes: Vec::new(),
        containers: vec![container],
        shm_managed_by: Some("the training runtime the TrainJob references"),
        merged_into: None,
        distributed: true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects(src: &str) -> Vec<Object> {
        let yaml = Yaml::parse(src).unwrap();
        yaml.documents
            .iter()
            .filter_map(|d| Manifest::from_document(&yaml, d.root?))
            .flat_map(|m| m.objects)
            .collect()
    }

    #[test]
    fn compose_and_plain_yaml_are_not_manifests() {
        assert!(objects("services:\n  a:\n    image: x\n").is_empty());
        assert!(objects("apiVersion: v1\n").is_empty());
        assert!(objects("- apiVersion: v1\n  kind: Pod\n").is_empty());
    }

    #[test]
    fn pod_specs_are_found_in_every_shape() {
        let src = "\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: t}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: m, image: x}]
    Worker:
      template:
        spec:
          volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}]
          containers:
          - name: w
            resources: {limits: {nvidia.com/gpu: 8}}
            volumeMounts: [{name: dshm, mountPath: /dev/shm/}]
";
        let objs = objects(src);
        assert_eq!(objs.len(), 1);
        let pods = &objs[0].pods;
        assert_eq!(pods.len(), 2);
        assert_eq!(pods[1].role.as_deref(), Some("Worker"));
        assert_eq!(
            pods[1].path.join("."),
            "spec.pytorchReplicaSpecs.Worker.template.spec"
        );
        assert!(pods[1].distributed);
        let worker = &pods[1].containers[0];
        assert_eq!(worker.gpu().unwrap().count, Some(8));
        assert!(matches!(
            pods[1].shm_of(worker),
            ShmSource::Mounted {
                volume: Some(Volume {
                    source: VolumeSource::EmptyDir { memory: true, .. },
                    ..
                }),
                ..
            }
        ));
    }

    #[test]
    fn lists_kserve_trainjob_and_ray_are_understood() {
        let src = "\
apiVersion: v1
kind: List
items:
- apiVersion: serving.kserve.io/v1beta1
  kind: InferenceService
  metadata: {name: ts}
  spec:
    predictor:
      pytorch:
        resources: {limits: {nvidia.com/gpu: \"1\"}}
- apiVersion: trainer.kubeflow.org/v1alpha1
  kind: TrainJob
  spec:
    trainer:
      resourcesPerNode: {limits: {nvidia.com/gpu: 4}}
- apiVersion: ray.io/v1
  kind: RayCluster
  spec:
    workerGroupSpecs:
    - groupName: gpu-group
      template:
        spec:
          containers: [{name: ray-worker, resources: {limits: {nvidia.com/gpu: 1}}}]
";
        let objs = objects(src);
        assert_eq!(objs.len(), 3);
        assert_eq!(objs[0].path, ["items", "0"]);
        let predictor = &objs[0].pods[0];
        assert_eq!(predictor.containers[0].name, "kserve-container");
        assert_eq!(
            predictor.containers[0].path.join("."),
            "items.0.spec.predictor.pytorch"
        );
        assert!(objs[1].pods[0].shm_managed_by.is_some());
        assert_eq!(objs[1].pods[0].containers[0].gpu().unwrap().count, Some(4));
        assert_eq!(objs[2].pods[0].role.as_deref(), Some("gpu-group"));
        assert_eq!(objs[2].pods[0].shm_managed_by, Some("KubeRay"));
    }

    #[test]
    fn a_ray_cluster_spec_inside_any_kind_is_kuberays() {
        let src = "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {name: w}\nspec:\n  components:\n  - template:\n      apiVersion: ray.io/v1\n      kind: RayCluster\n      spec:\n        workerGroupSpecs:\n        - groupName: g\n          template:\n            spec:\n              containers: [{name: c, image: i}]\n";
        let objs = objects(src);
        assert_eq!(objs[0].pods[0].shm_managed_by, Some("KubeRay"));
        assert!(objs[0].pods[0].distributed);
        let plain = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: i}]\n";
        assert_eq!(objects(plain)[0].pods[0].shm_managed_by, None);
    }

    #[test]
    fn knative_needs_its_api_group() {
        let knative = "apiVersion: serving.knative.dev/v1\nkind: Service\nspec:\n  template:\n    spec:\n      containers: [{image: x}]\n";
        assert_eq!(objects(knative)[0].pods.len(), 1);
        let core = "apiVersion: v1\nkind: Service\nspec:\n  ports: [{port: 80}]\n";
        assert!(objects(core)[0].pods.is_empty());
    }

    #[test]
    fn gpu_quantities() {
        let pod = |limits: &str| {
            let src = format!(
                "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    resources: {{limits: {{{limits}}}}}\n"
            );
            objects(&src)[0].pods[0].containers[0].clone()
        };
        assert!(pod("nvidia.com/gpu: 0").gpu().is_none());
        assert!(pod("cpu: 2").gpu().is_none());
        assert_eq!(
            pod("nvidia.com/mig-1g.10gb: 2").gpu().unwrap().count,
            Some(2)
        );
        assert_eq!(pod("amd.com/gpu: 500m").gpu().unwrap().count, None);
        assert_eq!(pod("nvidia.com/gpu: $GPUS").gpu().unwrap().count, None);
    }
}
