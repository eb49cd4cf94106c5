//! Paths compared as users write them.

use std::path::{Component, Path, PathBuf};

/// A path's file name as text to match names against (`compose.yaml`,
/// `Dockerfile.gpu`, `run.sh`), `""` when it has none. A name that is not
/// UTF-8 (a Latin-1 `compose-\xe9.yaml`) is read lossily: each byte that is
/// not UTF-8 becomes U+FFFD, which no name gpulint looks for holds, so the
/// ASCII names and suffixes it matches are matched on the name's bytes and
/// such a file is recognised as it is when named on the command line.
/// (The path itself stays bytes; only its name is matched as text.)
pub fn file_name_text(path: &Path) -> std::borrow::Cow<'_, str> {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
}

/// `a/./b/../c` → `a/c`, lexically (symlinks are not resolved, so the path
/// stays the one users see).
pub fn normalize(path: &Path) -> PathBuf {
    normalized(path).into_owned()
}

/// [`normalize`], borrowing a path that is already normal (almost every
/// path a run asks about) rather than copying it.
pub fn normalized(path: &Path) -> std::borrow::Cow<'_, Path> {
    if is_normal(path) {
        return std::borrow::Cow::Borrowed(path);
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `path` is already what [`normalize`] makes of it: no `.` or
/// `..` component, no empty one, no trailing separator. Almost every path
/// a run asks about is (they are built by joining names), and the check is
/// a scan, where rebuilding the path component by component allocates.
fn is_normal(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.is_empty() || bytes.last() == Some(&b'/') || (!cfg!(unix) && bytes.contains(&b'\\')) {
        return false;
    }
    // Each component: not empty (but the root's), not `.`, not `..`.
    let mut start = 0;
    for end in memchr::memchr_iter(b'/', bytes).chain([bytes.len()]) {
        let part = &bytes[start..end];
        if (start > 0 && part.is_empty()) || part == b"." || part == b".." {
            return false;
        }
        start = end + 1;
    }
    true
}

/// `path` relative to `root` (an absolute, normalised directory: a
/// configuration's), as gpulint.toml's globs match it: made absolute with
/// its `.` segments dropped, else through its canonical form (a path that
/// reaches `root` through a link); as it is when it is outside `root`.
pub fn relative_to(root: &Path, path: &Path) -> PathBuf {
    // Collecting the components drops `.` segments (`./a` walks from `.`).
    let absolute: PathBuf = std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .components()
        .collect();
    if let Ok(rel) = absolute.strip_prefix(root) {
        return rel.to_path_buf();
    }
    std::fs::canonicalize(&absolute)
        .ok()
        .and_then(|c| c.strip_prefix(root).ok().map(Path::to_path_buf))
        .unwrap_or(absolute)
}

/// gpulint.toml's globs (`include`, `per-file-ignores`, `[compose]
/// fragments`) as one matcher: a plain name (no `/`) matches at any depth.
/// `origin` names the setting in the error.
pub fn glob_set(patterns: &[String], origin: &str) -> Result<globset::GlobSet, String> {
    let mut builder = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::Glob::new(p).map_err(|e| format!("{origin}: bad glob `{p}`: {e}"))?;
        builder.add(glob);
        if !p.contains('/') {
            builder.add(globset::Glob::new(&format!("**/{p}")).map_err(|e| e.to_string())?);
        }
    }
    builder.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::{Path, PathBuf};

    #[test]
    fn paths_are_normalized_lexically() {
        assert_eq!(
            normalize(Path::new("fixtures/x/./trainer/Dockerfile")),
            Path::new("fixtures/x/trainer/Dockerfile")
        );
        assert_eq!(
            normalize(Path::new("a/b/../../c/Dockerfile")),
            Path::new("c/Dockerfile")
        );
        assert_eq!(
            normalize(Path::new("../up/Dockerfile")),
            Path::new("../up/Dockerfile")
        );
        assert_eq!(normalize(Path::new("./")), Path::new("."));
    }

    #[test]
    fn the_fast_path_agrees_with_the_components() {
        for path in [
            "a/b",
            "/a/b",
            "a//b",
            "a/b/",
            "/",
            "//a",
            "a/./b",
            "a/.",
            ".",
            "..",
            "../a",
            "a/..",
            "a/.b",
            "a/b..",
            "...",
            "",
            "./a",
            "/..",
            "a/b/../../..",
        ] {
            let path = Path::new(path);
            if super::is_normal(path) {
                let mut slow = PathBuf::new();
                path.components().for_each(|c| slow.push(c.as_os_str()));
                assert_eq!(normalize(path), slow, "{path:?}");
                assert_eq!(normalize(path).as_os_str(), path.as_os_str(), "{path:?}");
            }
        }
        assert!(super::is_normal(Path::new("/a/b.c/d")));
        assert!(!super::is_normal(Path::new("a//b")));
        assert!(!super::is_normal(Path::new("a/./b")));
    }
}
