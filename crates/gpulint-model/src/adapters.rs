//! The adapters that build the [container model](super::container) from
//! each platform's config, as Docker Compose and the engine, or the API
//! server and kubelet, would apply it.
//!
//! The rules read what these build (their contexts hold it), `gpulint
//! inspect` prints it, and the engine and run-time tests check it against
//! real containers (a tmpfs of exactly `shm.bytes` at `/dev/shm`, the
//! ulimits, the environment).

use super::compose::{IpcMode, Service, ShmDecision, ShmMount, Src};
use super::container::{
    ContainerRuntime, Gpus, Platform, Shm, ShmKind, ShmSetting, Ulimit, gpu_env,
};
use super::docker_run::DockerRun;
use super::k8s::{Manifest, PodSpec, ShmSource, VolumeSource};
use super::kserve::{self, KServe, Origin, Predictor, Selection, ServingRuntime};
use super::quantity::QuantityValue;
use super::script::Script;
use super::shm_need::{WorkloadFacts, classify};
use super::size::HumanBytes;
use super::workload::{detect_launcher, selects_rdma};
use crate::syntax::yaml::Yaml;
use crate::text::TextRange;
use foldhash::HashMap;
use std::collections::BTreeMap;

/// The containers of a compose project's services (after its files,
/// `extends`, `include` and builds were merged in). `range` says where a
/// node of the project is written, in its file.
pub fn compose_runtimes(
    services: &[Service],
    range: &dyn Fn(Src) -> TextRange,
    file_name: &dyn Fn(u32) -> String,
) -> Vec<ContainerRuntime> {
    let by_name: HashMap<&str, &Service> = services.iter().map(|s| (s.name.as_str(), s)).collect();
    services
        .iter()
        .map(|service| {
            let ulimits: BTreeMap<String, Ulimit> = service.all_ulimits().into_iter().collect();
            let ipc_mode = service.ipc_mode();
            let ipc = ipc_mode.map_or_else(|| "private".to_string(), IpcMode::shown);
            ContainerRuntime {
                platform: Platform::Compose,
                refused: service.refused.clone().or_else(|| ipc_mode
                    .and_then(|mode| match mode {
                        // Whatever else decides /dev/shm, the engine
                        // refuses the mode when it starts the container.
                        IpcMode::Invalid(v) => {
                            Some(format!("ipc {v:?}: the engine refuses it (`Invalid IPC mode`)"))
                        }
                        _ => None,
                    }))
                    .or_else(|| service.device_requests.iter().find_map(|r| {
                    if r.count.is_some() && r.device_ids.is_some() {
                        return Some(
                            "a device reservation sets both count and device_ids, which Compose rejects"
                                .to_string(),
                        );
                    }
                    r.unmatched_capabilities().map(|caps| {
                        format!(
                            "no device driver answers to capabilities [{}]: the engine fails to start it (`could not select device driver`)",
                            caps.join(", ")
                        )
                    })
                })),
                id: service.name.clone(),
                name: service.name.clone(),
                image: service.image.as_ref().map(|i| i.value.clone()),
                range: range(service.key),
                scope: range(service.key).cover(range(service.map)),
                file: service.key.file,
                gpu_workload: service.is_gpu_workload(),
                gpus: service.gpu.count,
                ranks: service.gpu.parallelism,
                launcher: service.gpu.launcher.map(str::to_string),
                workload: classify(&WorkloadFacts {
                    command: &service.command_line,
                    image: service.image.as_ref().map(|i| i.value.as_str()),
                    env: &|name| service.env(name).and_then(|v| v.value.clone()),
                    distributed_kind: false,
                }),
                shm: {
                    let mut shm = compose_shm(&by_name, service, range, 0);
                    // A setting another file of the project writes says where.
                    if shm.at.is_some() && shm.at_file != service.key.file {
                        shm.from = format!("{} in {}", shm.from, file_name(shm.at_file));
                    }
                    shm
                },
                ipc,
                ulimits,
                cap_add: service.cap_add.clone(),
                rdma: service.gpu.rdma,
                env: gpu_env(
                    service
                        .environment
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone())),
                ),
            }
        })
        .collect()
}

