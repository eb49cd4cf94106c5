//! SLURM batch scripts: directives, GPUs per node and launches.

pub mod slurm001_unexpanded_variable;
pub mod slurm002_directive_after_command;
pub mod slurm003_gpus_per_node_mismatch;
pub mod slurm004_multi_node_without_rendezvous;
pub mod slurm005_container_without_nv;
