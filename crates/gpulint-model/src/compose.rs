//! Compose services as Compose runs them, with their effective `/dev/shm`
//! and GPU intent.
//!
//! A service is read from its merged model (see `crate::project`): every
//! file of the project, the services it `extends` and what `include:`
//! brings already merged as Compose merges them, each value with the
//! [`Src`] (file and node) that wrote it. The semantics follow Docker
//! Engine and Docker Compose (see `shared/notes/domain.md` §1–3): a
//! `/dev/shm` mount wins over everything, then the `ipc` mode decides
//! whether `shm_size` applies at all, and `shm_size: 0` or no `shm_size`
//! means the daemon default of 64 MiB.

use super::container::Gpus;
use super::dockerfile::BuiltImage;
use super::size::{SizeValue, parse_tmpfs_size_option, tmpfs_size_option};
pub use super::workload::detect_launcher;
use super::workload::selects_rdma;
pub use crate::syntax::tree::Src;
use crate::syntax::tree::{Interpolated, Kind, Node};
use crate::text::TextRange;
use foldhash::HashMap;
use std::sync::Arc;

mod decide;
mod read;
use read::*;

/// A value as written, with where: its node, and the key of its entry
/// where it has one.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub node: Src,
    pub key: Option<Src>,
}

/// How a definition of a service came into the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// In one of the project's own files (`-f`, `COMPOSE_FILE`, an override).
    Project,
    /// A service it `extends` (in the same file or another).
    Extended,
    /// In a file `include:` brings in.
    Included,
}

/// One definition of a service, in merge order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The service's key there.
    pub key: Src,
    /// Its mapping there.
    pub map: Src,
    pub role: Role,
}

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    /// The service's key in its home definition: where findings about a
    /// setting it lacks are reported (see `crate::project`).
    pub key: Src,
    /// The home definition's mapping: where fixes add what it lacks.
    pub map: Src,
    /// Every definition merged into it, in Compose's merge order.
    pub definitions: Vec<Definition>,
    pub image: Option<Spanned<String>>,
    pub shm_size: Option<Spanned<SizeValue>>,
    pub build_shm_size: Option<Spanned<SizeValue>>,
    pub ipc: Option<Spanned<IpcMode>>,
    pub shm_mounts: Vec<Spanned<ShmMount>>,
    /// The container's environment: its `env_file`s, then `environment`
    /// (which wins), as Compose resolves them.
    pub environment: Vec<ComposeEnv>,
    /// `entrypoint` and `command` joined, as the container would run them.
    pub command_line: String,
    pub command_node: Option<Src>,
    /// `command` and `entrypoint` as merged, each with its value's node
    /// (`command` first: it is where parallel sizes are usually written).
    pub command_parts: Vec<(String, Src)>,
    pub device_requests: Vec<DeviceRequest>,
    /// The `deploy.resources.reservations.devices` entry's key, if written.
    pub devices_key: Option<Src>,
    /// What under `devices` is not a device request (the list written as
    /// a mapping, an item that is not a mapping): Compose refuses it.
    pub malformed_devices: Option<Src>,
    /// `gpus:` as Compose reads it (the GPUs its requests add up to).
    pub gpus: Option<Spanned<Gpus>>,
    pub runtime: Option<Spanned<String>>,
    pub devices: Vec<Spanned<String>>,
    pub ulimits: Ulimits,
    /// Keys such as `nvidia.com/gpu` written under `deploy.resources.{reservations,limits}`.
    pub misplaced_gpu_resources: Vec<Spanned<String>>,
    pub cap_add: Vec<String>,
    /// What the service's settings decide about `/dev/shm` (the container
    /// model's `Shm` is what the container gets, donors followed).
    pub shm_decision: ShmDecision,
    pub gpu: GpuIntent,
    /// `build:` as merged.
    pub build: Option<BuildSpec>,
    /// The image `build:` produces, when its Dockerfile could be read
    /// (attached by the project loader, which reads files).
    pub built_image: Option<Arc<BuiltImage>>,
    /// The image it builds makes it a GPU service (see [`settle_build_evidence`]).
    pub gpu_from_build: bool,
    /// `env_file:` entries (interpolated).
    pub env_files: Vec<EnvFileEntry>,
    /// `profiles:`: the service runs only with one of them enabled.
    pub profiles: Vec<String>,
    /// `depends_on:` (a list, or a mapping's keys): the services Compose
    /// starts with it.
    pub depends_on: Vec<String>,
    /// Settings a later definition removed or replaced (`!reset`,
    /// `!override`), by dotted path, with where that is written: a fix
    /// that adds the setting before it would be undone.
    pub resets: Vec<(String, Src)>,
    /// Why Compose or the engine would not create it (set by the loader
    /// for what the project decides: an `extends` it cannot resolve).
    pub refused: Option<String>,
}

