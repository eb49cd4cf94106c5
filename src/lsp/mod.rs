//! `gpulint server`: a language server over stdio.
//!
//! One thread owns every open document. Messages are handled in order;
//! edits only mark a document dirty, and it is linted once no edit has come
//! for [`DEBOUNCE`] (typing a line lints once, not per key). Opening a file
//! lints at once. Findings can depend on other files (a Dockerfile a compose
//! file builds, an override file), which the engine reads through an
//! [`Overlay`](crate::engine::Overlay) of the open buffers on the disk: an edit to one open document,
//! saved or not, re-lints every open document once the edits pause, and so
//! does saving any file or a watched file changing on disk. Configuration is
//! read from disk on every lint, so an edited `gpulint.toml` applies from
//! the next one.
//!
//! Positions are converted between byte offsets and UTF-16 columns, as the
//! protocol requires. Quick fixes are the rules' own fixes, offered only when
//! they pass the same verification as `--fix`.

mod actions;
mod convert;
mod server;
mod transport;

pub use actions::MAX_VERIFIED_FINDINGS;
pub(crate) use server::run_stdio;
pub use server::{DEBOUNCE, Ending, serve};
use server::{Document, config_for, lint_with};
