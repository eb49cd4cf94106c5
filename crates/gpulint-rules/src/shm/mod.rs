//! `/dev/shm`: its size, the IPC mode that decides it, and the settings Compose or the engine ignore.

pub mod shm001_default_shm;
pub mod shm002_shm_size_too_small;
pub mod shm003_malformed_shm_size;
pub mod shm005_ignored_shm_size;
pub mod shm006_ipc_none;
pub mod shm007_ipc_donor_not_shareable;
pub mod shm009_build_shm_size_only;
pub mod shm011_invalid_ipc_mode;
