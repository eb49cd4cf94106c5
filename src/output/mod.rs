//! Output formats. Each turns file reports into text; none knows about rules.

pub(crate) mod document;
pub(crate) mod escape;
pub mod github;
pub mod gitlab;
pub(crate) mod inspect;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod text;

mod explain;
mod format;
mod paths;

pub use explain::fingerprints;
pub(crate) use explain::*;
pub use format::Summary;
pub(crate) use format::*;
pub(crate) use paths::*;