/// A compose service's `/dev/shm`, following `ipc: service:` to its donor
/// among `services`; `depth` bounds donor chains (a cycle is refused by the
/// engine).
fn compose_shm(
    services: &HashMap<&str, &Service>,
    service: &Service,
    range: &dyn Fn(Src) -> TextRange,
    depth: usize,
) -> Shm {
    let at = |node: Src| (Some(range(node)), node.file);
    let (shm, (written, file)) = match &service.shm_decision {
        ShmDecision::Default => match &service.shm_size {
            // `shm_size: 0`, or a value Compose drops: written, but the
            // default applies.
            Some(size) => (
                Shm::of_size(&size.value, "shm_size").decided_by(ShmSetting::Default, None),
                at(size.node),
            ),
            None => (Shm::default_of("Docker"), (None, 0)),
        },
        ShmDecision::Sized { node, .. } | ShmDecision::Unknown { node } => {
            let setting = match service.shm_decision {
                ShmDecision::Sized { .. } => ShmSetting::Size,
                _ => ShmSetting::Unresolved,
            };
            let ipc = service.ipc_mode();
            let shm = match &service.shm_size {
                Some(size) if ipc.is_none_or(|i| i.honours_shm_size()) => {
                    Shm::of_size(&size.value, "shm_size")
                }
                _ => match ipc {
                    Some(IpcMode::Invalid(v)) => Shm::new(
                        ShmKind::Refused,
                        None,
                        format!("ipc {v:?}: the engine refuses it"),
                    ),
                    _ => Shm::new(ShmKind::Unknown, None, "ipc depends on an unset variable"),
                },
            };
            (shm.decided_by(setting, None), at(*node))
        }
        ShmDecision::Host { node } => (
            Shm::new(ShmKind::Host, None, "ipc: host").decided_by(ShmSetting::Ipc, None),
            at(*node),
        ),
        ShmDecision::Missing { node } => (
            Shm::new(ShmKind::Missing, None, "ipc: none").decided_by(ShmSetting::Ipc, None),
            at(*node),
        ),
        ShmDecision::Mount { mount, node } => (
            match mount {
                ShmMount::HostBind => {
                    Shm::new(ShmKind::Host, None, "a bind of the host's /dev/shm")
                }
                ShmMount::Volume => Shm::new(ShmKind::Disk, None, "a volume mounted at /dev/shm"),
                ShmMount::Tmpfs(None) => {
                    Shm::new(ShmKind::Unbounded, None, "a tmpfs at /dev/shm with no size")
                }
                ShmMount::Tmpfs(Some(size)) => Shm::of_tmpfs_size(size, "tmpfs size"),
                ShmMount::VolumeTmpfs { volume, size: None } => Shm::new(
                    ShmKind::Unbounded,
                    None,
                    format!("the tmpfs of volume `{volume}`, with no size"),
                ),
                ShmMount::VolumeTmpfs {
                    volume,
                    size: Some(size),
                } => Shm::of_tmpfs_size(size, &format!("the tmpfs of volume `{volume}`")),
            }
            .decided_by(ShmSetting::Mount, None),
            at(*node),
        ),
        ShmDecision::Donor { donor, node } => (
            donor_shm(services, donor, range, depth).decided_by(ShmSetting::Donor, None),
            at(*node),
        ),
    };
    Shm {
        at: written,
        at_file: file,
        ..shm
    }
}

/// The `/dev/shm` a service gets from `ipc: service:donor`.
fn donor_shm(
    services: &HashMap<&str, &Service>,
    donor: &str,
    range: &dyn Fn(Src) -> TextRange,
    depth: usize,
) -> Shm {
    let Some(giver) = services.get(donor) else {
        return Shm::new(
            ShmKind::Unknown,
            None,
            format!("the IPC namespace of `{donor}`, which is not in this project"),
        );
    };
    if depth > 8 {
        return Shm::new(ShmKind::Refused, None, "a cycle of `ipc: service:`");
    }
    // A donor that itself joins another container's IPC namespace shares
    // that one: Compose starts it and the joiner sees the first donor's
    // /dev/shm.
    if let ShmDecision::Donor { .. } = giver.shm_decision {
        let shm = compose_shm(services, giver, range, depth + 1);
        return Shm {
            from: format!("`{donor}`'s /dev/shm ({})", shm.from),
            ..shm
        };
    }
    let shares = matches!(giver.ipc_mode(), Some(IpcMode::Shareable | IpcMode::Host));
    if !shares {
        return Shm::new(
            ShmKind::Refused,
            None,
            format!(
                "ipc: service:{donor}, which does not share its IPC namespace (\"non-shareable IPC\")"
            ),
        );
    }
    // A donor that mounts its own /dev/shm has no IPC /dev/shm for the
    // engine to share (moby: "non-shareable IPC").
    if matches!(giver.shm_decision, ShmDecision::Mount { .. }) {
        return Shm::new(
            ShmKind::Refused,
            None,
            format!(
                "ipc: service:{donor}, which mounts its own /dev/shm: the engine cannot share it (\"non-shareable IPC\")"
            ),
        );
    }
    let shm = compose_shm(services, giver, range, depth + 1);
    Shm {
        from: format!("`{donor}`'s /dev/shm ({})", shm.from),
        ..shm
    }
}

