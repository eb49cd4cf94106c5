//! Paths compared as users write them.

use std::path::{Component, Path, PathBuf};

/// `a/./b/../c` → `a/c`, lexically (symlinks are not resolved, so the path
/// stays the one users see).
pub fn normalize(path: &Path) -> PathBuf {
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
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::Path;

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
}
