//! Writing fixed text back to its file without ever losing what was there.

use std::io::Write;
use std::path::Path;

/// Writes `fixed` over the file `path` was read from, atomically: a temporary
/// file in the same directory, flushed, given the original's owner, group,
/// permissions and extended attributes (ACLs among them) and renamed over
/// it. Symlinks are followed to the real file. A file with other hard links,
/// or whose owner or attributes the new file cannot be given, is rewritten
/// in place instead, so every name sees the fix and nothing of the file is
/// lost. Nothing is written when the file no longer holds `original`, or
/// when the fixed text would pass the file size limit (`ulimit -f`).
///
/// On any error the file holds what it held before: the temporary file is
/// removed, and an in-place write reserves the space it needs first and
/// puts the original back if it fails anyway.
pub fn write_fixed(path: &Path, original: &str, fixed: &str) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve the path: {e}"))?;
    // Renaming over a file needs only the directory's permission: the
    // file's own is what the user would meet writing it (`chmod 444`
    // says "do not change"), so it is asked first, as the shell would.
    #[cfg(unix)]
    unix::writable(&real)?;
    #[cfg(not(unix))]
    if std::fs::metadata(&real).is_ok_and(|m| m.permissions().readonly()) {
        return Err("the file is read-only; the file is unchanged".into());
    }
    #[cfg(unix)]
    unix::within_file_size_limit(fixed.len())?;
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
            return write_in_place(&real, original, fixed, &unchanged);
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
    // On an error the temporary file is removed when `temp` drops.
    temp.write_all(fixed.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| format!("cannot write the temporary file: {e}; the file is unchanged"))?;
    #[cfg(unix)]
    if unix::copy_owner_and_attributes(&real, &metadata, temp.as_file()).is_err() {
        // Not allowed to give a new file the original's owner, group or
        // attributes (gpulint runs as another user, a security label):
        // keep the original inode, and with it all of them.
        drop(temp);
        return write_in_place(&real, original, fixed, &unchanged);
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
/// where replacing the file would lose something, and made safe another
/// way: the blocks the fixed text needs are reserved before a byte is
/// written (a full disk then refuses up front), and if writing fails all
/// the same, `original` is written back.
#[cfg(unix)]
fn write_in_place(
    real: &Path,
    original: &str,
    fixed: &str,
    unchanged: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(real)
        .map_err(|e| format!("cannot open the file for writing: {e}"))?;
    unchanged("before writing it in place")?;
    unix::reserve(&file, fixed.len() as u64).map_err(|e| {
        format!("not enough space to write the fixes in place: {e}; the file is unchanged")
    })?;
    rewrite(&mut InPlace(&file), original.as_bytes(), fixed.as_bytes())
}

/// A file's bytes, as [`rewrite`] writes them.
#[cfg_attr(not(unix), allow(dead_code))]
trait Rewritable {
    fn write_at_start(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    fn set_len(&mut self, len: u64) -> std::io::Result<()>;
    fn sync(&mut self) -> std::io::Result<()>;
}

#[cfg(unix)]
struct InPlace<'a>(&'a std::fs::File);

#[cfg(unix)]
impl Rewritable for InPlace<'_> {
    fn write_at_start(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.0.write_all_at(bytes, 0)
    }

    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.0.sync_all()
    }
}

