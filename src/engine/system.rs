//! How the engine reads the other files a text refers to (the Dockerfile a
//! compose service builds, a compose project's override file): through a
//! [`System`], so that the lint itself depends only on its inputs. The
//! command line reads the [`Disk`]; the language server reads its open
//! buffers first ([`Overlay`]), so that cross-file findings follow edits
//! that are not saved yet.

use super::build::{DiskStamp, normalize};
use super::{FileError, read_source_stamped};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A file's text with its stamp when it came from disk (see [`DiskStamp`]),
/// or why it cannot be read and the part of it that was text.
pub type FileRead = Result<(String, Option<DiskStamp>), (FileError, String)>;

/// The files the engine can see.
pub trait System: Send + Sync {
    /// The text of `path`, with its stamp when it was read from disk (see
    /// [`DiskStamp`]), or why it cannot be read.
    fn read(&self, path: &Path) -> FileRead;

    /// Whether `path` names a file that [`System::read`] may read.
    fn is_file(&self, path: &Path) -> bool;

    /// The absolute path with symlinks resolved, as `std::fs::canonicalize`.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;

    /// The stamp `path` has on disk now; `None` when what [`System::read`]
    /// returns for it does not come from disk, or it is not there.
    fn stamp(&self, path: &Path) -> Option<DiskStamp>;
}

/// The file system, as it is now.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl System for Disk {
    fn read(&self, path: &Path) -> FileRead {
        read_source_stamped(path).map(|(text, stamp)| (text, Some(stamp)))
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }

    fn stamp(&self, path: &Path) -> Option<DiskStamp> {
        Some(DiskStamp::of(&std::fs::metadata(path).ok()?))
    }
}

/// Buffers an editor has open, over the disk: a path with a buffer reads as
/// the buffer, saved or not; every other path reads from disk.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Keyed by the path made lexically normal (see [`normalize`]).
    buffers: HashMap<PathBuf, String>,
}

impl Overlay {
    pub fn new(buffers: impl IntoIterator<Item = (PathBuf, String)>) -> Self {
        Overlay {
            buffers: buffers
                .into_iter()
                .map(|(path, text)| (normalize(&path), text))
                .collect(),
        }
    }

    fn buffer(&self, path: &Path) -> Option<&String> {
        if self.buffers.is_empty() {
            return None;
        }
        self.buffers.get(&normalize(path))
    }
}

impl System for Overlay {
    fn read(&self, path: &Path) -> FileRead {
        match self.buffer(path) {
            Some(text) => Ok((text.clone(), None)),
            None => Disk.read(path),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.buffer(path).is_some() || Disk.is_file(path)
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        // A buffer for a file not yet saved has no canonical path on disk.
        Disk.canonicalize(path)
            .or_else(|| self.buffer(path).map(|_| normalize(path)))
    }

    fn stamp(&self, path: &Path) -> Option<DiskStamp> {
        match self.buffer(path) {
            Some(_) => None,
            None => Disk.stamp(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_buffer_hides_the_file_on_disk_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("Dockerfile");
        let other = dir.path().join("other.yaml");
        std::fs::write(&saved, "FROM python:3.12\n").unwrap();
        std::fs::write(&other, "services: {}\n").unwrap();
        let unsaved = dir.path().join("new/compose.yaml");
        let overlay = Overlay::new([
            (
                dir.path().join("./Dockerfile"),
                "FROM nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n".to_string(),
            ),
            (unsaved.clone(), "services: {}\n".to_string()),
        ]);

        let (text, stamp) = overlay.read(&saved).unwrap();
        assert!(text.starts_with("FROM nvcr.io"), "{text}");
        assert_eq!(stamp, None, "a buffer is not what the disk holds");
        assert_eq!(overlay.stamp(&saved), None);
        assert!(overlay.is_file(&unsaved) && !Disk.is_file(&unsaved));

        let (text, stamp) = overlay.read(&other).unwrap();
        assert_eq!(text, "services: {}\n");
        assert!(stamp.is_some() && overlay.stamp(&other) == stamp);
        assert!(overlay.read(&dir.path().join("missing")).is_err());
    }
}
