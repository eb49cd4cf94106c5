//! The fix model (after ruff's): a fix is a set of byte-range edits with an
//! applicability that says whether `--fix` may apply it unasked.

use crate::text::TextRange;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown to the user, never applied automatically.
    DisplayOnly,
    /// Changes behaviour the user may rely on; needs `--unsafe-fixes`.
    Unsafe,
    /// Keeps the user's intent; applied by `--fix`.
    Safe,
}

/// Replace `range` with `content` (an empty range inserts, empty content deletes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: TextRange,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, as an imperative: "Add `shm_size: \"8gb\"`".
    pub title: String,
    pub applicability: Applicability,
    /// Sorted by start, non-overlapping.
    pub edits: Vec<Edit>,
}
