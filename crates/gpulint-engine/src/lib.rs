//! Runs the rules over files. Reading (`read`), telling what a file is
//! (`classify`), linting a text (`lint`) and inspecting it (`inspect`) are
//! modules of their own; this one holds what a file's check produces.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::{codes, diagnostic, redact, text};
use gpulint_model as model;
use gpulint_project as project;
use gpulint_rules as rules;
use gpulint_syntax as syntax;
use gpulint_vfs as vfs;

mod classify;
pub mod config;
mod devcontainer;
pub mod discover;
mod elsewhere;
pub mod fix;
mod inspect;
mod kserve;
pub mod kustomize;
mod lint;
pub mod noqa;
mod quadlet;
mod session;
mod suppress;
pub mod write;

pub use crate::vfs::{Disk, MAX_FILE_SIZE, Overlay, System};
pub use classify::{FileKind, Scope, is_manifest_candidate};
pub use elsewhere::{FindingsElsewhere, beyond_own};
pub use inspect::{Inspection, ProjectOf, inspect_text};
pub use lint::{lint_text, lint_text_unsuppressed};
pub use session::Session;

use crate::diagnostic::Diagnostic;
use crate::text::LineIndex;
use crate::vfs::{ReadError, Stamp};
use config::Config;
use std::path::PathBuf;

/// A file that could not be linted, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub message: String,
    /// Byte offset of the problem, when it has one.
    pub offset: Option<usize>,
    /// Set when the file is not an error but not lintable as written (a
    /// template): it is skipped with a note instead.
    pub skip: Option<Skip>,
}

/// Why a file is passed over: what is in it is not what gets deployed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// A Helm/Go template; `{{` at `offset`.
    HelmTemplate { offset: usize },
    /// A kustomization with patches, or a patch it applies, that no build
    /// of this run used: partial manifests.
    Kustomize {
        kustomization: PathBuf,
        /// Why gpulint could not build the kustomization, when it tried.
        why: Option<String>,
    },
}

impl FileError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            offset: None,
            skip: None,
        }
    }

    pub fn at(message: impl Into<String>, offset: usize) -> Self {
        Self {
            offset: Some(offset),
            ..Self::new(message)
        }
    }
}

impl From<ReadError> for FileError {
    fn from(error: ReadError) -> Self {
        FileError {
            message: error.message,
            offset: error.offset,
            skip: None,
        }
    }
}

/// Reads a file as UTF-8 text (see [`crate::vfs::read_source`]).
pub fn read_source(path: &std::path::Path) -> Result<String, (FileError, String)> {
    crate::vfs::read_source(path).map_err(|(e, text)| (e.into(), text))
}

/// [`read_source`], and the stamp of the file it read.
pub fn read_source_stamped(path: &std::path::Path) -> Result<(String, Stamp), (FileError, String)> {
    crate::vfs::read_source_stamped(path).map_err(|(e, text)| (e.into(), text))
}

/// Turns bytes into text, or explains why they are not a text file.
pub fn decode(bytes: Vec<u8>) -> Result<String, (FileError, String)> {
    crate::vfs::decode(bytes).map_err(|(e, text)| (e.into(), text))
}

/// The outcome for one file.
#[derive(Debug)]
pub struct FileReport {
    /// The path as the user gave it (or `--stdin-filename`).
    pub path: PathBuf,
    /// The text findings and errors are shown in: empty for a clean file.
    pub text: String,
    pub index: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
    pub error: Option<FileError>,
    /// The file was passed over (a template or a kustomize patch), not linted.
    pub skipped: Option<Skip>,
}

impl FileReport {
    /// A linted file and its findings.
    pub fn new(path: PathBuf, text: String, diagnostics: Vec<Diagnostic>) -> Self {
        let index = LineIndex::new(&text);
        Self {
            path,
            text,
            index,
            diagnostics,
            error: None,
            skipped: None,
        }
    }

    /// A file that could not be linted, or was skipped.
    pub fn failed(path: PathBuf, text: String, error: FileError) -> Self {
        let index = LineIndex::new(&text);
        let skipped = error.skip.clone();
        Self {
            path,
            text,
            index,
            diagnostics: Vec::new(),
            error: if skipped.is_some() { None } else { Some(error) },
            skipped,
        }
    }
}

/// Lints text that is already in memory (a file or stdin), reading the
/// files it refers to from disk. Never panics: a bug in a rule becomes an
/// error for this file.
pub fn check_text(path: PathBuf, text: String, config: &Config) -> FileReport {
    Session::on_disk().check_text(path, text, config)
}

/// [`Session::check_text_in_scope`] for a text not read from disk.
pub fn check_text_in_scope(
    path: PathBuf,
    text: String,
    config: &Config,
    scope: Scope,
) -> Option<FileReport> {
    Session::on_disk().check_text_in_scope(path, text, None, config, scope)
}

/// Reads and lints one file, as `gpulint check` does, in a session of its own.
pub fn check_file(path: PathBuf, config: &Config) -> FileReport {
    Session::on_disk().check_file(path, config)
}

impl Session {
    /// [`check_text`], reading other files through this session.
    pub fn check_text(&self, path: PathBuf, text: String, config: &Config) -> FileReport {
        match without_crashing(|| self.lint_text(&text, &path, config)) {
            Ok(diagnostics) => FileReport::new(path, text, diagnostics),
            Err(error) => FileReport::failed(path, text, error),
        }
    }

    /// [`check_text`] for one file of many, or `None` for a file outside
    /// `scope`. A clean file's report does not keep its text (there is
    /// nothing to show in it), so a run over a big tree holds only the texts
    /// of the files with findings or errors. `stamp` is set when `text` is
    /// what the file held on disk at that stamp: a Dockerfile linted so
    /// stands in for itself, without another read, when a compose file
    /// builds it while it is unchanged. Text from anywhere else (an editor's
    /// buffer, stdin, a fix being verified) never does.
    pub fn check_text_in_scope(
        &self,
        path: PathBuf,
        text: String,
        stamp: Option<Stamp>,
        config: &Config,
        scope: Scope,
    ) -> Option<FileReport> {
        match without_crashing(|| self.lint_in_scope(&text, &path, stamp, config, scope)) {
            Ok(Some(diagnostics)) if diagnostics.is_empty() => {
                Some(FileReport::new(path, String::new(), diagnostics))
            }
            Ok(Some(diagnostics)) => Some(FileReport::new(path, text, diagnostics)),
            Ok(None) => None,
            Err(error) => Some(FileReport::failed(path, text, error)),
        }
    }

    /// Reads `path` through this session's [`System`] and lints it.
    pub fn check_file(&self, path: PathBuf, config: &Config) -> FileReport {
        match self.system().read(&path) {
            Ok((text, stamp)) => {
                let stamp = stamp.filter(Stamp::is_disk);
                let report =
                    self.check_text_in_scope(path.clone(), text, stamp, config, Scope::Any);
                // Every file is in `Scope::Any`.
                report.unwrap_or_else(|| FileReport::new(path, String::new(), Vec::new()))
            }
            Err((error, text)) => FileReport::failed(path, text, error.into()),
        }
    }
}

/// Runs `work` on one file, turning a panic (a bug) into an error for that file.
fn without_crashing<T>(work: impl FnOnce() -> Result<T, FileError>) -> Result<T, FileError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
        Err(FileError::new(
            "internal error: gpulint crashed on this file; please report it with the file attached",
        ))
    })
}
