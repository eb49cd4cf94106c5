//! Paths and URIs as reports show them: relative to the working directory,
//! quoted as git quotes them in a diff, or as `file://` URIs.

use std::path::{Path, PathBuf};

/// A path as CI systems want it: relative to the working directory when it
/// lies under it, with `/` separators and no leading `./`.
pub(crate) fn shown_path(path: &Path) -> String {
    let relative = relative_to_cwd(path).unwrap_or_else(|| path.to_path_buf());
    let shown = relative.to_string_lossy();
    // Only Windows separates with `\`; elsewhere it is part of a name.
    let shown = if cfg!(windows) {
        shown.replace('\\', "/")
    } else {
        shown.into_owned()
    };
    let mut shown = shown.as_str();
    while let Some(rest) = shown.strip_prefix("./") {
        shown = rest;
    }
    shown.to_string()
}

/// `diff` (a unified diff of `path`, its header written from the lossy
/// [`shown_path`]) with a header that names `path` byte for byte when it
/// is not UTF-8: quoted as git quotes it (`"a/dir\377/x"`, octal escapes
/// for bytes outside printable ASCII), which `git apply` and `patch` read
/// back to the same bytes. A UTF-8 path's diff is returned as it is.
pub(crate) fn with_exact_diff_header(path: &Path, diff: String) -> String {
    let Some(bytes) = non_utf8_shown_path(path) else {
        return diff;
    };
    let mut lines = diff.splitn(3, '\n');
    let (Some(old), Some(new), Some(rest)) = (lines.next(), lines.next(), lines.next()) else {
        return diff;
    };
    if !old.starts_with("--- ") || !new.starts_with("+++ ") {
        return diff;
    }
    let bytes = bytes.strip_prefix(b"/").unwrap_or(&bytes);
    let quoted = |prefix: &[u8]| git_quoted_bytes(&[prefix, bytes].concat());
    format!("--- {}\n+++ {}\n{rest}", quoted(b"a/"), quoted(b"b/"))
}

/// [`shown_path`]'s bytes when they are not UTF-8.
#[cfg(unix)]
fn non_utf8_shown_path(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let relative = relative_to_cwd(path).unwrap_or_else(|| path.to_path_buf());
    let mut bytes = relative.as_os_str().as_bytes();
    if std::str::from_utf8(bytes).is_ok() {
        return None;
    }
    while let Some(rest) = bytes.strip_prefix(b"./") {
        bytes = rest;
    }
    Some(bytes.to_vec())
}

#[cfg(not(unix))]
fn non_utf8_shown_path(_path: &Path) -> Option<Vec<u8>> {
    None
}

/// A path in double quotes with C escapes, as git writes one that is not
/// plain: `\"`, `\\`, `\t`, `\n`..., and octal for every other byte outside
/// printable ASCII.
fn git_quoted_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\x07' => out.push_str("\\a"),
            b'\x08' => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\x0b' => out.push_str("\\v"),
            b'\x0c' => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// `path` relative to the working directory, when it lies under it, also
/// when one of them is reached through a symlink (`/tmp` on macOS).
fn relative_to_cwd(path: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let absolute = std::path::absolute(path).ok()?;
    // A `..` is resolved through the file system (git and patch refuse a
    // header with one, and `a/../a/x` is `a/x` only when `a` is no link).
    let has_parent = |p: &Path| {
        p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    };
    if let Ok(relative) = absolute.strip_prefix(&cwd)
        && !has_parent(relative)
    {
        return Some(relative.to_path_buf());
    }
    let real = match absolute.parent() {
        Some(dir) => dir.canonicalize().ok()?.join(absolute.file_name()?),
        None => absolute.clone(),
    };
    real.strip_prefix(cwd.canonicalize().ok()?)
        .ok()
        .map(Path::to_path_buf)
}

/// A `file:` URI for an absolute path (`/` separators).
pub(crate) fn file_uri(absolute: &str) -> String {
    let path = encode_uri_path(absolute);
    if path.starts_with('/') {
        format!("file://{path}")
    } else {
        // A Windows drive path: `C:/x` becomes `file:///C:/x`.
        format!("file:///{path}")
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters, `/`, and
/// the `:` of a drive letter.
pub(crate) fn encode_uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, byte) in path.bytes().enumerate() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/')
            || (byte == b':' && i == 1 && path.as_bytes()[0].is_ascii_alphabetic());
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The path of a `file:` URI, percent-decoded; `None` for other schemes or
/// a path that is not UTF-8 once decoded.
pub(crate) fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///C:/x` on Windows; `file://host/x` names another host.
    let path = rest.strip_prefix('/').map(|p| {
        if p.as_bytes().get(1) == Some(&b':') {
            p.to_string()
        } else {
            format!("/{p}")
        }
    })?;
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            i += 3;
            continue;
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_are_percent_encoded() {
        assert_eq!(
            encode_uri_path("dir with space/a#b%.yml"),
            "dir%20with%20space/a%23b%25.yml"
        );
        assert_eq!(encode_uri_path("C:/x y"), "C:/x%20y");
        assert_eq!(encode_uri_path("é"), "%C3%A9");
        assert_eq!(file_uri("/srv/a b"), "file:///srv/a%20b");
    }

    #[test]
    fn git_quotes_bytes_as_git_does() {
        assert_eq!(
            git_quoted_bytes(b"a/d\xff\xc3/x \"y\"\n"),
            r#""a/d\377\303/x \"y\"\n""#
        );
    }

    #[test]
    fn file_uris_round_trip() {
        for path in ["/srv/a b/compose.yaml", "/x/é#1%.yml"] {
            assert_eq!(file_uri_path(&file_uri(path)), Some(PathBuf::from(path)));
        }
        assert_eq!(file_uri_path("untitled:Untitled-1"), None);
    }
}
