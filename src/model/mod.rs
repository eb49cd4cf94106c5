//! Typed views over the syntax tree: what a compose service or a Kubernetes
//! pod means at run time.

pub mod compose;
pub mod dockerfile;
pub mod k8s;
pub mod project;
pub mod quantity;
pub mod runtime;
pub mod size;
pub mod workload;
