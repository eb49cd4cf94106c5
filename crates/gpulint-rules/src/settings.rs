//! The rule settings of gpulint.toml that rules read (`[shm]` sizes and
//! policy).

use crate::model::shm_need::ShmPolicy;
use crate::model::size::{GIB, MIB};
use std::path::{Path, PathBuf};

/// `[compose] fragments`: compose files another tool merges with its own
/// base (an app store's apps, which name the store's network), so what
/// they refer to and do not define is the base's, not a mistake.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ComposeFragments {
    /// The configuration's directory, which the globs are relative to.
    pub root: PathBuf,
    /// As written, checked when the configuration is read. Settings key a
    /// project's lint, so they hold no compiled matcher (whose cache
    /// mutates); [`ComposeFragments::contains`] compiles them.
    pub patterns: Vec<String>,
}

impl ComposeFragments {
    /// Whether `path` is one of the declared fragments. The patterns were
    /// checked when the configuration was read.
    pub fn contains(&self, path: &Path) -> bool {
        crate::vfs::glob_set(&self.patterns, "[compose] fragments")
            .is_ok_and(|globs| globs.is_match(crate::vfs::relative_to(&self.root, path)))
    }
}

/// The thresholds and defaults rules use; set from `gpulint.toml` `[shm]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleSettings {
    /// The least /dev/shm any GPU workload gets (DeepSpeed's `ds_report`
    /// threshold): a single-GPU job, and the floor of every other need.
    pub min_shm: u64,
    /// Several GPUs or NCCL ranks running a workload gpulint cannot
    /// classify, or training whose rank count is unknown, when the user
    /// sets it; `None` derives it from the measured workload
    /// ([`crate::model::shm_need`]).
    pub min_shm_multi_gpu: Option<u64>,
    /// DataLoader workers per training rank assumed when the command does
    /// not say (the reference workload's 8).
    pub dataloader_workers: u64,
    /// The size fixes write and messages suggest, as the user would spell it.
    pub fix_shm_size: String,
    /// `[compose] fragments`, when set.
    pub compose_fragments: Option<ComposeFragments>,
}

impl Default for RuleSettings {
    fn default() -> Self {
        Self {
            min_shm: 512 * MIB,
            min_shm_multi_gpu: None,
            dataloader_workers: 8,
            fix_shm_size: "8gb".to_string(),
            compose_fragments: None,
        }
    }
}

impl RuleSettings {
    /// The part of these settings that decides how much /dev/shm a
    /// workload needs ([`crate::model::shm_need`]).
    pub fn shm_policy(&self) -> ShmPolicy {
        ShmPolicy {
            min: self.min_shm,
            min_multi_gpu: self.min_shm_multi_gpu,
            workers: self.dataloader_workers,
        }
    }

    /// The size to suggest for a workload that needs `need` bytes:
    /// `fix-size`, unless the need is larger (a job of many ranks), then
    /// the need in whole gigabytes, so a fix never leaves a finding behind.
    pub(crate) fn shm_size_for(&self, need: u64) -> String {
        match crate::model::size::parse_compose_size(&self.fix_shm_size) {
            crate::model::size::SizeValue::Bytes { bytes, .. } if bytes >= need => {
                self.fix_shm_size.clone()
            }
            _ => format!("{}gb", need.div_ceil(GIB)),
        }
    }

    /// `fix-size` as a Kubernetes quantity (`"8gb"` → `8Gi`).
    pub(crate) fn fix_shm_quantity(&self) -> String {
        self.shm_quantity_for(0)
    }

    /// [`Self::shm_size_for`] as a Kubernetes quantity (`"8gb"` → `8Gi`).
    pub(crate) fn shm_quantity_for(&self, need: u64) -> String {
        match crate::model::size::parse_compose_size(&self.shm_size_for(need)) {
            crate::model::size::SizeValue::Bytes { bytes, .. } => {
                crate::model::quantity::bytes_to_quantity(bytes)
            }
            _ => "8Gi".to_string(),
        }
    }
}
