//! Typed views over the syntax tree: what a compose service or a Kubernetes
//! pod means at run time.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::{fix, text};
use gpulint_syntax as syntax;

pub mod adapters;
mod apptainer;
pub mod compose;
pub mod container;
pub mod devcontainer;
pub mod docker_run;
pub mod dockerfile;
pub mod dockerfile_scope;
pub mod gpu_request;
pub mod k8s;
pub mod k8s_env_from;
pub mod kserve;
pub mod parallel;
pub mod quadlet;
pub mod quantity;
pub mod resolved;
pub mod script;
pub mod script_env;
mod script_vars;
pub mod shm_need;
pub mod size;
pub mod slurm;
pub mod variables;
pub mod workload;
