//! The one container model: what a container gets at run time from its
//! config, whatever the platform that starts it (a compose service, a
//! Kubernetes container, a `docker run` line). The size of `/dev/shm` and
//! the setting that decided it (with its span), the IPC mode, the GPUs, the
//! ranks, the ulimits and the GPU-related environment.
//!
//! The per-platform adapters in [`super::adapters`] build it; the rules read
//! it (through their contexts) and `gpulint inspect` prints it, so what the
//! engine tests check is what the rules judge. Only the spans are left out
//! of the printed form.

use super::size::{HumanBytes, KERNEL_TMPFS_REFUSES, SizeValue};
use crate::text::TextRange;
use serde::Serialize;
use std::collections::BTreeMap;

/// The `/dev/shm` Docker and the CRI runtimes give a container by default.
pub const DEFAULT_SHM_BYTES: u64 = 64 * 1024 * 1024;

/// Environment variables that change how GPU jobs run.
const GPU_ENV_PREFIXES: &[&str] = &["NCCL_", "TORCH_", "CUDA_", "NVIDIA_", "PYTORCH_", "UCX_"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Compose,
    Kubernetes,
    /// A `docker run` (or `podman run`, …) command line.
    #[serde(rename = "docker-run")]
    DockerRun,
    /// A `devcontainer.json`: the `docker run` the Dev Container CLI makes
    /// of it.
    #[serde(rename = "devcontainer")]
    DevContainer,
    /// A Podman Quadlet `.container` unit: the `podman run` its generator
    /// writes.
    Quadlet,
}

/// Images whose own documentation tells users to run them with
/// `--ipc=host` or a larger `/dev/shm`, whatever runs in them, with where
/// it says so: evidence for the /dev/shm rules by the image alone.
const DOCUMENTED_SHM_IMAGES: &[(&str, &str)] = &[
    (
        "vllm/vllm-openai",
        "vLLM's Docker guide: `--ipc=host` or `--shm-size`",
    ),
    (
        "lmsysorg/sglang",
        "SGLang's install guide: `--shm-size 32g`",
    ),
    ("rapidsai/", "RAPIDS' install guide: `--shm-size=1g`"),
    (
        "nvcr.io/nvidia/pytorch",
        "NGC PyTorch's guide: `--shm-size=1g`",
    ),
    (
        "nvcr.io/nvidia/nemo",
        "NeMo's container guide: `--shm-size=16g` or `--ipc=host`",
    ),
    ("predibase/lorax", "LoRAX's guide: `--shm-size 1g`"),
    (
        "hiyouga/llamafactory",
        "LLaMA-Factory's Docker guide: `--ipc=host`",
    ),
];

/// The documented /dev/shm need of an image, in words, if it has one.
fn documented_shm_need(image: Option<&str>) -> Option<String> {
    let image = image?.to_ascii_lowercase();
    let image = image.strip_prefix("docker.io/").unwrap_or(&image);
    let image = image.strip_prefix("ghcr.io/").unwrap_or(image);
    DOCUMENTED_SHM_IMAGES
        .iter()
        .find(|(prefix, _)| image.starts_with(prefix))
        .map(|(_, doc)| format!("its image's documentation asks for it ({doc})"))
}

