//! Compose services with their effective `/dev/shm` and GPU intent.
//!
//! The semantics follow Docker Engine and Docker Compose (see
//! `shared/notes/domain.md` §1–3): a `/dev/shm` mount wins over everything,
//! then the `ipc` mode decides whether `shm_size` applies at all, and
//! `shm_size: 0` or no `shm_size` means the daemon default of 64 MiB.

use super::container::Gpus;
use super::dockerfile::BuiltImage;
use super::size::{SizeValue, parse_compose_size_with, parse_tmpfs_size_option, tmpfs_size_option};
use super::variables::{Interpolated, Variables, interpolate};
use super::workload::selects_rdma;
pub use super::workload::{EnvVar, detect_launcher};
use crate::syntax::yaml::{NodeId, Value, Yaml};
use crate::text::{SourceFile, TextRange};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug)]
pub struct ComposeFile<'y> {
    pub yaml: &'y Yaml,
    /// The document's root mapping.
    pub root: NodeId,
    pub services: Vec<Service>,
    /// Services that files named by `include:` bring into the project
    /// (read from those files; their nodes are not this file's).
    pub included: Vec<Service>,
    /// Why Compose refuses this file's `include:` (a cycle, a file it
    /// cannot read), at the entry that names it.
    pub include_error: Option<(NodeId, String)>,
}

/// A value as written, with the node it came from.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub node: NodeId,
    /// The key of the entry, where the value has one.
    pub key: Option<NodeId>,
}

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    /// The service's name key (`trainer:`): where "missing setting" findings point.
    pub key: NodeId,
    pub map: NodeId,
    pub image: Option<Spanned<String>>,
    pub shm_size: Option<Spanned<SizeValue>>,
    pub build_shm_size: Option<Spanned<SizeValue>>,
    pub ipc: Option<Spanned<IpcMode>>,
    pub shm_mounts: Vec<Spanned<ShmMount>>,
    pub environment: Vec<EnvVar>,
    /// `entrypoint` and `command` joined, as the container would run them.
    pub command_line: String,
    pub command_node: Option<NodeId>,
    pub device_requests: Vec<DeviceRequest>,
    /// The `deploy.resources.reservations.devices` entry, if written.
    pub devices_key: Option<NodeId>,
    pub gpus: Option<Spanned<Gpus>>,
    pub runtime: Option<Spanned<String>>,
    pub devices: Vec<Spanned<String>>,
    pub ulimits: Ulimits,
    /// Keys such as `nvidia.com/gpu` written under `deploy.resources.{reservations,limits}`.
    pub misplaced_gpu_resources: Vec<Spanned<String>>,
    pub cap_add: Vec<String>,
    /// What this definition's settings decide about `/dev/shm` (the
    /// container model's `Shm` is what the container gets).
    pub shm_decision: ShmDecision,
    pub gpu: GpuIntent,
    /// `build:` as written.
    pub build: Option<BuildSpec>,
    /// The image `build:` produces, when its Dockerfile could be read
    /// (attached by the engine, which reads files).
    pub built_image: Option<Arc<BuiltImage>>,
    /// What the other files of its compose project say about the service
    /// (attached by the engine; see [`super::project`]).
    pub project: Option<ProjectView>,
    /// The image it builds makes it a GPU service (see
    /// [`ComposeFile::settle_build_evidence`]).
    pub gpu_from_build: bool,
    /// `extends:` as written (interpolated).
    pub extends: Option<Extends>,
    /// Keys tagged `!reset` (a later file removes what earlier ones set)
    /// or `!override` (replaces instead of merging), by key.
    pub merge_tags: Vec<(String, MergeTag)>,
    /// What other definitions of the service decide (see [`super::project`]).
    pub inherited: Inherited,
    /// `env_file:` entries (interpolated), and whether each is required.
    pub env_files: Vec<(String, bool)>,
    /// `profiles:`: the service runs only with one of them enabled.
    pub profiles: Vec<String>,
}

/// What the other files of a project say about one service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectView {
    /// Where the service's GPU evidence is, when the last definition with
    /// GPU evidence is another one: that file, the service's key there, and why.
    pub gpu_elsewhere: Option<(Arc<SourceFile>, TextRange, String)>,
    /// The service's key in each other definition merged with it.
    pub also_defined: Vec<(Arc<SourceFile>, TextRange)>,
    /// This file's own settings for the service are GPU evidence (before
    /// merging in the other files').
    pub local_gpu_evidence: bool,
}

/// Where a merged setting comes from: the file, the service's key there,
/// and the setting in words (`memlock -1 in base.yml, service `common``).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub source: Arc<SourceFile>,
    pub range: TextRange,
    pub what: String,
}

/// Settings another definition of the service decides (an override file,
/// an extended base): the merged value wins over what this definition
/// writes, or fills what it leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inherited {
    /// Ulimits by name; `None` when a later definition removed it (`!reset`).
    pub ulimits: BTreeMap<String, (Option<super::container::Ulimit>, Origin)>,
    /// The IPC mode, when another definition decides it.
    pub ipc: Option<(IpcMode, Origin)>,
    /// Environment variables another definition (or its `env_file`) sets.
    pub environment: BTreeMap<String, (Option<String>, Origin)>,
    /// For a variable of `environment` that only this definition's own
    /// `env_file:` sets: the `env_file` entry naming its file (where a
    /// finding about it is placed; its line is the `Origin`).
    pub env_file_entries: BTreeMap<String, NodeId>,
    /// Ulimits (by name) that the service's last definition removes with
    /// `ulimits: !reset` (or replaces with `!override`) when that
    /// definition is another file's own: that file is linted as part of
    /// the project and reports what the removal leaves wrong, so a finding
    /// is not repeated here, where the removed value is written.
    pub ulimits_removed_by_last_file: Vec<String>,
    /// The `env_file:` entries of every definition, in Compose's merge
    /// order (a later file's variable wins; `!reset` or `!override` drops
    /// the earlier ones): the compose file that names each (`None`: this
    /// one), the entry as written and whether it is required. `None` when
    /// the service has no other definition: its own `env_files` are all.
    pub env_files: Option<Vec<(Option<PathBuf>, String, bool)>>,
    /// Why Compose cannot build the service at all (an `extends` cycle, a
    /// missing base): Compose refuses the project.
    pub error: Option<String>,
    /// The error is a file the project names that is not here (a `.env`
    /// left out of the checkout, a base file not copied with a lone file):
    /// Compose refuses it here, but it is not a mistake in the config.
    pub error_is_missing_file: bool,
}

