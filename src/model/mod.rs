//! Typed views over the syntax tree: what a compose service or a Kubernetes
//! pod means at run time.

pub mod compose;
pub mod docker_run;
pub mod dockerfile;
pub mod k8s;
pub mod project;
pub mod quantity;
pub mod runtime;
pub mod script;
pub mod size;
pub mod slurm;
pub mod variables;
pub mod workload;