/// One variable of a service's environment.
#[derive(Debug, Clone)]
pub struct ComposeEnv {
    pub name: String,
    /// The value after interpolation; `None` when unset or unknown.
    pub value: Option<String>,
    /// Where a finding about it goes: its `environment` item or entry, or,
    /// for a variable an `env_file` sets, the `env_file` entry naming it.
    pub at: Src,
    /// The key of a `KEY: value` entry, when `at` is its value.
    pub key: Option<Src>,
    /// For a variable from an `env_file`: the file (a project file index)
    /// and the line that sets it.
    pub from_file: Option<(u32, TextRange)>,
}

/// An `env_file:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvFileEntry {
    pub path: String,
    pub required: bool,
    pub node: Src,
}

/// A service's `build:` (the short form is a context path).
#[derive(Debug, Clone, Default)]
pub struct BuildSpec {
    pub context: Option<Spanned<String>>,
    pub dockerfile: Option<String>,
    pub dockerfile_inline: Option<Spanned<String>>,
    pub target: Option<String>,
    /// Build arguments whose values are known (interpolated with defaults).
    pub args: HashMap<String, String>,
    /// The `build` key.
    pub key: Option<Src>,
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
    fn read(node: &Node) -> IpcMode {
        let text = match node.interpolated() {
            Some(Interpolated::Text(t)) => t.as_str(),
            Some(Interpolated::Unknown(v)) => return IpcMode::Unknown(v.clone()),
            _ => return IpcMode::Invalid(node.raw().unwrap_or_default().to_string()),
        };
        match text {
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
    pub(crate) fn honours_shm_size(&self) -> bool {
        matches!(self, IpcMode::Private | IpcMode::Shareable)
    }

    /// The mode as `inspect` prints it.
    pub fn shown(&self) -> String {
        match self {
            IpcMode::Private => "private".to_string(),
            IpcMode::Shareable => "shareable".to_string(),
            IpcMode::Host => "host".to_string(),
            IpcMode::None => "none".to_string(),
            IpcMode::Service(s) => format!("service:{s}"),
            IpcMode::Container(s) => format!("container:{s}"),
            IpcMode::Unknown(v) => format!("${{{v}}}"),
            IpcMode::Invalid(v) => v.clone(),
        }
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
    /// A named volume whose local driver mounts a tmpfs
    /// (`driver_opts: {type: tmpfs, device: tmpfs, o: size=512m}`): its
    /// `o` option's size, `None` for no size (half the host RAM).
    VolumeTmpfs {
        volume: String,
        size: Option<SizeValue>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    Other,
}

/// One `deploy.resources.reservations.devices` (or `gpus`) item.
#[derive(Debug, Clone)]
pub struct DeviceRequest {
    pub node: Src,
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
    pub(crate) fn unmatched_capabilities(&self) -> Option<Vec<String>> {
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
    pub node: Option<Src>,
    pub memlock: Option<Ulimit>,
    pub stack: Option<Ulimit>,
    /// Every other ulimit (`nofile`, `nproc`, ...), by name: the engine
    /// gets them all.
    pub others: Vec<(String, Ulimit)>,
}

#[derive(Debug, Clone)]
pub struct Ulimit {
    pub key: Src,
    pub value_node: Src,
    /// Soft limit; `-1` is unlimited. `None` when not a number.
    pub soft: Option<i64>,
    pub hard: Option<i64>,
}

impl Ulimit {
    pub fn is_unlimited(&self) -> bool {
        self.soft == Some(-1) && self.hard.is_none_or(|h| h == -1)
    }
}

/// Which of the service's settings decides `/dev/shm`, and what it says:
/// the input of the container model's [`super::container::Shm`], which
/// `runtime` builds from it once `ipc: service:` donors are followed.
#[derive(Debug, Clone, PartialEq)]
pub enum ShmDecision {
    /// The daemon default (64 MiB): no usable `shm_size`, or `shm_size: 0`.
    Default,
    Sized {
        bytes: u64,
        node: Src,
    },
    /// Depends on an unset variable or an unreadable value.
    Unknown {
        node: Src,
    },
    /// `ipc: host`: the host's `/dev/shm`.
    Host {
        node: Src,
    },
    /// `ipc: service:X` or `container:X`: the donor's `/dev/shm`.
    Donor {
        donor: String,
        node: Src,
    },
    /// `ipc: none`: no `/dev/shm` at all.
    Missing {
        node: Src,
    },
    /// A mount at `/dev/shm` replaces the engine's.
    Mount {
        mount: ShmMount,
        node: Src,
    },
}

/// Why gpulint thinks a service runs on GPUs, and how many.
#[derive(Debug, Clone, Default)]
pub struct GpuIntent {
    pub vendor: Option<Vendor>,
    /// Hard evidence that the container gets GPUs: what, in words.
    pub reserved: Option<String>,
    /// Where that evidence is written.
    pub evidence: Option<Src>,
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
    #[cfg(test)] // only the tests ask
    pub(crate) fn is_multi_gpu(&self) -> bool {
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

/// Decides which services building on a CUDA or ROCm image count as GPU
/// services: all of them when no service of the project reserves GPUs
/// (the project relies on the daemon's default runtime), none when some
/// do. A project that reserves GPUs for its model worker and not for the
/// controller built from the same image runs the controller without GPUs
/// (FastChat's compose file).
pub fn settle_build_evidence(services: &mut [Service]) {
    let any_reserved = services.iter().any(|s| s.gpu.is_reserved());
    for service in services {
        service.gpu_from_build = !any_reserved
            && service
                .built_image
                .as_ref()
                .is_some_and(|b| b.base.accelerator().is_some());
    }
}

/// What reading a service needs besides its model: the project's
/// variables, for `KEY` written without a value.
pub struct Reading<'a> {
    /// The value the project's environment gives a variable.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The variables the service's `env_file`s set (already read), each
    /// reported at its `env_file` entry.
    pub from_env_files: Vec<ComposeEnv>,
    /// The project's top-level `volumes:`, which say what a named volume
    /// mounted at /dev/shm is.
    pub named_volumes: Option<&'a Node>,
}

/// A scalar's text: interpolated when its value is known, else as written.
fn text_of(node: &Node) -> Option<String> {
    match &node.kind {
        Kind::Scalar { raw, value, .. } => Some(match value {
            Interpolated::Text(t) => t.clone(),
            _ => raw.clone(),
        }),
        _ => None,
    }
}

fn scalar(map: &Node, key: &str) -> Option<Spanned<String>> {
    let entry = map.entry(key)?;
    if entry.value.is_null() {
        return None;
    }
    Some(Spanned {
        value: text_of(&entry.value)?,
        node: entry.value.src,
        key: Some(entry.key_src),
    })
}

/// A list of strings (or one string), each interpolated as Compose does;
/// a value that depends on an unknown variable stays as written.
fn string_list(node: &Node) -> Vec<String> {
    match &node.kind {
        Kind::Sequence(items) => items.iter().filter_map(|i| text_of(i)).collect(),
        Kind::Scalar { .. } if node.is_null() => Vec::new(),
        Kind::Scalar { .. } => text_of(node).into_iter().collect(),
        Kind::Mapping(_) => Vec::new(),
    }
}

/// `ipc:`, with where it is written.
fn read_ipc(map: &Node) -> Option<Spanned<IpcMode>> {
    map.entry("ipc")
        .filter(|e| !e.value.is_null())
        .map(|e| Spanned {
            value: IpcMode::read(&e.value),
            node: e.value.src,
            key: Some(e.key_src),
        })
}

/// The GPUs `gpus:` asks for, with where it is written.
fn read_gpus(map: &Node) -> Option<Spanned<Gpus>> {
    map.entry("gpus")
        .filter(|e| !e.value.is_null())
        .map(|e| Spanned {
            value: gpus_requests(&e.value)
                .iter()
                .map(DeviceRequest::gpu_count)
                .fold(Gpus::Count(0), Gpus::combine),
            node: e.value.src,
            key: Some(e.key_src),
        })
}

/// The host paths of `devices:`, in the short syntax or the long one
/// (`{source: /dev/nvidia0, target: ...}`).
fn read_devices(map: &Node) -> Vec<Spanned<String>> {
    map.get("devices")
        .map(|devices| {
            devices
                .items()
                .iter()
                .filter_map(|item| {
                    // Long syntax: {source: /dev/nvidia0, target: ...}
                    let text = text_of(item).or_else(|| {
                        item.is_mapping()
                            .then(|| item.get("source").and_then(|s| text_of(s)))
                            .flatten()
                    })?;
                    Some(Spanned {
                        value: text,
                        node: item.src,
                        key: None,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The services `depends_on` names, in its list or its mapping form.
fn read_depends_on(map: &Node) -> Vec<String> {
    map.get("depends_on")
        .map(|d| match &d.kind {
            Kind::Mapping(_) => d.entries().iter().map(|e| e.key.clone()).collect(),
            _ => string_list(d),
        })
        .unwrap_or_default()
}

impl Service {
    /// Reads a service from its merged model. `definitions` are its
    /// definitions in merge order, `home` the one findings about what it
    /// lacks are reported at.
    pub fn read(
        name: &str,
        map: &Node,
        definitions: Vec<Definition>,
        home: usize,
        reading: Reading,
    ) -> Service {
        let home_definition = definitions.get(home).cloned().unwrap_or(Definition {
            key: map.src,
            map: map.src,
            role: Role::Project,
        });
        let shm_size = size_entry(map, "shm_size");
        let build_shm_size = map
            .get("build")
            .filter(|b| b.is_mapping())
            .and_then(|b| size_entry(b, "shm_size"));
        let mut environment = reading.from_env_files;
        let own = read_environment(map, reading.env);
        // `environment` wins over every `env_file`.
        environment.retain(|v| !own.iter().any(|o| o.name == v.name));
        environment.extend(own);
        let (command_line, command_node) = read_command(map);
        let command_parts = ["command", "entrypoint"]
            .into_iter()
            .filter_map(|key| Some((key.to_string(), map.get(key).filter(|v| !v.is_null())?.src)))
            .collect();
        let (device_requests, devices_key, malformed_devices) = read_device_requests(map);
        let mut service = Service {
            name: name.to_string(),
            key: home_definition.key,
            map: home_definition.map,
            definitions,
            image: scalar(map, "image"),
            shm_size,
            build_shm_size,
            ipc: read_ipc(map),
            shm_mounts: read_shm_mounts(map, reading.named_volumes),
            environment,
            command_line,
            command_node,
            command_parts,
            device_requests,
            devices_key,
            malformed_devices,
            gpus: read_gpus(map),
            runtime: scalar(map, "runtime"),
            devices: read_devices(map),
            ulimits: read_ulimits(map),
            misplaced_gpu_resources: read_misplaced_resources(map),
            cap_add: map
                .get("cap_add")
                .map(|c| string_list(c))
                .unwrap_or_default(),
            shm_decision: ShmDecision::Default,
            gpu: GpuIntent::default(),
            build: read_build(map),
            built_image: None,
            gpu_from_build: false,
            env_files: read_env_files(map),
            profiles: map
                .get("profiles")
                .map(|p| string_list(p))
                .unwrap_or_default(),
            depends_on: read_depends_on(map),
            resets: Vec::new(),
            refused: None,
        };
        service.shm_decision = service.compute_shm_decision();
        service.gpu = service.compute_gpu_intent();
        service
    }

    /// Evidence in the service's settings that it runs on GPUs: a
    /// reservation, a GPU resource written in the wrong place, a
    /// distributed launcher, NCCL settings, or an image built on a CUDA or
    /// ROCm base. A pulled CUDA image alone is not enough (`-gpu` tags also
    /// run TensorBoard and CPU tools); building on one is what GPU projects do.
    pub fn is_gpu_workload(&self) -> bool {
        self.gpu.is_reserved()
            || !self.misplaced_gpu_resources.is_empty()
            || self.gpu.is_distributed()
            || self.builds_gpu_image()
    }

    /// The service builds its image on a CUDA or ROCm base, and that makes
    /// it a GPU service.
    pub(crate) fn builds_gpu_image(&self) -> bool {
        self.gpu_from_build
    }

    /// The image the service builds, when that makes it a GPU service.
    pub fn gpu_build(&self) -> Option<&BuiltImage> {
        self.built_image.as_deref().filter(|_| self.gpu_from_build)
    }

    /// The definition findings about what the service lacks go to.
    pub fn home(&self) -> Option<&Definition> {
        self.definitions.iter().find(|d| d.key == self.key)
    }

    /// A later definition removes or replaces `path` (`shm_size`,
    /// `deploy.resources`): where.
    pub fn reset_of(&self, path: &str) -> Option<Src> {
        self.resets
            .iter()
            .find(|(p, _)| p == path || path.starts_with(&format!("{p}.")))
            .map(|(_, at)| *at)
    }

    /// Every ulimit the service sets, by name.
    pub(crate) fn all_ulimits(&self) -> Vec<(String, super::container::Ulimit)> {
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

    /// The ulimit the container gets for `name`.
    pub fn ulimit(&self, name: &str) -> Option<&Ulimit> {
        match name {
            "memlock" => self.ulimits.memlock.as_ref(),
            "stack" => self.ulimits.stack.as_ref(),
            _ => self
                .ulimits
                .others
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l),
        }
    }

    /// The IPC mode Compose gives the container.
    pub fn ipc_mode(&self) -> Option<&IpcMode> {
        self.ipc.as_ref().map(|i| &i.value)
    }

    pub fn env(&self, name: &str) -> Option<&ComposeEnv> {
        self.environment.iter().rev().find(|e| e.name == name)
    }
}

/// A short-form volume's source names a volume (not a path) when it does
/// not start with `/`, `.` or `~` (a relative path without `./` is a name).
pub fn names_a_volume(source: &str) -> bool {
    !(source.is_empty() || source.starts_with(['/', '.', '~', '$']))
}

/// A key under `deploy.resources.reservations` or `limits` that names a
/// GPU as Kubernetes or Swarm would (`nvidia.com/gpu`, `gpus`): GPU011's.
pub fn is_gpu_resource_name(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower.contains('/') || lower == "gpu" || lower == "gpus" || lower.starts_with("nvidia")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::tree::{Budget, Builder};
    use crate::syntax::yaml::Yaml;

    fn service(src: &str, name: &str) -> Service {
        let yaml = Yaml::parse(src).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let keep = |t: &str| crate::variables::interpolate_alone(t);
        let tree = Builder::new(&yaml, 0, Budget::default(), &keep)
            .build(root)
            .unwrap();
        let map = tree.get_path(&["services", name]).unwrap();
        Service::read(
            name,
            map,
            Vec::new(),
            0,
            Reading {
                env: &|_| None,
                from_env_files: Vec::new(),
                named_volumes: tree.get("volumes").map(|v| &**v),
            },
        )
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