/// `extends: common` or `extends: {service: common, file: base.yml}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extends {
    pub service: String,
    pub file: Option<String>,
    /// The `extends` key.
    pub key: NodeId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeTag {
    Reset,
    Override,
}

/// A service's `build:` (the short form is a context path).
#[derive(Debug, Clone, Default)]
pub struct BuildSpec {
    pub context: Option<String>,
    pub dockerfile: Option<String>,
    pub dockerfile_inline: Option<Spanned<String>>,
    pub target: Option<String>,
    /// Build arguments whose values are known (interpolated with defaults).
    pub args: HashMap<String, String>,
    /// The `build` key.
    pub key: Option<NodeId>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpcMode {
    Private,
    Shareable,
    Host,
    None,
    Service(String),
    Container(String),
    Unknown(String),
    Invalid(String),
}

impl IpcMode {
    fn parse(raw: &str, vars: Option<&Variables>) -> IpcMode {
        let text = match interpolate(raw, vars) {
            Interpolated::Text(t) => t,
            Interpolated::Unknown(v) => return IpcMode::Unknown(v),
            Interpolated::Invalid(_) => return IpcMode::Invalid(raw.to_string()),
        };
        match text.as_str() {
            "" | "private" => IpcMode::Private,
            "shareable" => IpcMode::Shareable,
            "host" => IpcMode::Host,
            "none" => IpcMode::None,
            other => {
                // A donor needs a name: `service:` alone is refused too.
                if let Some(name) = other.strip_prefix("service:").filter(|n| !n.is_empty()) {
                    IpcMode::Service(name.to_string())
                } else if let Some(name) =
                    other.strip_prefix("container:").filter(|n| !n.is_empty())
                {
                    IpcMode::Container(name.to_string())
                } else {
                    IpcMode::Invalid(other.to_string())
                }
            }
        }
    }