/// The containers of every pod spec in a manifest document (its index in
/// the file is `document`). KServe's InferenceService predictors and
/// ServingRuntimes are merged as KServe merges them, with the runtimes and
/// predictors of the file and its directory (`kserve`).
pub fn kubernetes_runtimes(
    manifest: &Manifest,
    document: usize,
    kserve: &KServe,
) -> Vec<ContainerRuntime> {
    let yaml = manifest.yaml;
    let mut out = Vec::new();
    for object in &manifest.objects {
        let object_name = format!("{}/{}", object.kind, object.name.as_deref().unwrap_or("-"));
        let runtime = object
            .name
            .as_deref()
            .and_then(|name| kserve.runtime_in(document, name));
        for pod in &object.pods {
            let model = kserve::model_ref(yaml, object, pod);
            for container in pod.app_containers() {
                // The predictors a runtime's model container serves, with
                // GPUs and no /dev/shm of their own.
                let served: Vec<&Predictor> = runtime
                    .filter(|_| container.name == kserve::MODEL_CONTAINER)
                    .map(|r| {
                        kserve
                            .predictors_of(r)
                            .filter(|p| {
                                p.container.gpu().is_some()
                                    && p.container.mount_at("/dev/shm").is_none()
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let selection = model.as_ref().map(|m| kserve.select(m));
                let merged = match &selection {
                    Some(Selection::Found(r)) => Some(kserve::merged_pod(pod, container, r)),
                    _ => None,
                };
                let (facts, command_line) = match (&merged, served.first()) {
                    (Some((_, merged, _)), _) => (merged, merged.command_line.clone()),
                    (None, Some(p)) => (
                        container,
                        format!("{} {}", container.command_line, p.container.command_line)
                            .trim()
                            .to_string(),
                    ),
                    (None, None) => (container, container.command_line.clone()),
                };
                let gpus = served_gpus(container, &served);
                let (launcher, parallelism) = detect_launcher(&command_line);
                let launcher = launcher
                    .map(str::to_string)
                    .or_else(|| pod.distributed.then(|| object.kind.clone()));
                let env = gpu_env(facts.env.iter().map(|v| (v.name.clone(), v.value.clone())));
                let rdma = facts
                    .env
                    .iter()
                    .any(|v| selects_rdma(&v.name, v.value.as_deref()))
                    || container.limits.iter().any(|r| r.name.starts_with("rdma/"));
                let shm = selected_shm(yaml, pod, container, &selection, &merged);
                out.push(ContainerRuntime {
                    platform: Platform::Kubernetes,
                    refused: kubernetes_refusal(container),
                    id: format!("{object_name}/{}/{}", pod.path.join("."), container.name),
                    name: container.name.clone(),
                    image: facts.image.clone(),
                    range: yaml.range(container.map),
                    // A predictor merged with a runtime of this file is one
                    // pod: findings about it may sit on either part.
                    scope: match &selection {
                        Some(Selection::Found(r)) if matches!(r.origin, Origin::Document(_)) => {
                            yaml.range(pod.map).cover(yaml.range(r.pod.map))
                        }
                        _ => yaml.range(pod.map),
                    },
                    file: 0,
                    gpu_workload: gpus.is_some(),
                    gpus,
                    ranks: parallelism,
                    launcher,
                    workload: classify(&WorkloadFacts {
                        command: &command_line,
                        image: facts.image.as_deref(),
                        env: &|name| facts.env(name).and_then(|v| v.value.clone()),
                        distributed_kind: pod.distributed,
                    }),
                    shm,
                    ipc: if pod.host_ipc.is_some() {
                        "host"
                    } else {
                        "private"
                    }
                    .to_string(),
                    ulimits: BTreeMap::new(),
                    cap_add: Vec::new(),
                    rdma,
                    env,
                });
            }
        }
    }
    out
}

/// The GPUs a container gets: its own limit, else the most that a
/// predictor it serves asks for.
fn served_gpus(container: &super::k8s::Container, served: &[&Predictor]) -> Option<Gpus> {
    let count = |n: Option<i64>| n.map_or(Gpus::Unknown, |n| Gpus::Count(n.max(0) as u64));
    match container.gpu() {
        Some(g) => Some(count(g.count)),
        None => served
            .iter()
            .filter_map(|p| p.container.gpu())
            .map(|g| count(g.count))
            .reduce(|a, b| match (a, b) {
                (Gpus::Count(x), Gpus::Count(y)) => Gpus::Count(x.max(y)),
                (Gpus::Unknown, x) | (x, Gpus::Unknown) => x,
                (x, _) => x,
            }),
    }
}

/// A container's /dev/shm as the KServe runtime selected for it decides:
/// the runtime merged in, one named and not here, or one KServe installs;
/// else the pod's own volumes.
fn selected_shm(
    yaml: &Yaml,
    pod: &PodSpec,
    container: &super::k8s::Container,
    selection: &Option<Selection>,
    merged: &Option<(PodSpec, super::k8s::Container, bool)>,
) -> Shm {
    match (selection, merged) {
        (Some(Selection::Found(r)), Some((merged_pod, merged, from_runtime))) => {
            kserve_shm(yaml, pod, container, r, merged_pod, merged, *from_runtime)
        }
        (Some(Selection::NotHere(name)), _) if container.mount_at("/dev/shm").is_none() => {
            Shm::new(
                ShmKind::Unknown,
                None,
                format!("the ServingRuntime `{name}`, not in this file or its directory (runtime not found here): its volumes decide /dev/shm"),
            )
            .decided_by(ShmSetting::Unresolved, None)
        }
        (Some(Selection::BuiltIn(b)), _)
            if b.mounts_shm && container.mount_at("/dev/shm").is_none() =>
        {
            Shm::new(
                ShmKind::Unbounded,
                None,
                format!(
                    "a memory emptyDir that KServe's built-in ClusterServingRuntime `{}` mounts (since KServe v0.14; picked for model format `{}`)",
                    b.runtime, b.format
                ),
            )
            .decided_by(ShmSetting::Operator, None)
        }
        _ => kubernetes_shm(yaml, pod, container),
    }
}

/// The /dev/shm of a predictor merged with its runtime: its own mount (of
/// a volume of its own or the runtime's), else the runtime's, else the
/// container runtime's default, which the runtime decides.
fn kserve_shm(
    yaml: &Yaml,
    pod: &PodSpec,
    container: &super::k8s::Container,
    runtime: &ServingRuntime,
    merged_pod: &PodSpec,
    merged: &super::k8s::Container,
    from_runtime: bool,
) -> Shm {
    if container.mount_at("/dev/shm").is_some() && !from_runtime {
        let own = pod.shm_of(container);
        if matches!(
            own,
            ShmSource::Mounted {
                volume: Some(_),
                ..
            }
        ) {
            return kubernetes_shm(yaml, pod, container);
        }
    }
    let source = merged_pod.shm_of(merged);
    match source {
        ShmSource::Default => Shm::new(
            ShmKind::Default,
            Some(super::container::DEFAULT_SHM_BYTES),
            format!(
                "the container runtime's default: {} mounts nothing at /dev/shm",
                runtime.describe()
            ),
        )
        .decided_by(ShmSetting::Runtime, None),
        ShmSource::HostIpc => kubernetes_shm(yaml, pod, container),
        ShmSource::Mounted { mount, .. } => {
            let shm = mounted_shm(merged_pod, source);
            let at = match (&runtime.origin, from_runtime) {
                (_, false) => Some(yaml.range(mount.node)),
                (Origin::Document(_), true) => Some(yaml.range(mount.node)),
                (Origin::File(_), true) => None,
            };
            let from = if from_runtime {
                format!("{} that {} mounts", shm.from, runtime.describe())
            } else {
                format!("{} of {}", shm.from, runtime.describe())
            };
            Shm { from, ..shm }.decided_by(
                if from_runtime {
                    ShmSetting::Runtime
                } else {
                    ShmSetting::Mount
                },
                at,
            )
        }
    }
}

/// What the API server rejects in a container's resources: a value that is
/// not a quantity, a GPU request without an equal limit.
fn kubernetes_refusal(container: &super::k8s::Container) -> Option<String> {
    for (field, resources) in [
        ("requests", &container.requests),
        ("limits", &container.limits),
    ] {
        if let Some(r) = resources
            .iter()
            .find(|r| matches!(r.quantity, QuantityValue::Invalid(_)))
        {
            return Some(format!("`{field}.{}` is not a quantity", r.name));
        }
    }
    for request in container
        .requests
        .iter()
        .filter(|r| super::k8s::is_gpu_resource(&r.name))
    {
        let limit = container.limits.iter().find(|l| l.name == request.name);
        match limit {
            None => return Some(format!("`{}` is requested without a limit", request.name)),
            // Compared by value (`1` and `1.0` agree), as the API server does.
            Some(l)
                if l.quantity.quantity().map(|q| q.nanos)
                    != request.quantity.quantity().map(|q| q.nanos) =>
            {
                return Some(format!(
                    "the `{}` request differs from its limit",
                    request.name
                ));
            }
            Some(_) => {}
        }
    }
    None
}

fn kubernetes_shm(yaml: &Yaml, pod: &PodSpec, container: &super::k8s::Container) -> Shm {
    let source = pod.shm_of(container);
    // The operator adds its volume only where the container mounts none of
    // the pod's at /dev/shm (KubeRay's `addEmptyDir` returns early when
    // `checkIfVolumeMounted`).
    let mounts_own = matches!(
        source,
        ShmSource::Mounted {
            volume: Some(_),
            ..
        }
    );
    if let Some(operator) = pod.shm_managed_by.filter(|_| !mounts_own) {
        return Shm::new(
            ShmKind::Unbounded,
            None,
            format!("a memory-backed /dev/shm that {operator} mounts"),
        )
        .decided_by(ShmSetting::Operator, None);
    }
    if let Some(template) = pod.merged_into.as_ref().filter(|_| !mounts_own) {
        return Shm::new(
            ShmKind::Unknown,
            None,
            format!("{template}, which this pod spec is merged into (not read here): its volumes decide /dev/shm"),
        )
        .decided_by(ShmSetting::Unresolved, None);
    }
    let (setting, at) = match source {
        ShmSource::Default => (ShmSetting::Default, None),
        ShmSource::HostIpc => (ShmSetting::Ipc, pod.host_ipc.map(|n| yaml.range(n))),
        ShmSource::Mounted { mount, .. } => (ShmSetting::Mount, Some(yaml.range(mount.node))),
    };
    mounted_shm(pod, source).decided_by(setting, at)
}

/// What a pod's way of providing `/dev/shm` gives the container.
fn mounted_shm(pod: &PodSpec, source: ShmSource) -> Shm {
    match source {
        ShmSource::Default => Shm::default_of("the container runtime"),
        ShmSource::HostIpc => Shm::new(ShmKind::Host, None, "hostIPC: true"),
        ShmSource::Mounted {
            volume: None,
            mount,
        } => Shm::new(
            ShmKind::Refused,
            None,
            format!(
                "a mount of volume {:?}, which the pod does not define (the API server rejects it)",
                mount.name.as_deref().unwrap_or("")
            ),
        ),
        ShmSource::Mounted {
            volume: Some(volume),
            ..
        } => match &volume.source {
            VolumeSource::EmptyDir { memory: false, .. } => {
                Shm::new(ShmKind::Disk, None, "a disk-backed emptyDir")
            }
            VolumeSource::EmptyDir {
                memory: true,
                size_limit,
                ..
            } => {
                // A memory emptyDir is bounded by the pod's memory limit
                // (the sum of its containers', when every one has one).
                let containers: Vec<_> = pod.app_containers().collect();
                let memory_limit = containers
                    .iter()
                    .map(|c| {
                        c.memory_limit()
                            .and_then(|r| r.quantity.quantity())
                            .map(|q| q.bytes_ceil())
                    })
                    .sum::<Option<u64>>()
                    .filter(|_| !containers.is_empty());
                match size_limit.as_ref().map(|(_, _, q)| q) {
                    Some(QuantityValue::Parsed(q)) => {
                        let limit = q.bytes_ceil();
                        match memory_limit.filter(|&m| m < limit) {
                            Some(m) => Shm::new(
                                ShmKind::Sized,
                                Some(m),
                                format!(
                                    "a memory emptyDir capped by the pod's memory limit of {}",
                                    HumanBytes(m)
                                ),
                            ),
                            None => Shm::new(
                                ShmKind::Sized,
                                Some(limit),
                                format!("a memory emptyDir with sizeLimit {}", HumanBytes(limit)),
                            ),
                        }
                    }
                    Some(QuantityValue::Invalid(e)) => Shm::new(
                        ShmKind::Refused,
                        None,
                        format!(
                            "sizeLimit is not a quantity ({}): the API server rejects it",
                            e.reason
                        ),
                    ),
                    Some(QuantityValue::Placeholder(p)) => {
                        Shm::new(ShmKind::Unknown, None, format!("sizeLimit {p}"))
                    }
                    None => match memory_limit {
                        Some(m) => Shm::new(
                            ShmKind::Sized,
                            Some(m),
                            format!(
                                "a memory emptyDir with no sizeLimit, capped by the pod's memory limit of {}",
                                HumanBytes(m)
                            ),
                        ),
                        None => Shm::new(
                            ShmKind::Unbounded,
                            None,
                            "a memory emptyDir with neither sizeLimit nor memory limits",
                        ),
                    },
                }
            }
            VolumeSource::HostPath { path } if path.as_deref() == Some("/dev/shm") => {
                Shm::new(ShmKind::Host, None, "a hostPath of the node's /dev/shm")
            }
            VolumeSource::HostPath { .. } => Shm::new(ShmKind::Disk, None, "a hostPath volume"),
            VolumeSource::Other(kind) => Shm::new(ShmKind::Disk, None, format!("a {kind} volume")),
        },
    }
}

/// The containers the `docker run` lines of a script start. Ids count the
/// runs in the file (`docker run #2`), so they survive fixes on the line.
pub fn command_runtimes(script: &Script) -> Vec<ContainerRuntime> {
    script
        .runs
        .iter()
        .enumerate()
        .map(|(n, site)| {
            let run = &site.run;
            let label = run.invocation();
            // What the container's own options set wins over what its
            // steps run with (a workflow job container's `env:`s).
            let env: Vec<(String, Option<String>)> = run
                .exec_env
                .iter()
                .cloned()
                .chain(
                    run.env()
                        .map(|(name, value, _)| (name.to_string(), value.map(str::to_string))),
                )
                .collect();
            let shm = run.shm();
            ContainerRuntime {
                platform: script.platform(),
                id: format!("{label} #{}", n + 1),
                name: run.image.as_ref().map_or(label, |i| i.text.clone()),
                image: run
                    .image
                    .as_ref()
                    .map(|i| i.text.clone())
                    .or_else(|| run.built_from.clone()),
                range: run.program_range,
                scope: run.range,
                file: 0,
                refused: (shm.kind == ShmKind::Refused)
                    .then(|| shm.from.clone())
                    .or_else(|| run.refusal())
                    .or_else(|| {
                        site.stray_image().map(|word| {
                            format!(
                                "`{}` among the options is no option: the CLI takes it as the image to create the container from",
                                word.text
                            )
                        })
                    }),
                gpu_workload: run.gpu_request().is_some(),
                gpus: run.gpu_request().map(|_| run.gpus()),
                ranks: detect_launcher(&run.command).1,
                launcher: run.launcher().map(str::to_string),
                workload: classify(&WorkloadFacts {
                    command: &run.command,
                    image: run.image.as_ref().map(|w| w.text.as_str()),
                    env: &|name| {
                        run.last_env(name)
                            .and_then(|(_, v, _)| v.map(str::to_string))
                    },
                    distributed_kind: false,
                }),
                // Podman's default IPC namespace is containers.conf's
                // `ipcns = "shareable"`: another container can join it.
                ipc: run
                    .option("--ipc")
                    .and_then(|(_, o)| o.value.clone())
                    .unwrap_or_else(|| {
                        if run.is_podman() {
                            "shareable"
                        } else {
                            "private"
                        }
                        .into()
                    }),
                ulimits: run_ulimits(run),
                cap_add: run
                    .options_named("--cap-add")
                    .filter_map(|(_, o)| o.value.clone())
                    .collect(),
                rdma: run.uses_rdma(),
                env: gpu_env(env),
                shm,
            }
        })
        .collect()
}

/// `--ulimit memlock=-1`, `--ulimit stack=67108864:67108864`.
fn run_ulimits(run: &DockerRun) -> BTreeMap<String, Ulimit> {
    let mut ulimits = BTreeMap::new();
    for (_, option) in run.options_named("--ulimit") {
        let Some((name, limits)) = option.value.as_deref().and_then(|v| v.split_once('=')) else {
            continue;
        };
        let limit = |v: &str| v.parse().ok();
        let (soft, hard) = limits.split_once(':').unwrap_or((limits, limits));
        ulimits.insert(
            name.to_string(),
            Ulimit {
                soft: limit(soft),
                hard: limit(hard),
            },
        );
    }
    ulimits
}
