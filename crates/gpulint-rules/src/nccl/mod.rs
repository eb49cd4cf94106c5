//! NCCL environment variables that slow or break collectives.

pub mod nccl001_shm_transport_disabled;
pub mod nccl002_p2p_disabled;
pub mod nccl003_debugging_variable;