    /// Whether the engine uses `shm_size` in this mode.
    pub fn honours_shm_size(&self) -> bool {
        matches!(self, IpcMode::Private | IpcMode::Shareable)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ShmMount {
    /// `/dev/shm:/dev/shm`: the host's shared memory, without sharing the IPC namespace.
    HostBind,
    /// A named or anonymous volume, or a host directory other than `/dev/shm`.
    Volume,
    /// A tmpfs at `/dev/shm`; `None` size means unbounded (half the host RAM).
    Tmpfs(Option<SizeValue>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    Other,
}

/// One `deploy.resources.reservations.devices` (or long-form `gpus`) item.
#[derive(Debug, Clone)]
pub struct DeviceRequest {
    pub node: NodeId,
    pub driver: Option<Spanned<String>>,
    pub count: Option<Spanned<String>>,
    pub device_ids: Option<Spanned<Vec<String>>>,
    pub capabilities: Option<Spanned<Vec<String>>>,
    pub from_gpus_field: bool,
}

/// Capabilities the Docker Engine's NVIDIA device driver answers to.
pub const NVIDIA_CAPABILITIES: &[&str] = &[
    "gpu", "nvidia", "compute", "compat32", "graphics", "utility", "video", "display",
];

impl DeviceRequest {
    pub fn vendor(&self) -> Vendor {
        let driver = self.driver.as_ref().map(|d| d.value.to_ascii_lowercase());
        let ids = self.device_ids.as_ref().map_or(&[][..], |d| &d.value[..]);
        if ids.iter().any(|id| id.starts_with("nvidia.com/")) {
            return Vendor::Nvidia;
        }
        if ids.iter().any(|id| id.starts_with("amd.com/")) {
            return Vendor::Amd;
        }
        match driver.as_deref() {
            Some("nvidia") => Vendor::Nvidia,
            Some("amd") => Vendor::Amd,
            Some("cdi") => Vendor::Other,
            Some(_) => Vendor::Other,
            None => {
                // Without a driver, the engine picks the driver whose
                // capabilities match; for GPU capabilities that is NVIDIA's.
                let caps = self.capabilities.as_ref().map_or(&[][..], |c| &c.value[..]);
                if caps.is_empty()
                    || caps
                        .iter()
                        .any(|c| NVIDIA_CAPABILITIES.contains(&c.to_ascii_lowercase().as_str()))
                {
                    Vendor::Nvidia
                } else {
                    Vendor::Other
                }
            }
        }
    }

    /// The capabilities of a request for NVIDIA's driver (named, or picked
    /// by capability) that the driver does not answer to: the engine matches
    /// a request's capability set as a whole (moby daemon/devices.go), so one
    /// unknown capability makes the container fail to start. `None` when the
    /// set matches, or when the request is for another driver.
    pub fn unmatched_capabilities(&self) -> Option<Vec<String>> {
        let caps = &self.capabilities.as_ref()?.value;
        let nvidia = match self.driver.as_ref().map(|d| d.value.to_ascii_lowercase()) {
            Some(driver) => driver == "nvidia",
            None => true,
        };
        let unknown: Vec<String> = caps
            .iter()
            .filter(|c| !NVIDIA_CAPABILITIES.contains(&c.as_str()))
            .cloned()
            .collect();
        (nvidia && !caps.is_empty() && !unknown.is_empty()).then_some(caps.clone())
    }

    pub fn gpu_count(&self) -> Gpus {
        if let Some(ids) = &self.device_ids {
            // The engine joins the ids with commas for the runtime
            // (`NVIDIA_VISIBLE_DEVICES=0,1`), which splits them again: one
            // `'0,1,2,3'` is four GPUs, as `['0', '1', '2', '3']` is.
            let mut split: Vec<&str> = ids
                .value
                .iter()
                .flat_map(|id| id.split(','))
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .collect();
            if split.iter().any(|id| *id == "all" || id.ends_with("=all")) {
                return Gpus::All;
            }
            if split.iter().any(|id| id.contains('$')) {
                return Gpus::Unknown;
            }
            split.sort_unstable();
            split.dedup();
            return Gpus::Count(split.len() as u64);
        }
        match self
            .count
            .as_ref()
            .map(|c| c.value.trim().to_ascii_lowercase())
        {
            // Compose reserves every GPU when neither count nor device_ids is given.
            None => Gpus::All,
            Some(c) if c == "all" || c == "-1" => Gpus::All,
            Some(c) => c.parse().map_or(Gpus::Unknown, Gpus::Count),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Ulimits {
    pub node: Option<NodeId>,
    pub memlock: Option<Ulimit>,
    pub stack: Option<Ulimit>,
    /// Every other ulimit (`nofile`, `nproc`, ...), by name: the engine
    /// gets them all.
    pub others: Vec<(String, Ulimit)>,
}

#[derive(Debug, Clone)]
pub struct Ulimit {
    pub key: NodeId,
    pub value_node: NodeId,
    /// Soft limit; `-1` is unlimited. `None` when not a number.
    pub soft: Option<i64>,
    pub hard: Option<i64>,
}

impl Ulimit {
    pub fn is_unlimited(&self) -> bool {
        self.soft == Some(-1) && self.hard.is_none_or(|h| h == -1)
    }
}

/// Which of this definition's own settings decides `/dev/shm`, and what it
/// says: the input of the container model's [`super::container::Shm`],
/// which `runtime` builds from it once `ipc: service:` donors are followed
/// and the project has merged its other files in (`Elsewhere`).
#[derive(Debug, Clone, PartialEq)]
pub enum ShmDecision {
    /// The daemon default (64 MiB): no usable `shm_size`, or `shm_size: 0`.
    Default,
    Sized {
        bytes: u64,
        node: NodeId,
    },
    /// Depends on an unset variable or an unreadable value.
    Unknown {
        node: NodeId,
    },
    /// `ipc: host`: the host's `/dev/shm`.
    Host {
        node: NodeId,
    },
    /// `ipc: service:X` or `container:X`: the donor's `/dev/shm`.
    Donor {
        donor: String,
        node: NodeId,
    },
    /// `ipc: none`: no `/dev/shm` at all.
    Missing {
        node: NodeId,
    },
    /// Decided by a setting in another file of the compose project (an
    /// override file): that file's findings are about it. It holds what
    /// that file gives the container, as `gpulint inspect` reports it.
    Elsewhere(Box<super::container::Shm>),
    /// A mount at `/dev/shm` replaces the engine's.
    Mount {
        mount: ShmMount,
        node: NodeId,
    },
}

/// Why gpulint thinks a service runs on GPUs, and how many.
#[derive(Debug, Clone, Default)]
pub struct GpuIntent {
    pub vendor: Option<Vendor>,
    /// Hard evidence that the container gets GPUs: (what, where).
    pub reserved: Option<String>,
    pub count: Option<Gpus>,
    /// A distributed launcher (`torchrun`, `deepspeed`, ...) in the command.
    pub launcher: Option<&'static str>,
    /// Processes or tensor-parallel ranks per container, from the command line.
    pub parallelism: Option<u64>,
    pub nccl_env: bool,
    pub rdma: bool,
}

impl GpuIntent {
    pub fn is_reserved(&self) -> bool {
        self.reserved.is_some()
    }

    /// Uses several GPUs in one container (so NCCL talks through `/dev/shm`).
    pub fn is_multi_gpu(&self) -> bool {
        self.count.is_some_and(Gpus::is_multi) || self.parallelism.is_some_and(|p| p >= 2)
    }

    pub fn is_distributed(&self) -> bool {
        self.launcher.is_some() || self.nccl_env
    }

    /// A short reason for messages: "reserves all GPUs", "runs torchrun".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.count {
            Some(Gpus::All) if self.reserved.is_some() => {
                parts.push("reserves all GPUs".to_string())
            }
            Some(Gpus::Count(n)) if self.reserved.is_some() => {
                parts.push(format!("reserves {n} GPU{}", if n == 1 { "" } else { "s" }))
            }
            _ if self.reserved.is_some() => parts.push("reserves GPUs".to_string()),
            _ => {}
        }
        if let Some(launcher) = self.launcher {
            match self.parallelism {
                Some(n) => parts.push(format!("launches {n} ranks with `{launcher}`")),
                None => parts.push(format!("launches with `{launcher}`")),
            }
        } else if let Some(n) = self.parallelism.filter(|&n| n >= 2) {
            parts.push(format!("runs {n}-way tensor parallel"))
        }
        if self.nccl_env && self.launcher.is_none() {
            parts.push("sets NCCL variables".to_string());
        }
        parts.join(" and ")
    }
}

impl<'y> ComposeFile<'y> {
    /// Reads the services of one compose document, interpolated with its
    /// project's variables `vars` (`None`: no `.env`). Returns `None` when
    /// the document is not a mapping.
    pub fn from_document(
        yaml: &'y Yaml,
        root: NodeId,
        vars: Option<&Variables>,
    ) -> Option<ComposeFile<'y>> {
        if !yaml.is_mapping(root) {
            return None;
        }
        let mut services = Vec::new();
        if let Some(entry) = yaml.get(root, "services") {
            for e in yaml.entries(entry.value) {
                let Some(name) = yaml.str(e.key) else {
                    continue;
                };
                if !yaml.is_mapping(e.value) {
                    continue;
                }
                services.push(Service::read(yaml, name.to_string(), e.key, e.value, vars));
            }
        }
        Some(ComposeFile {
            yaml,
            root,
            services,
            included: Vec::new(),
            include_error: None,
        })
    }

    /// Decides which services building on a CUDA or ROCm image count as GPU
    /// services: all of them when no service of the file reserves GPUs (the
    /// project relies on the daemon's default runtime), none when some do.
    /// A project that reserves GPUs for its model worker and not for the
    /// controller built from the same image runs the controller without
    /// GPUs (FastChat's compose file).
    pub fn settle_build_evidence(&mut self) {
        let any_reserved = self.services.iter().any(|s| s.gpu.is_reserved());
        for service in &mut self.services {
            service.gpu_from_build = !any_reserved
                && service
                    .built_image
                    .as_ref()
                    .is_some_and(|b| b.base.accelerator().is_some());
        }
    }

    pub fn service(&self, name: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.name == name)
    }
}

fn scalar(yaml: &Yaml, map: NodeId, key: &str) -> Option<Spanned<String>> {
    let e = yaml.get(map, key)?;
    if yaml.is_null(e.value) {
        return None;
    }
    Some(Spanned {
        value: yaml.str(e.value)?.to_string(),
        node: e.value,
        key: Some(e.key),
    })
}

/// A list of strings (or one string), each interpolated as Compose does;
/// a value that depends on an unknown variable stays as written.
fn string_list(yaml: &Yaml, node: NodeId, vars: Option<&Variables>) -> Vec<String> {
    let known = |t: &str| interpolated(t, vars).unwrap_or_else(|| t.to_string());
    match yaml.value(node) {
        Value::Sequence(items) => items
            .iter()
            .filter_map(|&i| yaml.str(i).map(known))
            .collect(),
        Value::Scalar { text, .. } => vec![known(text)],
        _ => Vec::new(),
    }
}

/// [`scalar`], interpolated as Compose does (as written when it depends on
/// an unknown variable).
fn scalar_interpolated(
    yaml: &Yaml,
    map: NodeId,
    key: &str,
    vars: Option<&Variables>,
) -> Option<Spanned<String>> {
    scalar(yaml, map, key).map(|s| Spanned {
        value: interpolated(&s.value, vars).unwrap_or(s.value),
        ..s
    })
}

/// The value the project's `.env` gives `name` (`- NAME` in `environment:`).
fn lookup(vars: Option<&Variables>, name: &str) -> Option<String> {
    vars?.get(name).map(str::to_string)
}

fn interpolated(text: &str, vars: Option<&Variables>) -> Option<String> {
    match interpolate(text, vars) {
        Interpolated::Text(t) => Some(t),
        _ => None,
    }
}

impl Service {
    fn read(
        yaml: &Yaml,
        name: String,
        key: NodeId,
        map: NodeId,
        vars: Option<&Variables>,
    ) -> Service {
        let image = scalar(yaml, map, "image");
        let shm_size = size_entry(yaml, map, "shm_size", vars);
        let build_shm_size = yaml
            .get(map, "build")
            .filter(|b| yaml.is_mapping(b.value))
            .and_then(|b| size_entry(yaml, b.value, "shm_size", vars));
        let ipc = scalar(yaml, map, "ipc").map(|s| Spanned {
            value: IpcMode::parse(&s.value, vars),
            node: s.node,
            key: s.key,
        });
        let shm_mounts = read_shm_mounts(yaml, map, vars);
        let environment = read_environment(yaml, map, vars);
        let (command_line, command_node) = read_command(yaml, map, vars);
        let (device_requests, devices_key) = read_device_requests(yaml, map, vars);
        let gpus = yaml.get(map, "gpus").map(|e| Spanned {
            value: read_gpus_count(yaml, e.value, vars),
            node: e.value,
            key: Some(e.key),
        });
        let runtime = scalar_interpolated(yaml, map, "runtime", vars);
        let devices = yaml
            .get(map, "devices")
            .map(|e| {
                yaml.items(e.value)
                    .iter()
                    .filter_map(|&i| {
                        let text = yaml
                            .str(i)
                            .map(|t| interpolated(t, vars).unwrap_or_else(|| t.to_string()))
                            .or_else(|| {
                                // Long syntax: {source: /dev/nvidia0, target: ...}
                                scalar_interpolated(yaml, i, "source", vars).map(|s| s.value)
                            })?;
                        Some(Spanned {
                            value: text,
                            node: i,
                            key: None,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ulimits = read_ulimits(yaml, map, vars);
        let misplaced_gpu_resources = read_misplaced_resources(yaml, map);
        let cap_add = yaml
            .get(map, "cap_add")
            .map(|e| string_list(yaml, e.value, vars))
            .unwrap_or_default();

        let mut service = Service {
            name,
            key,
            map,
            image,
            shm_size,
            build_shm_size,
            ipc,
            shm_mounts,
            environment,
            command_line,
            command_node,
            device_requests,
            devices_key,
            gpus,
            runtime,
            devices,
            ulimits,
            misplaced_gpu_resources,
            cap_add,
            shm_decision: ShmDecision::Default,
            gpu: GpuIntent::default(),
            build: read_build(yaml, map, vars),
            built_image: None,
            project: None,
            gpu_from_build: false,
            extends: read_extends(yaml, map, vars),
            merge_tags: read_merge_tags(yaml, map),
            inherited: Default::default(),
            env_files: read_env_files(yaml, map, vars),
            profiles: yaml
                .get(map, "profiles")
                .map(|e| string_list(yaml, e.value, vars))
                .unwrap_or_default(),
        };
        service.shm_decision = service.compute_shm_decision();
        service.gpu = service.compute_gpu_intent();
        service
    }

    /// Evidence in this service's own settings that it runs on GPUs: a
    /// reservation, a GPU resource written in the wrong place, a
    /// distributed launcher, NCCL settings, or an image built on a CUDA or
    /// ROCm base. A pulled CUDA image alone is not enough (`-gpu` tags also
    /// run TensorBoard and CPU tools); building on one is what GPU projects do.
    pub fn own_gpu_evidence(&self) -> bool {
        self.gpu.is_reserved()
            || !self.misplaced_gpu_resources.is_empty()
            || self.gpu.is_distributed()
            || self.builds_gpu_image()
    }

    /// The service runs on GPUs, by its own settings or, in a compose project
    /// with override files, by another file's settings for it.
    pub fn is_gpu_workload(&self) -> bool {
        self.own_gpu_evidence()
            || self
                .project
                .as_ref()
                .is_some_and(|p| p.gpu_elsewhere.is_some())
    }

    /// The service builds its image on a CUDA or ROCm base, and that makes
    /// it a GPU service.
    pub fn builds_gpu_image(&self) -> bool {
        self.gpu_from_build
    }

    /// The image the service builds, when that makes it a GPU service.
    pub fn gpu_build(&self) -> Option<&BuiltImage> {
        self.built_image.as_deref().filter(|_| self.gpu_from_build)
    }

    /// The key is tagged `!reset` here: earlier definitions' value is dropped.
    pub fn resets(&self, key: &str) -> bool {
        self.merge_tags
            .iter()
            .any(|(k, t)| k == key && *t == MergeTag::Reset)
    }

    /// The key is tagged `!override` here: it replaces earlier definitions'
    /// value instead of merging with it.
    pub fn overrides(&self, key: &str) -> bool {
        self.merge_tags
            .iter()
            .any(|(k, t)| k == key && *t == MergeTag::Override)
    }

    /// This definition resets or overrides `deploy` down to its device
    /// reservations: those of earlier definitions are dropped.
    pub fn resets_device_reservations(&self) -> bool {
        [
            "deploy",
            "deploy.resources",
            "deploy.resources.reservations",
            "deploy.resources.reservations.devices",
        ]
        .iter()
        .any(|k| self.resets(k) || self.overrides(k))
    }

    /// Its GPUs come from `deploy` device reservations only (not `gpus:`,
    /// a device or a runtime), which a later reset drops.
    pub fn reserves_only_by_deploy_devices(&self) -> bool {
        self.gpu.is_reserved()
            && self.gpus.is_none()
            && self.runtime.is_none()
            && self.devices.is_empty()
            && self.device_requests.iter().all(|r| !r.from_gpus_field)
    }

    /// Every ulimit this definition writes, by name.
    pub fn all_ulimits(&self) -> Vec<(String, super::container::Ulimit)> {
        let named = [
            ("memlock", self.ulimits.memlock.as_ref()),
            ("stack", self.ulimits.stack.as_ref()),
        ];
        let others = self
            .ulimits
            .others
            .iter()
            .map(|(name, limit)| (name.as_str(), Some(limit)));
        named
            .into_iter()
            .chain(others)
            .filter_map(|(name, limit)| {
                let limit = limit?;
                Some((
                    name.to_string(),
                    super::container::Ulimit {
                        soft: limit.soft,
                        hard: limit.hard,
                    },
                ))
            })
            .collect()
    }

    /// The ulimit the container gets for `name`, as the merged project
    /// decides it: `Err` with where, when another definition decides it
    /// (`Err((None, _))`: removed there), `Ok` with this definition's own.
    #[allow(clippy::type_complexity)]
    pub fn ulimit_decision(
        &self,
        name: &str,
    ) -> Result<Option<&Ulimit>, (Option<super::container::Ulimit>, &Origin)> {
        if let Some((limit, origin)) = self.inherited.ulimits.get(name) {
            return Err((*limit, origin));
        }
        Ok(match name {
            "memlock" => self.ulimits.memlock.as_ref(),
            "stack" => self.ulimits.stack.as_ref(),
            _ => self
                .ulimits
                .others
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l),
        })
    }

    /// The IPC mode as the project merges it: another definition's (an
    /// override, an extended base) when it decides, else this one's.
    pub fn merged_ipc(&self) -> Option<&IpcMode> {
        match &self.inherited.ipc {
            Some((mode, _)) => Some(mode),
            None => self.ipc.as_ref().map(|i| &i.value),
        }
    }

    pub fn env(&self, name: &str) -> Option<&EnvVar> {
        self.environment.iter().rev().find(|e| e.name == name)
    }

    fn compute_shm_decision(&self) -> ShmDecision {
        if let Some(mount) = self.shm_mounts.last() {
            return ShmDecision::Mount {
                mount: mount.value.clone(),
                node: mount.node,
            };
        }
        if let Some(ipc) = &self.ipc {
            match &ipc.value {
                IpcMode::Host => return ShmDecision::Host { node: ipc.node },
                IpcMode::None => return ShmDecision::Missing { node: ipc.node },
                IpcMode::Service(d) | IpcMode::Container(d) => {
                    return ShmDecision::Donor {
                        donor: d.clone(),
                        node: ipc.node,
                    };
                }
                IpcMode::Unknown(_) | IpcMode::Invalid(_) => {
                    return ShmDecision::Unknown { node: ipc.node };
                }
                IpcMode::Private | IpcMode::Shareable => {}
            }
        }
        self.size_decision()
    }

    /// What `shm_size` alone gives (the default without one).
    pub fn size_decision(&self) -> ShmDecision {
        match &self.shm_size {
            None => ShmDecision::Default,
            Some(s) => match s.value {
                SizeValue::Bytes { bytes: 0, .. } | SizeValue::Dropped { .. } => {
                    ShmDecision::Default
                }
                SizeValue::Bytes { bytes, .. } => ShmDecision::Sized {
                    bytes,
                    node: s.node,
                },
                _ => ShmDecision::Unknown { node: s.node },
            },
        }
    }

    pub(crate) fn compute_gpu_intent(&self) -> GpuIntent {
        let mut gpu = GpuIntent::default();
        let mut count: Option<Gpus> = None;
        let mut reserve =
            |gpu: &mut GpuIntent, vendor: Vendor, what: String, _: NodeId, c: Gpus| {
                if gpu.reserved.is_none() {
                    gpu.reserved = Some(what);
                }
                if gpu.vendor.is_none() || vendor == Vendor::Nvidia {
                    gpu.vendor = Some(vendor);
                }
                count = Some(count.map_or(c, |old| old.combine(c)));
            };

        for request in &self.device_requests {
            let vendor = request.vendor();
            if vendor == Vendor::Other && request.driver.as_ref().is_some_and(|d| d.value != "cdi")
            {
                continue;
            }
            let what = if request.from_gpus_field {
                "`gpus:`".to_string()
            } else {
                "a device reservation".to_string()
            };
            reserve(&mut gpu, vendor, what, request.node, request.gpu_count());
        }
        // `gpus: all` / `gpus: 2` (the list form was read as device requests).
        if let Some(gpus) = &self.gpus
            && self.device_requests.iter().all(|r| !r.from_gpus_field)
        {
            reserve(
                &mut gpu,
                Vendor::Nvidia,
                "`gpus:`".into(),
                gpus.node,
                gpus.value,
            );
        }
        for device in &self.devices {
            let d = device.value.as_str();
            let host = d.split(':').next().unwrap_or(d);
            if let Some(rest) = d.strip_prefix("nvidia.com/gpu=") {
                let c = if rest == "all" {
                    Gpus::All
                } else {
                    Gpus::Count(1)
                };
                reserve(
                    &mut gpu,
                    Vendor::Nvidia,
                    format!("the CDI device `{d}`"),
                    device.node,
                    c,
                );
            } else if d.starts_with("amd.com/gpu=") {
                reserve(
                    &mut gpu,
                    Vendor::Amd,
                    format!("the CDI device `{d}`"),
                    device.node,
                    Gpus::Unknown,
                );
            } else if host.starts_with("/dev/nvidia")
                && host["/dev/nvidia".len()..]
                    .chars()
                    .all(|c| c.is_ascii_digit())
                && host.len() > "/dev/nvidia".len()
            {
                reserve(
                    &mut gpu,
                    Vendor::Nvidia,
                    format!("the device `{host}`"),
                    device.node,
                    Gpus::Count(1),
                );
            } else if host == "/dev/kfd" {
                reserve(
                    &mut gpu,
                    Vendor::Amd,
                    "the ROCm device `/dev/kfd`".into(),
                    device.node,
                    Gpus::Unknown,
                );
            } else if host.starts_with("/dev/infiniband") {
                gpu.rdma = true;
            }
        }
        if let Some(runtime) = &self.runtime {
            let visible = self.env("NVIDIA_VISIBLE_DEVICES").map(|e| e.value.clone());
            match runtime.value.as_str() {
                "nvidia" => {
                    let disabled = matches!(&visible, Some(Some(v)) if matches!(v.as_str(), "void" | "none" | ""));
                    if !disabled {
                        let c = match &visible {
                            Some(Some(v)) if v == "all" => Gpus::All,
                            Some(Some(v)) => Gpus::Count(v.split(',').count() as u64),
                            _ => Gpus::Unknown,
                        };
                        reserve(
                            &mut gpu,
                            Vendor::Nvidia,
                            "`runtime: nvidia`".into(),
                            runtime.node,
                            c,
                        );
                    }
                }
                "amd" => reserve(
                    &mut gpu,
                    Vendor::Amd,
                    "`runtime: amd`".into(),
                    runtime.node,
                    Gpus::Unknown,
                ),
                _ => {}
            }
        }
        gpu.count = count;

        for env in &self.environment {
            let name = env.name.as_str();
            if name.starts_with("NCCL_") || name.starts_with("TORCH_NCCL_") {
                gpu.nccl_env = true;
            }
            if selects_rdma(name, env.value.as_deref()) {
                gpu.rdma = true;
            }
        }
        let (launcher, parallelism) = detect_launcher(&self.command_line);
        gpu.launcher = launcher;
        gpu.parallelism = parallelism;
        gpu
    }
}

fn read_extends(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Option<Extends> {
    let entry = yaml.get(map, "extends")?;
    let known = |node: NodeId| {
        yaml.str(node)
            .map(|t| interpolated(t, vars).unwrap_or_else(|| t.to_string()))
    };
    let (service, file) = if yaml.is_mapping(entry.value) {
        (
            yaml.get(entry.value, "service")
                .and_then(|e| known(e.value))?,
            yaml.get(entry.value, "file").and_then(|e| known(e.value)),
        )
    } else {
        (known(entry.value)?, None)
    };
    Some(Extends {
        service,
        file,
        key: entry.key,
    })
}

/// `env_file: a.env`, `[a.env, b.env]` or `[{path: a.env, required: false}]`.
fn read_env_files(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Vec<(String, bool)> {
    let Some(entry) = yaml.get(map, "env_file") else {
        return Vec::new();
    };
    let known = |t: &str| interpolated(t, vars).unwrap_or_else(|| t.to_string());
    let items: Vec<NodeId> = match yaml.value(entry.value) {
        Value::Sequence(items) => items.clone(),
        _ => vec![entry.value],
    };
    items
        .into_iter()
        .filter_map(|item| {
            if let Some(text) = yaml.str(item) {
                return Some((known(text), true));
            }
            let path = scalar(yaml, item, "path")?;
            let required = scalar(yaml, item, "required").is_none_or(|r| r.value != "false");
            Some((known(&path.value), required))
        })
        .collect()
}

/// The service's keys tagged `!reset` or `!override`, and those on the
/// way to its device reservations (`deploy.resources.reservations.devices`),
/// by dotted path.
fn read_merge_tags(yaml: &Yaml, map: NodeId) -> Vec<(String, MergeTag)> {
    let mut tags = Vec::new();
    collect_merge_tags(yaml, map, "", &mut tags);
    tags
}

fn collect_merge_tags(yaml: &Yaml, map: NodeId, prefix: &str, out: &mut Vec<(String, MergeTag)>) {
    for e in yaml.entries_with_resets(map) {
        let Some(key) = yaml.str(e.key) else { continue };
        let path = if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        };
        match yaml.node(e.value).tag.as_deref() {
            Some("!reset") => out.push((path.clone(), MergeTag::Reset)),
            Some("!override") => out.push((path.clone(), MergeTag::Override)),
            _ => {}
        }
        if matches!(
            path.as_str(),
            "deploy" | "deploy.resources" | "deploy.resources.reservations"
        ) && yaml.is_mapping(e.value)
        {
            collect_merge_tags(yaml, e.value, &path, out);
        }
    }
}

fn read_build(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Option<BuildSpec> {
    let entry = yaml.get(map, "build")?;
    let known = |node: NodeId| yaml.str(node).and_then(|t| interpolated(t, vars));
    let mut spec = BuildSpec {
        key: Some(entry.key),
        ..BuildSpec::default()
    };
    if yaml.is_mapping(entry.value) {
        let field = |key: &str| yaml.get(entry.value, key).and_then(|e| known(e.value));
        spec.context = field("context");
        spec.dockerfile = field("dockerfile");
        spec.target = field("target");
        spec.dockerfile_inline = scalar(yaml, entry.value, "dockerfile_inline");
        if let Some(args) = yaml.get(entry.value, "args") {
            match yaml.value(args.value) {
                Value::Mapping(_) => {
                    for e in yaml.entries(args.value) {
                        if let (Some(k), Some(v)) = (yaml.str(e.key), known(e.value)) {
                            spec.args.insert(k.to_string(), v);
                        }
                    }
                }
                Value::Sequence(items) => {
                    for &item in items {
                        if let Some((k, v)) = known(item).as_deref().and_then(|t| t.split_once('='))
                        {
                            spec.args.insert(k.to_string(), v.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
    } else {
        spec.context = known(entry.value);
    }
    Some(spec)
}

fn size_entry(
    yaml: &Yaml,
    map: NodeId,
    key: &str,
    vars: Option<&Variables>,
) -> Option<Spanned<SizeValue>> {
    let e = yaml.get(map, key)?;
    if yaml.is_null(e.value) {
        return None;
    }
    let value = match yaml.value(e.value) {
        Value::Scalar { text, .. } => super::size::parse_compose_yaml_size(
            text,
            yaml.is_plain(e.value),
            yaml.node(e.value).tag.as_deref(),
            vars,
        ),
        _ => SizeValue::Invalid {
            text: String::new(),
            reason: "expected a size such as \"8gb\", not a list or mapping".into(),
        },
    };
    Some(Spanned {
        value,
        node: e.value,
        key: Some(e.key),
    })
}

fn is_dev_shm(target: &str) -> bool {
    let t = target.trim_end_matches('/');
    t == "/dev/shm"
}

fn read_shm_mounts(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Vec<Spanned<ShmMount>> {
    let mut mounts = Vec::new();
    if let Some(volumes) = yaml.get(map, "volumes") {
        for &item in yaml.items(volumes.value) {
            if let Some(text) = yaml.str(item) {
                let text = interpolated(text, vars).unwrap_or_else(|| text.to_string());
                let parts: Vec<&str> = text.split(':').collect();
                // `/dev/shm` alone is an anonymous volume there: disk, like a named one.
                if parts.len() == 1 && is_dev_shm(parts[0]) {
                    mounts.push(Spanned {
                        value: ShmMount::Volume,
                        node: item,
                        key: None,
                    });
                } else if parts.len() >= 2 && is_dev_shm(parts[1]) {
                    let mount = if is_dev_shm(parts[0]) {
                        ShmMount::HostBind
                    } else {
                        ShmMount::Volume
                    };
                    mounts.push(Spanned {
                        value: mount,
                        node: item,
                        key: None,
                    });
                }
            } else if yaml.is_mapping(item) {
                let target = scalar_interpolated(yaml, item, "target", vars).map(|t| t.value);
                if !target.as_deref().is_some_and(is_dev_shm) {
                    continue;
                }
                let kind = scalar_interpolated(yaml, item, "type", vars).map(|t| t.value);
                let mount = match kind.as_deref() {
                    Some("tmpfs") => {
                        let size = yaml
                            .get_path(item, &["tmpfs", "size"])
                            .and_then(|e| yaml.str(e.value))
                            .map(|size| parse_compose_size_with(size, vars));
                        ShmMount::Tmpfs(size)
                    }
                    _ => {
                        let source =
                            scalar_interpolated(yaml, item, "source", vars).map(|s| s.value);
                        if source.as_deref().is_some_and(is_dev_shm) {
                            ShmMount::HostBind
                        } else {
                            ShmMount::Volume
                        }
                    }
                };
                mounts.push(Spanned {
                    value: mount,
                    node: item,
                    key: None,
                });
            }
        }
    }
    if let Some(tmpfs) = yaml.get(map, "tmpfs") {
        let items: Vec<NodeId> = match yaml.value(tmpfs.value) {
            Value::Sequence(items) => items.clone(),
            _ => vec![tmpfs.value],
        };
        for item in items {
            let Some(text) = yaml.str(item) else { continue };
            let text = interpolated(text, vars).unwrap_or_else(|| text.to_string());
            let (target, options) = text.split_once(':').unwrap_or((&text, ""));
            if !is_dev_shm(target) {
                continue;
            }
            let size = tmpfs_size_option(options).map(|size| parse_tmpfs_size_option(size, vars));
            mounts.push(Spanned {
                value: ShmMount::Tmpfs(size),
                node: item,
                key: None,
            });
        }
    }
    mounts
}

fn read_environment(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Vec<EnvVar> {
    let Some(env) = yaml.get(map, "environment") else {
        return Vec::new();
    };
    let mut env_vars = Vec::new();
    match yaml.value(env.value) {
        Value::Sequence(items) => {
            for &item in items {
                let Some(text) = yaml.str(item) else { continue };
                let (name, value) = match text.split_once('=') {
                    Some((n, v)) => (n, interpolated(v, vars)),
                    // `- NAME` takes the value from the project's
                    // environment (its `.env`, here).
                    None => (text, lookup(vars, text.trim())),
                };
                env_vars.push(EnvVar {
                    name: name.trim().to_string(),
                    value,
                    node: item,
                    range: yaml.range(item),
                });
            }
        }
        Value::Mapping(_) => {
            for e in yaml.entries(env.value) {
                let Some(name) = yaml.str(e.key) else {
                    continue;
                };
                let value = if yaml.is_null(e.value) {
                    lookup(vars, name)
                } else {
                    yaml.str(e.value).and_then(|t| interpolated(t, vars))
                };
                env_vars.push(EnvVar {
                    name: name.to_string(),
                    value,
                    node: e.key,
                    range: yaml.range(e.key).cover(yaml.range(e.value)),
                });
            }
        }
        _ => {}
    }
    env_vars
}

fn read_command(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> (String, Option<NodeId>) {
    let mut line = String::new();
    let mut node = None;
    for key in ["entrypoint", "command"] {
        if let Some(e) = yaml.get(map, key) {
            let parts = string_list(yaml, e.value, vars);
            if !parts.is_empty() {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&parts.join(" "));
                node = Some(e.value);
            }
        }
    }
    (line, node)
}

fn read_device_requests(
    yaml: &Yaml,
    map: NodeId,
    vars: Option<&Variables>,
) -> (Vec<DeviceRequest>, Option<NodeId>) {
    let mut requests = Vec::new();
    let devices = yaml.get_path(map, &["deploy", "resources", "reservations", "devices"]);
    if let Some(devices) = devices {
        for &item in yaml.items(devices.value) {
            if yaml.is_mapping(item) {
                requests.push(read_device_request(yaml, item, false, vars));
            }
        }
    }
    if let Some(gpus) = yaml.get(map, "gpus") {
        for &item in yaml.items(gpus.value) {
            if yaml.is_mapping(item) {
                requests.push(read_device_request(yaml, item, true, vars));
            }
        }
    }
    (requests, devices.map(|d| d.key))
}

fn read_device_request(
    yaml: &Yaml,
    item: NodeId,
    from_gpus_field: bool,
    vars: Option<&Variables>,
) -> DeviceRequest {
    let list = |key: &str| {
        yaml.get(item, key).map(|e| Spanned {
            value: string_list(yaml, e.value, vars),
            node: e.value,
            key: Some(e.key),
        })
    };
    DeviceRequest {
        node: item,
        driver: scalar_interpolated(yaml, item, "driver", vars),
        count: scalar(yaml, item, "count").map(|c| Spanned {
            value: interpolated(&c.value, vars).unwrap_or(c.value),
            ..c
        }),
        device_ids: list("device_ids"),
        capabilities: list("capabilities"),
        from_gpus_field,
    }
}

fn read_gpus_count(yaml: &Yaml, node: NodeId, vars: Option<&Variables>) -> Gpus {
    match yaml.value(node) {
        Value::Scalar { text, .. } => match interpolated(text, vars).as_deref() {
            Some("all") => Gpus::All,
            Some(text) => text.parse().map_or(Gpus::Unknown, Gpus::Count),
            None => Gpus::Unknown,
        },
        Value::Sequence(items) => items
            .iter()
            .map(|&i| read_device_request(yaml, i, true, vars).gpu_count())
            .fold(Gpus::Count(0), Gpus::combine),
        _ => Gpus::Unknown,
    }
}

fn read_ulimits(yaml: &Yaml, map: NodeId, vars: Option<&Variables>) -> Ulimits {
    let Some(ulimits) = yaml.get(map, "ulimits") else {
        return Ulimits::default();
    };
    let read = |name: &str| {
        let e = yaml.get(ulimits.value, name)?;
        let int = |node: NodeId| {
            yaml.str(node)
                .and_then(|t| interpolated(t, vars))
                .and_then(|s| s.trim().parse::<i64>().ok())
        };
        let (soft, hard) = if yaml.is_mapping(e.value) {
            (
                yaml.get(e.value, "soft").and_then(|s| int(s.value)),
                yaml.get(e.value, "hard").and_then(|h| int(h.value)),
            )
        } else {
            let v = int(e.value);
            (v, v)
        };
        Some(Ulimit {
            key: e.key,
            value_node: e.value,
            soft,
            hard,
        })
    };
    let others = yaml
        .entries(ulimits.value)
        .iter()
        .filter_map(|e| {
            let name = yaml.str(e.key)?;
            if matches!(name, "memlock" | "stack") {
                return None;
            }
            Some((name.to_string(), read(name)?))
        })
        .collect();
    Ulimits {
        node: Some(ulimits.key),
        memlock: read("memlock"),
        stack: read("stack"),
        others,
    }
}

fn read_misplaced_resources(yaml: &Yaml, map: NodeId) -> Vec<Spanned<String>> {
    let mut found = Vec::new();
    for section in ["reservations", "limits"] {
        let Some(e) = yaml.get_path(map, &["deploy", "resources", section]) else {
            continue;
        };
        if !yaml.is_mapping(e.value) {
            continue;
        }
        for entry in yaml.entries(e.value) {
            let Some(name) = yaml.str(entry.key) else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            if lower.contains('/')
                || lower == "gpu"
                || lower == "gpus"
                || lower.starts_with("nvidia")
            {
                found.push(Spanned {
                    value: name.to_string(),
                    node: entry.value,
                    key: Some(entry.key),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(src: &str, name: &str) -> Service {
        let yaml = Yaml::parse(src).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let file = ComposeFile::from_document(&yaml, root, None).unwrap();
        file.service(name).unwrap().clone()
    }

    #[test]
    fn device_ids_count_as_the_runtime_splits_them() {
        let count = |ids: &str| {
            let src = format!(
                "services:\n  s:\n    image: x\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - capabilities: [gpu]\n              device_ids: {ids}\n"
            );
            service(&src, "s").gpu.count
        };
        assert_eq!(count("['0', '1']"), Some(Gpus::Count(2)));
        // One string the engine passes on and the runtime splits.
        assert_eq!(count("['0,1,2,3']"), Some(Gpus::Count(4)));
        assert_eq!(count("['0,1', '1']"), Some(Gpus::Count(2)));
        assert_eq!(count("['GPU-6f1c']"), Some(Gpus::Count(1)));
        assert_eq!(count("['nvidia.com/gpu=all']"), Some(Gpus::All));
        assert_eq!(count("['${GPUS}']"), Some(Gpus::Unknown));
    }

    #[test]
    fn shm_decision_follows_engine_precedence() {
        let s = service("services:\n  a:\n    shm_size: 8g\n    ipc: host\n", "a");
        assert!(matches!(s.shm_decision, ShmDecision::Host { .. }));
        let s = service("services:\n  a:\n    shm_size: 0\n", "a");
        assert_eq!(s.shm_decision, ShmDecision::Default);
        let s = service(
            "services:\n  a:\n    ipc: shareable\n    tmpfs: /dev/shm:size=2g\n",
            "a",
        );
        assert!(matches!(
            s.shm_decision,
            ShmDecision::Mount { mount: ShmMount::Tmpfs(Some(SizeValue::Bytes { bytes, .. })), .. } if bytes == 2 * super::super::size::GIB
        ));
        let s = service(
            "services:\n  a:\n    volumes: [\"/dev/shm:/dev/shm\"]\n",
            "a",
        );
        assert!(matches!(
            s.shm_decision,
            ShmDecision::Mount {
                mount: ShmMount::HostBind,
                ..
            }
        ));
        // An anonymous volume, short or long form, is disk at /dev/shm.
        for volumes in [
            "[\"/dev/shm\"]",
            "[\"/dev/shm/\"]",
            "[{type: volume, target: /dev/shm}]",
        ] {
            let s = service(
                &format!("services:\n  a:\n    shm_size: 8g\n    volumes: {volumes}\n"),
                "a",
            );
            assert!(
                matches!(
                    s.shm_decision,
                    ShmDecision::Mount {
                        mount: ShmMount::Volume,
                        ..
                    }
                ),
                "{volumes}: {:?}",
                s.shm_decision
            );
        }
        let s = service(
            "services:\n  a:\n    build:\n      context: .\n      shm_size: 8g\n",
            "a",
        );
        assert_eq!(s.shm_decision, ShmDecision::Default);
        assert!(s.build_shm_size.is_some());
        let s = service("services:\n  a:\n    shm_size: ${SHM}\n", "a");
        assert!(matches!(s.shm_decision, ShmDecision::Unknown { .. }));
    }

    #[test]
    fn gpu_intent_from_every_source() {
        let s = service(
            "services:\n  a:\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - capabilities: [compute, utility]\n",
            "a",
        );
        assert_eq!(s.gpu.vendor, Some(Vendor::Nvidia));
        assert_eq!(s.gpu.count, Some(Gpus::All));
        let s = service("services:\n  a:\n    gpus: all\n", "a");
        assert!(s.gpu.is_reserved() && s.gpu.is_multi_gpu());
        let s = service(
            "services:\n  a:\n    devices: [\"nvidia.com/gpu=0\"]\n",
            "a",
        );
        assert_eq!(s.gpu.count, Some(Gpus::Count(1)));
        let s = service("services:\n  a:\n    devices: [/dev/kfd, /dev/dri]\n", "a");
        assert_eq!(s.gpu.vendor, Some(Vendor::Amd));
        let s = service(
            "services:\n  a:\n    runtime: nvidia\n    environment:\n      NVIDIA_VISIBLE_DEVICES: void\n",
            "a",
        );
        assert!(!s.gpu.is_reserved());
        let s = service(
            "services:\n  a:\n    command: torchrun --nproc_per_node=8 train.py\n",
            "a",
        );
        assert_eq!(
            (s.gpu.launcher, s.gpu.parallelism),
            (Some("torchrun"), Some(8))
        );
        let s = service(
            "services:\n  a:\n    command: [accelerate, launch, --num_processes, '4', t.py]\n",
            "a",
        );
        assert_eq!(
            (s.gpu.launcher, s.gpu.parallelism),
            (Some("accelerate launch"), Some(4))
        );
    }

    #[test]
    fn merges_and_overrides() {
        let src = "x-gpu: &gpu\n  deploy:\n    resources:\n      reservations:\n        devices:\n          - driver: nvidia\n            count: 2\n            capabilities: [gpu]\nservices:\n  a:\n    <<: *gpu\n  b:\n    <<: *gpu\n    deploy: {}\n";
        assert_eq!(service(src, "a").gpu.count, Some(Gpus::Count(2)));
        assert!(!service(src, "b").gpu.is_reserved());
    }
}
