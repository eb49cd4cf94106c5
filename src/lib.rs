//! gpulint: a linter and autofixer for GPU and distributed-training container configs.
//!
//! Modules depend one way: the base (`text`, `vfs`, `fix`, `diagnostic`) ←
//! `syntax` ← `model` ← `project` ← `rules` ← `engine` ← `output` / `cli` / `lsp`.

pub mod cli;
pub mod codes;
pub mod diagnostic;
pub mod engine;
pub mod fix;
pub mod lsp;
pub mod model;
pub mod output;
pub mod project;
pub mod redact;
pub mod rules;
pub mod syntax;
pub mod text;
pub mod vfs;
