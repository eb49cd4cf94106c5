//! gpulint's integration tests, one test binary: one link of the library
//! and its dependencies instead of one per file (26 binaries were 4 GB of
//! target/debug), and one place for the helpers of `common`. A module is a
//! former `tests/<name>.rs`; run one with its path as the filter, e.g.
//! `cargo test --test it engine::` or `cargo test --test it SHM001` (that
//! rule's fixtures). Data the tests read stays in `tests/<name>/`.

mod common;

mod architecture;
mod benchmarks;
mod cli;
mod corpus;
mod devcontainer;
mod docs;
mod ecosystem;
mod editor;
mod engine;
mod fix_properties;
mod fixes;
mod formats;
mod fuzz_regressions;
mod inspect;
mod integrations;
mod k8s;
mod kustomize;
mod lsp;
mod model;
mod podman;
mod projects;
mod quadlet;
mod robustness;
mod rules;
mod runtime;
mod scripts;
mod workflow_containers;
