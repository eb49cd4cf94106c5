//! Reading a file as text: the size limit, FIFOs and devices refused
//! without waiting, binary and non-UTF-8 files told apart.

use super::Stamp;
use std::path::Path;

/// Files larger than this are refused rather than parsed.
pub const MAX_FILE_SIZE: u64 = 16 * 1024 * 1024;

/// What kind of failure a read was: callers tell "nothing is there" (a
/// gitignored `.env`, a base not in the checkout) from "it is there and
/// cannot be read" (permission denied, a directory), which Compose refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// Nothing is there.
    Missing,
    /// It is there, but opening or reading it failed: permission denied,
    /// an I/O error.
    Unreadable,
    /// A directory where a file was asked for.
    Directory,
    /// A FIFO, socket or device: not read, since that could wait forever.
    NotRegular,
    /// Read, but not text gpulint reads: too large, binary, not UTF-8.
    NotText,
}

/// Why a file cannot be read as text, and where, when the problem has a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub message: String,
    /// Byte offset of the problem, when it has one.
    pub offset: Option<usize>,
    pub kind: ReadErrorKind,
}

impl ReadError {
    pub fn new(kind: ReadErrorKind, message: impl Into<String>) -> Self {
        ReadError {
            message: message.into(),
            offset: None,
            kind,
        }
    }

    /// The error of a read of a path where nothing is.
    pub fn missing() -> Self {
        ReadError::new(
            ReadErrorKind::Missing,
            "cannot read: no such file or directory",
        )
    }

    /// The error of an open or read that failed with `e`.
    pub(crate) fn from_io(e: &std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::NotFound {
            ReadError::missing()
        } else {
            ReadError::new(
                ReadErrorKind::Unreadable,
                format!("cannot read: {}", io_reason(e)),
            )
        }
    }

    /// Nothing is there: a cache may answer "not a file" from this read
    /// instead of asking the file system again.
    pub(crate) fn is_missing(&self) -> bool {
        self.kind == ReadErrorKind::Missing
    }

    /// The reason without the `cannot read: ` it is shown with
    /// (`permission denied`).
    pub fn reason(&self) -> &str {
        self.message
            .strip_prefix("cannot read: ")
            .unwrap_or(&self.message)
    }

    fn at(message: impl Into<String>, offset: usize) -> Self {
        ReadError {
            message: message.into(),
            offset: Some(offset),
            kind: ReadErrorKind::NotText,
        }
    }
}

/// Reads a file as UTF-8 text, refusing binary and oversized files. On
/// error, the part of the file that was text comes with the reason.
pub fn read_source(path: &Path) -> Result<String, (ReadError, String)> {
    read_source_stamped(path).map(|(text, _)| text)
}

/// [`read_source`], and the stamp of the file it read, taken from the same
/// open file.
pub fn read_source_stamped(path: &Path) -> Result<(String, Stamp), (ReadError, String)> {
    use std::io::Read;
    let cannot_read = |e: std::io::Error| (ReadError::from_io(&e), String::new());
    // One open and one fstat: the size check and the read see the same file.
    let file = open_nonblocking(path).map_err(cannot_read)?;
    let metadata = file.metadata().map_err(cannot_read)?;
    if metadata.is_dir() {
        return Err((
            ReadError::new(ReadErrorKind::Directory, "is a directory"),
            String::new(),
        ));
    }
    if !metadata.is_file() {
        // A FIFO, socket or device: reading it could wait forever or never end.
        return Err((
            ReadError::new(
                ReadErrorKind::NotRegular,
                "not a regular file (a FIFO, socket or device)",
            ),
            String::new(),
        ));
    }
    if metadata.len() > MAX_FILE_SIZE {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize + 1);
    // A file that grew since the fstat is still cut off at the limit.
    file.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(too_large(bytes.len() as u64));
    }
    let stamp = Stamp::of(&metadata);
    decode(bytes).map(|text| (text, stamp))
}

/// Opens for reading without waiting for a writer: opening a FIFO blocks
/// until one comes, which may be never. The flag changes nothing for a
/// regular file.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn too_large(size: u64) -> (ReadError, String) {
    (
        ReadError::new(
            ReadErrorKind::NotText,
            format!("file is too large ({size} bytes; gpulint reads at most {MAX_FILE_SIZE})"),
        ),
        String::new(),
    )
}

/// Why a file that is there cannot be read (a missing one is
/// [`ReadError::missing`]).
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Turns bytes into text, or explains why they are not a text file.
pub fn decode(bytes: Vec<u8>) -> Result<String, (ReadError, String)> {
    if let Some(nul) = memchr::memchr(0, &bytes[..bytes.len().min(8192)]) {
        return Err((
            ReadError::at("binary file (contains NUL bytes), not text", nul),
            String::new(),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
        (ReadError::at("not valid UTF-8 text", valid), prefix)
    })
}
