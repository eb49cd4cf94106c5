//! Kubernetes GPU resources and `/dev/shm` volumes.

pub(crate) mod k8s001_gpu_request_without_limit;
pub(crate) mod k8s002_gpu_request_limit_mismatch;
pub(crate) mod k8s003_non_integer_gpu_count;
pub(crate) mod k8s004_gpu_pod_without_shm_volume;
pub(crate) mod k8s005_shm_volume_not_memory_backed;
pub(crate) mod k8s006_shm_volume_without_size_limit;
pub(crate) mod k8s008_quantity_unit_mistake;
pub(crate) mod k8s009_host_ipc_on_gpu_pod;
pub(crate) mod k8s013_shm_volume_not_mounted;
pub(crate) mod k8s014_manifest_refused;
