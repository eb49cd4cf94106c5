//! `/dev/shm`: its size, the IPC mode that decides it, and the settings Compose or the engine ignore.

pub(crate) mod shm001_default_shm;
pub(crate) mod shm002_shm_size_too_small;
pub(crate) mod shm003_malformed_shm_size;
pub(crate) mod shm005_ignored_shm_size;
pub(crate) mod shm006_ipc_none;
pub(crate) mod shm007_ipc_donor_not_shareable;
pub(crate) mod shm009_build_shm_size_only;
pub(crate) mod shm011_invalid_ipc_mode;
