//! What a file was when it was read.

/// A file's identity, size and modification and change times when it was
/// read from disk, or the version of an editor buffer. Equal stamps mean
/// the same contents, unless a file on disk was rewritten to the same size
/// within one tick of the file system's clock: the race any two reads of a
/// changing file have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stamp {
    Disk {
        len: u64,
        modified: Option<std::time::SystemTime>,
        /// Device, inode and change time (seconds, nanoseconds).
        identity: (u64, u64, i64, i64),
    },
    /// An editor buffer: its contents' version, as the editor counts them.
    Buffer(u64),
}

impl Stamp {
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let identity = {
            use std::os::unix::fs::MetadataExt;
            (
                metadata.dev(),
                metadata.ino(),
                metadata.ctime(),
                metadata.ctime_nsec(),
            )
        };
        #[cfg(not(unix))]
        let identity = (0, 0, 0, 0);
        Stamp::Disk {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            identity,
        }
    }

    /// The stamp came from the disk (a buffer's never stands in for the file).
    pub fn is_disk(&self) -> bool {
        matches!(self, Stamp::Disk { .. })
    }
}
