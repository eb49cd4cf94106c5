//! Every file read once per run: a cache over a [`System`], keyed by the
//! path made lexically normal.
//!
//! The command line's run sees the files as they were when it read them
//! (a snapshot: nothing is read twice). A long-lived session (the language
//! server's) revalidates each file by its [`Stamp`] when asked for it, so
//! an edited buffer or a file saved on disk is read again and nothing else.

use super::{ReadError, Stamp, System, normalized};
use crate::text::SourceFile;
use foldhash::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// A file's text as read once: the path it was asked for (as the user
/// shows it), the text with its line index, and its stamp.
#[derive(Debug, Clone)]
pub struct Text {
    pub source: Arc<SourceFile>,
    pub stamp: Option<Stamp>,
}

/// Why a file could not be read, and the part of it that was text.
pub(crate) type Failure = Arc<(ReadError, String)>;

/// What a cache held before it forgot it: freed when dropped.
pub type Forgotten = Box<dyn std::any::Any + Send>;

type Slot = Arc<OnceLock<Result<Text, Failure>>>;

/// The files of one run, each read at most once (see the module docs).
///
/// Keyed by the normal path's bytes: hashing them is a fraction of
/// hashing a `Path` component by component, and every key is normal.
pub struct Files {
    system: Box<dyn System>,
    revalidate: bool,
    texts: RwLock<HashMap<OsString, Slot>>,
    canonical: RwLock<HashMap<OsString, Option<PathBuf>>>,
    /// Whether each path asked about is a file, for a snapshot: a project
    /// asks for the same `.env`, `gpulint.toml` and override files once per
    /// file of its directory, and most of them do not exist.
    is_file: RwLock<HashMap<OsString, bool>>,
    reads: AtomicUsize,
}

impl Files {
    /// A run that reads each file once and keeps it.
    pub fn snapshot(system: impl System + 'static) -> Self {
        Files::with(Box::new(system), false)
    }

    /// A long-lived session: each file is checked against its stamp when
    /// asked for, and read again when it changed.
    pub fn revalidating(system: impl System + 'static) -> Self {
        Files::with(Box::new(system), true)
    }

    fn with(system: Box<dyn System>, revalidate: bool) -> Self {
        Files {
            system,
            revalidate,
            texts: RwLock::default(),
            canonical: RwLock::default(),
            is_file: RwLock::default(),
            reads: AtomicUsize::new(0),
        }
    }

    pub fn system(&self) -> &dyn System {
        self.system.as_ref()
    }

    /// The next generation of a long-lived session: files read from
    /// `system` (an editor's buffers after an edit), revalidated by stamp
    /// against what this one read, so an unchanged file keeps its text (the
    /// same [`SourceFile`], and with it its parse).
    pub fn renewed(&self, system: impl System + 'static) -> Files {
        let texts = self.texts.read().unwrap_or_else(|p| p.into_inner()).clone();
        Files {
            system: Box::new(system),
            revalidate: true,
            texts: RwLock::new(texts),
            canonical: RwLock::default(),
            is_file: RwLock::default(),
            reads: AtomicUsize::new(0),
        }
    }

    /// Forgets every text read so far (a long run's files, once linted):
    /// a file asked for again is read again.
    ///
    /// Returns what was forgotten, for the caller to drop where freeing it
    /// costs least (another thread, while the next files are read).
    pub fn forget(&self) -> Forgotten {
        fn take<T: Default>(lock: &RwLock<T>) -> T {
            std::mem::take(&mut *lock.write().unwrap_or_else(|p| p.into_inner()))
        }
        Box::new((
            take(&self.texts),
            take(&self.canonical),
            take(&self.is_file),
        ))
    }

    /// How many times a file was read from the [`System`] (for tests and
    /// benchmarks: each file once per run).
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    /// The text of `path`, read once.
    pub fn read(&self, path: &Path) -> Result<Text, Failure> {
        let key = normalized(path);
        let slot = self.slot(key.as_os_str(), path);
        slot.get_or_init(|| {
            self.reads.fetch_add(1, Ordering::Relaxed);
            match self.system.read(path) {
                Ok((text, stamp)) => Ok(Text {
                    source: Arc::new(SourceFile::new(path.to_path_buf(), text)),
                    stamp,
                }),
                Err(failure) => Err(Arc::new(failure)),
            }
        })
        .clone()
    }

