//! Rules with one logic for several kinds of file, an adapter per kind.

pub mod gpu004_parallel_size_above_gpus;
pub mod nccl001_shm_transport_disabled;
pub mod nccl002_p2p_disabled;
pub mod nccl003_debugging_variable;
pub mod shm002_shm_size_too_small;
