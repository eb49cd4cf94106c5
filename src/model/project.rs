//! Compose projects made of several files (`compose.yaml` plus
//! `compose.override.yaml`, or `-f base.yml -f gpu.yml` sets named in
//! `gpulint.toml`). Compose merges them before running anything, so a GPU
//! reservation in an override and an `shm_size` in the base file apply to
//! the same container. Each file is still linted on its own, with what the
//! other files say about its services merged in:
//!
//! - GPU evidence is the union of the files' evidence; the "missing /dev/shm"
//!   finding belongs to the last file with GPU evidence for the service, so
//!   it is reported once, where the GPUs are asked for.
//! - `/dev/shm` is decided as Compose merges: a mount at /dev/shm in any
//!   file, else the last file's `ipc`, else the last file's `shm_size`.
//!   When that setting is in another file, this file's service sees
//!   [`EffectiveShm::Elsewhere`] and leaves the findings about it to that file.

use super::compose::{ComposeFile, EffectiveShm, Service};
use crate::text::{SourceFile, TextRange};
use std::sync::Arc;

/// Another file of the project.
pub struct Layer<'a> {
    pub source: Arc<SourceFile>,
    pub file: &'a ComposeFile<'a>,
}

/// What the other files of a project say about one service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectView {
    /// Where the service's GPU evidence is, when the last file with GPU
    /// evidence is another one: that file, the service's key there, and why.
    pub gpu_elsewhere: Option<(Arc<SourceFile>, TextRange, String)>,
    /// The service's key in each other file that defines it.
    pub also_defined: Vec<(Arc<SourceFile>, TextRange)>,
    /// This file's own settings for the service are GPU evidence (before
    /// merging in the other files').
    pub local_gpu_evidence: bool,
}

/// Which layer decides `/dev/shm` and by which precedence.
fn shm_rank(service: &Service) -> u8 {
    if !service.shm_mounts.is_empty() {
        3
    } else if service
        .ipc
        .as_ref()
        .is_some_and(|i| !i.value.honours_shm_size())
    {
        // `ipc: private` or `shareable` keeps the last file's `shm_size`.
        2
    } else if service.shm_size.is_some() {
        1
    } else {
        0
    }
}

/// Merges the other layers' view of each service into `file`'s services.
/// `here` is `file`'s position among the project's files; `others` are the
/// other files with their positions.
pub fn merge(file: &mut ComposeFile, here: usize, others: &[(usize, Layer)]) {
    for service in &mut file.services {
        let mut layers: Vec<(usize, Option<(&Layer, &Service)>)> = others
            .iter()
            .filter_map(|(order, layer)| {
                let s = layer.file.service(&service.name)?;
                Some((*order, Some((layer, s))))
            })
            .collect();
        if layers.is_empty() {
            continue;
        }
        layers.push((here, None));
        layers.sort_by_key(|(order, _)| *order);

        let also_defined = layers
            .iter()
            .filter_map(|(_, l)| {
                l.map(|(layer, s)| (layer.source.clone(), layer.file.yaml.range(s.key)))
            })
            .collect();

        // GPU evidence: the last file that has any.
        let last_gpu = layers.iter().rev().find(|(_, l)| match l {
            Some((_, s)) => s.own_gpu_evidence(),
            None => service.own_gpu_evidence(),
        });
        let gpu_elsewhere = match last_gpu {
            Some((_, Some((layer, s)))) => {
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
        // The merged GPU intent: a reservation and a command from the last
        // file that has one, NCCL and RDMA settings from any.
        for (_, layer) in &layers {
            let Some((_, other)) = layer else { continue };
            if other.gpu.is_reserved() && !service.gpu.is_reserved() {
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

        // /dev/shm: the highest-precedence setting, the last file winning ties.
        // `max_by_key` keeps the last of equal elements: the latest file.
        let decider = layers.iter().max_by_key(|(_, l)| match l {
            Some((_, s)) => shm_rank(s),
            None => shm_rank(service),
        });
        if let Some((_, Some((layer, other)))) = decider
            && shm_rank(other) > 0
            // `shm_size: 0` there and nothing here is still the 64 MiB default.
            && !(other.effective_shm == EffectiveShm::Default
                && service.effective_shm == EffectiveShm::Default)
        {
            let shm = super::runtime::service_shm(layer.file, other);
            let file = layer
                .source
                .path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            service.effective_shm = EffectiveShm::Elsewhere(Box::new(super::runtime::Shm {
                from: format!("{} in {file}", shm.from),
                ..shm
            }));
        }

        service.project = Some(ProjectView {
            gpu_elsewhere,
            also_defined,
            local_gpu_evidence,
        });
    }
}
