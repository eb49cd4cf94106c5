//! KServe's runtime composition: an `InferenceService` predictor names a
//! `ServingRuntime` or `ClusterServingRuntime` (`model.runtime`) or lets
//! KServe pick one by its model format, and KServe merges the two into one
//! pod (kserve `pkg/controller/v1beta1/inferenceservice/utils/utils.go`,
//! `MergeServingRuntimeAndInferenceServiceSpecs`): the runtime's
//! `kserve-container` patched with the predictor's container fields (its
//! volume mounts merged by `mountPath`, the predictor's args after the
//! runtime's), and the runtime's volumes patched with the predictor's (by
//! name). The runtime often carries the `/dev/shm` emptyDir and the
//! InferenceService the GPU limits, so neither is judged alone.
//!
//! Runtimes are looked for in the same file and, through the engine, in
//! the files of the same directory (`engine::kserve`); a runtime named but
//! not found there is said to be elsewhere, not judged. With no runtime
//! named and none here that supports the format, the runtime is one KServe
//! installs ([`BUILT_IN`]).

use super::k8s::{Container, Manifest, Object, PodSpec, VolumeMount, api_group};
use crate::syntax::yaml::{NodeId, Yaml};
use std::path::PathBuf;

/// The container of a runtime that KServe merges the predictor into.
pub const MODEL_CONTAINER: &str = "kserve-container";

/// Where a KServe object was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This file's document of that index (node ids are this file's).
    Document(usize),
    /// Another file of the directory (its node ids mean nothing here).
    File(PathBuf),
}

/// A model format a runtime serves.
#[derive(Debug, Clone)]
pub struct SupportedFormat {
    pub name: String,
    pub version: Option<String>,
    pub auto_select: bool,
    pub priority: Option<i64>,
}

/// A `ServingRuntime` or `ClusterServingRuntime`.
#[derive(Debug, Clone)]
pub struct ServingRuntime {
    pub kind: String,
    pub name: String,
    pub formats: Vec<SupportedFormat>,
    /// `disabled: true`, `multiModel: true` (ModelMesh) or a `workerSpec`
    /// (multi-node): not picked for a plain predictor by format.
    pub not_auto: bool,
    /// Its pod spec: containers and volumes.
    pub pod: PodSpec,
    pub origin: Origin,
}

impl ServingRuntime {
    /// The container the predictor is merged into.
    pub(crate) fn model_container(&self) -> Option<&Container> {
        self.pod
            .containers
            .iter()
            .find(|c| c.name == MODEL_CONTAINER)
    }

    /// "ServingRuntime `vllm-runtime`" (with its file when it is another).
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Document(_) => format!("{} `{}`", self.kind, self.name),
            Origin::File(path) => format!(
                "{} `{}` in {}",
                self.kind,
                self.name,
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
        }
    }

    fn serves(&self, format: &str, version: Option<&str>, named: bool) -> bool {
        self.formats.iter().any(|f| {
            (named || f.auto_select)
                && f.name == format
                && version.is_none_or(|v| f.version.as_deref() == Some(v))
        })
    }

    fn priority(&self, format: &str) -> Option<i64> {
        self.formats
            .iter()
            .filter(|f| f.name == format)
            .find_map(|f| f.priority)
    }
}

/// What an InferenceService's predictor asks of a runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// `model.runtime`, when it names one.
    pub runtime: Option<String>,
    /// `model.modelFormat` (name, version), or the framework key
    /// (`pytorch:`), which KServe reads as that format.
    pub format: Option<(String, Option<String>)>,
}

/// A predictor that uses a runtime: what the runtime side of the merged
/// pod needs to know about it.
#[derive(Debug, Clone)]
pub struct Predictor {
    /// "InferenceService `llama`".
    pub service: String,
    pub model: ModelRef,
    pub container: Container,
    pub pod: PodSpec,
    pub origin: Origin,
}

/// A runtime KServe installs (kserve `config/runtimes` at commit
/// aaac4e294dae2c7b1aa1886447793f3aa1c30912), picked by format when no
/// runtime of the cluster's own serves it.
#[derive(Debug)]
pub struct BuiltIn {
    pub format: &'static str,
    pub runtime: &'static str,
    /// It mounts a memory emptyDir (no sizeLimit) at `/dev/shm`.
    pub mounts_shm: bool,
}