/// Replaces the content of `file` (which holds `original`) with `fixed`;
/// on failure, writes `original` back, so the file is never left cut short
/// or half rewritten.
#[cfg_attr(not(unix), allow(dead_code))]
fn rewrite(file: &mut dyn Rewritable, original: &[u8], fixed: &[u8]) -> Result<(), String> {
    let written = file
        .write_at_start(fixed)
        .and_then(|()| file.set_len(fixed.len() as u64))
        .and_then(|()| file.sync());
    let Err(error) = written else {
        return Ok(());
    };
    let restored = file
        .write_at_start(original)
        .and_then(|()| file.set_len(original.len() as u64))
        .and_then(|()| file.sync());
    match restored {
        Ok(()) => Err(format!(
            "cannot write the file: {error}; its original content was put back"
        )),
        Err(again) => Err(format!(
            "cannot write the file: {error}, and putting its original content back failed too ({again}): restore it from version control"
        )),
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    /// Refuses a file the effective user may not write (`access(2)` with
    /// `W_OK`, for the effective ids: what `test -w` answers, root's
    /// bypass included).
    pub fn writable(path: &Path) -> Result<(), String> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| "the path holds a NUL byte".to_string())?;
        // SAFETY: a NUL-terminated path that lives across the call.
        let status =
            unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
        if status == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        Err(format!(
            "the file is not writable ({error}); the file is unchanged"
        ))
    }

    /// Refuses a text longer than the file size limit (`ulimit -f`): past
    /// it a write raises SIGXFSZ, which would end gpulint mid-write.
    // `rlim_t` is narrower than u64 on some targets.
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn within_file_size_limit(len: usize) -> Result<(), String> {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid resource and a pointer to an rlimit to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } != 0
            || limit.rlim_cur == libc::RLIM_INFINITY
        {
            return Ok(());
        }
        if len as u64 > limit.rlim_cur as u64 {
            return Err(format!(
                "the fixed file would be {len} bytes, above the file size limit of {} bytes (`ulimit -f`); the file is unchanged",
                limit.rlim_cur
            ));
        }
        Ok(())
    }

    /// Makes sure `len` bytes of `file` have blocks on disk before it is
    /// rewritten in place: reserved with `fallocate` (keeping the size)
    /// where the file system can, else checked against the free space.
    pub fn reserve(file: &File, len: u64) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a valid descriptor; the range starts at 0.
            let done = unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    libc::FALLOC_FL_KEEP_SIZE,
                    0,
                    len as libc::off_t,
                )
            };
            if done == 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if !matches!(
                error.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL)
            ) {
                return Err(error);
            }
        }
        free_space_check(file, len)
    }

    /// Whether the file system has room for the bytes of `len` the file
    /// does not have blocks for yet (an estimate: where `fallocate` cannot
    /// reserve them).
    // The statvfs fields are narrower than u64 on some targets.
    #[allow(clippy::unnecessary_cast)]
    fn free_space_check(file: &File, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let allocated = file.metadata()?.blocks() * 512;
        let Some(more) = len.checked_sub(allocated).filter(|&m| m > 0) else {
            return Ok(());
        };
        // SAFETY: a valid descriptor and a zeroed statvfs to fill.
        let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stats) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let free = stats.f_bavail as u64 * stats.f_frsize as u64;
        if free < more {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        Ok(())
    }

    /// Gives `to` the owner, group, mode and extended attributes of the file
    /// at `from` (whose metadata is `metadata`).
    pub(crate) fn copy_owner_and_attributes(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that fails the way a full disk does: writes past `room`
    /// bytes fail after writing what fits.
    struct Filling {
        bytes: Vec<u8>,
        room: usize,
        /// Fail once only (the space of a write that failed is free again).
        fails_left: usize,
    }

    impl Rewritable for Filling {
        fn write_at_start(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            let fails = bytes.len() > self.room && self.fails_left > 0;
            let fits = if fails {
                self.fails_left -= 1;
                self.room
            } else {
                bytes.len()
            };
            if self.bytes.len() < fits {
                self.bytes.resize(fits, 0);
            }
            self.bytes[..fits].copy_from_slice(&bytes[..fits]);
            if fails {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "no space left on device",
                ));
            }
            Ok(())
        }

        fn set_len(&mut self, len: u64) -> std::io::Result<()> {
            self.bytes.resize(len as usize, 0);
            Ok(())
        }

        fn sync(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_rewrite_that_fails_puts_the_original_back() {
        let original = b"services:\n  db:\n    image: postgres\n";
        let fixed = b"services:\n  db:\n    shm_size: 8gb\n    image: postgres\n";
        let mut file = Filling {
            bytes: original.to_vec(),
            room: original.len(),
            fails_left: 1,
        };
        let error = rewrite(&mut file, original, fixed).unwrap_err();
        assert!(error.contains("original content was put back"), "{error}");
        assert_eq!(file.bytes, original);

        let mut roomy = Filling {
            bytes: original.to_vec(),
            room: usize::MAX,
            fails_left: 0,
        };
        rewrite(&mut roomy, original, fixed).unwrap();
        assert_eq!(roomy.bytes, fixed);
    }
}