    /// The slot for `key`: the cached one when it is still valid.
    fn slot(&self, key: &std::ffi::OsStr, path: &Path) -> Slot {
        let cached = self
            .texts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        if let Some(slot) = cached
            && (!self.revalidate || self.still_valid(&slot, path))
        {
            return slot;
        }
        let mut texts = self.texts.write().unwrap_or_else(|p| p.into_inner());
        // Another thread may have put a fresh slot there meanwhile.
        if let Some(slot) = texts.get(key)
            && (!self.revalidate || self.still_valid(slot, path))
        {
            return slot.clone();
        }
        let slot = Slot::default();
        texts.insert(key.to_os_string(), slot.clone());
        slot
    }

    fn still_valid(&self, slot: &Slot, path: &Path) -> bool {
        match slot.get() {
            // Being read by another thread right now: that read is fresh.
            None => true,
            Some(Ok(text)) => text.stamp.is_some() && text.stamp == self.system.stamp(path),
            // A file that could not be read may be there now.
            Some(Err(_)) => !self.system.is_file(path),
        }
    }

    /// Whether `path` is a file that can be read: from the cache when it
    /// was read, else from the [`System`].
    pub fn is_file(&self, path: &Path) -> bool {
        if self.revalidate {
            return self.system.is_file(path);
        }
        let key = normalized(path);
        let key = key.as_os_str();
        // A read answers it: a file was read, or nothing was there (a
        // project reads `.env` and then asks whether it is a file).
        let known = self
            .texts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .and_then(|slot| match slot.get()? {
                Ok(_) => Some(true),
                Err(failure) if failure.0.is_missing() => Some(false),
                Err(_) => None,
            });
        if let Some(answer) = known {
            return answer;
        }
        if let Some(&answer) = self
            .is_file
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return answer;
        }
        let answer = self.system.is_file(path);
        self.is_file
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_os_string(), answer);
        answer
    }

    /// Whether `path` is a directory, asked of the [`System`] (rarely: for
    /// a file a project names that is not a file).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.system.is_dir(path)
    }

    /// The canonical path, asked of the [`System`] once per path.
    pub fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        let key = normalized(path);
        if let Some(known) = self
            .canonical
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key.as_os_str())
        {
            return known.clone();
        }
        let found = self.system.canonicalize(path);
        self.canonical
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.as_os_str().to_os_string(), found.clone());
        found
    }

    /// The names of the files in `dir`.
    pub fn list_files(&self, dir: &Path) -> Vec<std::ffi::OsString> {
        self.system.list_files(dir).unwrap_or_default()
    }

    /// The stamp `path` has now.
    pub fn stamp(&self, path: &Path) -> Option<Stamp> {
        self.system.stamp(path)
    }
}

