//! Writing fixed text back to its file.

use std::io::Write;
use std::path::Path;

/// Writes `fixed` over the file `path` was read from, atomically: a temporary
/// file in the same directory, flushed, given the original's owner, group,
/// permissions and extended attributes (ACLs among them) and renamed over
/// it. Symlinks are followed to the real file. A file with other hard links,
/// or whose owner or attributes the new file cannot be given, is rewritten
/// in place instead, so every name sees the fix and nothing of the file is
/// lost. Nothing is written when the file no longer holds `original`.
pub fn write_fixed(path: &Path, original: &str, fixed: &str) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve the path: {e}"))?;
    let unchanged = |what: &str| -> Result<(), String> {
        let now =
            std::fs::read(&real).map_err(|e| format!("cannot re-read the file {what}: {e}"))?;
        if now != original.as_bytes() {
            return Err(
                "the file changed on disk since gpulint read it; not overwritten (run again)"
                    .into(),
            );
        }
        Ok(())
    };
    unchanged("before writing")?;
    let metadata = std::fs::metadata(&real).map_err(|e| format!("cannot stat the file: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if metadata.nlink() > 1 {
            // A new file renamed over this name would split it from its
            // other names, which would keep the old text.
            return write_in_place(&real, fixed, &unchanged);
        }
    }
    let dir = real.parent().ok_or("the file has no parent directory")?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".gpulint-tmp")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot create a temporary file next to it: {e}"))?;
    temp.write_all(fixed.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| format!("cannot write the temporary file: {e}"))?;
    #[cfg(unix)]
    if unix::copy_owner_and_attributes(&real, &metadata, temp.as_file()).is_err() {
        // Not allowed to give a new file the original's owner, group or
        // attributes (gpulint runs as another user, a security label):
        // keep the original inode, and with it all of them.
        drop(temp);
        return write_in_place(&real, fixed, &unchanged);
    }
    #[cfg(not(unix))]
    std::fs::set_permissions(temp.path(), metadata.permissions())
        .map_err(|e| format!("cannot copy permissions: {e}"))?;
    unchanged("before replacing it")?;
    temp.persist(&real)
        .map_err(|e| format!("cannot replace the file: {}", e.error))?;
    Ok(())
}

/// Writes `fixed` into the file itself (the same inode), after checking once
/// more that it still holds what was verified. Not atomic, so used only
/// where replacing the file would lose something.
#[cfg(unix)]
fn write_in_place(
    real: &Path,
    fixed: &str,
    unchanged: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(real)
        .map_err(|e| format!("cannot open the file for writing: {e}"))?;
    unchanged("before writing it in place")?;
    file.write_all(fixed.as_bytes())
        .and_then(|()| file.set_len(fixed.len() as u64))
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write the file: {e}"))
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    /// Gives `to` the owner, group, mode and extended attributes of the file
    /// at `from` (whose metadata is `metadata`).
    pub fn copy_owner_and_attributes(
        from: &Path,
        metadata: &std::fs::Metadata,
        to: &File,
    ) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        // Owner first: changing it may clear set-user-ID bits the mode sets.
        std::os::unix::fs::fchown(to, Some(metadata.uid()), Some(metadata.gid()))?;
        to.set_permissions(metadata.permissions())?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        xattrs::copy(&File::open(from)?, to)?;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = from;
        Ok(())
    }

    /// Extended attributes through the Linux `f*xattr` calls. POSIX ACLs
    /// are the `system.posix_acl_*` attributes, so they are copied too.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    mod xattrs {
        use std::ffi::{CStr, CString};
        use std::fs::File;
        use std::io;
        use std::os::fd::AsRawFd;

        /// Makes `to`'s extended attributes those of `from`: a temporary
        /// file may have inherited a directory's default ACL.
        pub fn copy(from: &File, to: &File) -> io::Result<()> {
            let wanted = names(from)?;
            for name in names(to)? {
                if !wanted.contains(&name) {
                    // SAFETY: a valid descriptor and a NUL-terminated name.
                    let done = unsafe { libc::fremovexattr(to.as_raw_fd(), name.as_ptr()) };
                    if done != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            for name in &wanted {
                let value = value(from, name)?;
                // SAFETY: a valid descriptor, a NUL-terminated name and a
                // buffer of the length given.
                let done = unsafe {
                    libc::fsetxattr(
                        to.as_raw_fd(),
                        name.as_ptr(),
                        value.as_ptr().cast(),
                        value.len(),
                        0,
                    )
                };
                if done != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        }

        /// Calls `read` with a buffer until it is large enough: `read(None)`
        /// asks for the size; the size may grow between the two calls.
        fn read_sized(mut read: impl FnMut(Option<&mut [u8]>) -> isize) -> io::Result<Vec<u8>> {
            loop {
                let size = read(None);
                if size < 0 {
                    return Err(io::Error::last_os_error());
                }
                let mut buffer = vec![0u8; size as usize];
                let got = read(Some(&mut buffer));
                if got >= 0 {
                    buffer.truncate(got as usize);
                    return Ok(buffer);
                }
                let error = io::Error::last_os_error();
                if error.raw_os_error() != Some(libc::ERANGE) {
                    return Err(error);
                }
            }
        }

        fn names(file: &File) -> io::Result<Vec<CString>> {
            let list = read_sized(|buffer| {
                let (pointer, len) = buffer.map_or((std::ptr::null_mut(), 0), |b| {
                    (b.as_mut_ptr().cast(), b.len())
                });
                // SAFETY: a valid descriptor and a buffer of the length given.
                unsafe { libc::flistxattr(file.as_raw_fd(), pointer, len) }
            });
            let list = match list {
                Ok(list) => list,
                // A file system without extended attributes has none to keep.
                Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
            Ok(list
                .split(|&b| b == 0)
                .filter(|name| !name.is_empty())
                .map(|name| CString::new(name).expect("split at NUL"))
                .collect())
        }

        fn value(file: &File, name: &CStr) -> io::Result<Vec<u8>> {
            read_sized(|buffer| {
                let (pointer, len) = buffer.map_or((std::ptr::null_mut(), 0), |b| {
                    (b.as_mut_ptr().cast(), b.len())
                });
                // SAFETY: a valid descriptor, a NUL-terminated name and a
                // buffer of the length given.
                unsafe { libc::fgetxattr(file.as_raw_fd(), name.as_ptr(), pointer, len) }
            })
        }
    }
}
