//! NCCL environment variables that slow or break collectives.

pub(crate) mod nccl001_shm_transport_disabled;
pub(crate) mod nccl002_p2p_disabled;
pub(crate) mod nccl003_debugging_variable;
