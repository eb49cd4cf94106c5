//! Rules that check Compose files (DF004 included: it reads a service's environment).

pub mod df004_legacy_runtime_without_visible_devices;
pub mod gpu001_count_and_device_ids;
pub mod gpu002_device_reservation_without_capabilities;
pub mod gpu003_capabilities_without_gpu;
pub mod gpu005_legacy_nvidia_runtime;
pub mod gpu006_training_without_gpu_reservation;
pub mod gpu011_gpu_resource_in_deploy_resources;
pub mod proj001_project_refused;
pub mod shm001_default_shm;
pub mod shm003_malformed_shm_size;
pub mod shm005_ignored_shm_size;
pub mod shm006_ipc_none;
pub mod shm007_ipc_donor_not_shareable;
pub mod shm009_build_shm_size_only;
pub mod shm011_invalid_ipc_mode;
pub mod ulim001_memlock_not_unlimited;
pub mod ulim003_unlimited_stack;