/// One compose service or Kubernetes container.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContainerRuntime {
    pub platform: Platform,
    /// Stable within a file: the service name, or
    /// `Kind/name/<pod path>/container` for Kubernetes.
    pub id: String,
    /// The service or container name.
    pub name: String,
    /// The image it runs, as written (after interpolation), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Where it is named (the service key, the container's mapping).
    #[serde(skip)]
    pub range: TextRange,
    /// What findings about this container can be attached to: the service
    /// mapping, or the whole pod spec (volumes live there); for a KServe
    /// predictor merged with a runtime of the same file, both pod specs
    /// and what lies between them.
    #[serde(skip)]
    pub scope: TextRange,
    /// The file `range` and `scope` are in: the linted file (0), or for a
    /// compose service, the project file of its home definition.
    #[serde(skip)]
    pub file: u32,
    /// Why Compose, the engine or the API server would not create it at all.
    pub refused: Option<String>,
    /// gpulint treats it as a GPU workload (what its rules check).
    pub gpu_workload: bool,
    /// GPUs reserved or requested.
    pub gpus: Option<Gpus>,
    /// Processes the command launches in this container (`torchrun
    /// --nproc_per_node 8`, `--tensor-parallel-size 4`), when it says.
    pub ranks: Option<u64>,
    /// What starts its ranks: a launcher in the command (`torchrun`,
    /// `deepspeed`, `accelerate`, `mpirun`), or the operator of a
    /// distributed Kubernetes kind (`PyTorchJob`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    /// What it runs, as far as its /dev/shm is concerned: training or a
    /// serving engine, its ranks and DataLoader workers
    /// (`model::shm_need` decides from it how much /dev/shm it needs).
    #[serde(skip_serializing_if = "Workload::is_unknown")]
    pub workload: Workload,
    pub shm: Shm,
    /// The IPC namespace: `private`, `shareable`, `host`, `none`,
    /// `service:X`, `container:X` (Kubernetes: `private` or `host`).
    pub ipc: String,
    /// Ulimits the config sets (`memlock`, `stack`); absent ones are the
    /// engine's default. `-1` is unlimited.
    pub ulimits: BTreeMap<String, Ulimit>,
    /// Capabilities added (compose `cap_add`).
    pub cap_add: Vec<String>,
    /// Uses InfiniBand/RDMA (NCCL_IB_* settings, `/dev/infiniband`).
    pub rdma: bool,
    /// `NCCL_*`, `TORCH_*`, `CUDA_*`, `NVIDIA_*`, `PYTORCH_*` and `UCX_*`
    /// variables; `null` when the value is unknown (an unset variable).
    pub env: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gpus {
    All,
    Unknown,
    #[serde(untagged)]
    Count(u64),
}

/// What a container runs, read from its command, image and kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// The ranks that share its /dev/shm: a launcher's processes
    /// (`--nproc_per_node 8`), a server's tensor × pipeline parallel size
    /// or shard count, when the command says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u64>,
    /// DataLoader workers per rank, when the command says
    /// (`--num_workers 4`, `data.num_workers=4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataloader_workers: Option<u64>,
}

