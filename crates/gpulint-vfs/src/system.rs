//! Where the engine reads files from: through a [`System`], so that a lint
//! depends only on its inputs. The command line reads the [`Disk`]; the
//! language server reads its open buffers first ([`Overlay`]), so that
//! cross-file findings follow edits that are not saved yet; tests can use
//! a [`super::MemoryFs`].

use super::{ReadError, Stamp, normalize, read_source_stamped};
use foldhash::HashMap;
use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// A file's text with its stamp, or why it cannot be read and the part of
/// it that was text.
pub type FileRead = Result<(String, Option<Stamp>), (ReadError, String)>;

/// The files the engine can see.
pub trait System: Send + Sync {
    /// The text of `path` with its stamp, or why it cannot be read.
    fn read(&self, path: &Path) -> FileRead;

    /// Whether `path` names a file that [`System::read`] may read.
    fn is_file(&self, path: &Path) -> bool;

    /// Whether `path` names a directory (a file name that names one is
    /// refused by Compose, where a missing one may be left out on purpose).
    fn is_dir(&self, path: &Path) -> bool;

    /// The absolute path with symlinks resolved, as `std::fs::canonicalize`.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;

    /// The stamp `path` has now: what [`System::read`] would return with it.
    fn stamp(&self, path: &Path) -> Option<Stamp>;

    /// The names of the regular files in directory `dir`, unsorted; `None`
    /// when it cannot be listed.
    fn list_files(&self, dir: &Path) -> Option<Vec<OsString>>;
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

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        Some(Stamp::of(&std::fs::metadata(path).ok()?))
    }

    fn list_files(&self, dir: &Path) -> Option<Vec<OsString>> {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        Some(
            std::fs::read_dir(dir)
                .ok()?
                .filter_map(Result::ok)
                // A symlink to a file counts, as `is_file` follows it.
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name())
                .collect(),
        )
    }
}

/// The stamp of a text that did not come from disk: equal texts, equal stamps.
pub fn buffer_stamp(text: &str) -> Stamp {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    Stamp::Buffer(hasher.finish())
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
            Some(text) => Ok((text.clone(), Some(buffer_stamp(text)))),
            None => Disk.read(path),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.buffer(path).is_some() || Disk.is_file(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.buffer(path).is_none() && Disk.is_dir(path)
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        // A buffer for a file not yet saved has no canonical path on disk.
        Disk.canonicalize(path)
            .or_else(|| self.buffer(path).map(|_| normalize(path)))
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        match self.buffer(path) {
            Some(text) => Some(buffer_stamp(text)),
            None => Disk.stamp(path),
        }
    }

    fn list_files(&self, dir: &Path) -> Option<Vec<OsString>> {
        let mut names = Disk.list_files(dir).unwrap_or_default();
        let dir = normalize(dir);
        for path in self.buffers.keys() {
            if path.parent().map(normalize).as_deref() == Some(dir.as_path())
                && let Some(name) = path.file_name()
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_os_string());
            }
        }
        Some(names)
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
        assert!(
            !stamp.unwrap().is_disk(),
            "a buffer is not what the disk holds"
        );
        assert_eq!(overlay.stamp(&saved), stamp);
        assert!(overlay.is_file(&unsaved) && !Disk.is_file(&unsaved));
        let listed = overlay.list_files(&dir.path().join("new")).unwrap();
        assert_eq!(listed, vec![OsString::from("compose.yaml")]);

        let (text, stamp) = overlay.read(&other).unwrap();
        assert_eq!(text, "services: {}\n");
        assert!(stamp.unwrap().is_disk() && overlay.stamp(&other) == stamp);
        assert!(overlay.read(&dir.path().join("missing")).is_err());
    }
}