/// The cache is itself a [`System`]: code written against a `System`
/// (discovery) reads through it and shares its reads.
impl System for Files {
    fn read(&self, path: &Path) -> super::FileRead {
        match Files::read(self, path) {
            Ok(text) => Ok((text.source.text.clone(), text.stamp)),
            Err(failure) => Err((failure.0.clone(), failure.1.clone())),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        Files::is_file(self, path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        Files::is_dir(self, path)
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        Files::canonicalize(self, path)
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        Files::stamp(self, path)
    }

    fn list_files(&self, dir: &Path) -> Option<Vec<std::ffi::OsString>> {
        Some(Files::list_files(self, dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryFs;

    #[test]
    fn a_snapshot_reads_each_file_once_whatever_path_names_it() {
        let files = Files::snapshot(MemoryFs::new([(
            PathBuf::from("/p/compose.yaml"),
            "services: {}\n".to_string(),
        )]));
        for path in [
            "/p/compose.yaml",
            "/p/./compose.yaml",
            "/p/x/../compose.yaml",
        ] {
            let text = files.read(Path::new(path)).unwrap();
            assert_eq!(text.source.text, "services: {}\n");
        }
        assert!(files.read(Path::new("/p/missing.yaml")).is_err());
        assert!(files.read(Path::new("/p/missing.yaml")).is_err());
        assert_eq!(files.reads(), 2);
    }

    /// A [`MemoryFs`] that counts the questions it is asked.
    struct Counting {
        files: MemoryFs,
        asked: Arc<AtomicUsize>,
    }

    impl System for Counting {
        fn read(&self, path: &Path) -> crate::FileRead {
            self.asked.fetch_add(1, Ordering::Relaxed);
            self.files.read(path)
        }
        fn is_file(&self, path: &Path) -> bool {
            self.asked.fetch_add(1, Ordering::Relaxed);
            self.files.is_file(path)
        }
        fn is_dir(&self, path: &Path) -> bool {
            self.files.is_dir(path)
        }
        fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
            self.files.canonicalize(path)
        }
        fn stamp(&self, path: &Path) -> Option<Stamp> {
            self.files.stamp(path)
        }
        fn list_files(&self, dir: &Path) -> Option<Vec<OsString>> {
            self.files.list_files(dir)
        }
    }

    #[test]
    fn a_read_answers_whether_its_path_is_a_file() {
        let asked = Arc::new(AtomicUsize::new(0));
        let files = Files::snapshot(Counting {
            files: MemoryFs::new([(PathBuf::from("/p/compose.yaml"), "services: {}\n".into())]),
            asked: Arc::clone(&asked),
        });
        assert!(files.read(Path::new("/p/.env")).is_err());
        assert!(files.read(Path::new("/p/compose.yaml")).is_ok());
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        // A project reads `.env`, then asks whether it is there.
        assert!(!files.is_file(Path::new("/p/.env")));
        assert!(files.is_file(Path::new("/p/compose.yaml")));
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        // A path never read is asked of the system, once.
        assert!(!files.is_file(Path::new("/p/gpulint.toml")));
        assert!(!files.is_file(Path::new("/p/gpulint.toml")));
        assert_eq!(asked.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_revalidating_session_reads_a_changed_file_again_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.yaml");
        let b = dir.path().join("b.yaml");
        std::fs::write(&a, "a: 1\n").unwrap();
        std::fs::write(&b, "b: 1\n").unwrap();
        let files = Files::revalidating(super::super::Disk);
        assert_eq!(files.read(&a).unwrap().source.text, "a: 1\n");
        assert_eq!(files.read(&b).unwrap().source.text, "b: 1\n");
        std::fs::write(&a, "a: 22\n").unwrap();
        assert_eq!(files.read(&a).unwrap().source.text, "a: 22\n");
        assert_eq!(files.read(&b).unwrap().source.text, "b: 1\n");
        assert_eq!(files.reads(), 3);
        // A file that was missing is read once it is there.
        let c = dir.path().join("c.yaml");
        assert!(files.read(&c).is_err());
        std::fs::write(&c, "c: 1\n").unwrap();
        assert!(files.read(&c).is_ok());
    }

    #[test]
    fn a_renewed_cache_reads_only_what_changed_and_keeps_the_rest() {
        let a = PathBuf::from("/p/a.yaml");
        let b = PathBuf::from("/p/b.yaml");
        let first = Files::revalidating(MemoryFs::new([
            (a.clone(), "a: 1\n".to_string()),
            (b.clone(), "b: 1\n".to_string()),
        ]));
        let a_then = first.read(&a).unwrap();
        let b_then = first.read(&b).unwrap();
        // The editor's next buffers: `a` edited, `b` as it was.
        let next = first.renewed(MemoryFs::new([
            (a.clone(), "a: 2\n".to_string()),
            (b.clone(), "b: 1\n".to_string()),
        ]));
        let a_now = next.read(&a).unwrap();
        let b_now = next.read(&b).unwrap();
        assert_eq!(a_now.source.text, "a: 2\n");
        assert!(!Arc::ptr_eq(&a_now.source, &a_then.source));
        // The same text, so parses keyed by it are kept.
        assert!(Arc::ptr_eq(&b_now.source, &b_then.source));
        assert_eq!(next.reads(), 1);
    }
}
