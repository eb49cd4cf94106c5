//! Typed views over the syntax tree: what a compose service means at run time.

pub mod compose;
pub mod size;