impl Workload {
    /// Nothing known: not printed.
    pub(crate) fn is_unknown(&self) -> bool {
        *self == Workload::default()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// A launcher in the command (`torchrun`, `deepspeed`, `accelerate
    /// launch`, `mpirun`) or a distributed training kind (PyTorchJob).
    Training,
    Vllm,
    Tgi,
    Sglang,
    Triton,
    /// NCCL's own benchmarks (nccl-tests: `all_reduce_perf`, ...): NCCL
    /// between the GPUs and nothing else in /dev/shm.
    #[serde(rename = "nccl-tests")]
    NcclTests,
    /// Neither: gpulint cannot tell what runs.
    #[default]
    Unknown,
}

impl WorkloadKind {
    /// The serving engine, by name, when it is one.
    pub fn engine(self) -> Option<&'static str> {
        match self {
            WorkloadKind::Vllm => Some("vLLM"),
            WorkloadKind::Tgi => Some("TGI"),
            WorkloadKind::Sglang => Some("SGLang"),
            WorkloadKind::Triton => Some("Triton"),
            WorkloadKind::Training | WorkloadKind::NcclTests | WorkloadKind::Unknown => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Ulimit {
    pub soft: Option<i64>,
    pub hard: Option<i64>,
}

/// The container's `/dev/shm`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shm {
    pub kind: ShmKind,
    /// The tmpfs size in bytes, when it is bounded and known.
    pub bytes: Option<u64>,
    /// The tmpfs size as a share of the host's memory (`size=50%`), whose
    /// bytes only the host that runs the container knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_memory_percent: Option<u64>,
    /// The setting that decided it, in words.
    pub from: String,
    /// Which setting decided it.
    #[serde(skip)]
    pub decided_by: ShmSetting,
    /// Where that setting is written (its value); `None` for the
    /// runtime's default.
    #[serde(skip)]
    pub at: Option<TextRange>,
    /// The file `at` is in: the linted file (0), or for a compose service,
    /// the project file that writes the setting.
    #[serde(skip)]
    pub at_file: u32,
}

/// The kind of setting that decides a container's `/dev/shm`, in the
/// order the engine applies them: a mount at `/dev/shm` wins over the IPC
/// mode, which wins over a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShmSetting {
    /// Nothing usable: the runtime's default. A size of 0, or one Compose
    /// drops without a word, is written but leaves the default.
    #[default]
    Default,
    /// A size: compose `shm_size`, `docker run --shm-size`.
    Size,
    /// The IPC mode: `ipc: host`, `ipc: none`, `hostIPC`, `--ipc`.
    Ipc,
    /// Another container's IPC namespace: `ipc: service:X`, `container:X`.
    Donor,
    /// A mount at `/dev/shm`: a tmpfs, a volume, a bind, an emptyDir.
    Mount,
    /// An operator that mounts its own `/dev/shm` into the pods it creates.
    Operator,
    /// The KServe runtime the InferenceService's predictor is merged into:
    /// the runtime decides (its volumes and mounts), and findings about
    /// them are the runtime's.
    Runtime,
    /// A value gpulint cannot resolve: an unset variable, an option only
    /// known at run time.
    Unresolved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShmKind {
    /// The 64 MiB default.
    Default,
    /// A tmpfs of `bytes`.
    Sized,
    /// The host's `/dev/shm` (`ipc: host`, `hostIPC`, a bind of `/dev/shm`).
    Host,
    /// A tmpfs with no size: up to half the host's memory (compose), or the
    /// node's (a memory emptyDir with neither sizeLimit nor memory limits).
    Unbounded,
    /// A tmpfs sized as a share of the host's memory (`size=50%`): its
    /// bytes depend on the machine, so no rule calls it too small.
    HostShare,
    /// A disk-backed volume at `/dev/shm`.
    Disk,
    /// No `/dev/shm` at all (`ipc: none`).
    Missing,
    /// The engine or the API server refuses the setting: the container
    /// never starts.
    Refused,
    /// Depends on a variable with no value, or on something gpulint cannot read.
    Unknown,
}

impl Gpus {
    /// All GPUs, or at least two.
    pub fn is_multi(self) -> bool {
        matches!(self, Gpus::All | Gpus::Count(2..))
    }

    /// What two requests give together: all wins, counts add, an unknown
    /// one adds nothing known.
    pub fn combine(self, other: Gpus) -> Gpus {
        match (self, other) {
            (Gpus::All, _) | (_, Gpus::All) => Gpus::All,
            (Gpus::Count(a), Gpus::Count(b)) => Gpus::Count(a + b),
            (Gpus::Unknown, x) | (x, Gpus::Unknown) => x,
        }
    }
}

impl ContainerRuntime {
    /// Several processes in the container talk over NCCL: a launcher (or a
    /// distributed kind), two ranks or more, or NCCL settings.
    pub fn launches_ranks(&self) -> bool {
        self.launcher.is_some()
            || self.ranks.is_some_and(|r| r >= 2)
            || self
                .env
                .keys()
                .any(|name| name.starts_with("NCCL_") || name.starts_with("TORCH_NCCL_"))
    }

    /// Several GPUs or ranks share the container's `/dev/shm`: NCCL's
    /// buffers between them live there.
    pub fn shares_shm_between_ranks(&self) -> bool {
        self.launches_ranks() || self.gpus.is_some_and(Gpus::is_multi)
    }

