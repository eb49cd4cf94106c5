//! An in-memory file system, for tests: no disk, no races, any layout.

use super::system::buffer_stamp;
use super::{FileRead, ReadError, Stamp, System, normalize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files held in memory, by path made lexically normal. Paths are taken as
/// they are given (no current directory): tests use absolute paths.
#[derive(Debug, Default)]
pub struct MemoryFs {
    files: Mutex<BTreeMap<PathBuf, String>>,
    /// Files that are there but cannot be read (a mode-000 file): their
    /// reads fail as the disk's do, with permission denied.
    unreadable: Mutex<BTreeSet<PathBuf>>,
}

impl MemoryFs {
    pub fn new(files: impl IntoIterator<Item = (PathBuf, String)>) -> Self {
        let fs = MemoryFs::default();
        for (path, text) in files {
            fs.write(&path, text);
        }
        fs
    }

    /// Creates or replaces a file.
    pub fn write(&self, path: &Path, text: impl Into<String>) {
        self.lock().insert(normalize(path), text.into());
    }

    /// Makes a file that is there unreadable, as `chmod 000` does to a user
    /// other than root: it is still a file, but reading it is refused.
    pub fn make_unreadable(&self, path: &Path) {
        self.unreadable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(normalize(path));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, String>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_unreadable(&self, path: &Path) -> bool {
        self.unreadable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(path)
    }
}

impl System for MemoryFs {
    fn read(&self, path: &Path) -> FileRead {
        let path = normalize(path);
        if self.is_unreadable(&path) && self.lock().contains_key(&path) {
            let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
            return Err((ReadError::from_io(&denied), String::new()));
        }
        if self.is_dir(&path) {
            let error = ReadError::new(super::ReadErrorKind::Directory, "is a directory");
            return Err((error, String::new()));
        }
        match self.lock().get(&path) {
            Some(text) => Ok((text.clone(), Some(buffer_stamp(text)))),
            None => Err((ReadError::missing(), String::new())),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.lock().contains_key(&normalize(path))
    }

    fn is_dir(&self, path: &Path) -> bool {
        let path = normalize(path);
        self.lock()
            .keys()
            .any(|f| f.starts_with(&path) && *f != path)
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        let path = normalize(path);
        let known = self.lock().contains_key(&path) || self.is_dir(&path);
        known.then_some(path)
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        self.lock().get(&normalize(path)).map(|t| buffer_stamp(t))
    }

    fn list_files(&self, dir: &Path) -> Option<Vec<OsString>> {
        let dir = normalize(dir);
        Some(
            self.lock()
                .keys()
                .filter(|f| f.parent() == Some(dir.as_path()))
                .filter_map(|f| f.file_name().map(|n| n.to_os_string()))
                .collect(),
        )
    }
}
