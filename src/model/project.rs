//! Compose projects made of several files and services made of several
//! definitions: `compose.yaml` plus `compose.override.yaml`, `-f base.yml
//! -f gpu.yml` sets (named in `gpulint.toml`, or an overlay such as
//! `docker-compose.gpu.yml` next to its base), and `extends:` (the same
//! file or another, in chains). Compose merges all of them, in order,
//! before running anything (compose-go `override/merge.go`), so a GPU
//! reservation in an override, an `shm_size` in an extended base and a
//! `memlock` in the base file apply to the same container. Each file is
//! still linted on its own, with what the other definitions say about its
//! services merged in:
//!
//! - GPU evidence is the union of the definitions' evidence; the "missing
//!   /dev/shm" finding belongs to the last definition with GPU evidence for
//!   the service, so it is reported once, where the GPUs are asked for.
//! - `/dev/shm` is decided as Compose merges: a mount at /dev/shm in any
//!   definition, else the last `ipc`, else the last `shm_size`; `!reset`
//!   removes what earlier definitions set. When that setting is in another
//!   definition, this service sees [`ShmDecision::Elsewhere`] and leaves
//!   the findings about it (and their fixes) to that definition.
//! - `ulimits` and `environment` are merged by name, `ipc` by the last one;
//!   what another definition decides is in [`Inherited`] (a field of the
//!   compose service), which `gpulint
//!   inspect` reports and the rules read, never edit.

use super::compose::{ComposeFile, Inherited, IpcMode, Origin, ProjectView, Service, ShmDecision};
use crate::text::SourceFile;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Another file of the project (or the file an `extends:` names).
pub struct Layer<'a> {
    pub source: Arc<SourceFile>,
    pub file: &'a ComposeFile<'a>,
}

/// One definition of a service, in Compose's merge order: `None` is the
/// service being linted (a copy of it), `Some` another file's (or an
/// extended service's) definition.
pub type Definition<'a> = (Option<&'a Layer<'a>>, &'a Service);

/// Which setting decides `/dev/shm` in a merged service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShmSetting {
    Mount,
    Ipc,
    Size,
}

/// Which definition decides `/dev/shm`, as Compose merges them, and by
/// which setting: a mount at /dev/shm from any, else the last `ipc` when it
/// ignores `shm_size`, else the last `shm_size`. `None`: the 64 MiB default.
fn shm_decider(definitions: &[Definition]) -> Option<(usize, ShmSetting)> {
    let (mut mount, mut ipc, mut size) = (None, None, None);
    for (i, (_, s)) in definitions.iter().enumerate() {
        if s.resets("volumes") || s.resets("tmpfs") {
            mount = None;
        }
        if !s.shm_mounts.is_empty() {
            mount = Some(i);
        }
        if s.resets("ipc") {
            ipc = None;
        }
        if s.ipc.is_some() {
            ipc = Some(i);
        }
        if s.resets("shm_size") {
            size = None;
        }
        if s.shm_size.is_some() {
            size = Some(i);
        }
    }
    let ipc = ipc.filter(|&i| {
        definitions[i]
            .1
            .ipc
            .as_ref()
            .is_some_and(|m| !m.value.honours_shm_size())
    });
    mount
        .map(|i| (i, ShmSetting::Mount))
        .or(ipc.map(|i| (i, ShmSetting::Ipc)))
        .or(size.map(|i| (i, ShmSetting::Size)))
}