    /// What the config shows of the container putting more than a few
    /// MiB in `/dev/shm`, in words for a message ("torchrun starts 8
    /// processes"); `None` when it shows nothing: GPUs alone do not (a media
    /// server, an Ollama or ComfyUI container, an `nvidia-smi` probe use
    /// none). The /dev/shm rules warn only with evidence, and say so.
    ///
    /// Evidence is: DataLoader workers; several ranks in the container (a
    /// launcher's processes, a server's tensor or pipeline parallel size or
    /// shards); a launcher, an NCCL benchmark or NCCL settings on several
    /// GPUs; or a serving engine whose own documentation asks for a larger
    /// /dev/shm whatever its size (vLLM, SGLang).
    pub fn shm_evidence(&self) -> Option<String> {
        let workload = &self.workload;
        if let Some(workers) = workload.dataloader_workers.filter(|w| *w > 0) {
            return Some(format!(
                "its command starts {workers} DataLoader worker{} per rank",
                if workers == 1 { "" } else { "s" }
            ));
        }
        let ranks = workload.ranks.or(self.ranks).filter(|r| *r >= 2);
        let multi_gpu = self.gpus.is_some_and(Gpus::is_multi);
        let gpus = match self.gpus {
            Some(Gpus::Count(n)) => format!("{n} GPUs"),
            _ => "all GPUs".to_string(),
        };
        if let Some(engine) = workload.kind.engine() {
            return match ranks {
                Some(n) => Some(format!(
                    "{engine} runs {n} ranks (tensor, pipeline or shards)"
                )),
                // TGI and LoRAX shard over every GPU they see.
                None if workload.kind == WorkloadKind::Tgi && multi_gpu => {
                    Some(format!("{engine} shards the model over {gpus}"))
                }
                None => documented_shm_need(self.image.as_deref()),
            };
        }
        if workload.kind == WorkloadKind::NcclTests {
            return match ranks {
                Some(n) => Some(format!("an NCCL benchmark runs {n} ranks")),
                None if multi_gpu => Some(format!("an NCCL benchmark runs on {gpus}")),
                None => None,
            };
        }
        let launcher = self.launcher.as_deref().unwrap_or("its command");
        if let Some(n) = ranks {
            return Some(format!("{launcher} starts {n} processes"));
        }
        if multi_gpu && self.launcher.is_some() {
            return Some(format!("{launcher} runs on {gpus}"));
        }
        let nccl = self
            .env
            .keys()
            .find(|name| name.starts_with("NCCL_") || name.starts_with("TORCH_NCCL_"));
        match nccl {
            Some(name) if multi_gpu => Some(format!("NCCL is configured (`{name}`) on {gpus}")),
            _ => documented_shm_need(self.image.as_deref()),
        }
    }
}

impl Shm {
    pub fn new(kind: ShmKind, bytes: Option<u64>, from: impl Into<String>) -> Shm {
        Shm {
            kind,
            bytes,
            host_memory_percent: None,
            from: from.into(),
            decided_by: ShmSetting::Default,
            at: None,
            at_file: 0,
        }
    }

    /// The runtime's default, which nothing in the config changes.
    pub(crate) fn default_of(runtime: &str) -> Shm {
        Shm::new(
            ShmKind::Default,
            Some(DEFAULT_SHM_BYTES),
            format!("{runtime}'s default"),
        )
    }

