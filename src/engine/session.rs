//! A run of the engine: the files it reads (a [`System`]) and what it
//! keeps between files, passed explicitly to whatever lints, inspects or
//! fixes. The command line makes one per run; the language server makes one
//! per lint, over its open buffers.

use crate::model::dockerfile::DockerfileModel;
use crate::vfs::{Disk, System};
use crate::vfs::{Stamp, normalize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many Dockerfile parses a session keeps. Files are linted in path
/// order, so a compose file is usually linted soon after the Dockerfile
/// next to it that it builds; with a few threads linting at once, a few
/// dozen recent parses cover that.
const RECENT_DOCKERFILES: usize = 64;

pub struct Session {
    system: Box<dyn System>,
    /// The Dockerfiles this session parsed last, newest last.
    dockerfiles: Mutex<VecDeque<Remembered>>,
}

/// A Dockerfile the session parsed.
struct Remembered {
    path: PathBuf,
    text: String,
    /// Set when `text` is what the file held on disk at this stamp.
    stamp: Option<Stamp>,
    model: Arc<DockerfileModel>,
}

impl Session {
    pub fn new(system: impl System + 'static) -> Self {
        Session {
            system: Box::new(system),
            dockerfiles: Mutex::new(VecDeque::new()),
        }
    }

    /// A session that reads the disk.
    pub fn on_disk() -> Self {
        Session::new(Disk)
    }

    pub fn system(&self) -> &dyn System {
        self.system.as_ref()
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, VecDeque<Remembered>> {
        // A rule that panicked while another thread held the lock left the
        // cache as it was; its entries are still whole.
        self.dockerfiles
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps a Dockerfile's parse for a compose file that builds it.
    /// `stamp` is set when `text` is the file as it was on disk then.
    pub(super) fn remember_dockerfile(
        &self,
        path: &Path,
        text: &str,
        stamp: Option<Stamp>,
        model: Arc<DockerfileModel>,
    ) {
        let mut recent = self.recent();
        if recent.len() == RECENT_DOCKERFILES {
            recent.pop_front();
        }
        recent.push_back(Remembered {
            path: normalize(path),
            text: text.to_string(),
            stamp,
            model,
        });
    }

    /// The remembered parse of `path`, if it was parsed from `text`.
    pub(super) fn recalled(&self, path: &Path, text: &str) -> Option<Arc<DockerfileModel>> {
        self.recent()
            .iter()
            .rev()
            .find(|r| r.path == path && r.text == text)
            .map(|r| r.model.clone())
    }

    /// The remembered text and parse of `path`, without reading it, when it
    /// was read from disk and the file system says it has not changed since:
    /// one `stat` instead of an open, reads and a close.
    pub(super) fn recalled_unchanged(&self, path: &Path) -> Option<(String, Arc<DockerfileModel>)> {
        let (stamp, text, model) = {
            let recent = self.recent();
            let r = recent.iter().rev().find(|r| r.path == path)?;
            (r.stamp?, r.text.clone(), r.model.clone())
        };
        (self.system.stamp(path)? == stamp).then_some((text, model))
    }
}