/// The built-in runtime each format's auto-selection picks (highest
/// priority; kserve-openvino, which serves several at priority 3, is not in
/// the default install). Formats not listed have no built-in runtime.
pub const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        format: "huggingface",
        runtime: "kserve-huggingfaceserver",
        mounts_shm: true,
    },
    BuiltIn {
        format: "vLLM",
        runtime: "kserve-vllmserver",
        mounts_shm: true,
    },
    BuiltIn {
        format: "pytorch",
        runtime: "kserve-torchserve",
        mounts_shm: false,
    },
    BuiltIn {
        format: "tensorflow",
        runtime: "kserve-tensorflow-serving",
        mounts_shm: false,
    },
    BuiltIn {
        format: "triton",
        runtime: "kserve-tritonserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "tensorrt",
        runtime: "kserve-tritonserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "onnx",
        runtime: "kserve-tritonserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "sklearn",
        runtime: "kserve-sklearnserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "xgboost",
        runtime: "kserve-xgbserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "lightgbm",
        runtime: "kserve-lgbserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "pmml",
        runtime: "kserve-pmmlserver",
        mounts_shm: false,
    },
    BuiltIn {
        format: "paddle",
        runtime: "kserve-paddleserver",
        mounts_shm: false,
    },
];

/// Which runtime a predictor gets.
#[derive(Debug, Clone)]
pub enum Selection<'k> {
    Found(&'k ServingRuntime),
    /// Named (`model.runtime`), and not in this file or its directory.
    NotHere(String),
    /// Picked by format from what KServe installs.
    BuiltIn(&'static BuiltIn),
    /// No format to pick by, or one no runtime serves.
    None,
}

/// The KServe runtimes and predictors of a file and its directory.
#[derive(Debug, Clone, Default)]
pub struct KServe {
    pub runtimes: Vec<ServingRuntime>,
    pub predictors: Vec<Predictor>,
}

fn is_runtime(object: &Object) -> bool {
    api_group(&object.api_version) == "serving.kserve.io"
        && matches!(
            object.kind.as_str(),
            "ServingRuntime" | "ClusterServingRuntime"
        )
}

fn is_inference_service(object: &Object) -> bool {
    api_group(&object.api_version) == "serving.kserve.io" && object.kind == "InferenceService"
}

fn str_at(yaml: &Yaml, map: NodeId, path: &[&str]) -> Option<String> {
    yaml.get_path(map, path)
        .and_then(|e| yaml.str(e.value))
        .map(str::to_string)
}

/// The predictor's model reference: `model.runtime` and `model.modelFormat`,
/// or a framework key (`pytorch: {...}`), read as KServe converts it.
pub(crate) fn model_ref(yaml: &Yaml, object: &Object, pod: &PodSpec) -> Option<ModelRef> {
    if !is_inference_service(object) || pod.role.as_deref() != Some("predictor") {
        return None;
    }
    let predictor = yaml.get_path(object.map, &["spec", "predictor"])?.value;
    let predictor = yaml.resolve(predictor);
    if let Some(model) = yaml.get(predictor, "model") {
        let model = yaml.resolve(model.value);
        let name = str_at(yaml, model, &["modelFormat", "name"]);
        return Some(ModelRef {
            runtime: str_at(yaml, model, &["runtime"]),
            format: name.map(|n| (n, str_at(yaml, model, &["modelFormat", "version"]))),
        });
    }
    // A framework container's path ends with its key (`pytorch`); a
    // `containers` list item's with its index.
    let framework = pod.containers.iter().find_map(|c| {
        c.path
            .last()
            .filter(|key| key.starts_with(|ch: char| ch.is_ascii_alphabetic()))
    })?;
    Some(ModelRef {
        runtime: None,
        format: Some((framework.clone(), None)),
    })
}

impl KServe {
    /// Adds the runtimes and predictors of one document.
    pub fn add(&mut self, manifest: &Manifest, origin: Origin) {
        let yaml = manifest.yaml;
        for object in &manifest.objects {
            if is_runtime(object) {
                let Some(pod) = object.pods.first() else {
                    continue;
                };
                let spec = yaml.get(object.map, "spec").map(|e| yaml.resolve(e.value));
                let formats = spec
                    .and_then(|s| yaml.get(s, "supportedModelFormats"))
                    .map(|e| {
                        yaml.items(e.value)
                            .iter()
                            .filter_map(|&f| {
                                let f = yaml.resolve(f);
                                Some(SupportedFormat {
                                    name: str_at(yaml, f, &["name"])?,
                                    version: str_at(yaml, f, &["version"]),
                                    auto_select: str_at(yaml, f, &["autoSelect"]).as_deref()
                                        == Some("true"),
                                    priority: str_at(yaml, f, &["priority"])
                                        .and_then(|p| p.parse().ok()),
                                })
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let flag = |key: &str| {
                    spec.and_then(|s| str_at(yaml, s, &[key])).as_deref() == Some("true")
                };
                let not_auto = flag("disabled")
                    || flag("multiModel")
                    || spec.is_some_and(|s| yaml.get(s, "workerSpec").is_some());
                self.runtimes.push(ServingRuntime {
                    kind: object.kind.clone(),
                    name: object.name.clone().unwrap_or_default(),
                    formats,
                    not_auto,
                    pod: pod.clone(),
                    origin: origin.clone(),
                });
            }
            for pod in &object.pods {
                let Some(model) = model_ref(yaml, object, pod) else {
                    continue;
                };
                let Some(container) = pod.app_containers().next() else {
                    continue;
                };
                self.predictors.push(Predictor {
                    service: format!("{} `{}`", object.kind, object.name.as_deref().unwrap_or("")),
                    model,
                    container: container.clone(),
                    pod: pod.clone(),
                    origin: origin.clone(),
                });
            }
        }
    }

    /// The runtime KServe gives a predictor: the one it names (a
    /// ServingRuntime before a ClusterServingRuntime of the same name), or
    /// by format the highest priority of those that auto-select it
    /// (namespace runtimes before cluster ones, then by name), else the
    /// built-in one.
    pub fn select(&self, model: &ModelRef) -> Selection<'_> {
        let format = model.format.as_ref();
        if let Some(name) = &model.runtime {
            let named: Vec<&ServingRuntime> =
                self.runtimes.iter().filter(|r| &r.name == name).collect();
            return named
                .iter()
                .find(|r| r.kind == "ServingRuntime")
                .or(named.first())
                .map_or(Selection::NotHere(name.clone()), |r| Selection::Found(r));
        }
        let Some((format, version)) = format else {
            return Selection::None;
        };
        let mut candidates: Vec<&ServingRuntime> = self
            .runtimes
            .iter()
            .filter(|r| !r.not_auto && r.serves(format, version.as_deref(), false))
            .collect();
        candidates.sort_by(|a, b| {
            (a.kind != "ServingRuntime")
                .cmp(&(b.kind != "ServingRuntime"))
                .then_with(|| {
                    let key = |r: &ServingRuntime| {
                        std::cmp::Reverse(r.priority(format).map(|p| (1, p)).unwrap_or((0, 0)))
                    };
                    key(a).cmp(&key(b))
                })
                .then_with(|| a.name.cmp(&b.name))
        });
        if let Some(runtime) = candidates.first() {
            return Selection::Found(runtime);
        }
        BUILT_IN
            .iter()
            .find(|b| b.format == format)
            .map_or(Selection::None, Selection::BuiltIn)
    }

    /// The predictors KServe merges into `runtime`.
    pub fn predictors_of<'k>(
        &'k self,
        runtime: &'k ServingRuntime,
    ) -> impl Iterator<Item = &'k Predictor> + 'k {
        self.predictors.iter().filter(move |p| {
            matches!(self.select(&p.model), Selection::Found(r) if std::ptr::eq(r, runtime))
        })
    }

    /// The runtime read from this file's document `document` named `name`.
    pub fn runtime_in(&self, document: usize, name: &str) -> Option<&ServingRuntime> {
        self.runtimes
            .iter()
            .find(|r| r.origin == Origin::Document(document) && r.name == name)
    }
}

/// The pod KServe builds from a predictor and its runtime, as far as
/// `/dev/shm` is concerned: the predictor's container with the runtime's
/// `kserve-container` mounts it does not override (by `mountPath`), and the
/// runtime's volumes the predictor does not override (by name). The
/// runtime's `hostIPC` is not merged (`MergePodSpec` takes its volumes,
/// scheduling and pull secrets only). Returns the merged pod, its one
/// container, and whether the `/dev/shm` mount is the runtime's.
pub(crate) fn merged_pod(
    pod: &PodSpec,
    container: &Container,
    runtime: &ServingRuntime,
) -> (PodSpec, Container, bool) {
    let mut merged = container.clone();
    let mut from_runtime = false;
    if let Some(own) = runtime.model_container() {
        let overridden = |m: &VolumeMount| {
            container
                .mounts
                .iter()
                .any(|c| c.mount_path.is_some() && c.mount_path == m.mount_path)
        };
        for mount in own.mounts.iter().filter(|m| !overridden(m)) {
            from_runtime |= mount.mount_path.as_deref() == Some("/dev/shm");
            merged.mounts.push(mount.clone());
        }
        if merged.memory_limit().is_none()
            && let Some(limit) = own.memory_limit()
        {
            merged.limits.push(limit.clone());
        }
        if container.image.is_none() {
            merged.image = own.image.clone();
        }
        merged.command_line = format!("{} {}", own.command_line, container.command_line)
            .trim()
            .to_string();
        let mut env = own.env.clone();
        env.retain(|v| container.env(&v.name).is_none());
        env.extend(container.env.iter().cloned());
        merged.env = env;
    }
    let mut merged_pod = pod.clone();
    merged_pod.containers = vec![merged.clone()];
    for volume in &runtime.pod.volumes {
        if pod.volume(volume.name.as_deref().unwrap_or("")).is_none() {
            merged_pod.volumes.push(volume.clone());
        }
    }
    (merged_pod, merged, from_runtime)
}