    /// What a size setting gives, as Compose and the engine read it
    /// (`setting` names it: `shm_size`, `--shm-size`, `tmpfs size`).
    pub(crate) fn of_size(size: &SizeValue, setting: &str) -> Shm {
        match size {
            SizeValue::Bytes { bytes: 0, .. } => Shm::new(
                ShmKind::Default,
                Some(DEFAULT_SHM_BYTES),
                format!("{setting} 0: Docker's default"),
            ),
            SizeValue::Bytes { bytes, .. } => Shm::new(
                ShmKind::Sized,
                Some(*bytes),
                format!("{setting} {}", HumanBytes(*bytes)),
            ),
            SizeValue::Negative(n) => Shm::new(
                ShmKind::Refused,
                None,
                format!("{setting} {n}: the engine refuses a negative size"),
            ),
            SizeValue::Unknown { variable } => Shm::new(
                ShmKind::Unknown,
                None,
                format!("{setting} depends on ${{{variable}}}"),
            ),
            SizeValue::Invalid { text, reason } if reason.starts_with(KERNEL_TMPFS_REFUSES) => {
                Shm::new(
                    ShmKind::Refused,
                    None,
                    format!(
                        "{setting} {text:?}: the kernel's tmpfs refuses it, so the container fails to start"
                    ),
                )
            }
            SizeValue::Invalid { text, .. } => {
                // A `docker run` option is parsed by the CLI, a file's
                // setting by Compose.
                let reader = if setting.starts_with("--") {
                    "the Docker CLI"
                } else {
                    "Compose"
                };
                Shm::new(
                    ShmKind::Refused,
                    None,
                    format!("{setting} {text:?}: {reader} cannot parse it"),
                )
            }
            SizeValue::Dropped { text, .. } => Shm::new(
                ShmKind::Default,
                Some(DEFAULT_SHM_BYTES),
                format!("{setting} {text}, which Compose drops: Docker's default"),
            ),
            SizeValue::ShareOfHostMemory { percent } => Shm {
                host_memory_percent: Some(*percent),
                ..Shm::new(
                    ShmKind::HostShare,
                    None,
                    format!("{setting} {percent}%: {percent}% of the host's memory"),
                )
            },
        }
    }

    /// What a tmpfs `size=` option gives a tmpfs at `/dev/shm`: as
    /// [`Shm::of_size`], except that the kernel reads a size of 0 as no
    /// limit at all, not as the engine's default.
    pub(crate) fn of_tmpfs_size(size: &SizeValue, setting: &str) -> Shm {
        match size {
            SizeValue::Bytes { bytes: 0, .. } => Shm::new(
                ShmKind::Unbounded,
                None,
                "a tmpfs at /dev/shm with size 0 (no limit)",
            ),
            size => Shm::of_size(size, setting),
        }
    }

    /// The same `/dev/shm`, decided by `setting` written at `at`.
    pub fn decided_by(self, setting: ShmSetting, at: Option<TextRange>) -> Shm {
        Shm {
            decided_by: setting,
            at,
            ..self
        }
    }
}

/// The variables among `vars` that change how GPU jobs run.
pub(crate) fn gpu_env(
    vars: impl IntoIterator<Item = (String, Option<String>)>,
) -> BTreeMap<String, Option<String>> {
    vars.into_iter()
        .filter(|(name, _)| GPU_ENV_PREFIXES.iter().any(|p| name.starts_with(p)))
        .collect()
}

/// One document's (or compose project's) containers, found by where each
/// is named or by id.
#[derive(Debug, Default)]
pub struct Containers {
    list: Vec<ContainerRuntime>,
    by_range: foldhash::HashMap<(u32, TextRange), usize>,
    by_id: foldhash::HashMap<String, usize>,
}

impl Containers {
    pub fn new(list: Vec<ContainerRuntime>) -> Containers {
        let by_range = list
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.file, c.range), i))
            .collect();
        let by_id = list
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        Containers {
            list,
            by_range,
            by_id,
        }
    }

    /// The container named at `range` of the linted file (a container's
    /// mapping, a `docker run`'s program).
    pub fn named_at(&self, range: TextRange) -> Option<&ContainerRuntime> {
        self.by_range.get(&(0, range)).map(|&i| &self.list[i])
    }

    /// The container with this id (a compose service's name).
    pub fn get(&self, id: &str) -> Option<&ContainerRuntime> {
        self.by_id.get(id).map(|&i| &self.list[i])
    }

    pub fn iter(&self) -> impl Iterator<Item = &ContainerRuntime> {
        self.list.iter()
    }
}
