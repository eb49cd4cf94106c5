//! gpulint: a linter and autofixer for GPU and distributed-training container configs.
//!
//! Modules depend one way: `text` ← `syntax` ← `model` ← `rules` ← `engine` ←
//! `output` / `cli`.

pub mod cli;
pub mod diagnostic;
pub mod engine;
pub mod fix;
pub mod lsp;
pub mod model;
pub mod output;
pub mod redact;
pub mod rules;
pub mod syntax;
pub mod text;
