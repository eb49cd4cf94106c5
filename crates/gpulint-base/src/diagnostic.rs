//! What a rule reports: one finding with its spans, advice and optional fix.

use crate::fix::Fix;
use crate::text::{SourceFile, TextRange};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secondary span with its own short message, in the finding's file or
/// in another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub range: TextRange,
    pub message: String,
    /// The file the span is in, when it is not the finding's.
    pub file: Option<Arc<SourceFile>>,
}

/// Where a finding or a label is: a span of the file being linted, or of
/// another file (one file of a compose project linted with the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub range: TextRange,
    /// The file, when it is not the one being linted.
    pub file: Option<Arc<SourceFile>>,
}

impl From<TextRange> for At {
    fn from(range: TextRange) -> Self {
        At { range, file: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: crate::codes::RuleCode,
    pub severity: Severity,
    /// What is wrong, in one line.
    pub message: String,
    pub range: TextRange,
    /// The file `range` is in, when a lint covers several files (a compose
    /// project): the engine reports the finding with that file and clears
    /// this. `None` is the file being linted.
    pub file: Option<Arc<SourceFile>>,
    // Label, note and help are shared: one rule run words them alike for
    // every container it reports (see `Reporter`), and a file of 80,000
    // `docker run` lines then holds one copy of each, not 80,000.
    /// A short text shown under the primary span.
    pub label: Option<Arc<str>>,
    /// What breaks at run time: the error users see.
    pub note: Option<Arc<str>>,
    /// What to do about it.
    pub help: Option<Arc<str>>,
    pub related: Vec<Label>,
    // Boxed: most findings of a large file carry one, and the whole
    // finding is half the size with it out of line.
    pub fix: Option<Box<Fix>>,
}