fn file_name(source: &SourceFile) -> String {
    source
        .path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// Merges the other layers' view of each service into `file`'s services,
/// by name. `here` is `file`'s position among the project's files; `others`
/// are the other files with their positions.
pub fn merge(file: &mut ComposeFile, here: usize, others: &[(usize, Layer)]) {
    for service in &mut file.services {
        let local = service.clone();
        let mut ordered: Vec<(usize, Definition)> = others
            .iter()
            .filter_map(|(order, layer)| {
                Some((*order, (Some(layer), layer.file.service(&local.name)?)))
            })
            .collect();
        if ordered.is_empty() {
            continue;
        }
        ordered.push((here, (None, &local)));
        ordered.sort_by_key(|(order, _)| *order);
        let definitions: Vec<Definition> = ordered.into_iter().map(|(_, d)| d).collect();
        merge_definitions(service, &definitions);
    }
}

/// `service` without the `environment`, `devices` and `runtime` that a definition in
/// `later` resets (`!reset`) or replaces (`!override`), as Compose merges
/// them, and with the GPU intent recomputed without them; `None` when
/// nothing is removed. (`deploy`, `ulimits`, `ipc`, /dev/shm settings are
/// dropped where they are merged, below.)
fn without_replaced(service: &Service, later: &[Definition]) -> Option<Service> {
    let replaced = |key: &str| later.iter().any(|(_, s)| s.resets(key) || s.overrides(key));
    let environment = replaced("environment") && !service.environment.is_empty();
    let devices = replaced("devices") && !service.devices.is_empty();
    let runtime = replaced("runtime") && service.runtime.is_some();
    if !environment && !devices && !runtime {
        return None;
    }
    let mut kept = service.clone();
    if environment {
        kept.environment.clear();
    }
    if devices {
        kept.devices.clear();
    }
    if runtime {
        kept.runtime = None;
    }
    kept.gpu = kept.compute_gpu_intent();
    Some(kept)
}

/// Merges `definitions` (in Compose's order, one of them `None`: the
/// service itself, as read from its own file) into `service`.
pub fn merge_definitions(service: &mut Service, definitions: &[Definition]) {
    // What a later definition resets is gone from the earlier ones,
    // this file's own included: it no longer describes the container.
    let trimmed: Vec<Option<Service>> = (0..definitions.len())
        .map(|i| without_replaced(definitions[i].1, &definitions[i + 1..]))
        .collect();
    let definitions: Vec<Definition> = definitions
        .iter()
        .zip(&trimmed)
        .map(|(&(layer, s), kept)| (layer, kept.as_ref().unwrap_or(s)))
        .collect();
    let definitions = definitions.as_slice();
    if let Some(here) = definitions.iter().position(|(l, _)| l.is_none())
        && let Some(kept) = &trimmed[here]
    {
        service.environment = kept.environment.clone();
        service.devices = kept.devices.clone();
        service.runtime = kept.runtime.clone();
        service.gpu = kept.gpu.clone();
    }
    let origin = |layer: &Layer, s: &Service, what: String| {
        let named = if s.name == service.name {
            String::new()
        } else {
            format!(", service `{}`", s.name)
        };
        Origin {
            source: layer.source.clone(),
            range: layer.file.yaml.range(s.key),
            what: format!("{what} in {}{named}", file_name(&layer.source)),
        }
    };
    let also_defined = definitions
        .iter()
        .filter_map(|(l, s)| l.map(|layer| (layer.source.clone(), layer.file.yaml.range(s.key))))
        .collect();

    // A later `devices: !reset` (or `deploy: !reset`) drops the device
    // reservations of the definitions before it.
    let reservations_reset = definitions
        .iter()
        .rposition(|(_, s)| s.resets_device_reservations());
    let dropped = |i: usize, s: &Service| {
        reservations_reset.is_some_and(|r| i < r) && s.reserves_only_by_deploy_devices()
    };
    // GPU evidence: the last definition that has any. The image a
    // definition builds counts only when no later one rewrites `build:`
    // (speaches' compose.cpu.yaml sets BASE_IMAGE over a CUDA default).
    let last_build = definitions.iter().rposition(|(_, s)| s.build.is_some());
    let evidence = |i: usize, s: &Service| {
        (s.gpu.is_reserved() && !dropped(i, s))
            || !s.misplaced_gpu_resources.is_empty()
            || s.gpu.is_distributed()
            || (s.builds_gpu_image() && Some(i) == last_build)
    };
    let last_gpu = definitions
        .iter()
        .enumerate()
        .rev()
        .find(|(i, (_, s))| evidence(*i, s))
        .map(|(_, d)| d);
    let gpu_elsewhere = match last_gpu {
        Some((Some(layer), s)) => {
            let why = if s.builds_gpu_image() && !s.gpu.is_reserved() {
                "builds on a GPU image".to_string()
            } else {
                s.gpu.describe()
            };
            Some((layer.source.clone(), layer.file.yaml.range(s.key), why))
        }
        _ => None,
    };
    let local_gpu_evidence = service.own_gpu_evidence();
    if let Some(here) = definitions.iter().position(|(l, _)| l.is_none())
        && dropped(here, service)
    {
        service.gpu.reserved = None;
        service.gpu.count = None;
        service.gpu.vendor = None;
    }
    // The merged GPU intent: a reservation and a command from the last
    // definition that has one, NCCL and RDMA settings from any.
    for (i, (layer, other)) in definitions.iter().enumerate() {
        if layer.is_none() {
            continue;
        }
        if other.gpu.is_reserved() && !service.gpu.is_reserved() && !dropped(i, other) {
            service.gpu.reserved = other.gpu.reserved.clone();
            service.gpu.count = other.gpu.count;
            service.gpu.vendor = other.gpu.vendor;
        }
        if service.command_line.is_empty() && !other.command_line.is_empty() {
            service.gpu.launcher = other.gpu.launcher;
            service.gpu.parallelism = other.gpu.parallelism;
        }
        service.gpu.nccl_env |= other.gpu.nccl_env;
        service.gpu.rdma |= other.gpu.rdma;
    }

    // /dev/shm.
    match shm_decider(definitions) {
        Some((i, setting)) => match definitions[i] {
            (Some(layer), other) => {
                // `shm_size: 0` there and nothing here is still the 64 MiB default.
                if !(other.shm_decision == ShmDecision::Default
                    && service.shm_decision == ShmDecision::Default)
                {
                    // The size alone: another definition's `ipc` keeps it.
                    let shm = match setting {
                        ShmSetting::Size => super::runtime::shm_size_shm(other),
                        _ => super::runtime::service_shm(layer.file, other),
                    };
                    let from = origin(layer, other, shm.from.clone()).what;
                    service.shm_decision =
                        ShmDecision::Elsewhere(Box::new(super::container::Shm { from, ..shm }));
                }
            }
            (None, _) => {
                // This definition decides by its `shm_size`, while its own
                // `ipc` (which another definition replaces) would ignore it.
                if setting == ShmSetting::Size
                    && !matches!(service.shm_decision, ShmDecision::Sized { .. })
                {
                    service.shm_decision = service.size_decision();
                }
            }
        },
        None if service.shm_decision != ShmDecision::Default => {
            // This definition's setting is removed by a later `!reset`, or
            // its `ipc` replaced by a later one that keeps the default.
            let overrider = definitions.iter().rev().find_map(|(l, s)| {
                let l = (*l)?;
                (s.resets("shm_size")
                    || s.resets("ipc")
                    || s.resets("volumes")
                    || s.resets("tmpfs")
                    || s.ipc.is_some())
                .then_some((l, *s))
            });
            if let Some((layer, other)) = overrider {
                let why = if other.ipc.is_some() {
                    "Docker's default (`ipc`)"
                } else {
                    "Docker's default (`!reset`)"
                };
                service.shm_decision =
                    ShmDecision::Elsewhere(Box::new(super::container::Shm::new(
                        super::container::ShmKind::Default,
                        Some(super::container::DEFAULT_SHM_BYTES),
                        origin(layer, other, why.into()).what,
                    )));
            }
        }
        None => {}
    }

    // Ulimits and environment, merged by name; `ipc`, the last one.
    let mut ulimits: BTreeMap<String, usize> = BTreeMap::new();
    let mut removed: BTreeMap<String, usize> = BTreeMap::new();
    let mut environment: BTreeMap<String, usize> = BTreeMap::new();
    let mut ipc = None;
    for (i, (_, s)) in definitions.iter().enumerate() {
        if s.resets("ulimits") || s.overrides("ulimits") {
            for (name, _) in std::mem::take(&mut ulimits) {
                removed.insert(name, i);
            }
        }
        for (name, _) in s.all_ulimits() {
            removed.remove(&name);
            ulimits.insert(name, i);
        }
        if s.resets("environment") || s.overrides("environment") {
            environment.clear();
        }
        for var in &s.environment {
            environment.insert(var.name.clone(), i);
        }
        if s.resets("ipc") {
            ipc = None;
        }
        if s.ipc.is_some() {
            ipc = Some(i);
        }
    }
    let mut inherited = Inherited::default();
    let mut env_files: Vec<(Option<PathBuf>, String, bool)> = Vec::new();
    for (layer, s) in definitions {
        if s.resets("env_file") || s.overrides("env_file") {
            env_files.clear();
        }
        let named_by = layer.map(|l| l.source.path.clone());
        env_files.extend(
            s.env_files
                .iter()
                .map(|(name, required)| (named_by.clone(), name.clone(), *required)),
        );
    }
    inherited.env_files = Some(env_files);
    for (name, i) in ulimits {
        if let (Some(layer), other) = definitions[i] {
            let limit = other
                .all_ulimits()
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, l)| l);
            let shown = limit.map_or(String::new(), |l| match (l.soft, l.hard) {
                (Some(s), Some(h)) if s == h => format!(" {s}"),
                (s, h) => format!(" {s:?}:{h:?}"),
            });
            let from = origin(layer, other, format!("`{name}`{shown}"));
            inherited.ulimits.insert(name, (limit, from));
        }
    }
    for (name, i) in removed {
        if let (Some(layer), other) = definitions[i] {
            let from = origin(layer, other, "`ulimits: !reset`".into());
            if i + 1 == definitions.len() {
                inherited.ulimits_removed_by_last_file.push(name.clone());
            }
            inherited.ulimits.insert(name, (None, from));
        }
    }
    for (name, i) in environment {
        if let (Some(layer), other) = definitions[i] {
            let value = other.env(&name).and_then(|v| v.value.clone());
            let from = origin(layer, other, format!("`{name}`"));
            inherited.environment.insert(name, (value, from));
        }
    }
    if let Some(i) = ipc
        && let (Some(layer), other) = definitions[i]
        && let Some(mode) = &other.ipc
    {
        inherited.ipc = Some((mode.value.clone(), origin(layer, other, "`ipc`".into())));
    } else if ipc.is_none()
        && service.ipc.is_some()
        && let Some((layer, other)) = definitions
            .iter()
            .rev()
            .find_map(|(l, s)| Some(((*l)?, *s)).filter(|(_, s)| s.resets("ipc")))
    {
        // `ipc: !reset` later: the daemon's default mode.
        inherited.ipc = Some((
            IpcMode::Private,
            origin(layer, other, "`ipc: !reset`".into()),
        ));
    }
    service.inherited = inherited;
    service.project = Some(ProjectView {
        gpu_elsewhere,
        also_defined,
        local_gpu_evidence,
    });
}
