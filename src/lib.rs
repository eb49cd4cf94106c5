//! gpulint: a linter and autofixer for GPU and distributed-training container configs.
//!
//! Modules depend one way: `text` ← `syntax` ← `model` ← `rules` ← `engine` ←
//! `output` / `cli`.

pub mod text;
pub mod syntax;
pub mod model;
