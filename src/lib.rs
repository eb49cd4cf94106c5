//! gpulint: a linter and autofixer for GPU and distributed-training container configs.
//!
//! This crate holds the layers at the top, `output`, `lsp` and `cli` (and
//! the binary); those below are crates of their own, each depending only on
//! the ones below it: `gpulint-base` (`text`, `fix`, `diagnostic`, `codes`,
//! `redact`) ← `gpulint-vfs` ← `gpulint-syntax` ← `gpulint-model` ←
//! `gpulint-project` ← `gpulint-rules` ← `gpulint-engine`. They are
//! re-exported here under their layer's name (`gpulint::engine`), the paths
//! the integration tests, benches and fuzz targets use.

pub mod cli;
pub mod lsp;
pub mod output;

pub use gpulint_base::{codes, diagnostic, fix, for_each_rule, redact, text};
pub use gpulint_engine as engine;
pub use gpulint_model as model;
pub use gpulint_project as project;
pub use gpulint_rules as rules;
pub use gpulint_schema as schema;
pub use gpulint_syntax as syntax;
pub use gpulint_vfs as vfs;
