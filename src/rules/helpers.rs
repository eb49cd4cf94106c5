//! Predicates and wording shared by several rules.

use crate::model::compose::{EffectiveShm, Service};
use crate::rules::RuleSettings;

/// The failures a too-small `/dev/shm` causes, as users see them.
pub const SHM_FAILURES: &str = "NCCL fails with `NCCL WARN Error: failed to extend /dev/shm/nccl-...` \
(`unhandled system error`) and PyTorch DataLoader workers die with `Bus error` or \
`No space left on device` once they outgrow /dev/shm";

/// Hard or training evidence that the service uses GPUs: a reservation, a
/// GPU resource written in the wrong place, a distributed launcher or NCCL
/// settings. A CUDA image alone is not enough (it also runs TensorBoard and
/// CPU jobs).
pub fn is_gpu_workload(service: &Service) -> bool {
    service.gpu.is_reserved()
        || !service.misplaced_gpu_resources.is_empty()
        || service.gpu.is_distributed()
}

/// Several GPUs or ranks share this container's /dev/shm.
pub fn needs_large_shm(service: &Service) -> bool {
    service.gpu.is_multi_gpu() || service.gpu.is_distributed()
}

/// Several processes in this container talk over NCCL: a launcher, tensor
/// parallelism or NCCL settings (reserving all GPUs alone may mean one).
pub fn launches_ranks(service: &Service) -> bool {
    service.gpu.is_distributed() || service.gpu.parallelism.is_some_and(|p| p >= 2)
}

/// Why gpulint treats the service as a GPU workload, for labels.
pub fn gpu_reason(service: &Service) -> String {
    let described = service.gpu.describe();
    if !described.is_empty() {
        return described;
    }
    if let Some(resource) = service.misplaced_gpu_resources.first() {
        return format!("asks for `{}` under deploy.resources", resource.value);
    }
    "uses GPUs".to_string()
}

pub fn shm_threshold(service: &Service, settings: &RuleSettings) -> u64 {
    if needs_large_shm(service) {
        settings.min_shm_multi_gpu
    } else {
        settings.min_shm
    }
}

pub fn add_shm_help(settings: &RuleSettings) -> String {
    format!(
        "set `shm_size: \"{}\"` on the service (or `ipc: host`, which also shares the host's IPC namespace)",
        settings.fix_shm_size
    )
}

/// What decided the effective /dev/shm, for labels.
pub fn shm_source(shm: &EffectiveShm) -> &'static str {
    match shm {
        EffectiveShm::Default => "the daemon default",
        EffectiveShm::Sized { .. } => "`shm_size`",
        EffectiveShm::Unknown { .. } => "a value gpulint cannot resolve",
        EffectiveShm::Host { .. } => "`ipc: host`",
        EffectiveShm::Donor { .. } => "the `ipc` donor",
        EffectiveShm::Missing { .. } => "`ipc: none`",
        EffectiveShm::Mount { .. } => "a mount at /dev/shm",
    }
}
