//! An in-memory file system, for tests: no disk, no races, any layout.

use super::system::buffer_stamp;
use super::{FileRead, ReadError, Stamp, System, normalize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files held in memory, by path made lexically normal. Paths are taken as
/// they are given (no current directory): tests use absolute paths.
#[derive(Debug, Default)]
pub struct MemoryFs {
    files: Mutex<BTreeMap<PathBuf, String>>,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, String>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl System for MemoryFs {
    fn read(&self, path: &Path) -> FileRead {
        match self.lock().get(&normalize(path)) {
            Some(text) => Ok((text.clone(), Some(buffer_stamp(text)))),
            None => Err((ReadError::missing(), String::new())),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.lock().contains_key(&normalize(path))
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        let path = normalize(path);
        let files = self.lock();
        let is_dir = files.keys().any(|f| f.starts_with(&path) && *f != path);
        (files.contains_key(&path) || is_dir).then_some(path)
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
