//! SLURM batch scripts: directives, GPUs per node and launches.

pub(crate) mod slurm001_unexpanded_variable;
pub(crate) mod slurm002_directive_after_command;
pub(crate) mod slurm003_gpus_per_node_mismatch;
pub(crate) mod slurm004_multi_node_without_rendezvous;
pub(crate) mod slurm005_container_without_nv;
