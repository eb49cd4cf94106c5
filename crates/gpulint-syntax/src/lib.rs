//! Parsers that keep exact byte spans. They know nothing about compose files or rules.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::{fix, text};

pub mod argv;
pub mod dockerfile;
pub mod embedded;
pub mod interpolate;
pub mod jsonc;
pub mod shell;
pub mod shell_script;
pub mod tree;
pub mod yaml;
pub mod yaml_edit;
